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
use flint_protocol::project::ProjectShape;
use flint_protocol::worker::{BudgetReport, ParsedUpdate, PreviewPackages, WorkerRequest};

use crate::budget::CountedRequest;
use crate::project_page::{files_page, project_file};
use crate::project_warm::ready_document;
use crate::stream_state::StreamState;
use crate::tokens::TokenCounter;

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
    /// Send this page now (the page is waiting for it): its id, and the page with what its build
    /// found, or the problems.
    Page(u32, Result<(String, ProjectShape), Vec<String>>),
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
    /// What a project's bare imports resolve to (the gateway's vendored packages).
    packages: PreviewPackages,
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
            packages: PreviewPackages::default(),
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
            // The stream ended, or the page stopped listening. Both the worker (on the gateway's
            // last frame) and the page (on cancel) say so: the second finds nothing left.
            WorkerRequest::Finish { stream } => {
                let Some(mut state) = self.streams.remove(&stream) else { return Next::Idle };
                state.finish();
                Next::Send(state.take_update(stream, true, now_ms, 0.0, &self.packages).into_iter().collect())
            }
            WorkerRequest::Budget(request) => Next::Budget(self.budget.update(request, &self.counter)),
            WorkerRequest::Packages(packages) => {
                self.packages = packages;
                Next::Idle
            }
            WorkerRequest::Page { id, files, packages } => {
                let files: Vec<(String, String)> = files.into_iter().map(project_file).collect();
                Next::Page(id, files_page(&files, packages.as_ref().unwrap_or(&self.packages)))
            }
            WorkerRequest::WarmPage { id } => Next::Page(
                id,
                ready_document(&self.packages)
                    .map(|page| (page, ProjectShape::default()))
                    .ok_or_else(|| vec!["The gateway serves no React to previews.".to_owned()]),
            ),
            // The connection's requests are the glue's, and so is the likeness check (it reads the
            // worker's clock to say what it cost; `likeness::request::answer`).
            WorkerRequest::Connect(_)
            | WorkerRequest::Start(_)
            | WorkerRequest::Cancel { .. }
            | WorkerRequest::UseKey { .. }
            | WorkerRequest::Online { .. }
            | WorkerRequest::Likeness { .. } => Next::Idle,
        }
    }

    /// More text of `stream`, in order, received at `now_ms`.
    pub fn text(&mut self, stream: StreamId, text: &str, now_ms: f64) -> Next {
        self.last_text_ms = Some(now_ms);
        let counter = self.counter;
        let state = self.streams.entry(stream).or_insert_with(|| StreamState::new(counter, false, None));
        state.push(text);
        self.schedule(now_ms)
    }

    /// Whether the worker parses `stream` (it was reset and not finished).
    pub fn has_stream(&self, stream: StreamId) -> bool {
        self.streams.contains_key(&stream)
    }

    /// Something other than text is owed to the page (a stream's event): an update leaves at the
    /// next frame slot, like text.
    pub fn wake(&mut self, now_ms: f64) -> Next {
        self.schedule(now_ms)
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
        let packages = &self.packages;
        self.streams
            .iter_mut()
            .filter(|(_, s)| s.dirty)
            .filter_map(|(&id, s)| s.take_update(id, false, now_ms, every, packages))
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
