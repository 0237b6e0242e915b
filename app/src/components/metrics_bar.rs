//! Live numbers for the current generation.

use leptos::prelude::*;

use crate::context::GatewayStatus;
use crate::interop::now_ms;
use crate::metrics::{format_cost, format_ms, format_quota, format_tokens, format_tps, total_cost};
use crate::run::expect_runner;

/// Status, time to first token, tokens/s, token count, and the gateway's own figures when done.
#[component]
pub fn MetricsBar() -> impl IntoView {
    let state = expect_runner().state();
    let metrics = state.metrics;
    let status = move || state.status.get().label();
    let status_text = move || state.status.get().text(state.queued.get());
    // A fanned-out run costs what all its tiles cost; a single run, its one stream.
    let tiles = state.tiles;
    let run_cost = Memo::new(move |_| {
        let tiles = tiles.get();
        if tiles.is_empty() {
            metrics.with(|m| m.cost())
        } else {
            total_cost(tiles.iter().map(|t| t.metrics.with(|m| m.cost())))
        }
    });
    let spent = state.spent;
    let quota = expect_context::<GatewayStatus>().quota;
    let quota_text = move || {
        quota.get().map(|(q, at)| {
            let resets = q.resets_in_ms.saturating_sub((now_ms() - at).max(0.0) as u64);
            let low = q.used.saturating_mul(10) >= q.limit.saturating_mul(9);
            let text = format_quota(q.used, q.limit, resets);
            view! { <span class="metric quota" class:low=low data-testid="quota">{text}</span> }
        })
    };
    let gateway = move || {
        metrics.with(|m| {
            m.done.map(|(usage, g)| {
                let prompt = usage.prompt_tokens.map(|p| format!(" · prompt {p}")).unwrap_or_default();
                format!(
                    "gateway: ttft {} · total {}{prompt}",
                    format_ms(Some(g.ttft_ms)),
                    format_ms(Some(g.total_ms))
                )
            })
        })
    };
    view! {
        <div class="metrics">
            <span class="metric">
                <span class="metric-label">"status"</span>
                <span class=move || format!("status-pill {}", status()) data-testid="stream-status">{status_text}</span>
            </span>
            // A reasoning model's wait is split: time to its first reasoning, then to its first code.
            {move || metrics.with(|m| m.ttfr_ms()).map(|ttfr| view! {
                <span class="metric" title="Time to first reasoning, measured in the browser from sending the request">
                    <span class="metric-label">"thinking"</span>
                    <span class="metric-value" data-testid="metric-ttfr">{format_ms(Some(ttfr))}</span>
                </span>
            })}
            <span class="metric" title="Time to first token of code, measured in the browser from sending the request">
                <span class="metric-label">"ttft"</span>
                <span class="metric-value" data-testid="metric-ttft">{move || metrics.with(|m| format_ms(m.ttft_ms()))}</span>
            </span>
            <span class="metric" title="Tokens per second after the first token (the gateway's figure once done)">
                <span class="metric-label">"speed"</span>
                <span class="metric-value" data-testid="metric-tps">{move || metrics.with(|m| format_tps(m.tokens_per_s()))}</span>
            </span>
            <span class="metric" title="Generated tokens (≈ estimated from the text until the gateway's count arrives)">
                <span class="metric-label">"tokens"</span>
                <span class="metric-value" data-testid="metric-tokens">{move || metrics.with(|m| format_tokens(m.tokens()))}</span>
            </span>
            {move || metrics.with(|m| m.reasoning()).map(|r| view! {
                <span class="metric" title="Of the tokens, those the model spent reasoning (billed as output)">
                    <span class="metric-label">"reasoning"</span>
                    <span class="metric-value" data-testid="metric-reasoning">{format_tokens((r, false))}</span>
                </span>
            })}
            <Show when=move || run_cost.get().is_some() || spent.get().is_some()>
                <span class="metric" title="This run's cost at the gateway's prices, all variations together (≈: estimated until the provider's counts arrive)">
                    <span class="metric-label">"cost"</span>
                    <span class="metric-value" data-testid="metric-cost">{move || format_cost(run_cost.get())}</span>
                </span>
                <span class="metric" title="What this session's generations have cost so far">
                    <span class="metric-label">"session"</span>
                    <span class="metric-value" data-testid="metric-session-cost">{move || format_cost(spent.get())}</span>
                </span>
            </Show>
            {quota_text}
            <span class="spacer"></span>
            <span class="metric muted">{move || state.served_by.get()}</span>
            <span class="metric muted">{gateway}</span>
        </div>
    }
}
