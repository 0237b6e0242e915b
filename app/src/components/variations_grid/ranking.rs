//! Ranking the tiles by their checks, and best of N's deadline for the ones still writing.

use std::time::Duration;

use leptos::prelude::*;

use crate::judge::deadline::{extra_wait_ms, stopped_note};
use crate::judge::{Checked, Ranked, rank};
use crate::run::{Runner, StreamStatus, Tile};

/// The tiles ranked by their checks: each one's place once its checks are in, and the best once
/// every tile has settled (none streaming, none being checked) or one passes every check.
#[derive(Clone, Copy)]
pub(super) struct Ranking {
    /// Tile keys, best first (those with checks in).
    pub(super) order: Memo<Vec<u64>>,
    /// The best tile, once every tile settled or one passes every check.
    pub(super) best: Memo<Option<u64>>,
    /// Some tile passes every check.
    pub(super) winner_found: Memo<bool>,
}

impl Ranking {
    pub(super) fn rank_of(&self, key: u64) -> Option<usize> {
        self.order.with(|order| order.iter().position(|k| *k == key).map(|i| i + 1))
    }
}

pub(super) fn use_ranking(tiles: RwSignal<Vec<Tile>>) -> Ranking {
    let order = Memo::new(move |_| -> Vec<u64> {
        tiles.with(|list| {
            let checks: Vec<_> = list.iter().map(|t| t.checks.get()).collect();
            let ranked: Vec<Ranked<'_>> = list
                .iter()
                .zip(&checks)
                .map(|(t, c)| Ranked { report: c.report(), finished_ms: t.race.get().finished_ms })
                .collect();
            rank(&ranked).into_iter().filter(|&i| checks[i].report().is_some()).map(|i| list[i].key).collect()
        })
    });
    // A tile that passes every check cannot be beaten (a tie goes to the one that finished first).
    let winner_found = Memo::new(move |_| {
        tiles.with(|list| list.iter().any(|t| t.checks.with(|c| c.report().is_some_and(|r| r.all_pass()))))
    });
    let best = Memo::new(move |_| {
        let settled = tiles.with(|list| {
            list.iter().all(|t| {
                t.status.get() != StreamStatus::Streaming && !matches!(t.checks.get(), Checked::Running)
            })
        });
        (settled || winner_found.get()).then(|| order.with(|o| o.first().copied())).flatten()
    });
    Ranking { order, best, winner_found }
}

/// Best of N's deadline ([`crate::judge::deadline`]): once the first tile's page is complete, the
/// tiles still streaming get a bounded extra time and are then stopped, so that the ranking settles
/// on the pages checked by then. Returns what to tell the person once it stopped some (cleared by a
/// new run). A page passing every check stops the rest sooner: see the grid.
pub(super) fn use_best_of_deadline(
    tiles: RwSignal<Vec<Tile>>,
    best_of: Signal<bool>,
    runner: Runner,
) -> ReadSignal<Option<String>> {
    let note = RwSignal::new(None::<String>);
    // A memo, so that the timer starts once per first page, not again on every change of a tile.
    let first_ms = Memo::new(move |_| {
        tiles.with(|list| list.iter().filter_map(|t| t.race.get().finished_ms).min_by(f64::total_cmp))
    });
    let timer = StoredValue::new(None::<TimeoutHandle>);
    let clear = move || {
        if let Some(handle) = timer.try_update_value(Option::take).flatten() {
            handle.clear();
        }
    };
    Effect::new(move |_| {
        clear();
        note.set(None);
        let (Some(first), true) = (first_ms.get(), best_of.get()) else { return };
        let wait = extra_wait_ms(first);
        let stop = move || {
            let streaming: Vec<u64> = tiles.with_untracked(|list| {
                list.iter()
                    .filter(|t| t.status.get_untracked() == StreamStatus::Streaming)
                    .map(|t| t.key)
                    .collect()
            });
            for &key in &streaming {
                runner.cancel_tile(key);
            }
            if !streaming.is_empty() {
                note.set(Some(stopped_note(streaming.len(), wait)));
            }
        };
        // Whole milliseconds: `wait` is at least 5 s, so the rounding is immaterial.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let delay = Duration::from_millis(wait as u64);
        timer.set_value(set_timeout_with_handle(stop, delay).ok());
    });
    on_cleanup(clear);
    note.read_only()
}
