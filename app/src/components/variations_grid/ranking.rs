//! Ranking the tiles by their checks (and likeness to the prompt's picture, when it has one), and
//! best of N stopping the ones still writing: once one page passes every check (and looks like the
//! picture), or at the deadline.

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
                .map(|(t, c)| Ranked {
                    report: c.report(),
                    finished_ms: t.race.get().finished_ms,
                    likeness: t.likeness.with(crate::judge::Likeness::rank_score),
                })
                .collect();
            rank(&ranked).into_iter().filter(|&i| checks[i].report().is_some()).map(|i| list[i].key).collect()
        })
    });
    // A tile that passes every check (and looks like the picture, when there is one) is good
    // enough to stop best of N.
    let winner_found = Memo::new(move |_| {
        tiles.with(|list| {
            list.iter().any(|t| {
                t.checks.with(|c| c.report().is_some_and(|r| r.all_pass()))
                    && t.likeness.with(|l| l.good_enough())
            })
        })
    });
    let best = Memo::new(move |_| {
        let settled = tiles.with(|list| {
            list.iter().all(|t| {
                t.status.get() != StreamStatus::Streaming
                    && !matches!(t.checks.get(), Checked::Running)
                    && !t.likeness.with(crate::judge::Likeness::pending)
            })
        });
        (settled || winner_found.get()).then(|| order.with(|o| o.first().copied())).flatten()
    });
    Ranking { order, best, winner_found }
}

/// Best of N stops the tiles still streaming once one page passes every check (`winner_found`), or
/// else at the deadline ([`crate::judge::deadline`]): once the first tile's page is complete, the rest
/// get a bounded extra time, so that the ranking settles on the pages checked by then. Returns what
/// to tell the person once the deadline stopped some (cleared by a new run).
pub(super) fn use_best_of_stops(
    tiles: RwSignal<Vec<Tile>>,
    best_of: Signal<bool>,
    winner_found: Memo<bool>,
    runner: Runner,
) -> ReadSignal<Option<String>> {
    Effect::new(move |_| {
        if best_of.get() && winner_found.get() {
            stop_streaming(tiles, runner);
        }
    });
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
            let stopped = stop_streaming(tiles, runner);
            if stopped > 0 {
                note.set(Some(stopped_note(stopped, wait)));
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

/// Stops every tile still streaming (what each shows stays); how many it stopped.
fn stop_streaming(tiles: RwSignal<Vec<Tile>>, runner: Runner) -> usize {
    let streaming: Vec<u64> = tiles.with_untracked(|list| {
        list.iter().filter(|t| t.status.get_untracked() == StreamStatus::Streaming).map(|t| t.key).collect()
    });
    for &key in &streaming {
        runner.cancel_tile(key);
    }
    streaming.len()
}
