//! The connection to Flint's gateway: [`use_gateway`] and the plain logic it is built from.

mod events;
mod hook;
mod pages;

pub use events::{ConnectionNews, Quota, StreamEvent};
pub use flint_protocol::worker::ConnectionState;
pub use hook::{StreamHandler, UseGatewayReturn, WorkerLink, use_gateway, use_gateway_with_options};

/// A problem with the connection the person must act on, as the banner shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionProblem {
    /// What is wrong and what to do, in a sentence.
    pub text: String,
    /// The gateway wants the person signed in (it answered 401): the banner links to `/signin`.
    pub sign_in: bool,
}

impl ConnectionProblem {
    /// A problem that signing in does not solve.
    pub fn said(text: impl Into<String>) -> Self {
        Self { text: text.into(), sign_in: false }
    }
}

/// Options for [`use_gateway_with_options`], built from [`Default`] with the setters below.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseGatewayOptions {
    /// The WebSocket URL; by default `/ws` on the page's own host, `wss:` when the page is `https:`.
    pub url: Option<String>,
    /// First reconnect delay in milliseconds (doubled per failed attempt).
    pub base_delay_ms: u32,
    /// Longest reconnect delay in milliseconds.
    pub max_delay_ms: u32,
    /// How often to ping; a connection silent for two intervals is replaced.
    pub ping_interval_ms: u32,
}

impl Default for UseGatewayOptions {
    fn default() -> Self {
        Self { url: None, base_delay_ms: 250, max_delay_ms: 10_000, ping_interval_ms: 15_000 }
    }
}

impl UseGatewayOptions {
    /// Connects to `url` instead of the page's own `/ws`.
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// Sets the first and the longest reconnect delay.
    pub fn backoff_ms(mut self, base: u32, max: u32) -> Self {
        self.base_delay_ms = base.max(1);
        self.max_delay_ms = max.max(self.base_delay_ms);
        self
    }

    /// Sets the ping interval.
    pub fn ping_interval_ms(mut self, ms: u32) -> Self {
        self.ping_interval_ms = ms.max(1000);
        self
    }
}

/// The WebSocket URL for `path` on the page's origin: `ws:` for `http:` pages, `wss:` for `https:`.
pub fn socket_url(page_protocol: &str, host: &str, path: &str) -> String {
    let scheme = if page_protocol.eq_ignore_ascii_case("https:") { "wss" } else { "ws" };
    format!("{scheme}://{host}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_url_follows_page_scheme() {
        assert_eq!(socket_url("http:", "127.0.0.1:8787", "/ws"), "ws://127.0.0.1:8787/ws");
        assert_eq!(socket_url("https:", "flint.example", "/ws"), "wss://flint.example/ws");
    }

    #[test]
    fn options_builder() {
        let o = UseGatewayOptions::default().url("ws://x/ws").backoff_ms(100, 50).ping_interval_ms(10);
        assert_eq!(o.url.as_deref(), Some("ws://x/ws"));
        assert_eq!((o.base_delay_ms, o.max_delay_ms, o.ping_interval_ms), (100, 100, 1000));
    }

    #[test]
    fn labels_are_distinct_words() {
        let labels: Vec<_> = [
            ConnectionState::Connecting,
            ConnectionState::Connected,
            ConnectionState::Reconnecting,
            ConnectionState::Offline,
        ]
        .map(ConnectionState::label)
        .to_vec();
        assert_eq!(labels, ["connecting", "connected", "reconnecting", "offline"]);
    }
}
