//! A page's checks: the list (shown under the main preview's summary and on hover over a tile's
//! badge) and a tile's badge.

use leptos::prelude::*;

use crate::judge::{Checked, Report};

/// Every check with ✓ or ✗ and, for a failure, what was seen.
#[component]
pub fn CheckList(report: Report) -> impl IntoView {
    view! {
        <ul class="check-list" data-testid="check-list">
            {report
                .checks
                .into_iter()
                .map(|check| {
                    let mark = if check.passed { "✓" } else { "✗" };
                    view! {
                        <li
                            class=if check.passed { "check pass" } else { "check fail" }
                            data-check=check.id
                            data-passed=check.passed.to_string()
                        >
                            <span class="check-mark">{mark}</span>
                            <span class="check-label">{check.label}</span>
                            {check.detail.map(|d| view! { <span class="check-detail">{d}</span> })}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

/// A tile's score ("✓ 5/6"), its list on hover, and "best" on the top-ranked tile.
#[component]
pub fn ChecksBadge(checks: RwSignal<Checked>, #[prop(into)] best: Signal<bool>) -> impl IntoView {
    move || {
        match checks.get() {
        Checked::Waiting => ().into_any(),
        Checked::Running => view! {
            <span class="checks-badge running" data-testid="tile-checks" data-state="running">"checking…"</span>
        }
        .into_any(),
        Checked::Done(report) => {
            let class = if report.all_pass() {
                "checks-badge good"
            } else if report.passed() * 2 >= report.total() {
                "checks-badge some"
            } else {
                "checks-badge bad"
            };
            view! {
                <span
                    class=class
                    tabindex="0"
                    data-testid="tile-checks"
                    data-state="done"
                    data-passed=report.passed()
                    data-total=report.total()
                    title=report.tooltip()
                >
                    {format!("✓ {}", report.score())}
                    <Show when=move || best.get()>
                        <span class="best-mark" data-testid="tile-best">" · best"</span>
                    </Show>
                    <span class="checks-pop">
                        <CheckList report=report.clone() />
                    </span>
                </span>
            }
            .into_any()
        }
    }
    }
}
