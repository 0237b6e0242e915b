//! Unit tests of the session: pacing, streams, edit streams, answer tokens and budgets.

use flint_protocol::worker::{AnswerFile, EditKind};

use super::*;

fn sent(next: Next) -> Vec<ParsedUpdate> {
    match next {
        Next::Send(v) => v,
        other => panic!("expected updates, got {other:?}"),
    }
}

#[test]
fn first_append_is_sent_at_once_then_coalesced() {
    let mut s = Session::new();
    s.handle(WorkerRequest::Reset { stream: 1, preview_only: false, base: None }, 0.0);
    let first = sent(s.text(1, "Here:\n", 0.0));
    assert_eq!(first.len(), 1);
    assert!(first[0].code_reset);
    assert_eq!(first[0].language, "markdown");
    assert_eq!(first[0].code_append, "Here:\n");
    assert_eq!(s.text(1, "```html\n<p>", 5.0), Next::FlushIn(11.0));
    assert_eq!(s.text(1, "hi</p>\n", 8.0), Next::Idle);
    let later = s.flush(16.0);
    assert_eq!(later.len(), 1);
    assert!(later[0].code_reset, "main file switched from prose to html");
    assert_eq!(later[0].language, "html");
    assert_eq!(later[0].code_append, "<p>hi</p>\n");
    assert_eq!(later[0].preview.as_deref(), Some("<p>hi</p>\n"));
}

#[test]
fn finish_sends_final_update_with_preview() {
    let mut s = Session::new();
    sent(s.text(3, "<!DOCTYPE html>\n<p>x</p>", 0.0));
    let done = sent(s.handle(WorkerRequest::Finish { stream: 3 }, 1.0));
    assert_eq!(done.len(), 1);
    assert!(done[0].done);
    assert_eq!(done[0].code_append, "\n");
    assert_eq!(done[0].preview.as_deref(), Some("<!DOCTYPE html>\n<p>x</p>\n"));
    assert_eq!(done[0].files.len(), 1);
    assert_eq!(done[0].files[0].content, "<!DOCTYPE html>\n<p>x</p>\n");
}

#[test]
fn only_the_last_update_lists_the_files() {
    let mut s = Session::new();
    let first = sent(s.text(4, "```html index.html\n<p>\n```\n```css style.css\np{}\n", 0.0));
    assert!(first.iter().all(|u| u.files.is_empty()));
    let done = sent(s.handle(WorkerRequest::Finish { stream: 4 }, 1.0));
    let names: Vec<_> =
        done[0].files.iter().map(|f| (f.name.as_deref(), f.language.as_str(), f.main)).collect();
    assert_eq!(names, [(Some("index.html"), "html", true), (Some("style.css"), "css", false)]);
}

#[test]
fn with_many_streams_previews_are_spread_out_but_never_lost() {
    assert_eq!(preview_interval_ms(1), FRAME_MS);
    assert_eq!(preview_interval_ms(4), 4.0 * FRAME_MS);
    assert_eq!(preview_interval_ms(100), MAX_PREVIEW_MS);

    let mut s = Session::new();
    for id in 1..=4 {
        s.handle(WorkerRequest::Reset { stream: id, preview_only: false, base: None }, 0.0);
    }
    let first = sent(s.text(1, "<!DOCTYPE html>\n<p>a</p>\n", 0.0));
    assert!(first[0].preview.is_some(), "the first preview leaves at once");
    assert!(matches!(s.text(1, "<p>b</p>\n", 10.0), Next::FlushIn(_)));
    let early = s.flush(32.0);
    assert_eq!(early[0].code_append, "<p>b</p>\n", "code is not held back");
    assert_eq!(early[0].preview, None, "a preview 32 ms after the last, with 4 streams, waits");
    assert_eq!(s.rearm(), Some(FRAME_MS), "the held-back preview needs another flush");
    assert_eq!(s.rearm(), None, "one timer at a time");
    let later = s.flush(70.0);
    assert!(later[0].preview.as_deref().is_some_and(|p| p.contains("<p>b</p>")), "{later:?}");
    assert_eq!(s.rearm(), None, "nothing owed any more");
}

#[test]
fn a_preview_only_stream_sends_pages_then_its_code_whole() {
    let mut s = Session::new();
    s.handle(WorkerRequest::Reset { stream: 5, preview_only: true, base: None }, 0.0);
    let first = sent(s.text(5, "Here:\n```html\n<p>a</p>\n", 0.0));
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].code_append, "");
    assert!(!first[0].code_reset);
    assert_eq!(first[0].preview.as_deref(), Some("<p>a</p>\n"));
    let Next::FlushIn(_) = s.text(5, "<p>b</p>\n", 1.0) else { panic!("expected a timer") };
    let later = s.flush(20.0);
    assert_eq!(later[0].code_append, "", "no code while streaming");
    let done = sent(s.handle(WorkerRequest::Finish { stream: 5 }, 30.0));
    assert!(done[0].code_reset && done[0].done);
    assert_eq!(done[0].code_append, "<p>a</p>\n<p>b</p>\n");
    assert_eq!(done[0].language, "html");
}

#[test]
fn streams_are_independent() {
    let mut s = Session::new();
    sent(s.text(1, "```css\na{}\n", 0.0));
    let Next::FlushIn(_) = s.text(2, "```html\n<b>", 1.0) else { panic!("expected a timer") };
    let updates = s.flush(16.0);
    assert_eq!(updates.len(), 1, "only stream 2 changed");
    assert_eq!(updates[0].stream, 2);
    assert_eq!(updates[0].code_append, "<b>");
}

#[test]
fn unchanged_stream_sends_nothing() {
    let mut s = Session::new();
    sent(s.text(1, "```html\n<p>", 0.0));
    // A lone backtick could start the closing fence: nothing new to show yet.
    assert_eq!(
        s.text(1, "\n`", 20.0),
        Next::Send(vec![ParsedUpdate {
            stream: 1,
            code_edits: vec![],
            code_append: "\n".into(),
            code_reset: false,
            language: "html".into(),
            preview: Some("<p>\n".into()),
            live: false,
            problems: None,
            done: false,
            files: vec![],
            answer_tokens: 6,
            edits: None,
        }])
    );
    assert_eq!(s.text(1, "`", 40.0), Next::Send(vec![]));
}

/// What the page holds after applying a stream's updates, and what it saw on the way.
#[derive(Debug, Default)]
struct Page {
    editor: String,
    /// The editor's text after each update that reset it.
    resets: Vec<String>,
    /// The editor's text after each update that reset or edited it.
    shown: Vec<String>,
    /// Line edits received.
    line_edits: usize,
    preview: Option<String>,
    previews: usize,
    tokens: Vec<u32>,
    last: Option<ParsedUpdate>,
}

impl Page {
    fn apply(&mut self, updates: Vec<ParsedUpdate>) {
        for u in updates {
            assert!(self.last.as_ref().is_none_or(|l| !l.done), "update after done");
            if u.code_reset {
                self.editor.clear();
            }
            for edit in &u.code_edits {
                self.editor =
                    flint_protocol::worker::apply_line_edits(&self.editor, std::slice::from_ref(edit))
                        .expect("a line edit inside the text");
                self.line_edits += 1;
            }
            self.editor.push_str(&u.code_append);
            if u.code_reset {
                self.resets.push(self.editor.clone());
            }
            if u.code_reset || !u.code_edits.is_empty() {
                self.shown.push(self.editor.clone());
            }
            if u.preview.is_some() {
                self.preview.clone_from(&u.preview);
                self.previews += 1;
            }
            self.tokens.push(u.answer_tokens);
            self.last = Some(u);
        }
    }
}

/// Streams `answer` in `size`-byte chunks 20 ms apart (each flushes at once), then finishes.
fn replay(reset: WorkerRequest, answer: &str, size: usize) -> Page {
    let mut s = Session::new();
    let mut page = Page::default();
    let WorkerRequest::Reset { stream, .. } = reset else { panic!("a reset first") };
    assert_eq!(s.handle(reset, 0.0), Next::Idle);
    let mut now = 0.0;
    for chunk in answer.as_bytes().chunks(size) {
        now += 20.0;
        let text = std::str::from_utf8(chunk).expect("ASCII answers").to_owned();
        page.apply(sent(s.text(stream, &text, now)));
    }
    page.apply(sent(s.handle(WorkerRequest::Finish { stream }, now + 1.0)));
    page
}

fn edit_of(base: &str) -> WorkerRequest {
    WorkerRequest::Reset { stream: 2, preview_only: false, base: Some(base.to_owned()) }
}

const BASE: &str = "<!DOCTYPE html>\n<h1>Hi</h1>\n<p>one</p>\n<p>two</p>\n<footer>f</footer>\n";
const TWO_BLOCKS: &str = "Two changes:\n\
    <<<<<<< SEARCH\n<h1>Hi</h1>\n=======\n<h1>Hello</h1>\n>>>>>>> REPLACE\n\
    and\n<<<<<<< SEARCH\n<footer>f</footer>\n=======\n<footer>F</footer>\n>>>>>>> REPLACE\nDone.\n";
const AFTER_ONE: &str = "<!DOCTYPE html>\n<h1>Hello</h1>\n<p>one</p>\n<p>two</p>\n<footer>f</footer>\n";
const AFTER_TWO: &str = "<!DOCTYPE html>\n<h1>Hello</h1>\n<p>one</p>\n<p>two</p>\n<footer>F</footer>\n";

#[test]
fn an_edit_stream_shows_the_base_then_each_block_applied() {
    let page = replay(edit_of(BASE), TWO_BLOCKS, 5);
    assert_eq!(page.shown, [BASE, AFTER_ONE, AFTER_TWO], "the base first, then once per block");
    assert_eq!(page.resets, [BASE], "then line edits, not the whole file again");
    assert_eq!(page.line_edits, 2);
    assert_eq!(page.editor, AFTER_TWO);
    assert_eq!(page.preview.as_deref(), Some(AFTER_TWO), "an HTML base is its own page");
    assert!(page.previews >= 3, "a preview per change: {}", page.previews);
    let last = page.last.expect("a last update");
    assert!(last.done);
    assert_eq!(last.language, "html");
    let report = last.edits.expect("the last update has the report");
    assert_eq!((report.kind, report.applied, report.failed.len()), (EditKind::Edits, 2, 0));
    assert_eq!(report.hunks.len(), 2);
    assert_eq!(&BASE[report.hunks[0].old_bytes.clone()], "<h1>Hi</h1>\n");
    assert_eq!(
        flint_protocol::diff::merge(BASE, AFTER_TWO, &report.hunks, &[false, true]).as_deref(),
        Some("<!DOCTYPE html>\n<h1>Hi</h1>\n<p>one</p>\n<p>two</p>\n<footer>F</footer>\n")
    );
    assert_eq!(
        last.files,
        [AnswerFile { name: None, language: "html".into(), content: AFTER_TWO.into(), main: true }]
    );
}

#[test]
fn an_edit_stream_sends_the_same_text_only_once() {
    let mut s = Session::new();
    s.handle(edit_of(BASE), 0.0);
    let first = sent(s.text(2, "Let me", 0.0));
    assert!(first[0].code_reset && first[0].code_append == BASE, "the base first: {first:?}");
    assert_eq!(first[0].edits.as_ref().map(|e| e.kind), Some(EditKind::Prose));
    let later = sent(s.text(2, " think about it.\n<<<<<<< SEARCH\n", 20.0));
    assert_eq!(later.len(), 1, "the token count moved");
    assert!(!later[0].code_reset && later[0].code_append.is_empty(), "{later:?}");
    assert_eq!(later[0].preview, None);
    assert_eq!(later[0].edits.as_ref().map(|e| e.kind), Some(EditKind::Edits));
    assert!(later[0].answer_tokens > first[0].answer_tokens);
    let quiet = sent(s.text(2, "", 40.0));
    assert!(quiet.is_empty(), "nothing changed: {quiet:?}");
}

#[test]
fn a_block_that_does_not_apply_is_reported_and_the_others_apply() {
    let answer = TWO_BLOCKS.replace("<h1>Hi</h1>\n=", "<h1>Bye</h1>\n=");
    let page = replay(edit_of(BASE), &answer, 4);
    let last = page.last.expect("a last update");
    let report = last.edits.expect("a report");
    assert_eq!(report.applied, 1);
    assert_eq!(report.failed.len(), 1);
    let failed = &report.failed[0];
    assert_eq!(failed.block, 1);
    assert_eq!(failed.reason, "its SEARCH lines are not in the file");
    assert_eq!(failed.search, "<h1>Bye</h1>");
    assert!(answer[failed.at.clone()].starts_with("<<<<<<< SEARCH\n<h1>Bye"));
    let expected = BASE.replace("<footer>f", "<footer>F");
    assert_eq!(page.editor, expected);
    assert_eq!(last.files[0].content, expected);
    assert_eq!(report.hunks.len(), 1);
}

#[test]
fn a_whole_file_answer_with_a_base_streams_like_any_answer() {
    let answer = "Here it is:\n```html\n<!DOCTYPE html>\n<h1>Hi</h1>\n<p>ONE</p>\n<p>two</p>\n<footer>f</footer>\n```\n";
    let page = replay(edit_of(BASE), answer, 6);
    let new = "<!DOCTYPE html>\n<h1>Hi</h1>\n<p>ONE</p>\n<p>two</p>\n<footer>f</footer>\n";
    assert_eq!(page.resets.first().map(String::as_str), Some(BASE), "the base until the page begins");
    assert_eq!(page.editor, new, "then the new file streams in");
    assert_eq!(page.preview.as_deref(), Some(new));
    let last = page.last.expect("a last update");
    let report = last.edits.expect("a report");
    assert_eq!(report.kind, EditKind::WholeFile);
    assert_eq!(report.hunks.len(), 1, "only the changed line: {:?}", report.hunks);
    assert_eq!(report.hunks[0].old, 2..3);
    assert_eq!(last.files.len(), 1);
    assert!(last.files[0].main && last.files[0].content == new);
}

#[test]
fn a_prose_answer_leaves_the_base_alone() {
    let page = replay(edit_of(BASE), "That page looks fine to me.\n", 7);
    assert_eq!(page.resets, [BASE]);
    let last = page.last.expect("a last update");
    let report = last.edits.expect("a report");
    assert_eq!((report.kind, report.applied), (EditKind::Prose, 0));
    assert!(report.hunks.is_empty() && report.failed.is_empty());
    assert_eq!(last.files[0].content, BASE);
}

#[test]
fn a_crlf_base_keeps_its_line_breaks() {
    let base = BASE.replace('\n', "\r\n");
    let page = replay(edit_of(&base), &TWO_BLOCKS.replace('\n', "\r\n"), 3);
    assert_eq!(page.editor, AFTER_TWO.replace('\n', "\r\n"));
    let report = page.last.and_then(|l| l.edits).expect("a report");
    assert_eq!(report.applied, 2);
    assert_eq!(report.hunks.len(), 2, "only the changed lines differ");
}

#[test]
fn a_preview_only_edit_stream_sends_pages_then_the_code() {
    let reset = WorkerRequest::Reset { stream: 2, preview_only: true, base: Some(BASE.to_owned()) };
    let page = replay(reset, TWO_BLOCKS, 9);
    assert_eq!(page.resets, [AFTER_TWO], "no code until the end, then all of it");
    assert_eq!(page.preview.as_deref(), Some(AFTER_TWO));
    assert!(page.previews >= 3, "the base's page, then one per block: {}", page.previews);
    assert!(page.last.is_some_and(|l| l.done && l.code_reset));
}

#[test]
fn a_css_base_previews_as_a_page_of_its_styles() {
    let base = "body {\n  color: red;\n}\n";
    let answer = "<<<<<<< SEARCH\n  color: red;\n=======\n  color: blue;\n>>>>>>> REPLACE\n";
    let page = replay(edit_of(base), answer, 10);
    assert_eq!(page.last.as_ref().map(|l| l.language.as_str()), Some("css"));
    assert_eq!(page.preview.as_deref(), Some("<style>\nbody {\n  color: blue;\n}\n</style>\n"));
}

#[test]
fn answer_tokens_grow_and_end_on_a_full_count() {
    let answer = "Sure:\n```html\n<!DOCTYPE html>\n<body>\n  <h1>Tokens</h1>\n</body>\n```\nDone.";
    let page = replay(WorkerRequest::Reset { stream: 3, preview_only: false, base: None }, answer, 4);
    assert!(page.tokens.windows(2).all(|w| w[0] <= w[1]) || page.tokens.len() < 2, "{:?}", page.tokens);
    assert!(page.tokens.first() < page.tokens.last());
    let full = TokenCounter::estimating().count(answer);
    assert_eq!(page.tokens.last().copied(), Some(full as u32));
    let mut s = Session::new();
    s.set_counter(TokenCounter::o200k());
    sent(s.text(4, &answer[..20], 0.0));
    let last = sent(s.text(4, &answer[20..], 20.0));
    let done = sent(s.handle(WorkerRequest::Finish { stream: 4 }, 21.0));
    let exact = TokenCounter::o200k().count(answer) as u32;
    assert_eq!(done[0].answer_tokens, exact);
    assert!(last[0].answer_tokens <= exact + 1, "the running count is close: {}", last[0].answer_tokens);
}

#[test]
fn budget_requests_are_answered_at_once_and_upgraded_by_the_exact_counter() {
    let mut s = Session::new();
    assert_eq!(s.set_counter(TokenCounter::estimating()), None, "no request yet: no report");
    let request = flint_protocol::worker::BudgetRequest {
        revision: 3,
        window: 1000,
        reserved_output: 200,
        tokenizer: flint_protocol::worker::Tokenizer::O200k,
        file: Some("<p>hello world</p>\n".repeat(10)),
        prompt: Some("hello world".into()),
        ..Default::default()
    };
    let Next::Budget(estimate) = s.handle(WorkerRequest::Budget(request), 0.0) else { panic!("a report") };
    assert!(!estimate.exact);
    assert_eq!((estimate.revision, estimate.prompt), (3, 4));
    assert_eq!(s.budget_recounts(), 2);
    let prompt_only = flint_protocol::worker::BudgetRequest {
        revision: 4,
        window: 1000,
        reserved_output: 200,
        tokenizer: flint_protocol::worker::Tokenizer::O200k,
        prompt: Some("hello there world".into()),
        ..Default::default()
    };
    let Next::Budget(changed) = s.handle(WorkerRequest::Budget(prompt_only), 1.0) else { panic!("a report") };
    assert_eq!(s.budget_recounts(), 3, "the file was not counted again");
    assert_eq!((changed.revision, changed.file), (4, estimate.file));
    let exact = s.set_counter(TokenCounter::o200k()).expect("a request was received");
    assert!(exact.exact);
    assert_eq!(exact.revision, 4);
    assert_eq!(exact.prompt, 3);
    assert_eq!(exact.total, exact.system + exact.file + exact.prompt);
}

#[test]
fn the_worker_is_quiet_only_with_no_stream_open_and_no_recent_text() {
    let mut s = Session::new();
    assert!(s.is_quiet(0.0, 500.0));
    s.handle(WorkerRequest::Reset { stream: 1, preview_only: false, base: None }, 0.0);
    assert!(!s.is_quiet(10_000.0, 500.0), "a stream is open");
    s.text(1, "hi", 100.0);
    s.handle(WorkerRequest::Finish { stream: 1 }, 200.0);
    assert!(!s.is_quiet(300.0, 500.0), "text came 200 ms ago");
    assert!(s.is_quiet(600.0, 500.0));
}

#[test]
fn finishing_a_stream_the_worker_no_longer_has_sends_nothing() {
    let mut s = Session::new();
    s.handle(WorkerRequest::Reset { stream: 1, preview_only: false, base: None }, 0.0);
    sent(s.text(1, "<p>a</p>\n", 0.0));
    assert!(s.has_stream(1));
    assert_eq!(sent(s.handle(WorkerRequest::Finish { stream: 1 }, 1.0)).len(), 1);
    assert!(!s.has_stream(1));
    assert_eq!(s.handle(WorkerRequest::Finish { stream: 1 }, 2.0), Next::Idle, "the page said so too");
}
