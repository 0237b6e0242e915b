//! The variations (or the compared models) side by side, with the race readout.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::VariationTile;
use crate::context::FanOut;
use crate::metrics::format_ms;
use crate::run::expect_runner;
use crate::variations::{RaceTimes, race, tile_for_key};

/// A grid of tiles; the number keys 1–9 and 0 promote a tile unless the person is typing.
#[component]
pub fn VariationsGrid() -> impl IntoView {
    let runner = expect_runner();
    let fan_out = expect_context::<FanOut>();
    let tiles = runner.state().tiles;
    let note = RwSignal::new(None::<String>);

    let promote = {
        Callback::new(move |key: u64| match runner.promote(key) {
            Ok(()) => note.set(None),
            Err(why) => note.set(Some(format!("Not promoted: {why}."))),
        })
    };
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        let shown = fan_out.show_tiles.get_untracked();
        if !shown || ev.ctrl_key() || ev.meta_key() || ev.alt_key() || typing(&ev) {
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
                {move || note.get().map(|n| view! { <span class="race-note" data-testid="promote-note">{n}</span> })}
            </div>
            <div class=columns>
                <For each=move || tiles.get() key=|tile| tile.key let:tile>
                    <VariationTile tile=tile on_promote=promote />
                </For>
            </div>
        </div>
    }
}

/// Whether a key press belongs to a text field or the code editor.
fn typing(ev: &web_sys::KeyboardEvent) -> bool {
    let Some(target) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return false };
    matches!(target.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
        || target.closest(".monaco-editor").ok().flatten().is_some()
}
