//! The variations (or the compared models) side by side, with the race readout.

use leptos::prelude::*;

mod ranking;

use ranking::{use_best_of_stops, use_ranking};

use crate::components::VariationTile;
use crate::context::{FanOut, ModelChoice};
use crate::draft::expect_draft;
use crate::interop::keys::typing;
use crate::launch::launch_fix;
use crate::metrics::format_ms;
use crate::run::expect_runner;
use crate::variations::{RaceTimes, race, tile_for_key};

/// A grid of tiles; the number keys 1–9 and 0 promote a tile unless the person is typing.
#[component]
pub fn VariationsGrid() -> impl IntoView {
    let runner = expect_runner();
    let fan_out = expect_context::<FanOut>();
    let choice = expect_context::<ModelChoice>();
    let draft = expect_draft();
    let tiles = runner.state().tiles;
    let note = RwSignal::new(None::<String>);

    let promote = {
        Callback::new(move |key: u64| match runner.promote(key) {
            Ok(()) => note.set(None),
            Err(why) => note.set(Some(format!("Not promoted: {why}."))),
        })
    };
    let ranking = use_ranking(tiles);
    let stopped = use_best_of_stops(tiles, fan_out.best_of.into(), ranking.winner_found, runner);
    let show_all = RwSignal::new(false);
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
    let columns = move || {
        let n = tiles.with(Vec::len);
        if fan_out.compare.get() || n <= 4 {
            format!("tiles cols-{}", n.clamp(1, 4))
        } else {
            "tiles".to_owned()
        }
    };

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
            </div>
            <div class=columns>
                <For each=move || tiles.get() key=|tile| tile.key let:tile>
                    <VariationTile
                        tile=tile.clone()
                        on_promote=promote
                        on_fix=fix
                        on_pick=pick
                        rank=Signal::derive(move || ranking.rank_of(tile.key))
                        best=Signal::derive(move || ranking.best.get() == Some(tile.key))
                        hidden=Signal::derive(move || {
                            fan_out.best_of.get() && !show_all.get()
                                && ranking.best.get().is_some_and(|best| best != tile.key)
                        })
                    />
                </For>
            </div>
        </div>
    }
}
