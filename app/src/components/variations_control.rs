//! How many versions to generate, or which models to race.

use leptos::prelude::*;

use crate::context::{FanOut, ModelChoice};
use crate::interop::preview::prepare_frames;
use crate::variations::{MAX_COMPARED, MAX_VARIATIONS};

/// "Variations 1–10" and a Compare toggle that lists the usable models to race (2–4).
#[component]
pub fn VariationsControl() -> impl IntoView {
    let fan_out = expect_context::<FanOut>();
    let choice = expect_context::<ModelChoice>();
    let counts = (1..=MAX_VARIATIONS)
        .map(|n| view! { <option value=n.to_string()>{n.to_string()}</option> })
        .collect_view();
    let usable = move || {
        choice
            .models
            .get()
            .and_then(|r| r.ok())
            .map(|l| l.models)
            .unwrap_or_default()
            .into_iter()
            .filter(|m| m.available)
    };
    // The tiles' frames load while the person writes the prompt, not after the Run key (once per
    // count chosen: a run's tiles hand their streaming frames to the next run's).
    let tiles = Memo::new(move |_| {
        if fan_out.compare.get() { fan_out.compared.with(Vec::len) } else { usize::from(fan_out.count.get()) }
    });
    Effect::new(move |_| {
        if tiles.get() > 1 {
            prepare_frames(tiles.get());
        }
    });
    let toggle = move |id: String, on: bool| {
        fan_out.compared.update(|list| {
            list.retain(|m| *m != id);
            if on && list.len() < MAX_COMPARED {
                list.push(id);
            }
        });
    };
    let model_boxes = move || {
        usable()
            .map(|m| {
                let id = m.id.clone();
                let checked = {
                    let id = id.clone();
                    move || fan_out.compared.with(|list| list.contains(&id))
                };
                let full = {
                    let checked = checked.clone();
                    move || !checked() && fan_out.compared.with(|list| list.len() >= MAX_COMPARED)
                };
                let for_change = id.clone();
                view! {
                    <label class="compare-model">
                        <input
                            type="checkbox"
                            data-testid="compare-model"
                            value=id.clone()
                            prop:checked=checked
                            disabled=full
                            on:change=move |ev| toggle(for_change.clone(), event_target_checked(&ev))
                        />
                        {id}
                    </label>
                }
            })
            .collect_view()
    };
    view! {
        <div class="fan-out">
            <label class="field" title="Generate several versions at once and pick the best (keys 1–9, 0)">
                <span class="field-label">"Variations"</span>
                <select
                    data-testid="variations-count"
                    disabled=move || fan_out.compare.get()
                    prop:value=move || fan_out.count.get().to_string()
                    on:change=move |ev| {
                        if let Ok(n) = event_target_value(&ev).parse::<u8>() {
                            fan_out.count.set(n.clamp(1, MAX_VARIATIONS));
                        }
                    }
                >
                    {counts}
                </select>
            </label>
            <label
                class="field best-of-toggle"
                title="Run the variations (or compared models) for one page that works: only the one passing the most checks is shown, and once one passes them all the others still streaming are stopped (each stays one click away)"
            >
                <input
                    type="checkbox"
                    data-testid="best-of"
                    disabled=move || fan_out.count.get() < 2 && !fan_out.compare.get()
                    prop:checked=move || fan_out.best_of.get()
                    on:change=move |ev| fan_out.best_of.set(event_target_checked(&ev))
                />
                "Best of N"
            </label>
            <label class="field compare-toggle" title="Send the prompt to 2–4 models side by side">
                <input
                    type="checkbox"
                    data-testid="compare-toggle"
                    prop:checked=move || fan_out.compare.get()
                    on:change=move |ev| fan_out.compare.set(event_target_checked(&ev))
                />
                "Compare"
            </label>
            <Show when=move || fan_out.compare.get()>
                <div class="compare-models" data-testid="compare-models" role="group" aria-label="Models to compare">
                    {model_boxes}
                </div>
            </Show>
        </div>
    }
}
