//! The live preview of the answer's page.

use leptos::html::Div;
use leptos::prelude::*;

use crate::components::ChecksBar;
use crate::components::device_sizes::expect_preview_width;
use crate::interop::preview::Preview as PreviewFrames;
use crate::run::expect_runner;

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
