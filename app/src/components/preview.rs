//! The live preview of the answer's page.

use flint_protocol::prompt::ProjectKind;
use leptos::html::Div;
use leptos::prelude::*;

use crate::components::ChecksBar;
use crate::components::device_sizes::expect_preview_width;
use crate::draft::expect_draft;
use crate::generation::StreamStatus;
use crate::interop::preview::Preview as PreviewFrames;
use crate::run::expect_runner;

/// How long the prompt stays unchanged (or the last run finished) before the preview loads React
/// for a React answer: loading it takes a few hundred ms of the page's thread where sandboxed
/// frames share its process, so not between two keys.
const WARM_AFTER_MS: u64 = 800;

/// Where the preview runtime is served (copied from `public/` by the build).
const RUNTIME_URL: &str = "preview.html";

/// The preview pane: sandboxed frames managed by `app/js/preview.js`, and, while the page came
/// from outside, the button that runs it.
#[component]
pub fn Preview() -> impl IntoView {
    let runner = expect_runner();
    let container = NodeRef::<Div>::new();
    let attach = runner;
    container.on_load(move |el| {
        let logger = attach;
        let frames = PreviewFrames::new(&el, RUNTIME_URL, move |level, text| logger.log(level, text));
        attach.attach_preview(Some(frames));
    });
    keep_warm_for_react(runner);
    let held = runner.state().held;
    let size = expect_preview_width().0;
    let run_held = runner;
    on_cleanup(move || runner.attach_preview(None));
    view! {
        <Show when=move || held.get()>
            <div class="held-page" data-testid="held-page" role="status">
                <span>
                    "This page came from a link, the history or an earlier session: it is shown still, \
                     its scripts have not run."
                </span>
                <button data-testid="run-held-page" on:click={
                    let runner = run_held;
                    move |_| runner.run_held_page()
                }>"Run this page"</button>
            </div>
        </Show>
        <ChecksBar size=size />
        <div class="preview-frame-area">
            <div
                class="preview-stack"
                data-testid="preview-stack"
                style:max-width=move || size.get().width()
                node_ref=container
            ></div>
        </div>
    }
}

/// While the next answer will be a React app (picked, or suggested by the prompt) and nothing runs,
/// the preview keeps a frame with React loaded for it ([`crate::interop::preview::Preview::prepare`]),
/// so its first build shows in one swap (`bench/first-preview.md`); asked for another kind, it
/// lets the frame go. A run under way keeps it: its pages are what it is for.
fn keep_warm_for_react(runner: crate::run::Runner) {
    let draft = expect_draft();
    let status = runner.state().status;
    let pending = StoredValue::new_local(None::<TimeoutHandle>);
    Effect::new(move |_| {
        draft.prompt.track();
        let react = draft.kind() == ProjectKind::React;
        if let Some(timer) = pending.get_value() {
            timer.clear();
        }
        if status.get() == StreamStatus::Streaming {
            return;
        }
        if !react {
            runner.warm_react(false);
            return;
        }
        let timer = set_timeout_with_handle(
            move || runner.warm_react(true),
            std::time::Duration::from_millis(WARM_AFTER_MS),
        );
        pending.set_value(timer.ok());
    });
}
