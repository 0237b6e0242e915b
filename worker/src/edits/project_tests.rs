//! Blocks that name their file in a project of several files.

use flint_protocol::project::{bundle, unbundle};
use flint_protocol::worker::AnswerFile;

use crate::edits::{Outcome, apply_edits, parse_blocks};

fn project() -> String {
    let file = |name: &str, content: &str, main| AnswerFile::named(name, "tsx", content, main);
    bundle(&[
        file("App.tsx", "import { Button } from './components/Button';\nconst label = 'Go';\n", true),
        file(
            "components/Button.tsx",
            "const label = 'Go';\nexport const Button = () => <b>{label}</b>;\n",
            false,
        ),
    ])
    .expect("a project")
}

fn contents(code: &str) -> Vec<String> {
    unbundle(code).expect("still a project").into_iter().map(|f| f.content).collect()
}

#[test]
fn a_path_line_names_the_file_its_blocks_change() {
    for named in [
        "components/Button.tsx",
        "`components/Button.tsx`:",
        "**File: components/Button.tsx**",
        "```tsx components/Button.tsx",
        "### Button.tsx",
    ] {
        let answer = format!(
            "{named}\n<<<<<<< SEARCH\nconst label = 'Go';\n=======\nconst label = 'Stop';\n>>>>>>> REPLACE\n"
        );
        let blocks = parse_blocks(&answer).blocks;
        let (text, outcomes) = apply_edits(&project(), &blocks);
        assert!(matches!(outcomes[0], Outcome::Applied(_)), "{named}: {outcomes:?}");
        let files = contents(&text);
        assert!(
            files[0].contains("'Go'") && files[1].contains("'Stop'"),
            "{named}: only the named file changes"
        );
    }
}

#[test]
fn without_a_name_a_line_in_two_files_is_ambiguous_and_prose_names_nothing() {
    let answer = "Change the label in both. This is simple.\n<<<<<<< SEARCH\nconst label = 'Go';\n=======\nx\n>>>>>>> REPLACE\n";
    let blocks = parse_blocks(answer).blocks;
    assert_eq!(blocks[0].file, None);
    let (_, outcomes) = apply_edits(&project(), &blocks);
    assert_eq!(outcomes[0], Outcome::Ambiguous { matches: 2 });
}

#[test]
fn an_empty_search_appends_to_the_named_file_or_adds_a_new_one() {
    let answer = "components/Button.tsx\n<<<<<<< SEARCH\n=======\nexport const Small = 1;\n>>>>>>> REPLACE\n\
                  components/Card.tsx\n<<<<<<< SEARCH\n=======\nexport const Card = () => <div/>;\n>>>>>>> REPLACE\n";
    let (text, outcomes) = apply_edits(&project(), &parse_blocks(answer).blocks);
    assert!(outcomes.iter().all(|o| matches!(o, Outcome::Applied(_))), "{outcomes:?}");
    let files = unbundle(&text).expect("a project");
    assert!(files[1].content.ends_with("export const Small = 1;\n"));
    assert_eq!(files[2].name.as_deref(), Some("components/Card.tsx"));
    assert_eq!(files[2].content, "export const Card = () => <div/>;\n");
}

#[test]
fn a_name_the_project_lacks_is_searched_everywhere_and_a_single_file_ignores_names() {
    let answer = "src/Nope.tsx\n<<<<<<< SEARCH\nimport { Button } from './components/Button';\n=======\nimport { Button as B } from './components/Button';\n>>>>>>> REPLACE\n";
    let (text, outcomes) = apply_edits(&project(), &parse_blocks(answer).blocks);
    assert!(matches!(outcomes[0], Outcome::Applied(_)));
    assert!(contents(&text)[0].starts_with("import { Button as B }"));
    let page = "index.html\n<<<<<<< SEARCH\n<p>a</p>\n=======\n<p>b</p>\n>>>>>>> REPLACE\n";
    let (text, _) = apply_edits("<p>a</p>\n", &parse_blocks(page).blocks);
    assert_eq!(text, "<p>b</p>\n");
}
