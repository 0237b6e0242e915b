use super::*;

fn file(name: Option<&str>, language: &str, content: &str, main: bool) -> AnswerFile {
    AnswerFile { name: name.map(Into::into), language: language.into(), content: content.into(), main }
}

fn names(files: &[AnswerFile]) -> Vec<&str> {
    files.iter().map(|f| f.name.as_deref().unwrap_or("?")).collect()
}

#[test]
fn a_project_round_trips_with_its_main_file_first() {
    let files = [
        file(Some("components/Todo.tsx"), "tsx", "export const Todo = () => <li/>;\n", false),
        file(Some("App.tsx"), "tsx", "import { Todo } from './components/Todo';\n", true),
        file(None, "bash", "npm install\n", false),
    ];
    let code = bundle(&files).expect("two project files");
    assert!(code.starts_with("```tsx App.tsx\n"), "{code}");
    let back = unbundle(&code).expect("reads back");
    assert_eq!(names(&back), ["App.tsx", "components/Todo.tsx"], "the shell block is no project file");
    assert!(back[0].main && !back[1].main);
    assert_eq!(back[1].content, files[0].content);
    assert_eq!(bundle(&back).as_deref(), Some(code.as_str()), "bundling is stable");
}

#[test]
fn one_file_or_a_page_is_not_a_project() {
    assert!(bundle(&[file(Some("App.tsx"), "tsx", "x", true)]).is_none());
    let page = [
        file(Some("index.html"), "html", "<p>", true),
        file(Some("style.css"), "css", "p{}", false),
        file(Some("script.js"), "javascript", "document.title = 'x';", false),
    ];
    assert!(bundle(&page).is_none(), "a page and its stylesheet and script stay a page");
    for text in ["<!DOCTYPE html>", "```tsx App.tsx\nx\n```\n", "```tsx\nx\n```\n```css a.css\n```\n", ""] {
        assert!(unbundle(text).is_none(), "{text:?}");
    }
}

#[test]
fn backticks_inside_a_file_get_a_longer_fence() {
    let md = "Some `code` and\n```\nfenced\n```\n";
    let files =
        [file(Some("App.tsx"), "tsx", "const s = `x`;\n", true), file(Some("notes.json"), "json", md, false)];
    let code = bundle(&files).unwrap();
    assert!(code.contains("````json notes.json\n"), "{code}");
    assert_eq!(unbundle(&code).unwrap()[1].content, md);
}

#[test]
fn a_file_written_again_keeps_its_last_text_and_its_place() {
    let files = [
        file(Some("App.tsx"), "tsx", "old main", false),
        file(Some("styles.css"), "css", "a{}", false),
        file(Some("App.tsx"), "tsx", "new main", true),
        file(Some("styles.css"), "css", "b{}", false),
    ];
    let back = unbundle(&bundle(&files).unwrap()).unwrap();
    assert_eq!(names(&back), ["App.tsx", "styles.css"]);
    assert_eq!((back[0].content.as_str(), back[1].content.as_str()), ("new main\n", "b{}\n"));
}

#[test]
fn unnamed_blocks_get_paths_from_their_language() {
    let files = [file(None, "tsx", "a", true), file(None, "css", "b", false), file(None, "tsx", "c", false)];
    let back = unbundle(&bundle(&files).unwrap()).unwrap();
    assert_eq!(names(&back), ["App.tsx", "styles.css", "App2.tsx"]);
    assert_eq!(project_path(Some("./src/App.tsx"), "tsx", 0, &[]).as_deref(), Some("src/App.tsx"));
    assert_eq!(project_path(None, "bash", 0, &[]), None);
}

#[test]
fn one_file_is_replaced_and_the_rest_kept() {
    let code = bundle(&[file(Some("App.tsx"), "tsx", "a\n", true), file(Some("b.css"), "css", "b\n", false)])
        .unwrap();
    let changed = with_file(&code, "b.css", "c {}").unwrap();
    let back = unbundle(&changed).unwrap();
    assert_eq!((back[0].content.as_str(), back[1].content.as_str()), ("a\n", "c {}\n"));
    assert_eq!(
        with_file(&changed, "b.css", "c {}\n").as_deref(),
        Some(changed.as_str()),
        "a final newline is the same file"
    );
    assert!(with_file(&code, "nope.tsx", "x").is_none());
    assert!(with_file("<p>", "b.css", "x").is_none());
}

#[test]
fn sections_say_where_each_file_lies_and_a_new_one_follows_the_last() {
    let code =
        bundle(&[file(Some("App.tsx"), "tsx", "a\nb\n", true), file(Some("x.css"), "css", "c\n", false)])
            .unwrap();
    let found = sections(&code).unwrap();
    assert_eq!(found[0], Section { language: "tsx".into(), path: "App.tsx".into(), lines: 1..3 });
    assert_eq!(found[1].lines, 6..7, "after a blank line and its fence");
    assert_eq!(&code[section_bytes(&code, &found[1])], "c\n");
    assert_eq!(&code[section_bytes(&code, &found[0])], "a\nb\n");
    let grown = format!("{code}{}", new_section("components/New.tsx", "n\n"));
    let back = unbundle(&grown).expect("still a project");
    assert_eq!(names(&back), ["App.tsx", "x.css", "components/New.tsx"]);
    assert_eq!((back[2].language.as_str(), back[2].content.as_str()), ("tsx", "n\n"));
}
