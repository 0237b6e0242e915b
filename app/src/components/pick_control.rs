//! Pick, above the main preview: point at an element of the running page; the editor selects its
//! source and the next edit is held to it (shown as a chip to clear).

use leptos::prelude::*;

use crate::run::expect_runner;

/// Pick: point at an element of the running page; the editor selects its source and the next edit
/// is held to it (shown as a chip to clear).
#[component]
pub fn PickControl() -> impl IntoView {
    let runner = expect_runner();
    let state = runner.state();
    let toggle = move |_| {
        if state.picking.get_untracked() {
            runner.stop_pick();
        } else {
            runner.start_pick();
        }
    };
    view! {
        <button
            class="device"
            class:active=move || state.picking.get()
            data-testid="pick-element"
            title="Click an element in the preview: the editor selects its source, and the next edit changes only it"
            on:click=toggle
        >
            {move || if state.picking.get() { "Picking… (Esc)" } else { "Pick" }}
        </button>
        {move || {
            state
                .picked
                .get()
                .map(|picked| {
                    view! {
                        <span class="picked-chip" data-testid="picked" title="The next edit changes only this element">
                            {match &picked.file {
                                Some((path, first)) => {
                                    format!("Editing <{}> · {path} line {}", picked.tag, picked.lines.0 + 1 - first)
                                }
                                None => format!("Editing <{}> · line {}", picked.tag, picked.lines.0),
                            }}
                            <button class="link-btn" data-testid="clear-pick" on:click=move |_| runner.clear_pick()>
                                "✕"
                            </button>
                        </span>
                    }
                })
        }}
        {move || state.pick_note.get().map(|n| view! { <span class="fix-note" data-testid="pick-note">{n}</span> })}
    }
}
