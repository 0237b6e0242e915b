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
    last_preview: Option<String>,
    /// Text arrived since the last update.
    dirty: bool,
}

impl StreamState {
    /// The update owed to the page, or `None` when nothing changed.
    fn take_update(&mut self, stream: StreamId, done: bool) -> Option<ParsedUpdate> {
        let main = self.parser.main_file();
        let code_reset = self.shown != Some(main);
        if code_reset {
            self.sent_len = 0;
        }
        let (committed, tail) = self.parser.visible(main);
        let mut code_append = String::new();
        if self.sent_len < committed.len() {
            code_append.push_str(&committed[self.sent_len..]);
            code_append.push_str(tail);
        } else if let Some(rest) = tail.get(self.sent_len - committed.len()..) {
            code_append.push_str(rest);
        }
        self.sent_len += code_append.len();
        self.shown = Some(main);

        let mut preview = None;
        if self.preview_revision != Some(self.parser.revision()) || done {
            self.preview_revision = Some(self.parser.revision());
            let doc = preview_document(&self.parser);
            if doc != self.last_preview || done {
                preview.clone_from(&doc);
                self.last_preview = doc;
            }
        }

        self.dirty = false;
        if !done && !code_reset && code_append.is_empty() && preview.is_none() {
            return None;
        }
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
            WorkerRequest::Reset { stream } => {
                self.streams.insert(stream, StreamState::default());
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
                Next::Send(state.take_update(stream, true).into_iter().collect())
            }
        }
    }

    /// Sends what is owed at `now_ms`; the glue calls this when the timer from [`Next::FlushIn`] fires.
    pub fn flush(&mut self, now_ms: f64) -> Vec<ParsedUpdate> {
        self.timer_pending = false;
        self.last_flush_ms = Some(now_ms);
        self.streams
            .iter_mut()
            .filter(|(_, s)| s.dirty)
            .filter_map(|(&id, s)| s.take_update(id, false))
            .collect()
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
        s.handle(WorkerRequest::Reset { stream: 1 }, 0.0);
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
