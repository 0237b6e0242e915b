//! The live preview of the answer's page.

use leptos::html::Div;
use leptos::prelude::*;

use crate::interop::preview::Preview as PreviewFrames;
use crate::run::expect_runner;

/// Where the preview runtime is served (copied from `public/` by Trunk).
const RUNTIME_URL: &str = "preview.html";

/// The preview pane: sandboxed frames managed by `app/js/preview.js`.
#[component]
pub fn Preview() -> impl IntoView {
    let runner = expect_runner();
    let container = NodeRef::<Div>::new();
    let attach = runner.clone();
    container.on_load(move |el| {
        let logger = attach.clone();
        let frames = PreviewFrames::new(&el, RUNTIME_URL, move |level, text| logger.log(level, text));
        attach.attach_preview(Some(frames));
    });
    on_cleanup(move || runner.attach_preview(None));
    view! { <div class="preview-stack" node_ref=container></div> }
}
