//! Above the main preview: its checks ("All 6 checks pass" or what failed), Fix (button and the F
//! key), the automatic fix under way, and the preview's width.

use leptos::prelude::*;

use crate::components::check_list::CheckList;
use crate::components::device_sizes::{DeviceSize, DeviceSizes};
use crate::context::{FanOut, ModelChoice};
use crate::draft::expect_draft;
use crate::fix::use_fix;
use crate::interop::keys::typing;
use crate::judge::Checked;
use crate::run::{StreamStatus, expect_runner};

/// The checks bar; `size` is the preview's width.
#[component]
pub fn ChecksBar(size: RwSignal<DeviceSize>) -> impl IntoView {
    let runner = expect_runner();
    let state = runner.state();
    let fan_out = expect_context::<FanOut>();
    let draft = expect_draft();
    let fix = use_fix(runner, expect_context::<ModelChoice>(), fan_out, draft);

    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        let plain = !(ev.ctrl_key() || ev.meta_key() || ev.alt_key());
        if plain
            && ev.key() == "f"
            && !fan_out.show_tiles.get_untracked()
            && !typing(&ev)
            && fix.can_fix.get_untracked()
        {
            ev.prevent_default();
            fix.fix.run(());
        }
    });
    on_cleanup(move || keys.remove());

    let attempt = move || {
        let n = state.fix_attempt.get();
        (n > 0 && state.status.get() == StreamStatus::Streaming).then(|| {
            let cap = draft.auto_fix.get().max(1);
            view! {
                <span class="fix-attempt" data-testid="fix-attempt">
                    {format!("Fix attempt {n} of {} · Esc stops it", cap.max(n))}
                </span>
            }
        })
    };
    let summary = move || {
        match state.checks.get() {
        Checked::Waiting => ().into_any(),
        Checked::Running => view! { <span class="checks-summary" data-testid="checks-summary" data-state="running">"Checking the page…"</span> }.into_any(),
        Checked::Done(report) => {
            let failed = !report.all_pass();
            view! {
                <details class="checks-details">
                    <summary
                        class=if failed { "checks-summary fail" } else { "checks-summary pass" }
                        data-testid="checks-summary"
                        data-state="done"
                        data-passed=report.passed()
                        data-total=report.total()
                    >
                        {if failed { format!("✗ {}", report.summary()) } else { format!("✓ {}", report.summary()) }}
                    </summary>
                    <CheckList report=report />
                </details>
            }
            .into_any()
        }
    }
    };
    view! {
        <div class="checks-bar" data-testid="checks-bar">
            {summary}
            <Show when=move || fix.can_fix.get()>
                <button
                    class="fix-btn"
                    data-testid="fix-page"
                    title="Send what failed and the current code to the model as an edit request (F)"
                    on:click=move |_| fix.fix.run(())
                >
                    "Fix " <kbd>"F"</kbd>
                </button>
            </Show>
            {attempt}
            {move || fix.note.get().map(|n| view! { <span class="fix-note" data-testid="fix-note">{n}</span> })}
            <PickControl />
            <DeviceSizes size=size />
        </div>
    }
}

/// Pick: point at an element of the running page; the editor selects its source and the next edit
/// is held to it (shown as a chip to clear).
#[component]
fn PickControl() -> impl IntoView {
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
                            {format!("Editing <{}> · line {}", picked.tag, picked.lines.0)}
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
