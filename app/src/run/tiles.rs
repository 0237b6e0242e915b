//! Variations and compare: one prompt, several streams on the same socket, each painted into its
//! own tile (status, metrics, a live sandboxed preview). The editor is left alone until the person
//! promotes a tile; then its code becomes the current version.
//!
//! While tiles run, the page's status is the group's: streaming while any tile streams, then done
//! if any tile finished.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use flint_protocol::worker::{AnswerFile, EditKind, EditReport, ParsedUpdate, WorkerRequest};
use flint_protocol::{FinishReason, StreamId, StreamMetrics, Usage};
use leptos::prelude::*;

use super::{Inner, Outcome, RunEvent, Runner, StreamStatus};
use crate::console::{ConsoleLevel, ConsoleLog};
use crate::gateway::{StreamEvent, StreamHandler};
use crate::interop::now_ms;
use crate::interop::preview::Preview;
use crate::metrics::LiveMetrics;
use crate::prompt::{Job, start_request};
use crate::variations::{Lane, RaceTimes};
use crate::versions::Origin;

/// What a tile shows; cheap to clone.
#[derive(Debug, Clone)]
pub struct Tile {
    /// Unique across runs (a key for the list).
    pub key: u64,
    /// 0-based position; the person sees `index + 1`.
    pub index: usize,
    /// `#3 · t 0.80`, or the model when comparing.
    pub label: String,
    /// The model it runs on.
    pub model: String,
    /// Its stream's status.
    pub status: RwSignal<StreamStatus>,
    /// While its stream waits for the provider: how many start before it.
    pub queued: RwSignal<Option<u32>>,
    /// Why it failed.
    pub error: RwSignal<Option<String>>,
    /// What an edit answer did to the code, when some of it did not apply.
    pub note: RwSignal<Option<String>>,
    /// Its timing and token count.
    pub metrics: RwSignal<LiveMetrics>,
    /// When its preview first showed and when it finished.
    pub race: RwSignal<RaceTimes>,
    /// Its code is the current version in the editor.
    pub promoted: RwSignal<bool>,
}

/// How often the tiles' numbers are repainted while they stream: ten tiles at 60 deltas a second
/// each would otherwise re-render the page's text 600 times a second for numbers nobody can read.
const METRICS_EVERY_MS: f64 = 100.0;

/// Live metrics kept off the reactive graph and shown at most every [`METRICS_EVERY_MS`].
#[derive(Default)]
pub(super) struct ThrottledMetrics {
    live: RefCell<LiveMetrics>,
    shown_ms: Cell<f64>,
}

impl ThrottledMetrics {
    pub(super) fn start(&self, started: LiveMetrics, signal: RwSignal<LiveMetrics>) {
        self.shown_ms.set(started.started_ms.unwrap_or_default());
        *self.live.borrow_mut() = started.clone();
        signal.set(started);
    }

    fn on_text(&self, now: f64, len: usize, signal: RwSignal<LiveMetrics>) {
        self.live.borrow_mut().on_text(now, len);
        if now - self.shown_ms.get() >= METRICS_EVERY_MS || self.live.borrow().bytes == len {
            self.shown_ms.set(now);
            signal.set(self.live.borrow().clone());
        }
    }

    fn on_done(&self, usage: Usage, metrics: StreamMetrics, signal: RwSignal<LiveMetrics>) {
        self.live.borrow_mut().on_done(usage, metrics);
        signal.set(self.live.borrow().clone());
    }

    /// Shows what is held back (the group's figures when its last tile ends).
    pub(super) fn flush(&self, signal: RwSignal<LiveMetrics>) {
        signal.set(self.live.borrow().clone());
    }
}

/// A tile's stream, as the runner drives it.
pub(super) struct TileRun {
    view: Tile,
    lane: Lane,
    /// The prompt every tile runs (shared).
    job: Rc<Job>,
    stream: Cell<Option<StreamId>>,
    started_ms: Cell<f64>,
    metrics: ThrottledMetrics,
    /// The complete page arrived (its scripts may run).
    page_complete: Cell<bool>,
    code: RefCell<String>,
    files: RefCell<Vec<AnswerFile>>,
    /// The latest preview document, kept for a preview attached late.
    document: RefCell<Option<String>>,
    preview: RefCell<Option<Preview>>,
    outcome: Cell<Option<Outcome>>,
    /// Cancelled by the person: what it shows is final.
    frozen: Cell<bool>,
    worker_finished: Cell<bool>,
}

impl TileRun {
    /// Text may still arrive: not finished, failed or stopped (a finished tile waiting for its
    /// page to show is past cancelling).
    fn streaming(&self) -> bool {
        self.view.status.get_untracked() == StreamStatus::Streaming
            && !self.frozen.get()
            && self.outcome.get().is_none()
    }
}

/// Tile keys: a run counter in the high bits, the index in the low ones.
static NEXT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Runner {
    /// Runs `job` once per lane, each into its own tile, replacing the previous tiles and
    /// stopping whatever runs now. The editor keeps its code until a tile is promoted.
    pub fn run_lanes(&self, lanes: Vec<Lane>, job: Job) {
        let inner = &self.0;
        let state = inner.state;
        if job.prompt.is_empty() {
            state.error.set(Some("Type what to build first.".into()));
            return;
        }
        if lanes.is_empty() {
            state
                .error
                .set(Some("No model is selected: pick one that is available (see the notice above).".into()));
            return;
        }
        // A single generation under way ends as cancelled (the saved session hears it), then goes.
        self.cancel();
        self.stop_current();
        inner.cancel_tiles();
        inner.group.set(true);
        state.error.set(None);
        state.served_by.set(None);
        state.console.update(ConsoleLog::clear);
        state.status.set(StreamStatus::Streaming);
        inner.group_metrics.start(LiveMetrics::started(now_ms()), state.metrics);

        state.review.set(None);
        state.edit.set(None);
        state.answer_tokens.set(0);
        let job = Rc::new(job);
        let run = NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tiles: Vec<Rc<TileRun>> = lanes
            .into_iter()
            .enumerate()
            .map(|(index, lane)| {
                Rc::new(TileRun {
                    view: Tile {
                        key: (run << 8) | index as u64,
                        index,
                        label: lane.label.clone(),
                        model: lane.model.clone(),
                        status: RwSignal::new(StreamStatus::Streaming),
                        queued: RwSignal::new(None),
                        error: RwSignal::new(None),
                        note: RwSignal::new(None),
                        metrics: RwSignal::new(LiveMetrics::default()),
                        race: RwSignal::new(RaceTimes::default()),
                        promoted: RwSignal::new(false),
                    },
                    lane,
                    job: Rc::clone(&job),
                    stream: Cell::new(None),
                    started_ms: Cell::new(0.0),
                    metrics: ThrottledMetrics::default(),
                    page_complete: Cell::new(false),
                    code: RefCell::new(String::new()),
                    files: RefCell::new(Vec::new()),
                    document: RefCell::new(None),
                    preview: RefCell::new(None),
                    outcome: Cell::new(None),
                    frozen: Cell::new(false),
                    worker_finished: Cell::new(false),
                })
            })
            .collect();
        state.tiles.set(tiles.iter().map(|t| t.view.clone()).collect());
        *inner.tiles.borrow_mut() = tiles.clone();
        for tile in &tiles {
            inner.start_tile(tile);
        }
    }

    /// Gives tile `key` its preview (or takes it away); a tile mounted after its stream began
    /// catches up with the latest document.
    pub fn attach_tile_preview(&self, key: u64, preview: Option<Preview>) {
        let Some(tile) = self.0.tile(key) else { return };
        let doc = tile.document.borrow().clone();
        if let (Some(preview), Some(doc)) = (&preview, doc) {
            if tile.page_complete.get() {
                // Its finished page may never have shown (the grid was hidden): show it now, and
                // the tile is done once it is on screen.
                self.0.show_tile_page(&tile, preview, &doc);
            } else {
                preview.snapshot(&doc);
            }
        }
        *tile.preview.borrow_mut() = preview;
    }

    /// Adds a line of tile `index`'s page console to the console panel, marked with its number.
    pub fn log_tile(&self, index: usize, level: ConsoleLevel, text: String) {
        self.0.state.console.update(|c| c.push(level, format!("#{}: {text}", index + 1)));
    }

    /// Stops tile `key`; what it shows stays.
    pub fn cancel_tile(&self, key: u64) {
        if let Some(tile) = self.0.tile(key) {
            self.0.cancel_tile(&tile);
            self.0.refresh_group();
        }
    }

    /// Runs tile `key` again with the same model and sampling.
    pub fn retry_tile(&self, key: u64) {
        let inner = &self.0;
        let Some(tile) = inner.tile(key) else { return };
        inner.cancel_tile(&tile);
        tile.code.borrow_mut().clear();
        tile.page_complete.set(false);
        tile.files.borrow_mut().clear();
        tile.document.take();
        tile.outcome.set(None);
        tile.frozen.set(false);
        tile.worker_finished.set(false);
        tile.view.error.set(None);
        tile.view.queued.set(None);
        tile.view.race.set(RaceTimes::default());
        tile.view.status.set(StreamStatus::Streaming);
        if let Some(preview) = tile.preview.borrow().as_ref() {
            preview.begin();
        }
        inner.group.set(true);
        inner.state.status.set(StreamStatus::Streaming);
        inner.start_tile(&tile);
    }

    /// Makes tile `key`'s code the current version: the editor and the main preview show it and
    /// the saved session keeps it. A tile still streaming, or with no code, cannot be promoted.
    pub fn promote(&self, key: u64) -> Result<(), &'static str> {
        let inner = &self.0;
        let tile = inner.tile(key).ok_or("that variation is gone")?;
        if tile.streaming() {
            return Err("still streaming: promote it once it is done, or cancel it first");
        }
        let code = tile.code.borrow().clone();
        if code.trim().is_empty() {
            return Err("it has no code to promote");
        }
        inner.keep_version_from(tile.job.parent, &code, &tile.job.prompt, &tile.lane.model, Origin::Promoted);
        // The person generated this page and picked it: it runs, as it did in its tile.
        inner.state.held.set(false);
        inner.show_version(code, tile.document.borrow().clone(), tile.files.borrow().clone());
        for other in inner.tiles.borrow().iter() {
            other.view.promoted.set(other.view.key == key);
        }
        // The saved session and the history keep the promoted version like a finished generation.
        inner.notify(RunEvent::Started { model: &tile.lane.model, prompt: &tile.job.prompt });
        inner.notify(RunEvent::Ended(StreamStatus::Done));
        Ok(())
    }
}

impl Inner {
    pub(super) fn tile(&self, key: u64) -> Option<Rc<TileRun>> {
        self.tiles.borrow().iter().find(|t| t.view.key == key).cloned()
    }

    fn tile_by_stream(&self, id: StreamId) -> Option<Rc<TileRun>> {
        self.tiles.borrow().iter().find(|t| t.stream.get() == Some(id)).cloned()
    }

    fn start_tile(self: &Rc<Self>, tile: &Rc<TileRun>) {
        let weak_inner = Rc::downgrade(self);
        let weak_tile = Rc::downgrade(tile);
        let id_cell = Rc::new(Cell::new(0));
        let id_for_handler = Rc::clone(&id_cell);
        let handler: StreamHandler = Rc::new(move |event| {
            if let (Some(inner), Some(tile)) = (weak_inner.upgrade(), weak_tile.upgrade()) {
                inner.on_tile_event(&tile, id_for_handler.get(), event);
            }
        });
        let mut request = start_request(&tile.lane.model, &tile.job);
        request.params = crate::profiles::merge(&request.params, &tile.lane.params);
        let now = now_ms();
        tile.started_ms.set(now);
        let started =
            LiveMetrics::started(now).priced(tile.job.price_of(&tile.lane.model), tile.job.prompt_tokens);
        tile.metrics.start(started, tile.view.metrics);
        let id = (self.start)(request, handler);
        id_cell.set(id);
        tile.stream.set(Some(id));
        self.send(WorkerRequest::Reset { stream: id, preview_only: true, base: tile.job.base.clone() });
    }

    /// Stops every tile still streaming (a new run replaces them).
    pub(super) fn cancel_tiles(&self) {
        let tiles = std::mem::take(&mut *self.tiles.borrow_mut());
        for tile in &tiles {
            self.cancel_tile(tile);
            if let Some(id) = tile.stream.get() {
                self.finish_tile_worker(tile, id);
            }
        }
        self.group.set(false);
    }

    pub(super) fn cancel_tile(&self, tile: &TileRun) {
        if !tile.streaming() {
            return;
        }
        tile.frozen.set(true);
        tile.view.status.set(StreamStatus::Cancelled);
        if let Some(id) = tile.stream.get() {
            (self.cancel)(id);
            self.finish_tile_worker(tile, id);
        }
    }

    /// Stops every tile (Esc, Cancel).
    pub(super) fn cancel_all_tiles(&self) {
        for tile in self.tiles.borrow().iter() {
            self.cancel_tile(tile);
        }
        self.refresh_group();
    }

    fn finish_tile_worker(&self, tile: &TileRun, id: StreamId) {
        if !tile.worker_finished.replace(true) {
            self.send(WorkerRequest::Finish { stream: id });
        }
    }

    fn set_tile_status(&self, tile: &TileRun, status: StreamStatus) {
        if status == StreamStatus::Done {
            let at = now_ms() - tile.started_ms.get();
            tile.view.race.update(|r| r.finished_ms = Some(at));
        }
        tile.view.status.set(status);
        self.refresh_group();
    }

    /// The page's status while tiles run: streaming while any streams, then done if any finished.
    pub(super) fn refresh_group(&self) {
        if !self.group.get() {
            return;
        }
        let statuses: Vec<StreamStatus> =
            self.tiles.borrow().iter().map(|t| t.view.status.get_untracked()).collect();
        let group = if statuses.contains(&StreamStatus::Streaming) {
            StreamStatus::Streaming
        } else if statuses.contains(&StreamStatus::Done) {
            StreamStatus::Done
        } else if statuses.contains(&StreamStatus::Cancelled) {
            StreamStatus::Cancelled
        } else {
            self.state.error.set(Some(format!(
                "Every variation failed ({}); see each tile.",
                self.tiles.borrow().first().and_then(|t| t.view.error.get_untracked()).unwrap_or_default()
            )));
            StreamStatus::Error
        };
        if self.state.status.get_untracked() != group {
            if group != StreamStatus::Streaming {
                self.group_metrics.flush(self.state.metrics);
            }
            self.state.status.set(group);
        }
    }

    fn on_tile_event(self: &Rc<Self>, tile: &Rc<TileRun>, id: StreamId, event: StreamEvent) {
        if tile.stream.get() != Some(id) {
            return;
        }
        if tile.view.queued.get_untracked().is_some() {
            tile.view.queued.set(None);
        }
        match event {
            StreamEvent::Queued { ahead } => tile.view.queued.set(Some(ahead)),
            StreamEvent::Started { .. } => {}
            StreamEvent::Delta { text } => {
                if tile.frozen.get() {
                    return;
                }
                let now = now_ms();
                tile.metrics.on_text(now, text.len(), tile.view.metrics);
                self.group_metrics.on_text(now, text.len(), self.state.metrics);
                self.send(WorkerRequest::Append { stream: id, text });
            }
            StreamEvent::Done { finish, usage, metrics } => {
                tile.metrics.on_done(usage, metrics, tile.view.metrics);
                self.state.add_spent(tile.view.metrics);
                if tile.frozen.get() {
                    return;
                }
                if finish == FinishReason::Cancelled {
                    tile.outcome.set(Some(Outcome::Stopped));
                    self.set_tile_status(tile, StreamStatus::Cancelled);
                } else {
                    tile.outcome.set(Some(Outcome::Complete));
                    if self.worker.is_none() {
                        self.set_tile_status(tile, StreamStatus::Done);
                    }
                }
                self.finish_tile_worker(tile, id);
            }
            StreamEvent::Failed { message, .. } => {
                tile.metrics.flush(tile.view.metrics);
                self.state.add_spent(tile.view.metrics);
                if tile.frozen.get() {
                    return;
                }
                tile.outcome.set(Some(Outcome::Stopped));
                tile.view.error.set(Some(message));
                self.set_tile_status(tile, StreamStatus::Error);
                self.finish_tile_worker(tile, id);
            }
        }
    }

    /// Runs a tile's complete page; the tile is done once it is on screen.
    fn show_tile_page(self: &Rc<Self>, tile: &Rc<TileRun>, preview: &Preview, doc: &str) {
        let (weak_inner, weak_tile) = (Rc::downgrade(self), Rc::downgrade(tile));
        let id = tile.stream.get();
        preview.run(doc, move || {
            if let (Some(inner), Some(tile)) = (weak_inner.upgrade(), weak_tile.upgrade())
                && tile.stream.get() == id
                && !tile.frozen.get()
                && tile.view.status.get_untracked() == StreamStatus::Streaming
            {
                inner.set_tile_status(&tile, StreamStatus::Done);
            }
        });
    }

    /// A worker update for a tile's stream (ignored when no tile has that stream).
    pub(super) fn apply_tile(self: &Rc<Self>, update: ParsedUpdate) {
        let Some(tile) = self.tile_by_stream(update.stream) else { return };
        // Tiles get their code whole with the last update, also when cancelled (it can be promoted).
        {
            let mut code = tile.code.borrow_mut();
            if update.code_reset {
                code.clear();
            }
            code.push_str(&update.code_append);
        }
        if update.done {
            *tile.files.borrow_mut() = update.files;
            tile.view.note.set(update.edits.as_ref().and_then(edit_note));
        }
        if tile.frozen.get() {
            return;
        }
        let complete = update.done && tile.outcome.get() == Some(Outcome::Complete);
        tile.page_complete.set(complete);
        let Some(doc) = update.preview else {
            if complete {
                self.set_tile_status(&tile, StreamStatus::Done);
            }
            return;
        };
        if tile.view.race.with_untracked(|r| r.first_preview_ms.is_none()) {
            let at = now_ms() - tile.started_ms.get();
            tile.view.race.update(|r| r.first_preview_ms = Some(at));
        }
        match tile.preview.borrow().as_ref() {
            Some(preview) if complete => self.show_tile_page(&tile, preview, &doc),
            Some(preview) => preview.snapshot(&doc),
            None if complete => self.set_tile_status(&tile, StreamStatus::Done),
            None => {}
        }
        *tile.document.borrow_mut() = Some(doc);
    }
}

/// What a tile says about its edit answer: blocks that did not apply are not dropped in silence.
fn edit_note(report: &EditReport) -> Option<String> {
    let failed = report.failed.len();
    let all = failed + report.applied as usize;
    match (failed, report.kind) {
        (0, EditKind::Prose) if report.hunks.is_empty() => Some("Changed nothing.".into()),
        (0, _) => None,
        (1, _) if all == 1 => Some("Its only edit did not apply.".into()),
        (n, _) if n == all => Some(format!("None of its {all} edits applied.")),
        (n, _) => Some(format!("{n} of its {all} edits did not apply.")),
    }
}

#[cfg(test)]
mod tests {
    use flint_protocol::worker::FailedEdit;

    use super::*;

    #[test]
    fn a_tile_says_when_its_edits_did_not_all_apply() {
        let mut report = EditReport { kind: EditKind::Edits, applied: 2, ..Default::default() };
        assert_eq!(edit_note(&report), None);
        report.failed = vec![FailedEdit::default()];
        assert_eq!(edit_note(&report).as_deref(), Some("1 of its 3 edits did not apply."));
        report.applied = 0;
        assert_eq!(edit_note(&report).as_deref(), Some("Its only edit did not apply."));
        report.failed.push(FailedEdit::default());
        assert_eq!(edit_note(&report).as_deref(), Some("None of its 2 edits applied."));
        let prose = EditReport { kind: EditKind::Prose, ..Default::default() };
        assert_eq!(edit_note(&prose).as_deref(), Some("Changed nothing."));
    }
}
