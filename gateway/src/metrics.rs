//! `GET /metrics`: what the gateway is doing, in Prometheus' text format, for the operator's
//! scraper. Counted where the relay does the work (`ws`); rendered on request.
//!
//! Who can reach it: only peers in `metrics.allow` (loopback by default). The figures name no person
//! and no prompt, but they do say how busy the gateway is and which providers fail, which is the
//! operator's business, not a visitor's; anyone else gets the same 404 as an unknown path.
//!
//! Behind a reverse proxy every request comes from the proxy, usually loopback, so the allow-list
//! alone let every visitor in (DEPLOY.md's nginx layout). Hence [`ScrapePolicy`]: with
//! `metrics.listen` the figures are served only on that address of their own; without it, the
//! app's port never serves them to a request that came through a proxy.

use std::net::IpAddr;
use std::time::Duration;

use axum::http::HeaderMap;

use flint_protocol::ErrorCode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::config::{Config, IpRange};

/// The content type Prometheus expects for the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabel {
    code: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProviderLabel {
    provider: String,
}

type Timings = Family<ProviderLabel, Histogram, fn() -> Histogram>;

/// Seconds from 1 ms to about 16 s, doubling: time to first token and upstream latency.
fn slow_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// Seconds from 50 µs to about 1.6 s, doubling: the relay's own delay per chunk.
fn fast_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

/// The gateway's figures; cheap to update from any task (atomics inside).
pub struct Metrics {
    registry: Registry,
    sockets_open: Gauge,
    streams_running: Gauge,
    streams_started: Counter,
    tokens_relayed: Counter,
    first_token: Histogram,
    relay_latency: Histogram,
    errors: Family<CodeLabel, Counter>,
    upstream_first_event: Timings,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every figure at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("flint");
        let sockets_open = Gauge::default();
        let streams_running = Gauge::default();
        let streams_started = Counter::default();
        let tokens_relayed = Counter::default();
        let first_token = slow_buckets();
        let relay_latency = fast_buckets();
        let errors = Family::<CodeLabel, Counter>::default();
        let upstream_first_event = Timings::new_with_constructor(slow_buckets as fn() -> Histogram);
        registry.register(
            "connections",
            "Tabs connected, or dropped and waiting up to server.resume_grace_secs to resume",
            sockets_open.clone(),
        );
        registry.register("streams_running", "Generations being relayed now", streams_running.clone());
        registry.register("streams_started", "Generations started", streams_started.clone());
        registry.register(
            "tokens_relayed",
            "Tokens relayed from providers to tabs (the provider's count, else its chunks)",
            tokens_relayed.clone(),
        );
        registry.register(
            "time_to_first_token_seconds",
            "From a Start frame to the first text sent to the tab",
            first_token.clone(),
        );
        registry.register(
            "relay_latency_seconds",
            "From a provider's chunk arriving to the frame holding it being sent",
            relay_latency.clone(),
        );
        registry.register("errors", "Generations that ended in an error, by protocol code", errors.clone());
        registry.register(
            "upstream_first_event_seconds",
            "From asking a provider to its first event, by provider",
            upstream_first_event.clone(),
        );
        Self {
            registry,
            sockets_open,
            streams_running,
            streams_started,
            tokens_relayed,
            first_token,
            relay_latency,
            errors,
            upstream_first_event,
        }
    }

    /// The load now: open sockets and running streams ([`crate::allocator::Trim`] reads it).
    pub fn load(&self) -> [i64; 2] {
        [self.sockets_open.get(), self.streams_running.get()]
    }

    /// A tab connected (its socket opened).
    pub fn socket_opened(&self) {
        self.sockets_open.inc();
    }

    /// A tab's connection ended: its socket closed and it was not resumed in time.
    pub fn socket_closed(&self) {
        self.sockets_open.dec();
    }

    /// A generation started relaying.
    pub fn stream_started(&self) {
        self.streams_started.inc();
        self.streams_running.inc();
    }

    /// A generation stopped relaying (finished, failed or cancelled).
    pub fn stream_ended(&self) {
        self.streams_running.dec();
    }

    /// A generation's first text was sent, `after` its Start frame.
    pub fn first_token(&self, after: Duration) {
        self.first_token.observe(after.as_secs_f64());
    }

    /// A frame went out whose oldest text had waited `held` in the relay.
    pub fn relayed(&self, held: Duration) {
        self.relay_latency.observe(held.as_secs_f64());
    }

    /// A stream ended having generated `tokens` (the provider's count, else its chunks).
    pub fn tokens(&self, tokens: u32) {
        self.tokens_relayed.inc_by(u64::from(tokens));
    }

    /// A generation ended with `code`.
    pub fn error(&self, code: ErrorCode) {
        let code = serde_json::to_value(code).ok().and_then(|v| v.as_str().map(str::to_owned));
        self.errors.get_or_create(&CodeLabel { code: code.unwrap_or_else(|| "unknown".into()) }).inc();
    }

    /// `provider` answered its first event `after` it was asked.
    pub fn upstream_first_event(&self, provider: &str, after: Duration) {
        self.upstream_first_event
            .get_or_create(&ProviderLabel { provider: provider.to_owned() })
            .observe(after.as_secs_f64());
    }

    /// Generations being relayed now (those of dropped tabs waiting to resume included).
    pub fn streams_running(&self) -> i64 {
        self.streams_running.get()
    }

    /// The text format of every figure.
    pub fn render(&self) -> String {
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String cannot fail");
        out
    }
}

/// Whether `peer` may read `/metrics`.
pub fn may_scrape(allow: &[IpRange], peer: IpAddr) -> bool {
    allow.iter().any(|range| range.contains(peer))
}

/// Headers a proxy adds to what it forwards (nginx and Caddy as `DEPLOY.md` sets them up, the
/// standard `Forwarded`, `Via`): a request carrying one came through a proxy, whatever its peer.
const FORWARDING_HEADERS: [&str; 6] =
    ["forwarded", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-real-ip", "via"];

/// Which listener a scrape arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// `server.listen`, where visitors (and a reverse proxy) come.
    App,
    /// `metrics.listen`, the figures' own address.
    Own,
}

/// Who may read `/metrics`, and where.
#[derive(Debug, Clone, Default)]
pub struct ScrapePolicy {
    allow: Vec<IpRange>,
    own_listener: bool,
    proxies: Vec<IpRange>,
}

impl ScrapePolicy {
    /// The policy of `[metrics]`, with `auth.trusted_proxies` as the proxies.
    pub fn new(config: &Config) -> Self {
        Self {
            allow: config.metrics.allow.clone(),
            own_listener: config.metrics.listen.is_some(),
            proxies: config.auth.trusted_proxies.clone(),
        }
    }

    /// Whether a request from `peer` with `headers` on `listener` may read the figures: from a
    /// peer in `metrics.allow`, never through a proxy, and on the app's port only when the figures
    /// have no address of their own. A trusted proxy's own address counts as a proxy on the app's
    /// port only: on the figures' own address a scraper may share it (both on loopback).
    pub fn allows(&self, listener: Listener, peer: IpAddr, headers: &HeaderMap) -> bool {
        let forwarded = FORWARDING_HEADERS.iter().any(|name| headers.contains_key(*name));
        let refused = match listener {
            Listener::App => {
                self.own_listener || forwarded || self.proxies.iter().any(|range| range.contains(peer))
            }
            Listener::Own => forwarded,
        };
        !refused && may_scrape(&self.allow, peer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, name: &str) -> &'a str {
        text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name} in\n{text}"))
    }

    #[test]
    fn figures_render_in_the_text_format() {
        let m = Metrics::new();
        m.socket_opened();
        m.stream_started();
        m.stream_started();
        m.stream_ended();
        m.relayed(Duration::from_micros(300));
        m.relayed(Duration::from_millis(3));
        m.tokens(5);
        m.tokens(2);
        m.first_token(Duration::from_millis(40));
        m.error(ErrorCode::UpstreamUnavailable);
        m.error(ErrorCode::UpstreamUnavailable);
        m.upstream_first_event("cerebras", Duration::from_millis(120));
        let text = m.render();
        assert_eq!(line(&text, "flint_connections "), "flint_connections 1");
        assert_eq!(line(&text, "flint_streams_running "), "flint_streams_running 1");
        assert_eq!(line(&text, "flint_streams_started_total "), "flint_streams_started_total 2");
        assert_eq!(line(&text, "flint_tokens_relayed_total "), "flint_tokens_relayed_total 7");
        assert_eq!(line(&text, "flint_relay_latency_seconds_count "), "flint_relay_latency_seconds_count 2");
        assert_eq!(line(&text, "flint_errors_total{"), "flint_errors_total{code=\"upstream_unavailable\"} 2");
        assert!(text.contains("flint_upstream_first_event_seconds_count{provider=\"cerebras\"} 1"), "{text}");
        assert!(text.contains("# TYPE flint_time_to_first_token_seconds histogram"), "{text}");
    }

    #[test]
    fn a_request_through_a_proxy_never_reads_the_figures_on_the_apps_port() {
        let mut config = Config::default();
        config.auth.trusted_proxies = vec!["10.0.0.1".parse().unwrap()];
        config.metrics.allow.push("10.0.0.0/8".parse().unwrap());
        let policy = ScrapePolicy::new(&config);
        let local = "127.0.0.1".parse().unwrap();
        let plain = HeaderMap::new();
        assert!(policy.allows(Listener::App, local, &plain), "a scraper on the same machine");
        for name in FORWARDING_HEADERS {
            let mut proxied = HeaderMap::new();
            proxied.insert(name, "203.0.113.9".parse().unwrap());
            assert!(!policy.allows(Listener::App, local, &proxied), "{name} from loopback");
            assert!(!policy.allows(Listener::Own, local, &proxied), "{name} on the own port");
        }
        let proxy = "10.0.0.1".parse().unwrap();
        assert!(!policy.allows(Listener::App, proxy, &plain), "the trusted proxy's own address");
        config.metrics.listen = Some("127.0.0.1:9187".parse().unwrap());
        let own = ScrapePolicy::new(&config);
        assert!(!own.allows(Listener::App, local, &plain), "with an own address, not on the app's port");
        assert!(own.allows(Listener::Own, local, &plain));
        assert!(own.allows(Listener::Own, proxy, &plain), "a scraper sharing the proxy's address");
        assert!(!own.allows(Listener::Own, "203.0.113.9".parse().unwrap(), &plain), "outside allow");
    }

    #[test]
    fn only_allowed_peers_may_scrape() {
        let loopback: Vec<IpRange> = ["127.0.0.1/8", "::1/128"].iter().map(|r| r.parse().unwrap()).collect();
        assert!(may_scrape(&loopback, "127.0.0.1".parse().unwrap()));
        assert!(may_scrape(&loopback, "::1".parse().unwrap()));
        assert!(!may_scrape(&loopback, "203.0.113.9".parse().unwrap()));
        assert!(!may_scrape(&[], "127.0.0.1".parse().unwrap()), "an empty list turns /metrics off");
    }
}
