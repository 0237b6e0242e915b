//! One variation: its live preview, status and numbers, with promote, cancel and retry.

use leptos::html::Div;
use leptos::prelude::*;

use crate::components::{ChecksBadge, ThinkingPanel};
use crate::interop::preview::Preview as PreviewFrames;
use crate::metrics::{format_cost, format_ms, format_tokens, format_tps};
use crate::run::{StreamStatus, Tile, expect_runner};

/// Where the preview runtime is served (copied from `public/` by Trunk).
const RUNTIME_URL: &str = "preview.html";

/// A tile in the variations grid. Clicking its preview (or pressing its number) promotes it.
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
) -> impl IntoView {
    let runner = expect_runner();
    let container = NodeRef::<Div>::new();
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
        >
            <header class="tile-head">
                <kbd class="tile-key" title=format!("Press {number} to promote")>{number.clone()}</kbd>
                <span class="tile-label" title=tile.model.clone()>{tile.label.clone()}</span>
                <span class=move || format!("status-pill {}", status.get().label()) data-testid="tile-status">
                    {move || status.get().text(tile.queued.get())}
                </span>
                <ChecksBadge checks=checks best=best />
            </header>
            <div class="tile-metrics">
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
            <div class="tile-preview preview-stack" node_ref=container></div>
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
            </footer>
        </article>
    }
}
