//! The gateway connection's state, top right.

use leptos::prelude::*;

use crate::context::GatewayStatus;
use crate::gateway::ConnectionState;

/// `connected` / `connecting` / `reconnecting in 2 s` / `offline`, with a coloured dot.
#[component]
pub fn ConnectionStatus() -> impl IntoView {
    let status = expect_context::<GatewayStatus>();
    let label = move || status.state.get().label();
    let detail = move || match (status.state.get(), status.retry_in_ms.get()) {
        (ConnectionState::Reconnecting | ConnectionState::Offline, Some(ms)) => {
            format!(" · retry in {:.0} s", (f64::from(ms) / 1000.0).ceil())
        }
        _ => String::new(),
    };
    view! {
        <div class="connection" data-testid="connection-status" data-state=label title=move || status.problem.get().map(|p| p.text).unwrap_or_default()>
            <span class="dot"></span>
            <span class="connection-label">{label}</span>
            <span class="connection-detail">{detail}</span>
        </div>
    }
}
