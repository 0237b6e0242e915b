//! The preview pane's title: "Preview", and a "Variations" tab once a prompt was fanned out.

use leptos::prelude::*;

use crate::context::FanOut;
use crate::run::expect_runner;

/// Switches the pane between the current version's preview and the variations grid.
#[component]
pub fn PreviewTabs() -> impl IntoView {
    let fan_out = expect_context::<FanOut>();
    let tiles = expect_runner().state().tiles;
    let count = Memo::new(move |_| tiles.with(Vec::len));
    let show = fan_out.show_tiles;
    view! {
        <div class="pane-title tabs">
            <button
                class="tab"
                class:active=move || !show.get() || count.get() == 0
                data-testid="tab-preview"
                on:click=move |_| show.set(false)
            >
                "Preview"
            </button>
            <Show when=move || { count.get() > 0 }>
                <button
                    class="tab"
                    class:active=move || show.get()
                    data-testid="tab-variations"
                    on:click=move |_| show.set(true)
                >
                    {move || format!("Variations · {}", count.get())}
                </button>
            </Show>
        </div>
    }
}
