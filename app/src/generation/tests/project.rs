//! A React answer of several files: what is kept of it is every file, so versions, the session,
//! links and edits carry the whole project.

use super::*;

fn tsx(name: &str, content: &str, main: bool) -> AnswerFile {
    AnswerFile::named(name, "tsx", content, main)
}

#[test]
fn a_finished_project_is_kept_with_all_its_files_and_a_page_is_not_changed() {
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, None, 7, &mut screen);
    screen.apply(run.on_parsed(append(7, "export default () => <B/>;\n", true), 1.0));
    screen.apply(run.on_stream_event(7, done_event(), 2.0));
    let files = vec![
        tsx("components/B.tsx", "export const B = () => <b/>;\n", false),
        tsx("App.tsx", "export default () => <B/>;\n", true),
    ];
    let last = ParsedUpdate { done: true, files: files.clone(), preview: Some("<doc>".into()), ..update(7) };
    screen.apply(run.on_parsed(last, 3.0));
    let kept = flint_protocol::project::bundle(&files).expect("a project");
    assert_eq!(screen.kept, [(kept.clone(), Origin::Generated)]);
    assert_eq!((screen.code.as_str(), run.code()), (kept.as_str(), kept.as_str()));

    // A page with its stylesheet stays its main file.
    let mut run = started(Surface::Editor, None, 8, &mut screen);
    screen.apply(run.on_parsed(append(8, "<p>hi</p>", true), 1.0));
    screen.apply(run.on_stream_event(8, done_event(), 2.0));
    let page = vec![
        AnswerFile {
            name: Some("index.html".into()),
            language: "html".into(),
            content: "<p>hi</p>".into(),
            main: true,
        },
        AnswerFile {
            name: Some("style.css".into()),
            language: "css".into(),
            content: "p{}".into(),
            main: false,
        },
    ];
    screen.apply(run.on_parsed(
        ParsedUpdate { done: true, files: page, preview: Some("<doc>".into()), ..update(8) },
        3.0,
    ));
    assert_eq!(screen.code, "<p>hi</p>");
}

#[test]
fn a_tiles_project_is_promoted_whole() {
    let mut screen = Screen::default();
    let mut tile = started(Surface::Tile, None, 9, &mut screen);
    screen.apply(tile.on_parsed(append(9, "export default () => <B/>;\n", true), 1.0));
    screen.apply(tile.on_stream_event(9, done_event(), 2.0));
    let files = vec![
        tsx("App.tsx", "export default () => <B/>;\n", true),
        tsx("B.tsx", "export const B = 1;\n", false),
    ];
    screen.apply(tile.on_parsed(ParsedUpdate { done: true, files: files.clone(), ..update(9) }, 3.0));
    let promoted = tile.promote().expect("done");
    let shown = promoted.iter().find_map(|c| match c {
        Command::ShowVersion { code, .. } => Some(code.clone()),
        _ => None,
    });
    assert_eq!(shown, flint_protocol::project::bundle(&files));
}

#[test]
fn an_answer_of_prose_alone_says_there_is_no_code_to_show() {
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, None, 7, &mut screen);
    screen.apply(run.on_parsed(append(7, "I would use a button.", true), 1.0));
    screen.apply(run.on_stream_event(7, done_event(), 2.0));
    screen.apply(run.on_parsed(ParsedUpdate { done: true, ..update(7) }, 3.0));
    assert_eq!(screen.status, StreamStatus::Done);
    assert!(
        screen.error.as_deref().is_some_and(|e| e.starts_with("The answer has no code to show")),
        "{:?}",
        screen.error
    );
}
