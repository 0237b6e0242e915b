//! Above the main preview: its checks ("All 6 checks pass" or what failed), how much it looks like
//! the prompt's picture, Fix (button and the F key), the automatic fix under way, and the preview's
//! width.

use leptos::prelude::*;

use crate::components::check_list::CheckList;
use crate::components::device_sizes::{DeviceSize, DeviceSizes};
use crate::components::likeness_score::LikenessScore;
use crate::components::pick_control::PickControl;
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
    let summary = move || summary_view(state.checks.get());
    view! {
        <div class="checks-bar" data-testid="checks-bar">
            {summary}
            <LikenessScore likeness=state.likeness.into() />
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

/// The checks' one line: checking, or the summary with the list under it.
fn summary_view(checked: Checked) -> AnyView {
    let report = match checked {
        Checked::Waiting => return ().into_any(),
        Checked::Running => {
            return view! {
                <span class="checks-summary" data-testid="checks-summary" data-state="running">
                    "Checking the page…"
                </span>
            }
            .into_any();
        }
        Checked::Done(report) => report,
    };
    let failed = !report.all_pass();
    let text = if failed { format!("✗ {}", report.summary()) } else { format!("✓ {}", report.summary()) };
    view! {
        <details class="checks-details">
            <summary
                class=if failed { "checks-summary fail" } else { "checks-summary pass" }
                data-testid="checks-summary"
                data-state="done"
                data-passed=report.passed()
                data-total=report.total()
                title=report.tooltip()
            >
                {text}
            </summary>
            <CheckList report=report />
        </details>
    }
    .into_any()
}
