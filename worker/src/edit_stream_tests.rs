//! Unit tests of an edit stream's kind, blocks and report (the session's view of it is tested in
//! `session_tests.rs`).

use super::*;

/// Feeds `answer` in chunks of `size` bytes, as the session does.
fn stream(base: &str, answer: &str, size: usize) -> (EditStream, StreamParser) {
    let mut edit = EditStream::new(base.to_owned());
    let mut parser = StreamParser::new();
    let mut so_far = String::new();
    for chunk in answer.as_bytes().chunks(size) {
        let chunk = std::str::from_utf8(chunk).expect("ASCII answers");
        parser.push(chunk);
        so_far.push_str(chunk);
        edit.push(chunk, &so_far, &parser);
    }
    parser.finish();
    edit.finish(&so_far, &parser);
    (edit, parser)
}

const BASE: &str = "<h1>Hi</h1>\n<p>one</p>\n<p>two</p>\n";

#[test]
fn blocks_apply_in_any_chunking_and_failures_are_numbered() {
    let answer = "Done:\n<<<<<<< SEARCH\n<p>one</p>\n=======\n<p>1</p>\n>>>>>>> REPLACE\n\
                  <<<<<<< SEARCH\n<p>three</p>\n=======\n<p>3</p>\n>>>>>>> REPLACE\n";
    for size in [1, 3, 7, answer.len()] {
        let (edit, parser) = stream(BASE, answer, size);
        assert_eq!(edit.kind(), EditKind::Edits);
        assert_eq!(edit.text(), "<h1>Hi</h1>\n<p>1</p>\n<p>two</p>\n");
        let report = edit.report();
        assert_eq!(report.applied, 1);
        assert_eq!(report.failed.len(), 1);
        let failed = &report.failed[0];
        assert_eq!((failed.block, failed.reason.as_str()), (2, "its SEARCH lines are not in the file"));
        assert_eq!(failed.search, "<p>three</p>");
        assert!(answer[failed.at.clone()].starts_with("<<<<<<< SEARCH\n<p>three"), "{:?}", failed.at);
        assert!(answer[failed.at.clone()].ends_with(">>>>>>> REPLACE\n"));
        assert_eq!(edit.final_text(&parser), edit.text());
    }
}

#[test]
fn ambiguous_overlapping_and_unfinished_blocks_say_why() {
    let base = "<p>a</p>\n<p>a</p>\n<b>x</b>\n<i>y</i>\n";
    let answer = "<<<<<<< SEARCH\n<p>a</p>\n=======\n<p>b</p>\n>>>>>>> REPLACE\n\
                  <<<<<<< SEARCH\n<b>x</b>\n<i>y</i>\n=======\n<b>X</b>\n<i>Y</i>\n>>>>>>> REPLACE\n\
                  <<<<<<< SEARCH\n<i>y</i>\n=======\n<i>z</i>\n>>>>>>> REPLACE\n\
                  <<<<<<< SEARCH\n<p>a</p>\n=======\n";
    let (edit, _) = stream(base, answer, 5);
    let report = edit.report();
    let reasons: Vec<(u32, &str)> = report.failed.iter().map(|f| (f.block, f.reason.as_str())).collect();
    assert_eq!(
        reasons,
        [
            (1, "its SEARCH lines match 2 places; nothing was changed"),
            (3, "it overlaps block 2, which already changed those lines"),
            (4, "the answer ended inside this block"),
        ]
    );
    assert_eq!(report.applied, 1);
    let unfinished = &report.failed[2];
    assert_eq!(unfinished.at, answer.rfind("<<<<<<<").expect("last block")..answer.len());
    assert_eq!(edit.text(), "<p>a</p>\n<p>a</p>\n<b>X</b>\n<i>Y</i>\n");
}

#[test]
fn the_kind_follows_the_answer() {
    let (prose, _) = stream(BASE, "I would rather not.\n", 4);
    assert_eq!(prose.kind(), EditKind::Prose);
    let (page, parser) = stream(BASE, "```html\n<html><h1>New</h1></html>\n```\n", 4);
    assert_eq!(page.kind(), EditKind::WholeFile);
    assert_eq!(page.final_text(&parser), "<html><h1>New</h1></html>\n");
    assert_eq!(page.text(), BASE, "the base is untouched");
    // A fence around the blocks is not a whole page.
    let answer = "```html\n<<<<<<< SEARCH\n<h1>Hi</h1>\n=======\n<h1>Yo</h1>\n>>>>>>> REPLACE\n```\n";
    let (fenced, _) = stream(BASE, answer, 8);
    assert_eq!(fenced.kind(), EditKind::Edits);
    assert_eq!(fenced.text(), "<h1>Yo</h1>\n<p>one</p>\n<p>two</p>\n");
    let (empty, _) = stream(BASE, "```html\n```\n", 3);
    assert_eq!(empty.kind(), EditKind::Prose, "an empty page replaces nothing");
}

#[test]
fn a_whole_file_keeps_a_crlf_base_s_line_breaks() {
    let base = "<h1>Hi</h1>\r\n<p>one</p>\r\n";
    let (page, parser) = stream(base, "<!DOCTYPE html>\n<h1>Hi</h1>\n<p>two</p>\n", 6);
    assert_eq!(page.kind(), EditKind::WholeFile);
    assert_eq!(page.final_text(&parser), "<!DOCTYPE html>\r\n<h1>Hi</h1>\r\n<p>two</p>\r\n");
}

#[test]
fn search_quotes_are_short_and_skip_blank_lines() {
    assert_eq!(quote("\n\n  <p>x</p>\n"), "<p>x</p>");
    assert_eq!(quote("a\nb\n"), "a\nb");
    let long = "é".repeat(100);
    assert_eq!(quote(&long), format!("{}…", "é".repeat(80)));
    assert_eq!(quote(""), "");
}

#[test]
fn an_html_snippet_does_not_replace_a_page_but_a_whole_document_does() {
    let snippet = "Use this button:\n```html\n<button class=\"big\">Go</button>\n```\n";
    let (edit, parser) = stream(BASE, snippet, 4);
    assert_eq!(edit.kind(), EditKind::Prose);
    assert_eq!(edit.final_text(&parser), BASE);
    let page = "```html\n<!DOCTYPE html>\n<html><body><p>new</p></body></html>\n```\n";
    let (edit, _) = stream(BASE, page, 4);
    assert_eq!(edit.kind(), EditKind::WholeFile);
}

#[test]
fn in_a_project_a_file_written_whole_replaces_its_own_and_a_new_one_joins() {
    let file = |name: &str, content: &str, main| {
        flint_protocol::worker::AnswerFile::named(name, "tsx", content, main)
    };
    let base = flint_protocol::project::bundle(&[
        file("App.tsx", "import { B } from './B';\nexport default () => <B/>;\n", true),
        file("B.tsx", "export const B = () => <b>old</b>;\n", false),
    ])
    .unwrap();
    let answer = "Here are the changes.\n\n```tsx B.tsx\nexport const B = () => <b>new</b>;\n```\n\n\
                  ```tsx C.tsx\nexport const C = 1;\n```\n\n```tsx App.tsx\n<<<<<<< SEARCH\nexport default () => <B/>;\n\
                  =======\nexport default () => <main><B/></main>;\n>>>>>>> REPLACE\n```\n";
    for size in [1, 5, answer.len()] {
        let (edit, parser) = stream(&base, answer, size);
        assert_eq!(edit.kind(), EditKind::Edits, "file by file, reviewed like blocks");
        let files = flint_protocol::project::unbundle(&edit.final_text(&parser)).expect("still a project");
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(
            contents,
            [
                "import { B } from './B';\nexport default () => <main><B/></main>;\n",
                "export const B = () => <b>new</b>;\n",
                "export const C = 1;\n"
            ],
            "chunks of {size}"
        );
        assert_eq!(edit.report().applied, 3);
        assert_eq!(edit.language(), "markdown");
    }
    // Its review is per file: a hunk in each changed file, in its own lines, and the new file whole.
    let (edit, parser) = stream(&base, answer, answer.len());
    let hunks = crate::diff::review_hunks(&base, &edit.final_text(&parser));
    let files: Vec<_> = hunks
        .iter()
        .filter_map(|h| h.file.as_ref())
        .map(|f| (f.path.as_str(), f.change, f.old.clone()))
        .collect();
    use flint_protocol::diff::FileChange::{Added, Edited};
    assert_eq!(files, [("App.tsx", Edited, 1..2), ("B.tsx", Edited, 0..1), ("C.tsx", Added, 0..0)]);
}

#[test]
fn a_react_component_answered_whole_replaces_the_component() {
    let base =
        "import { useState } from 'react';\nexport default function App() {\n  return <p>old</p>;\n}\n";
    let answer =
        "Here it is:\n\n```tsx App.tsx\nexport default function App() {\n  return <p>new</p>;\n}\n```\n";
    for size in [1, 4, answer.len()] {
        let (edit, parser) = stream(base, answer, size);
        assert_eq!(edit.kind(), EditKind::WholeFile, "chunks of {size}");
        assert_eq!(edit.final_text(&parser), "export default function App() {\n  return <p>new</p>;\n}\n");
    }
    // A page's base still needs a whole document to be replaced.
    let (page, _) = stream(BASE, "```tsx\nexport default () => null;\n```\n", 7);
    assert_eq!(page.kind(), EditKind::Prose);
}
