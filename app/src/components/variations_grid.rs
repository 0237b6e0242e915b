//! The variations (or the compared models) side by side, with the race readout.

use leptos::prelude::*;

mod focus;
mod ranking;

use focus::{Zoom, focus_tile, on_grid_key};
use leptos::html::Div;
use ranking::{use_best_of_stops, use_ranking};

use crate::components::device_sizes::{DeviceSizes, expect_preview_width};
use crate::components::{CodePane, VariationTile};
use crate::context::{FanOut, ModelChoice};
use crate::draft::expect_draft;
use crate::interop::keys::typing;
use crate::launch::launch_fix;
use crate::metrics::format_ms;
use crate::run::expect_runner;
use crate::variations::grid::grid_columns;
use crate::variations::{RaceTimes, race, tile_for_key};

/// A grid of tiles, each page laid out at the chosen device's width and scaled to its tile; the
/// number keys 1–9 and 0 promote a tile unless the person is typing; in the grid, arrows move
/// between tiles, Enter (or a click on a page) zooms one to the whole workspace, Esc comes back.
#[component]
pub fn VariationsGrid() -> impl IntoView {
    let runner = expect_runner();
    let fan_out = expect_context::<FanOut>();
    let choice = expect_context::<ModelChoice>();
    let draft = expect_draft();
    let tiles = runner.state().tiles;
    let note = RwSignal::new(None::<String>);

    let code_pane = expect_context::<CodePane>();
    // A promoted tile is the version the person works on now: its code (and Export) come back
    // beside the grid, which stays for comparing.
    let promote = {
        Callback::new(move |key: u64| match runner.promote(key) {
            Ok(()) => {
                note.set(None);
                code_pane.open.set(true);
            }
            Err(why) => note.set(Some(format!("Not promoted: {why}."))),
        })
    };
    let ranking = use_ranking(tiles);
    let stopped = use_best_of_stops(tiles, fan_out.best_of.into(), ranking.winner_found, runner);
    let show_all = RwSignal::new(false);
    let width = expect_preview_width().0;
    let grid = NodeRef::<Div>::new();
    let zoom = Zoom { key: RwSignal::new(None) };
    // Best of N with "only the best" on shows one tile: the rest are hidden, not unmounted.
    let hidden = move |key: u64| {
        fan_out.best_of.get() && !show_all.get() && ranking.best.get().is_some_and(|best| best != key)
    };
    let shown = Memo::new(move |_| {
        tiles.with(|list| list.iter().map(|t| t.key).filter(|k| !hidden(*k)).collect::<Vec<_>>())
    });
    // A zoomed tile that a new run replaced, or that "only the best" hid, is zoomed no more.
    let zoomed = Memo::new(move |_| zoom.key.get().filter(|k| shown.with(|s| s.contains(k))));
    let zoom_to = Callback::new(move |key: u64| {
        zoom.key.set(Some(key));
        focus_tile(grid, key);
    });
    let unzoom = move || {
        if let Some(key) = zoomed.get_untracked() {
            zoom.key.set(None);
            focus_tile(grid, key);
        }
    };
    let pick_best = Callback::new(move |()| match ranking.best.get_untracked() {
        Some(key) => promote.run(key),
        None => note
            .set(Some("No variation is ranked yet: their pages are still being written or checked.".into())),
    });
    let pick = Callback::new(move |key: u64| match runner.pick_in_tile(key) {
        Ok(()) => {
            note.set(None);
            fan_out.show_tiles.set(false);
        }
        Err(why) => note.set(Some(format!("Not promoted: {why}."))),
    });
    let fix = Callback::new(move |key: u64| {
        let report = tiles.with_untracked(|list| {
            list.iter().find(|t| t.key == key).and_then(|t| t.checks.with_untracked(|c| c.report().cloned()))
        });
        let Some(report) = report else { return };
        let sent = runner
            .promote(key)
            .map_err(|why| format!("Not promoted: {why}."))
            .and_then(|()| launch_fix(&runner, choice, fan_out, draft, &report, 1));
        note.set(sent.err());
    });
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        let shown = fan_out.show_tiles.get_untracked();
        if !shown || ev.ctrl_key() || ev.meta_key() || ev.alt_key() || typing(&ev) {
            return;
        }
        if ev.key() == "b" {
            ev.prevent_default();
            pick_best.run(());
            return;
        }
        let key = tiles.with_untracked(|list| tile_for_key(&ev.key(), list.len()).map(|i| list[i].key));
        if let Some(key) = key {
            ev.prevent_default();
            promote.run(key);
        }
    });
    on_cleanup(move || keys.remove());

    let readout = move || {
        let list = tiles.get();
        let times: Vec<RaceTimes> = list.iter().map(|t| t.race.get()).collect();
        let result = race(&times);
        let name = |i: Option<usize>, pick: fn(&RaceTimes) -> Option<f64>| {
            i.map(|i| format!("{} ({})", list[i].label, format_ms(pick(&times[i]))))
                .unwrap_or_else(|| "…".to_owned())
        };
        format!(
            "first preview: {} · first done: {}",
            name(result.first_preview, |t| t.first_preview_ms),
            name(result.first_finished, |t| t.finished_ms)
        )
    };
    let columns = move || format!("repeat({}, minmax(0, 1fr))", shown.with(|s| grid_columns(s.len())));
    let rows = move || shown.with(|s| s.len().div_ceil(grid_columns(s.len())).max(1));

    view! {
        <div class="variations" data-testid="variations">
            <div class="race" data-testid="race-readout">
                {readout}
                <Show when=move || ranking.best.get().is_some()>
                    <button
                        class="link-btn pick-best"
                        data-testid="pick-best"
                        title="Promote the variation that passed the most checks (B)"
                        on:click=move |_| pick_best.run(())
                    >
                        "Pick best " <kbd>"B"</kbd>
                    </button>
                </Show>
                <Show when=move || fan_out.best_of.get() && ranking.best.get().is_some()>
                    <button
                        class="link-btn"
                        data-testid="show-all"
                        on:click=move |_| show_all.update(|all| *all = !*all)
                    >
                        {move || if show_all.get() { "Only the best".to_owned() } else { format!("Show all {}", tiles.with(Vec::len)) }}
                    </button>
                </Show>
                {move || note.get().map(|n| view! { <span class="race-note" data-testid="promote-note">{n}</span> })}
                {move || stopped.get().map(|n| view! { <span class="race-note" data-testid="deadline-note">{n}</span> })}
                <Show when=move || zoomed.get().is_some()>
                    <button
                        class="link-btn"
                        data-testid="grid-back"
                        aria-keyshortcuts="Escape"
                        title="Back to all the variations (Esc, with a tile focused)"
                        on:click=move |_| unzoom()
                    >
                        "Back to grid " <kbd>"Esc"</kbd>
                    </button>
                </Show>
                <DeviceSizes size=width />
            </div>
            <div
                class="tiles"
                class:zooming=move || zoomed.get().is_some()
                data-testid="tiles"
                role="group"
                aria-label="Variations: arrow keys move between tiles, Enter zooms one, Esc returns"
                style:grid-template-columns=columns
                style:grid-template-rows=move || format!("repeat({}, minmax(180px, 1fr))", rows())
                node_ref=grid
                on:keydown=move |ev| shown.with_untracked(|keys| on_grid_key(&ev, grid, zoom, keys))
            >
                <For each=move || tiles.get() key=|tile| tile.key let:tile>
                    <VariationTile
                        tile=tile.clone()
                        on_promote=promote
                        on_fix=fix
                        on_pick=pick
                        on_zoom=zoom_to
                        on_back=Callback::new(move |()| unzoom())
                        zoomed=Signal::derive(move || zoomed.get() == Some(tile.key))
                        rank=Signal::derive(move || ranking.rank_of(tile.key))
                        best=Signal::derive(move || ranking.best.get() == Some(tile.key))
                        hidden=Signal::derive(move || hidden(tile.key))
                    />
                </For>
            </div>
        </div>
    }
}
