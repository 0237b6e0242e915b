//! Replays answers through the worker's session in every possible split and checks that what the
//! page would show — the editor text rebuilt from appends, and the last preview — matches a parse of
//! the whole answer at once. Edit streams (with a base) are replayed the same way against a replay
//! of their answer in one piece.

use flint_protocol::worker::{
    AnswerFile, EditKind, EditReport, ParsedUpdate, WorkerRequest, apply_line_edits,
};
use flint_worker::document::preview_document;
use flint_worker::parser::StreamParser;
use flint_worker::session::{Next, Session};

/// What the page would display after applying updates.
#[derive(Default, Debug)]
struct Page {
    editor: String,
    language: String,
    preview: Option<String>,
    done: bool,
    edits: Option<EditReport>,
    files: Vec<AnswerFile>,
}

impl Page {
    fn apply(&mut self, updates: Vec<ParsedUpdate>) {
        for u in updates {
            assert!(!self.done, "update after done");
            if u.code_reset {
                self.editor.clear();
            }
            self.editor = apply_line_edits(&self.editor, &u.code_edits).expect("line edits inside the text");
            self.editor.push_str(&u.code_append);
            self.language = u.language;
            if u.preview.is_some() {
                self.preview = u.preview;
            }
            self.done = u.done;
            if u.edits.is_some() {
                self.edits = u.edits;
            }
            self.files = u.files;
        }
    }
}

/// Feeds `pieces` 20 ms apart (each append flushes), then finishes.
fn replay(pieces: &[&str]) -> Page {
    replay_on(None, pieces)
}

/// [`replay`] of an answer that edits `base`, if any.
fn replay_on(base: Option<&str>, pieces: &[&str]) -> Page {
    let mut session = Session::new();
    let mut page = Page::default();
    let mut now = 0.0;
    let base = base.map(str::to_owned);
    session.handle(WorkerRequest::Reset { stream: 9, preview_only: false, base }, now);
    for piece in pieces {
        now += 20.0;
        match session.text(9, piece, now) {
            Next::Send(updates) => page.apply(updates),
            other => panic!("expected an immediate flush, got {other:?}"),
        }
    }
    match session.handle(WorkerRequest::Finish { stream: 9 }, now + 1.0) {
        Next::Send(updates) => page.apply(updates),
        other => panic!("finish must answer at once, got {other:?}"),
    }
    page
}

fn expected(text: &str) -> (String, Option<String>) {
    let mut p = StreamParser::new();
    p.push(text);
    p.finish();
    let main = p.main_file();
    let (committed, tail) = p.visible(main);
    (format!("{committed}{tail}"), preview_document(&p))
}

const ANSWERS: &[&str] = &[
    "Here is a page:\n\n```html index.html\n<!DOCTYPE html>\n<html><head></head><body>\n<button id=\"b\">Go</button>\n</body></html>\n```\n\n```css style.css\nbutton { color: red; }\n```\n```js\ndocument.getElementById('b').onclick = () => alert(`hi ${1}`);\n```\nDone.\n",
    "<!doctype html>\r\n<html>\r\n<body>Grüße 🌍 — ça va</body>\r\n</html>\r\nBye\r\n",
    "````md\n```html\nnot a file\n```\n````\n~~~html\n<p>tilde</p>\n~~~\n",
    "Just prose, no code at all.\nSecond line",
    "```html\n<p>never closed",
];

fn char_boundaries(s: &str) -> Vec<usize> {
    (1..s.len()).filter(|&i| s.is_char_boundary(i)).collect()
}

#[test]
fn every_two_way_split_gives_the_same_result() {
    for answer in ANSWERS {
        let want = expected(answer);
        for at in char_boundaries(answer) {
            let page = replay(&[&answer[..at], &answer[at..]]);
            assert_eq!((page.editor.clone(), page.preview.clone()), want, "split at byte {at} of {answer:?}");
            assert!(page.done);
        }
    }
}

#[test]
fn char_by_char_streaming_gives_the_same_result() {
    for answer in ANSWERS {
        let pieces: Vec<&str> = answer.char_indices().map(|(i, c)| &answer[i..i + c.len_utf8()]).collect();
        let page = replay(&pieces);
        assert_eq!((page.editor, page.preview), expected(answer), "{answer:?}");
    }
}

const BASE: &str = "<!DOCTYPE html>\r\n<h1>Grüße</h1>\r\n<p>one</p>\r\n<p>two</p>\r\n";

/// Answers to an edit of [`BASE`], and the kind each one is.
const EDIT_ANSWERS: &[(&str, EditKind)] = &[
    (
        "Sure:\n<<<<<<< SEARCH\n<h1>Grüße</h1>\n=======\n<h1>Grüße 🌍</h1>\n>>>>>>> REPLACE\n\
         <<<<<<< SEARCH\n<p>none</p>\n=======\n<p>x</p>\n>>>>>>> REPLACE\n\
         <<<<<<< SEARCH\r\n  <p>two</p>\r\n=======\r\n  <p>2</p>\r\n>>>>>>> REPLACE",
        EditKind::Edits,
    ),
    ("```html\n<!DOCTYPE html>\n<h1>Neu</h1>\n<p>one</p>\n```\n", EditKind::WholeFile),
    ("No change is needed: the page already does that.", EditKind::Prose),
    ("<<<<<<< SEARCH\n<p>one</p>\n=======\n<p>1</p>\n", EditKind::Edits),
];

#[test]
fn edit_streams_give_the_same_result_in_every_two_way_split() {
    for &(answer, kind) in EDIT_ANSWERS {
        let want = replay_on(Some(BASE), &[answer]);
        let report = want.edits.as_ref().expect("a report");
        assert_eq!(report.kind, kind, "{answer:?}");
        let main = want.files.iter().find(|f| f.main).expect("a main file");
        assert_eq!(want.editor.replace("\r\n", "\n"), main.content.replace("\r\n", "\n"), "{answer:?}");
        for at in char_boundaries(answer) {
            let page = replay_on(Some(BASE), &[&answer[..at], &answer[at..]]);
            let got = (&page.editor, &page.preview, &page.edits, &page.files);
            assert_eq!(
                got,
                (&want.editor, &want.preview, &want.edits, &want.files),
                "split at {at} of {answer:?}"
            );
        }
    }
    let edits = replay_on(Some(BASE), &[EDIT_ANSWERS[0].0]);
    assert_eq!(edits.editor, "<!DOCTYPE html>\r\n<h1>Grüße 🌍</h1>\r\n<p>one</p>\r\n<p>2</p>\r\n");
    let report = edits.edits.expect("a report");
    assert_eq!((report.applied, report.failed.len(), report.hunks.len()), (2, 1, 2));
    let unfinished = replay_on(Some(BASE), &[EDIT_ANSWERS[3].0]).edits.expect("a report");
    assert_eq!(unfinished.failed[0].reason, "the answer ended inside this block");
}

#[test]
fn editor_shows_html_file_and_language() {
    let page = replay(&[ANSWERS[0]]);
    assert_eq!(page.language, "html");
    assert!(page.editor.starts_with("<!DOCTYPE html>"));
    let preview = page.preview.expect("preview");
    assert!(preview.contains("button { color: red; }"));
    assert!(preview.contains("alert(`hi ${1}`)"));
}

#[test]
fn prose_only_answer_shows_markdown() {
    let page = replay(&["Just prose, ", "no code."]);
    assert_eq!(page.language, "markdown");
    assert_eq!(page.editor, "Just prose, no code.\n");
    assert_eq!(page.preview, None);
}

#[test]
fn large_answer_parses_in_linear_time() {
    // 2 MB in 20-byte pieces: a quadratic parser would take minutes here.
    let line = "<div class=\"row\">cell</div>\n";
    let mut answer = String::from("```html\n");
    for _ in 0..(2_000_000 / line.len()) {
        answer.push_str(line);
    }
    let mut p = StreamParser::new();
    let start = std::time::Instant::now();
    for chunk in answer.as_bytes().chunks(20) {
        p.push(std::str::from_utf8(chunk).expect("ascii"));
    }
    assert!(start.elapsed().as_secs_f64() < 2.0, "took {:?}", start.elapsed());
    assert_eq!(p.files()[0].content.len(), answer.len() - "```html\n".len() - p.tail(Some(0)).len());
}
