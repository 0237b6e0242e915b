//! Variations and compare: one prompt, several generations on the same socket, each painted into
//! its own tile (status, metrics, a live sandboxed preview). The editor is left alone until the
//! person promotes a tile; then its code becomes the current version.
//!
//! While tiles run, the page's status is the group's (see [`group_status`]).

use std::rc::Rc;

use leptos::prelude::*;

use super::{Inner, Runner, StreamStatus, Target};
use crate::console::{ConsoleLevel, ConsoleLog};
use crate::generation::group::group_status;
use crate::generation::{Generation, Surface};
use crate::interop::now_ms;
use crate::interop::preview::Preview;
use crate::judge::Checked;
use crate::metrics::LiveMetrics;
use crate::prompt::Job;
use crate::variations::{Lane, RaceTimes};

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
    /// Its finished page's checks.
    pub checks: RwSignal<Checked>,
    /// How much its finished page looks like the prompt's picture, when the prompt had one.
    pub likeness: RwSignal<crate::judge::Likeness>,
    /// What its model thought so far (never code).
    pub thinking: RwSignal<Option<crate::generation::thinking::Thought>>,
    /// Its provider has sent nothing for a while: the sentence.
    pub stalled: RwSignal<Option<String>>,
}

/// A tile's generation, its display and its preview.
pub(super) struct TileSlot {
    pub(super) view: Tile,
    pub(super) lane: Generation,
    pub(super) preview: Option<Preview>,
    /// Its latest check's number (see `Inner::check_page`).
    pub(super) check: std::cell::Cell<u64>,
}

/// Tile keys: a run counter in the high bits, the index in the low ones.
static NEXT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Runner {
    /// Runs `job` once per lane, each into its own tile, replacing the previous tiles and
    /// stopping whatever runs now. The editor keeps its code until a tile is promoted.
    pub fn run_lanes(&self, lanes: Vec<Lane>, job: Job) {
        let inner = self.inner();
        let state = self.state;
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
        inner.stop_current();
        inner.cancel_tiles();
        inner.group.set(true);
        state.error.set(None);
        state.served_by.set(None);
        state.console.update(ConsoleLog::clear);
        state.status.set(StreamStatus::Streaming);
        state.metrics.set(inner.group_metrics.borrow_mut().start(LiveMetrics::started(now_ms())));
        state.review.set(None);
        state.edit.set(None);
        state.answer_tokens.set(0);
        let job = Rc::new(job);
        let run = NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let parser = inner.worker.available();
        let slots: Vec<TileSlot> = lanes
            .into_iter()
            .enumerate()
            .map(|(index, lane)| TileSlot {
                view: Tile {
                    key: (run << 8) | index as u64,
                    index,
                    label: lane.label,
                    model: lane.model.clone(),
                    status: RwSignal::new(StreamStatus::Streaming),
                    queued: RwSignal::new(None),
                    error: RwSignal::new(None),
                    note: RwSignal::new(None),
                    metrics: RwSignal::new(LiveMetrics::default()),
                    race: RwSignal::new(RaceTimes::default()),
                    promoted: RwSignal::new(false),
                    checks: RwSignal::new(Checked::Waiting),
                    likeness: RwSignal::new(crate::judge::Likeness::None),
                    thinking: RwSignal::new(None),
                    stalled: RwSignal::new(None),
                },
                lane: Generation::new(Rc::clone(&job), lane.model, Some(lane.params), Surface::Tile, parser),
                preview: None,
                check: std::cell::Cell::new(0),
            })
            .collect();
        let keys: Vec<u64> = slots.iter().map(|t| t.view.key).collect();
        state.tiles.set(slots.iter().map(|t| t.view.clone()).collect());
        *inner.tiles.borrow_mut() = slots;
        for key in keys {
            let now = now_ms();
            if let Some(commands) = inner.with_lane(Target::Tile(key), |lane| lane.start(now)) {
                inner.exec(Target::Tile(key), commands);
            }
        }
    }

    /// Gives tile `key` its preview (or takes it away); a tile mounted after its stream began
    /// catches up with the latest document.
    pub fn attach_tile_preview(&self, key: u64, preview: Option<Preview>) {
        let inner = self.inner();
        let attached = preview.is_some();
        let commands = {
            let mut tiles = inner.tiles.borrow_mut();
            let Some(tile) = tiles.iter_mut().find(|t| t.view.key == key) else { return };
            tile.preview = preview;
            tile.lane.attach_preview(attached)
        };
        inner.exec(Target::Tile(key), commands);
    }

    /// Adds a line of tile `index`'s page console to the console panel, marked with its number.
    pub fn log_tile(&self, index: usize, level: ConsoleLevel, text: String) {
        self.state.console.update(|c| c.push(level, format!("#{}: {text}", index + 1)));
    }

    /// Stops tile `key`; what it shows stays.
    pub fn cancel_tile(&self, key: u64) {
        let inner = self.inner();
        if let Some(commands) = inner.with_lane(Target::Tile(key), Generation::cancel) {
            inner.exec(Target::Tile(key), commands);
        }
    }

    /// Runs tile `key` again with the same model and sampling.
    pub fn retry_tile(&self, key: u64) {
        let inner = self.inner();
        let now = now_ms();
        let Some(commands) = inner.with_lane(Target::Tile(key), |lane| lane.retry(now)) else { return };
        inner.group.set(true);
        inner.exec(Target::Tile(key), commands);
    }

    /// Makes tile `key`'s code the current version: the editor and the main preview show it and
    /// the saved session keeps it. A tile still streaming, or with no code, cannot be promoted.
    pub fn promote(&self, key: u64) -> Result<(), &'static str> {
        let inner = self.inner();
        let commands =
            inner.with_lane(Target::Tile(key), |lane| lane.promote()).ok_or("that variation is gone")??;
        inner.exec(Target::Tile(key), commands);
        for other in inner.tiles.borrow().iter() {
            other.view.promoted.set(other.view.key == key);
            if other.view.key == key {
                inner.expect.replace(other.lane.job().expect.clone());
                inner.picture.replace(super::likeness::picture_of(other.lane.job()));
            }
        }
        Ok(())
    }
}

impl Inner {
    /// Stops every tile still streaming and forgets them (a new run replaces them).
    pub(super) fn cancel_tiles(self: &Rc<Self>) {
        let slots = std::mem::take(&mut *self.tiles.borrow_mut());
        for mut slot in slots {
            let commands = slot.lane.retire();
            self.exec(Target::Tile(slot.view.key), commands);
        }
        self.group.set(false);
    }

    /// Stops every tile (Esc, Cancel).
    pub(super) fn cancel_all_tiles(self: &Rc<Self>) {
        let keys: Vec<u64> = self.tiles.borrow().iter().map(|t| t.view.key).collect();
        for key in keys {
            if let Some(commands) = self.with_lane(Target::Tile(key), Generation::cancel) {
                self.exec(Target::Tile(key), commands);
            }
        }
        self.refresh_group();
    }

    /// The page's status while tiles run: streaming while any streams, then done if any finished.
    pub(super) fn refresh_group(&self) {
        if !self.group.get() {
            return;
        }
        let (statuses, first_error): (Vec<StreamStatus>, Option<String>) = {
            let tiles = self.tiles.borrow();
            let statuses = tiles.iter().map(|t| t.lane.status()).collect();
            (statuses, tiles.first().and_then(|t| t.view.error.get_untracked()))
        };
        let group = group_status(&statuses);
        if group == StreamStatus::Error {
            self.state.error.set(Some(format!(
                "Every variation failed ({}); see each tile.",
                first_error.unwrap_or_default()
            )));
        }
        if self.state.status.get_untracked() != group {
            if group != StreamStatus::Streaming {
                self.state.metrics.set(self.group_metrics.borrow().live().clone());
            }
            self.state.status.set(group);
        }
    }
}
