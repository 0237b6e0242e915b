//! The worker's state: one parser per stream, and the updates it owes the page.
//!
//! Requests are applied as they arrive, but updates leave at most once per [`FRAME_MS`] per stream:
//! the page cannot paint faster, and each message costs the main thread. The first update after a
//! quiet period leaves at once (time to first token is the product); later ones wait for the next
//! frame slot. `Finish` always answers at once.

use std::collections::BTreeMap;

use flint_protocol::StreamId;
use flint_protocol::worker::{AnswerFile, ParsedUpdate, WorkerRequest};

use crate::document::preview_document;
use crate::parser::StreamParser;

/// Minimum time between two updates of one stream, in milliseconds.
pub const FRAME_MS: f64 = 16.0;

/// Longest wait between two previews of a streaming answer.
pub const MAX_PREVIEW_MS: f64 = 250.0;

/// How often a stream's preview document is rebuilt and sent while `streams` stream at once: every
/// frame for one, then spread so that about one document per frame leaves in all. A preview is a
/// whole page (tens of KB) that the page copies and the preview frame morphs; ten variation tiles
/// cannot all be repainted every frame anyway, so sending them more often is work thrown away.
pub fn preview_interval_ms(streams: usize) -> f64 {
    (FRAME_MS * streams.max(1) as f64).min(MAX_PREVIEW_MS)
}

/// Per-stream progress: what the page has already been sent.
#[derive(Debug, Default)]
struct StreamState {
    parser: StreamParser,
    /// Which file the editor shows (`None`: prose), once an update has been sent.
    shown: Option<Option<usize>>,
    /// Bytes of the shown text already sent.
    sent_len: usize,
    /// Parser revision the last preview was built from.
    preview_revision: Option<u64>,
    /// When the last preview was sent.
    preview_sent_ms: Option<f64>,
    last_preview: Option<String>,
    /// Text arrived since the last update.
    dirty: bool,
    /// Send previews only, and the code whole at the end.
    preview_only: bool,
}

impl StreamState {
    /// The update owed to the page at `now_ms`, or `None` when nothing changed; the preview only
    /// when `preview_every_ms` has passed since the last one (always on the last update).
    fn take_update(
        &mut self,
        stream: StreamId,
        done: bool,
        now_ms: f64,
        preview_every_ms: f64,
    ) -> Option<ParsedUpdate> {
        let main = self.parser.main_file();
        if self.preview_only && done {
            // The code was held back: send it whole.
            self.shown = None;
        }
        let code_reset = self.shown != Some(main);
        if code_reset {
            self.sent_len = 0;
        }
        let (committed, tail) = self.parser.visible(main);
        let mut code_append = String::new();
        if self.preview_only && !done {
            // Nothing of the code is sent until the end.
        } else if self.sent_len < committed.len() {
            code_append.push_str(&committed[self.sent_len..]);
            code_append.push_str(tail);
        } else if let Some(rest) = tail.get(self.sent_len - committed.len()..) {
            code_append.push_str(rest);
        }
        self.sent_len += code_append.len();
        if !self.preview_only || done {
            self.shown = Some(main);
        }

        let mut preview = None;
        let preview_due = self.preview_sent_ms.is_none_or(|t| now_ms - t >= preview_every_ms);
        if (self.preview_revision != Some(self.parser.revision()) && preview_due) || done {
            self.preview_revision = Some(self.parser.revision());
            let doc = preview_document(&self.parser);
            if doc != self.last_preview || done {
                preview.clone_from(&doc);
                self.last_preview = doc;
                self.preview_sent_ms = Some(now_ms);
            }
        }

        // A preview held back keeps the stream dirty, so a later flush sends it.
        self.dirty = self.preview_revision != Some(self.parser.revision());
        let code_news = !self.preview_only && (code_reset || !code_append.is_empty());
        if !done && !code_news && preview.is_none() {
            return None;
        }
        let code_reset = code_reset && (!self.preview_only || done);
        let language = match main {
            Some(i) => self.parser.files()[i].language.clone(),
            None => "markdown".to_owned(),
        };
        let files = if done { answer_files(&self.parser) } else { Vec::new() };
        Some(ParsedUpdate { stream, code_append, code_reset, language, preview, done, files })
    }
}

/// The answer's files, for export.
fn answer_files(parser: &StreamParser) -> Vec<AnswerFile> {
    let main = parser.main_file();
    parser
        .files()
        .iter()
        .enumerate()
        .map(|(i, f)| AnswerFile {
            name: f.name.clone(),
            language: f.language.clone(),
            content: f.content.clone(),
            main: main == Some(i),
        })
        .collect()
}

/// What the worker glue should do after a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Nothing to send yet.
    Idle,
    /// Send these updates now.
    Send(Vec<ParsedUpdate>),
    /// Call [`Session::flush`] after this many milliseconds (no timer is pending yet).
    FlushIn(f64),
}

/// All streams the page has sent text for.
#[derive(Debug, Default)]
pub struct Session {
    streams: BTreeMap<StreamId, StreamState>,
    last_flush_ms: Option<f64>,
    timer_pending: bool,
}

impl Session {
    /// An empty session.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one request received at `now_ms` (any monotonic clock).
    pub fn handle(&mut self, request: WorkerRequest, now_ms: f64) -> Next {
        match request {
            WorkerRequest::Reset { stream, preview_only } => {
                self.streams.insert(stream, StreamState { preview_only, ..StreamState::default() });
                Next::Idle
            }
            WorkerRequest::Append { stream, text } => {
                let state = self.streams.entry(stream).or_default();
                state.parser.push(&text);
                state.dirty = true;
                self.schedule(now_ms)
            }
            WorkerRequest::Finish { stream } => {
                let mut state = self.streams.remove(&stream).unwrap_or_default();
                state.parser.finish();
                Next::Send(state.take_update(stream, true, now_ms, 0.0).into_iter().collect())
            }
        }
    }

    /// Sends what is owed at `now_ms`; the glue calls this when the timer from [`Next::FlushIn`] fires.
    pub fn flush(&mut self, now_ms: f64) -> Vec<ParsedUpdate> {
        self.timer_pending = false;
        self.last_flush_ms = Some(now_ms);
        let every = preview_interval_ms(self.streams.len());
        self.streams
            .iter_mut()
            .filter(|(_, s)| s.dirty)
            .filter_map(|(&id, s)| s.take_update(id, false, now_ms, every))
            .collect()
    }

    /// After a flush: when a stream still owes an update (a preview held back), the delay after
    /// which to flush again; the timer counts as pending from here.
    pub fn rearm(&mut self) -> Option<f64> {
        if self.timer_pending || !self.streams.values().any(|s| s.dirty) {
            return None;
        }
        self.timer_pending = true;
        Some(FRAME_MS)
    }

    fn schedule(&mut self, now_ms: f64) -> Next {
        if self.timer_pending {
            return Next::Idle;
        }
        let since = self.last_flush_ms.map_or(f64::INFINITY, |t| now_ms - t);
        if since >= FRAME_MS {
            Next::Send(self.flush(now_ms))
        } else {
            self.timer_pending = true;
            Next::FlushIn(FRAME_MS - since)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(stream: StreamId, text: &str) -> WorkerRequest {
        WorkerRequest::Append { stream, text: text.to_owned() }
    }

    fn sent(next: Next) -> Vec<ParsedUpdate> {
        match next {
            Next::Send(v) => v,
            other => panic!("expected updates, got {other:?}"),
        }
    }

    #[test]
    fn first_append_is_sent_at_once_then_coalesced() {
        let mut s = Session::new();
        s.handle(WorkerRequest::Reset { stream: 1, preview_only: false }, 0.0);
        let first = sent(s.handle(append(1, "Here:\n"), 0.0));
        assert_eq!(first.len(), 1);
        assert!(first[0].code_reset);
        assert_eq!(first[0].language, "markdown");
        assert_eq!(first[0].code_append, "Here:\n");
        assert_eq!(s.handle(append(1, "```html\n<p>"), 5.0), Next::FlushIn(11.0));
        assert_eq!(s.handle(append(1, "hi</p>\n"), 8.0), Next::Idle);
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
        sent(s.handle(append(3, "<!DOCTYPE html>\n<p>x</p>"), 0.0));
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
        let first = sent(s.handle(append(4, "```html index.html\n<p>\n```\n```css style.css\np{}\n"), 0.0));
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
            s.handle(WorkerRequest::Reset { stream: id, preview_only: false }, 0.0);
        }
        let first = sent(s.handle(append(1, "<!DOCTYPE html>\n<p>a</p>\n"), 0.0));
        assert!(first[0].preview.is_some(), "the first preview leaves at once");
        assert!(matches!(s.handle(append(1, "<p>b</p>\n"), 10.0), Next::FlushIn(_)));
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
        s.handle(WorkerRequest::Reset { stream: 5, preview_only: true }, 0.0);
        let first = sent(s.handle(append(5, "Here:\n```html\n<p>a</p>\n"), 0.0));
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].code_append, "");
        assert!(!first[0].code_reset);
        assert_eq!(first[0].preview.as_deref(), Some("<p>a</p>\n"));
        let Next::FlushIn(_) = s.handle(append(5, "<p>b</p>\n"), 1.0) else { panic!("expected a timer") };
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
        sent(s.handle(append(1, "```css\na{}\n"), 0.0));
        let Next::FlushIn(_) = s.handle(append(2, "```html\n<b>"), 1.0) else { panic!("expected a timer") };
        let updates = s.flush(16.0);
        assert_eq!(updates.len(), 1, "only stream 2 changed");
        assert_eq!(updates[0].stream, 2);
        assert_eq!(updates[0].code_append, "<b>");
    }

    #[test]
    fn unchanged_stream_sends_nothing() {
        let mut s = Session::new();
        sent(s.handle(append(1, "```html\n<p>"), 0.0));
        // A lone backtick could start the closing fence: nothing new to show yet.
        assert_eq!(
            s.handle(append(1, "\n`"), 20.0),
            Next::Send(vec![ParsedUpdate {
                stream: 1,
                code_append: "\n".into(),
                code_reset: false,
                language: "html".into(),
                preview: Some("<p>\n".into()),
                done: false,
                files: vec![],
            }])
        );
        assert_eq!(s.handle(append(1, "`"), 40.0), Next::Send(vec![]));
    }
}
