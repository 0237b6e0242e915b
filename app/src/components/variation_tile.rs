//! One variation: its live preview (the page laid out at the chosen device's width, scaled to the
//! tile), status and numbers, with promote, cancel, retry and zoom.

use leptos::html::Div;
use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::components::device_sizes::expect_preview_width;
use crate::components::{ChecksBadge, LikenessScore, ThinkingPanel};
use crate::interop::preview::Preview as PreviewFrames;
use crate::interop::resize::watch_size;
use crate::metrics::{format_cost, format_ms, format_tokens, format_tps};
use crate::run::{StreamStatus, Tile, expect_runner};
use crate::variations::grid::{fit, short_model};

/// Where the preview runtime is served (copied from `public/` by the build).
const RUNTIME_URL: &str = "preview.html";

/// A tile in the variations grid. Its number key promotes it; a click on its page, or Enter with
/// the tile focused, zooms it.
#[component]
pub fn VariationTile(
    tile: Tile,
    #[prop(into)] on_promote: Callback<u64>,
    /// Sends this tile's failed checks to the model, after promoting it.
    #[prop(into)]
    on_fix: Callback<u64>,
    /// Promotes it and starts picking an element in its page.
    #[prop(into)]
    on_pick: Callback<u64>,
    /// Its place when ranked by checks (1 = best), once its checks are in.
    #[prop(into)]
    rank: Signal<Option<usize>>,
    /// It is the best tile (every tile settled).
    #[prop(into)]
    best: Signal<bool>,
    /// Hidden ("show only the best" is on and another tile won).
    #[prop(into)]
    hidden: Signal<bool>,
    /// Zooms this tile to the whole workspace.
    #[prop(into)]
    on_zoom: Callback<u64>,
    /// Brings the grid back from this zoomed tile.
    #[prop(into)]
    on_back: Callback<()>,
    /// This tile is zoomed.
    #[prop(into)]
    zoomed: Signal<bool>,
) -> impl IntoView {
    let runner = expect_runner();
    let container = NodeRef::<Div>::new();
    let viewport = NodeRef::<Div>::new();
    let key = tile.key;
    let index = tile.index;
    {
        container.on_load(move |el| {
            let logger = runner;
            let frames =
                PreviewFrames::new(&el, RUNTIME_URL, move |level, text| logger.log_tile(index, level, text));
            runner.attach_tile_preview(key, Some(frames));
        });
    }
    {
        on_cleanup(move || runner.attach_tile_preview(key, None));
    }
    // The page is laid out at the device's width and scaled to the tile with a CSS transform: the
    // frame is never reloaded or re-laid out for a zoom, only re-scaled when the tile's box changes.
    let device = expect_preview_width().0;
    let size = RwSignal::new((0.0, 0.0));
    viewport.on_load(move |el| {
        let watch = SendWrapper::new(watch_size(&el, move |w, h| size.set((w, h))));
        on_cleanup(move || drop(watch));
    });
    let fitted = Memo::new(move |_| {
        let (w, h) = size.get();
        fit(w, h, device.get().device_px())
    });
    let label = tile.label.clone();
    let model_line = (tile.label != tile.model).then(|| short_model(&tile.model).to_owned());
    // The tile is named by its own header and numbers, read when it gets focus.
    let (head_id, metrics_id) = (format!("tile-{key}-head"), format!("tile-{key}-metrics"));
    let labelled_by = format!("{head_id} {metrics_id}");

    let status = tile.status;
    let metrics = tile.metrics;
    let streaming = move || status.get() == StreamStatus::Streaming;
    let number = if index == 9 { "0".to_owned() } else { (index + 1).to_string() };
    let (cancel_runner, retry_runner) = (runner, runner);
    let class = move || {
        let mut class = format!("tile {}", status.get().label());
        if tile.promoted.get() {
            class.push_str(" promoted");
        }
        if best.get() {
            class.push_str(" best");
        }
        if hidden.get() {
            class.push_str(" hidden");
        }
        if zoomed.get() {
            class.push_str(" zoomed");
        }
        class
    };
    let checks = tile.checks;
    let failing = move || !streaming() && checks.with(|c| c.report().is_some_and(|r| !r.all_pass()));
    view! {
        <article
            class=class
            data-testid="variation-tile"
            data-status=move || status.get().label()
            data-rank=move || rank.get().map(|r| r.to_string())
            data-tile-key=key.to_string()
            tabindex="0"
            aria-labelledby=labelled_by
        >
            <header class="tile-head" id=head_id>
                <kbd class="tile-key" title=format!("Press {number} to promote")>{number.clone()}</kbd>
                <span class="tile-title">
                    <span class="tile-label" title=tile.model.clone()>{tile.label.clone()}</span>
                    {model_line.map(|m| view! { <span class="tile-model" title=tile.model.clone()>{m}</span> })}
                </span>
                <span class=move || format!("status-pill {}", status.get().label()) data-testid="tile-status">
                    {move || status.get().text(tile.queued.get())}
                </span>
                <ChecksBadge checks=checks best=best />
            </header>
            <div class="tile-metrics" id=metrics_id>
                <span title="Time to first token">{move || metrics.with(|m| format_ms(m.ttft_ms()))}</span>
                <span title="Tokens per second">{move || metrics.with(|m| format_tps(m.tokens_per_s()))}</span>
                <span title="Tokens">{move || metrics.with(|m| format_tokens(m.tokens()))}</span>
                {move || {
                    metrics
                        .with(|m| m.cost())
                        .map(|cost| {
                            view! {
                                <span title="Cost at the gateway's prices (≈ while streaming)" data-testid="tile-cost">
                                    {format_cost(Some(cost))}
                                </span>
                            }
                        })
                }}
            </div>
            <LikenessScore likeness=tile.likeness.into() />
            <div class="tile-preview" data-testid="tile-preview" node_ref=viewport>
                <div
                    class="tile-page preview-stack"
                    data-testid="tile-page"
                    node_ref=container
                    style:width=move || format!("{}px", fitted.get().width)
                    style:height=move || format!("{}px", fitted.get().height)
                    style:transform=move || {
                        let f = fitted.get();
                        format!("translateX({}px) scale({})", f.left, f.scale)
                    }
                ></div>
                // Over the scaled page a click zooms (a page a fifth of its size is for looking at);
                // zoomed, the page takes clicks and keys itself. Enter on the tile does the same.
                <Show when=move || !zoomed.get()>
                    <div
                        class="tile-zoom-hit"
                        data-testid="tile-zoom-hit"
                        aria-hidden="true"
                        title=format!("Zoom {label} to full size")
                        on:click=move |_| on_zoom.run(key)
                    ></div>
                </Show>
            </div>
            <ThinkingPanel thinking=tile.thinking stalled=tile.stalled compact=true />
            {move || tile.error.get().map(|e| view! { <p class="tile-error" data-testid="tile-error">{e}</p> })}
            {move || tile.note.get().map(|n| view! { <p class="tile-note" data-testid="tile-note">{n}</p> })}
            <footer class="tile-actions">
                <button
                    class="link-btn"
                    data-testid="tile-promote"
                    disabled=streaming
                    title="Make this the current version (its number key does the same)"
                    on:click=move |_| on_promote.run(key)
                >
                    {move || if tile.promoted.get() { "Current ✓" } else { "Promote" }}
                </button>
                <Show when=move || !streaming()>
                    <button
                        class="link-btn"
                        data-testid="tile-pick"
                        title="Make this the current version and point at an element of its page to change just it"
                        on:click=move |_| on_pick.run(key)
                    >
                        "Pick"
                    </button>
                </Show>
                <Show when=failing>
                    <button
                        class="link-btn"
                        data-testid="tile-fix"
                        title="Make this the current version and send what failed to the model as an edit request"
                        on:click=move |_| on_fix.run(key)
                    >
                        "Fix"
                    </button>
                </Show>
                <Show when=streaming>
                    <button class="link-btn" data-testid="tile-cancel" on:click={
                        let runner = cancel_runner;
                        move |_| runner.cancel_tile(key)
                    }>
                        "Cancel"
                    </button>
                </Show>
                <Show when=move || !streaming()>
                    <button class="link-btn" data-testid="tile-retry" on:click={
                        let runner = retry_runner;
                        move |_| runner.retry_tile(key)
                    }>
                        "Retry"
                    </button>
                </Show>
                <button
                    class="link-btn tile-zoom"
                    data-testid="tile-zoom"
                    aria-keyshortcuts=move || if zoomed.get() { "Escape" } else { "Enter" }
                    title=move || {
                        if zoomed.get() { "Back to all the variations (Esc)" } else { "Show this page full size (Enter)" }
                    }
                    on:click=move |_| if zoomed.get_untracked() { on_back.run(()) } else { on_zoom.run(key) }
                >
                    {move || if zoomed.get() { "Back" } else { "Zoom" }}
                </button>
            </footer>
        </article>
    }
}
