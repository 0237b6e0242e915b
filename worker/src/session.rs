//! The worker's state: one parser per stream, and the updates it owes the page; the parts of the
//! next request, counted for the budget.
//!
//! Requests are applied as they arrive, but updates leave at most once per [`FRAME_MS`] per stream:
//! the page cannot paint faster, and each message costs the main thread. The first update after a
//! quiet period leaves at once (time to first token is the product); later ones wait for the next
//! frame slot. `Finish` and `Budget` always answer at once.
//!
//! A stream reset with a `base` is an edit of that file ([`crate::edit_stream`]): until the answer
//! turns out to be a whole new file, the editor and the preview show the base with the answer's
//! blocks applied, sent whole each time a block changes it (an edit can land anywhere in the file,
//! so there is no append to send), and every update that changes it carries an [`EditReport`].
//!
//! Token counts start as estimates: the exact counter takes 0.3 s to build in wasm, so the glue
//! builds it after the worker is ready and hands it over with [`Session::set_counter`].

use std::collections::BTreeMap;

use flint_protocol::StreamId;
use flint_protocol::worker::{
    AnswerFile, BudgetReport, EditKind, EditReport, LineEdit, ParsedUpdate, WorkerRequest,
};

use crate::budget::CountedRequest;
use crate::diff::diff;
use crate::document::preview_document;
use crate::edit_stream::EditStream;
use crate::parser::StreamParser;
use crate::tokens::{IncrementalCount, TokenCounter};

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
#[derive(Debug)]
struct StreamState {
    parser: StreamParser,
    /// Which file the editor shows (`None`: prose), once an update has been sent.
    shown: Option<Option<usize>>,
    /// Bytes of the shown text already sent.
    sent_len: usize,
    /// Parser revision the last preview was built from.
    preview_revision: Option<u64>,
    preview: PreviewPacing,
    /// Text arrived since the last update.
    dirty: bool,
    /// Send previews only, and the code whole at the end.
    preview_only: bool,
    /// Tokens of the answer so far (and the answer itself).
    tokens: IncrementalCount,
    /// The count in the last update sent.
    tokens_sent: Option<usize>,
    /// For a stream with a base: the edits, and what of them the page has.
    edit: Option<EditView>,
}

/// An edit stream and what of it the page has been sent.
#[derive(Debug)]
struct EditView {
    stream: EditStream,
    /// Revision of the edited text the editor shows.
    shown: Option<u64>,
    /// Revision of the edited text the last preview was built from.
    preview_revision: Option<u64>,
    /// Revision of the last report sent.
    report_sent: Option<u64>,
}

/// When the last preview left, and what it was.
#[derive(Debug, Default)]
struct PreviewPacing {
    sent_ms: Option<f64>,
    last: Option<String>,
}

impl PreviewPacing {
    fn due(&self, now_ms: f64, every_ms: f64) -> bool {
        self.sent_ms.is_none_or(|t| now_ms - t >= every_ms)
    }

    /// `doc` if it differs from the last preview sent (or `done`: the last update always has it).
    fn offer(&mut self, doc: Option<String>, now_ms: f64, done: bool) -> Option<String> {
        if doc == self.last && !done {
            return None;
        }
        self.last.clone_from(&doc);
        self.sent_ms = Some(now_ms);
        doc
    }
}

/// The editor's and the preview's part of an update.
#[derive(Debug, Default)]
struct Shown {
    code_reset: bool,
    code_edits: Vec<LineEdit>,
    code_append: String,
    language: String,
    preview: Option<String>,
    /// Whether any of it is news to the page.
    news: bool,
}

impl StreamState {
    fn new(counter: TokenCounter, preview_only: bool, base: Option<String>) -> Self {
        Self {
            parser: StreamParser::new(),
            shown: None,
            sent_len: 0,
            preview_revision: None,
            preview: PreviewPacing::default(),
            dirty: false,
            preview_only,
            tokens: IncrementalCount::new(counter),
            tokens_sent: None,
            edit: base.map(|base| EditView {
                stream: EditStream::new(base),
                shown: None,
                preview_revision: None,
                report_sent: None,
            }),
        }
    }

    fn push(&mut self, text: &str) {
        self.parser.push(text);
        self.tokens.push(text);
        if let Some(edit) = &mut self.edit {
            edit.stream.push(text, self.tokens.text(), &self.parser);
        }
        self.dirty = true;
    }

    /// Ends the answer (its tokens are recounted in full by the last update).
    fn finish(&mut self) {
        self.parser.finish();
        if let Some(edit) = &mut self.edit {
            edit.stream.finish(self.tokens.text(), &self.parser);
        }
    }

    /// Counts the answer so far with `counter` from now on.
    fn set_counter(&mut self, counter: TokenCounter) {
        let mut tokens = IncrementalCount::new(counter);
        tokens.push(self.tokens.text());
        self.tokens = tokens;
    }

    /// The update owed to the page at `now_ms`, or `None` when nothing changed; the preview only
    /// when `preview_every_ms` has passed since the last one (always on the last update).
    fn take_update(
        &mut self,
        stream: StreamId,
        done: bool,
        now_ms: f64,
        preview_every_ms: f64,
    ) -> Option<ParsedUpdate> {
        let shown = match &mut self.edit {
            Some(edit) if edit.stream.kind() != EditKind::WholeFile => {
                // The parser's view is not on screen: showing it later starts afresh.
                (self.shown, self.preview_revision) = (None, None);
                let shown =
                    edit.take_shown(&mut self.preview, self.preview_only, done, now_ms, preview_every_ms);
                self.dirty = edit.preview_revision != Some(edit.stream.revision());
                shown
            }
            edit => {
                if let Some(edit) = edit {
                    (edit.shown, edit.preview_revision) = (None, None);
                }
                self.take_parsed(done, now_ms, preview_every_ms)
            }
        };

        let answer_tokens = if done { self.tokens.recount() } else { self.tokens.tokens() };
        let mut edits = None;
        let mut files = Vec::new();
        if let Some(edit) = &mut self.edit {
            let revision = edit.stream.report_revision();
            if done || edit.report_sent != Some(revision) {
                edit.report_sent = Some(revision);
                edits = Some(edit.stream.report());
            }
        }
        if done {
            files = self.final_files(&mut edits);
        }
        // An edit stream shows nothing of the answer while its blocks stream: the count is the sign
        // of progress, so it is news of its own there.
        let tokens_news = self.edit.is_some() && self.tokens_sent != Some(answer_tokens);
        if !done && !shown.news && edits.is_none() && !tokens_news {
            return None;
        }
        self.tokens_sent = Some(answer_tokens);
        Some(ParsedUpdate {
            stream,
            code_edits: shown.code_edits,
            code_append: shown.code_append,
            code_reset: shown.code_reset,
            language: shown.language,
            preview: shown.preview,
            done,
            files,
            answer_tokens: u32::try_from(answer_tokens).unwrap_or(u32::MAX),
            edits,
        })
    }

    /// The editor's and the preview's news from the parser: the answer's main file, appended.
    fn take_parsed(&mut self, done: bool, now_ms: f64, preview_every_ms: f64) -> Shown {
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
        let revision = self.parser.revision();
        if (self.preview_revision != Some(revision) && self.preview.due(now_ms, preview_every_ms)) || done {
            self.preview_revision = Some(revision);
            preview = self.preview.offer(preview_document(&self.parser), now_ms, done);
        }

        // A preview held back keeps the stream dirty, so a later flush sends it.
        self.dirty = self.preview_revision != Some(revision);
        let code_news = !self.preview_only && (code_reset || !code_append.is_empty());
        let language = match main {
            Some(i) => self.parser.files()[i].language.clone(),
            None => "markdown".to_owned(),
        };
        Shown {
            code_reset: code_reset && (!self.preview_only || done),
            code_edits: Vec::new(),
            code_append,
            language,
            news: code_news || preview.is_some(),
            preview,
        }
    }

    /// The answer's files for the last update; for an edit stream, also the hunks from the base to
    /// the final text in its report.
    fn final_files(&self, report: &mut Option<EditReport>) -> Vec<AnswerFile> {
        let Some(edit) = &self.edit else { return answer_files(&self.parser, None) };
        let text = edit.stream.final_text(&self.parser);
        if let Some(report) = report {
            report.hunks = diff(edit.stream.base(), &text);
        }
        match edit.stream.kind() {
            EditKind::WholeFile => answer_files(&self.parser, Some(text)),
            EditKind::Edits | EditKind::Prose => vec![edit.stream.answer_file()],
        }
    }
}

impl EditView {
    /// The editor's and the preview's news: the edited text, whole, each time it changes.
    fn take_shown(
        &mut self,
        pacing: &mut PreviewPacing,
        preview_only: bool,
        done: bool,
        now_ms: f64,
        preview_every_ms: f64,
    ) -> Shown {
        let revision = self.stream.revision();
        let held_back = preview_only && !done;
        let changed = !held_back && (self.shown != Some(revision) || preview_only);
        // The editor already shows an earlier revision: send the blocks' line edits rather than
        // the whole file again (Monaco re-tokenises a replaced model; an edit touches a few lines).
        let line_edits = match self.shown {
            Some(shown) if changed && !preview_only => self.stream.take_line_edits(shown),
            _ => {
                self.stream.take_line_edits(revision);
                None
            }
        };
        let code_reset = changed && line_edits.is_none();
        if !held_back {
            self.shown = Some(revision);
        }
        let mut preview = None;
        if (self.preview_revision != Some(revision) && pacing.due(now_ms, preview_every_ms)) || done {
            self.preview_revision = Some(revision);
            preview = pacing.offer(self.stream.preview(), now_ms, done);
        }
        let code_edits = line_edits.unwrap_or_default();
        Shown {
            code_reset,
            code_append: if code_reset { self.stream.text().to_owned() } else { String::new() },
            language: self.stream.language().to_owned(),
            news: code_reset || !code_edits.is_empty() || preview.is_some(),
            code_edits,
            preview,
        }
    }
}

/// The answer's files, for export; `main_text` replaces the main file's text.
fn answer_files(parser: &StreamParser, mut main_text: Option<String>) -> Vec<AnswerFile> {
    let main = parser.main_file();
    parser
        .files()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let is_main = main == Some(i);
            let content = match main_text.take_if(|_| is_main) {
                Some(text) => text,
                None => f.content.clone(),
            };
            AnswerFile { name: f.name.clone(), language: f.language.clone(), content, main: is_main }
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
    /// Send this budget report now (it does not wait for a frame: the page is waiting for it).
    Budget(BudgetReport),
}

/// All streams the page has sent text for, and the parts of its next request.
#[derive(Debug)]
pub struct Session {
    streams: BTreeMap<StreamId, StreamState>,
    last_flush_ms: Option<f64>,
    /// When text of any stream last arrived.
    last_text_ms: Option<f64>,
    timer_pending: bool,
    counter: TokenCounter,
    budget: CountedRequest,
}

impl Default for Session {
    fn default() -> Self {
        Self {
            streams: BTreeMap::new(),
            last_flush_ms: None,
            last_text_ms: None,
            timer_pending: false,
            counter: TokenCounter::estimating(),
            budget: CountedRequest::default(),
        }
    }
}

impl Session {
    /// An empty session that estimates token counts until [`set_counter`](Self::set_counter).
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one request received at `now_ms` (any monotonic clock).
    pub fn handle(&mut self, request: WorkerRequest, now_ms: f64) -> Next {
        match request {
            WorkerRequest::Reset { stream, preview_only, base } => {
                self.streams.insert(stream, StreamState::new(self.counter, preview_only, base));
                Next::Idle
            }
            WorkerRequest::Append { stream, text } => {
                self.last_text_ms = Some(now_ms);
                let counter = self.counter;
                let state =
                    self.streams.entry(stream).or_insert_with(|| StreamState::new(counter, false, None));
                state.push(&text);
                self.schedule(now_ms)
            }
            WorkerRequest::Finish { stream } => {
                let mut state = self
                    .streams
                    .remove(&stream)
                    .unwrap_or_else(|| StreamState::new(self.counter, false, None));
                state.finish();
                Next::Send(state.take_update(stream, true, now_ms, 0.0).into_iter().collect())
            }
            WorkerRequest::Budget(request) => Next::Budget(self.budget.update(request, &self.counter)),
        }
    }

    /// Counts tokens with `counter` from now on (the glue hands over the exact one once built):
    /// streams recount their answers so far, and the stored request parts are counted again. The
    /// fresh budget report, if the page ever asked for one.
    pub fn set_counter(&mut self, counter: TokenCounter) -> Option<BudgetReport> {
        self.counter = counter;
        for stream in self.streams.values_mut() {
            stream.set_counter(counter);
        }
        self.budget.recount(&counter)
    }

    /// No stream is open and none has had text for `quiet_ms`: a good moment for work that blocks
    /// the worker (building the exact tokenizer), since no answer is waiting on it.
    pub fn is_quiet(&self, now_ms: f64, quiet_ms: f64) -> bool {
        self.streams.is_empty() && self.last_text_ms.is_none_or(|t| now_ms - t >= quiet_ms)
    }

    /// How many request parts have been counted so far (see [`CountedRequest::recounts`]).
    pub fn budget_recounts(&self) -> usize {
        self.budget.recounts()
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
#[path = "session_tests.rs"]
mod tests;
