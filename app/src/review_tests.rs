use super::*;

/// `old` → `new` where line 2 and line 4 change: two hunks, as the worker's diff gives them.
fn review() -> Review {
    let base = "a\nb\nc\nd\n".to_owned();
    let proposal = "a\nB b\nc\nD\n".to_owned();
    let hunks = vec![
        DiffHunk {
            old: 1..2,
            new: 1..2,
            old_bytes: 2..4,
            new_bytes: 2..6,
            old_words: vec![],
            new_words: std::iter::once(2..4).collect(),
            file: None,
        },
        DiffHunk { old: 3..4, new: 3..4, old_bytes: 6..8, new_bytes: 8..10, ..Default::default() },
    ];
    Review::new(base, proposal, hunks)
}

#[test]
fn keeping_some_hunks_gives_exactly_those_changes() {
    let mut r = review();
    assert_eq!(r.result(), r.proposal);
    r.set(1, false);
    assert_eq!(r.result(), "a\nB b\nc\nd\n");
    assert_eq!(r.kept(), 1);
    r.set_all(false);
    assert_eq!(r.result(), r.base);
    r.set(7, true);
    assert_eq!(r.kept(), 0);
}

#[test]
fn an_edit_scoped_to_a_picked_element_keeps_only_the_hunks_inside_it() {
    // Hunks change line 2 and line 4 (1-based); the element spans lines 2–3.
    let mut r = review();
    assert_eq!(r.keep_only_within((2, 3)), 1);
    assert_eq!(r.accepted, [true, false]);
    assert_eq!(r.result(), "a\nB b\nc\nd\n");
    let mut r = review();
    assert_eq!(r.keep_only_within((1, 4)), 0, "both inside");
    let mut r = review();
    assert_eq!(r.keep_only_within((3, 3)), 2, "neither inside");
    let mut r = review();
    r.hunks[1].old = 2..2;
    assert_eq!(r.keep_only_within((2, 3)), 0, "an insertion between the element's lines is inside");
    let mut r = review();
    r.hunks[1].old = 3..3;
    assert_eq!(r.keep_only_within((2, 3)), 1, "an insertion after its last line is not");
}

#[test]
fn a_hunk_is_found_in_the_result_whatever_is_kept_before_it() {
    let mut r = review();
    r.hunks[0].new = 1..3;
    assert_eq!(r.line_in_result(1), 5, "the first hunk adds a line");
    r.set(0, false);
    assert_eq!(r.line_in_result(1), 4);
    assert_eq!(r.line_in_result(9), 1);
}

#[test]
fn hunks_that_do_not_fit_leave_the_base() {
    let mut r = review();
    r.hunks[1].new_bytes = 8..99;
    assert_eq!(r.result(), r.base);
}

#[test]
fn a_hunk_is_shown_with_its_changed_words() {
    let r = review();
    let v = r.view(0).unwrap();
    assert_eq!(v.place, "line 2");
    assert_eq!(v.removed, vec![vec![("b".to_owned(), true)]]);
    assert_eq!(v.added, vec![vec![("B ".to_owned(), true), ("b".to_owned(), false)]]);
    assert!(r.view(2).is_none());
}

/// A project's text as `flint_protocol::project::bundle` writes it.
fn project(files: &[(&str, &str)]) -> String {
    let fenced: Vec<String> =
        files.iter().map(|(path, content)| format!("```tsx {path}\n{content}```\n")).collect();
    fenced.join("\n")
}

/// A review of `new` against `old` with the worker's hunks.
fn project_review(old: &str, new: &str) -> Review {
    Review::new(old.to_owned(), new.to_owned(), flint_worker::diff::review_hunks(old, new))
}

const APP: &str = "import { Header } from './components/Header';\n\nexport default function App() {\n  return (\n    <main>\n      <Header />\n    </main>\n  );\n}\n";
const HEADER: &str = "export function Header() {\n  return <h1>Todos</h1>;\n}\n";
const LIST: &str = "export function List() {\n  return <ul><li>one</li></ul>;\n}\n";

#[test]
fn a_projects_hunks_are_grouped_by_file_in_its_order_with_their_own_lines() {
    let old = project(&[("App.tsx", APP), ("components/Header.tsx", HEADER), ("components/List.tsx", LIST)]);
    let app = APP
        .replace("import { Header }", "import { List } from './components/List';\nimport { Header }")
        .replace("      <Header />\n", "      <Header />\n      <List />\n");
    let header = HEADER.replace("Todos", "My todos");
    let new =
        project(&[("App.tsx", &app), ("components/Header.tsx", &header), ("components/List.tsx", LIST)]);
    let mut r = project_review(&old, &new);
    let groups = r.files();
    let names: Vec<String> = groups.iter().map(FileGroup::heading).collect();
    assert_eq!(names, ["App.tsx · 2 changes", "components/Header.tsx · 1 change"], "List.tsx is not touched");
    assert_eq!(
        groups[0].button_names(),
        ("Accept all 2 changes in App.tsx".to_owned(), "Reject all 2 changes in App.tsx".to_owned())
    );
    assert_eq!(groups[1].button_names().1, "Reject the change in components/Header.tsx");
    let header_hunk = r.view(groups[1].hunks[0]).unwrap();
    assert_eq!(header_hunk.place, "line 2", "a line of Header.tsx, not of the project's text");
    assert!(header_hunk.removed.iter().chain(&header_hunk.added).flatten().all(|(t, _)| !t.contains("```")));

    r.set_file("App.tsx", false);
    let files = flint_protocol::project::unbundle(&r.result()).expect("still a project");
    let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
    assert_eq!(contents, [APP, header.as_str(), LIST], "only Header.tsx changed");
    r.set_file("components/Header.tsx", false);
    assert_eq!(r.result(), old);
}

#[test]
fn a_new_file_and_a_removed_one_each_show_as_one_hunk() {
    let old = project(&[("App.tsx", APP), ("components/Header.tsx", HEADER), ("components/List.tsx", LIST)]);
    let footer = "export const Footer = () => <footer>Made with Flint</footer>;\n";
    let new =
        project(&[("App.tsx", APP), ("components/Header.tsx", HEADER), ("components/Footer.tsx", footer)]);
    let r = project_review(&old, &new);
    let names: Vec<String> = r.files().iter().map(FileGroup::heading).collect();
    // The new file goes where it is in the new text: after Header.tsx, where List.tsx was.
    assert_eq!(names, ["components/Footer.tsx · new file", "components/List.tsx · file removed"]);
    let added = r.view(0).unwrap();
    assert_eq!(added.place, "new file");
    assert_eq!(added.added, vec![vec![(footer.trim_end().to_owned(), true)]], "the file without its fences");
    assert_eq!(r.view(1).unwrap().place, "file removed");
}

#[test]
fn a_page_is_reviewed_as_one_list_as_before() {
    let r = project_review("<p>a</p>\n<p>b</p>\n", "<p>A</p>\n<p>b</p>\n");
    assert!(r.files().is_empty());
    assert_eq!(r.view(0).unwrap().place, "line 1");
}

/// Projects and the edits of them a review meets: lines changed in several files, a change that
/// reads across two files, a file added, one removed, one emptied, one whose fence changes.
fn edits() -> Vec<(String, String)> {
    let three = [("App.tsx", APP), ("components/Header.tsx", HEADER), ("components/List.tsx", LIST)];
    let with = |changes: &[(&str, Option<&str>)], added: &[(&str, &str)]| {
        let mut files: Vec<(&str, String)> = three
            .iter()
            .filter_map(|(path, content)| match changes.iter().find(|(p, _)| p == path) {
                Some((_, Some(new))) => Some((*path, (*new).to_owned())),
                Some((_, None)) => None,
                None => Some((*path, (*content).to_owned())),
            })
            .collect();
        files.extend(added.iter().map(|(p, c)| (*p, (*c).to_owned())));
        project(&files.iter().map(|(p, c)| (*p, c.as_str())).collect::<Vec<_>>())
    };
    let old = project(&three);
    let app_end = APP.replace("  );\n}\n", "  );\n}\n\nexport const version = 2;\n");
    let header_start =
        HEADER.replace("export function Header() {\n", "// The page's title.\nexport function Header() {\n");
    let many = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
    let many_new = "a\nB\nc\nd\ne\nF\ng\nh\ni\nJ\n";
    vec![
        (
            old.clone(),
            with(&[("App.tsx", Some(&app_end)), ("components/Header.tsx", Some(&header_start))], &[]),
        ),
        (old.clone(), with(&[("components/List.tsx", None)], &[("components/Footer.tsx", "footer\n")])),
        (old.clone(), with(&[("App.tsx", None), ("components/Header.tsx", Some(""))], &[("New.tsx", many)])),
        (
            project(&[("A.tsx", many), ("B.tsx", many), ("C.tsx", many)]),
            project(&[("A.tsx", many_new), ("B.tsx", many), ("C.tsx", many_new)]),
        ),
        (
            old.clone(),
            old.replacen("```tsx components/List.tsx\n", "````tsx components/List.tsx\n// ``` inside\n", 1)
                .replacen("</ul>;\n}\n```\n", "</ul>;\n}\n````\n", 1),
        ),
    ]
}

/// Reviews of project edits, every choice of hunks (or of files, when there are many): every
/// file stays whole and fenced; a file whose hunks are all kept is the new one, all rejected the
/// old one; a file no hunk touches is byte-equal to what it was.
#[test]
fn any_partial_review_of_a_project_leaves_every_file_whole() {
    for (n, (old, new)) in edits().into_iter().enumerate() {
        let before = flint_protocol::project::unbundle(&old).expect("a project");
        let after = flint_protocol::project::unbundle(&new).expect("a project");
        let mut r = project_review(&old, &new);
        assert!(r.hunks.iter().all(|h| h.file.is_some()), "edit {n}: a hunk without its file");
        let count = r.hunks.len();
        assert!(count <= 10, "edit {n}: {count} hunks");
        for bits in 0..1u32 << count {
            let mask: Vec<bool> = (0..count).map(|i| bits & (1 << i) != 0).collect();
            r.accepted.clone_from(&mask);
            let result = r.result();
            let files = flint_protocol::project::unbundle(&result)
                .unwrap_or_else(|| panic!("edit {n}, {mask:?}: not a project: {result:?}"));
            for group in r.files() {
                let kept: Vec<bool> = group.hunks.iter().map(|&i| mask[i]).collect();
                let got = files.iter().find(|f| f.name.as_deref() == Some(group.path.as_str()));
                let of = |side: &[flint_protocol::project::AnswerFile]| {
                    side.iter().find(|f| f.name.as_deref() == Some(group.path.as_str())).cloned()
                };
                if kept.iter().all(|&k| k) {
                    assert_eq!(
                        got.map(|f| &f.content),
                        of(&after).as_ref().map(|f| &f.content),
                        "edit {n}, {mask:?}"
                    );
                } else if kept.iter().all(|&k| !k) {
                    assert_eq!(
                        got.map(|f| &f.content),
                        of(&before).as_ref().map(|f| &f.content),
                        "edit {n}, {mask:?}"
                    );
                }
            }
            for file in &before {
                let touched = r.files().iter().any(|g| Some(g.path.as_str()) == file.name.as_deref());
                if !touched {
                    let got = files.iter().find(|f| f.name == file.name).map(|f| &f.content);
                    assert_eq!(got, Some(&file.content), "edit {n}, {mask:?}: an untouched file changed");
                }
            }
        }
        r.set_all(true);
        assert_eq!(r.result(), new, "edit {n}: accepting all gives the proposal");
    }
}
