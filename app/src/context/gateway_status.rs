//! The gateway connection as components see it.

use leptos::prelude::*;

use crate::gateway::{ConnectionProblem, ConnectionState, Quota};

/// The gateway connection as components see it.
#[derive(Debug, Clone, Copy)]
pub struct GatewayStatus {
    /// Connection state.
    pub state: Signal<ConnectionState>,
    /// Delay before the next reconnect attempt, while waiting.
    pub retry_in_ms: Signal<Option<u32>>,
    /// A problem with the connection itself.
    pub problem: Signal<Option<ConnectionProblem>>,
    /// The person's daily token quota, when the gateway keeps one (and when it said so).
    pub quota: Signal<Option<(Quota, f64)>>,
}

/// Provides `status` to the components.
pub fn provide_gateway_status(status: GatewayStatus) {
    provide_context(status);
}

/// The [`GatewayStatus`] provided by the app.
pub fn expect_gateway_status() -> GatewayStatus {
    expect_context::<GatewayStatus>()
}
