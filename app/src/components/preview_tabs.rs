//! The preview pane's title: "Preview", and a "Variations" tab once a prompt was fanned out; while
//! the variations are shown, the button (and Alt+C) that brings the code pane back beside them.

use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::context::FanOut;
use crate::interop::keys::on_key_capture;
use crate::run::expect_runner;

/// Whether the code pane is open beside the variations grid. Closed, the grid takes the whole
/// workspace: ten pages side by side need every pixel, and the code is one person's choice away.
#[derive(Debug, Clone, Copy)]
pub struct CodePane {
    /// Open beside the grid (the person asked, with the button or Alt+C).
    pub open: RwSignal<bool>,
}

impl CodePane {
    /// Provides it, closed.
    pub fn provide() -> Self {
        let pane = Self { open: RwSignal::new(false) };
        provide_context(pane);
        pane
    }
}

/// Alt+C (Option+C on a Mac, whose layouts type "ç" with it, so the key's place is read, not its
/// character). Monaco's find box also knows Alt+C (match case); the code pane is closed or the grid
/// shown whenever this one is heard, so only the grid's toggle is taken.
fn is_code_toggle(ev: &web_sys::KeyboardEvent) -> bool {
    ev.alt_key() && !ev.ctrl_key() && !ev.meta_key() && !ev.shift_key() && ev.code() == "KeyC"
}

/// Switches the pane between the current version's preview and the variations grid.
#[component]
pub fn PreviewTabs() -> impl IntoView {
    let fan_out = expect_context::<FanOut>();
    let code = expect_context::<CodePane>();
    let tiles = expect_runner().state().tiles;
    let count = Memo::new(move |_| tiles.with(Vec::len));
    let show = fan_out.show_tiles;
    let grid = Memo::new(move |_| show.get() && count.get() > 0);
    let keys = SendWrapper::new(on_key_capture(move |ev| {
        if is_code_toggle(&ev) && grid.get_untracked() {
            ev.prevent_default();
            ev.stop_propagation();
            code.open.update(|open| *open = !*open);
        }
    }));
    on_cleanup(move || drop(keys));
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
            <Show when=move || grid.get()>
                <button
                    class="link-btn code-toggle"
                    data-testid="code-toggle"
                    aria-keyshortcuts="Alt+C"
                    title="Show or hide the code beside the variations (Alt+C)"
                    on:click=move |_| code.open.update(|open| *open = !*open)
                >
                    {move || if code.open.get() { "Hide code " } else { "Show code " }}
                    <kbd>"Alt+C"</kbd>
                </button>
            </Show>
        </div>
    }
}
