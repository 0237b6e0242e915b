//! The log: `RUST_LOG` (default `info`) for Flint's own lines, with libraries that print what
//! passes through them held at `info` whatever it says.
//!
//! At `RUST_LOG=trace` the WebSocket library printed every frame whole, the browser's included:
//! people's own keys, resume tokens and every prompt landed in the log. The HTTP and database
//! libraries print headers, URLs and statements at their debug and trace levels. A second filter,
//! applied after `RUST_LOG`'s, lets through nothing below `info` from them, so no level prints a
//! secret; Flint's own debug and trace lines name no key, token or prompt.

use tracing_subscriber::filter::{EnvFilter, FilterExt as _, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{Layer as _, fmt};

/// Log targets (crates) held at `info`: they print frames, headers, URLs or queries below it.
/// `tower_http`'s request lines carry URLs, and `/s/<id>` opens someone's prompt.
pub const CAPPED: &[&str] = &[
    "tungstenite",
    "tokio_tungstenite",
    "axum",
    "hyper",
    "hyper_util",
    "h2",
    "reqwest",
    "rustls",
    "tokio_rustls",
    "sqlx",
    "sqlx_postgres",
    "tower_http",
];

/// The cap on [`CAPPED`]'s targets; everything else passes to `RUST_LOG`'s filter.
pub fn cap() -> Targets {
    CAPPED.iter().fold(Targets::new().with_default(LevelFilter::TRACE), |targets, name| {
        targets.with_target(*name, LevelFilter::INFO)
    })
}

/// Installs the global subscriber: `RUST_LOG` (default `info`) and then [`cap`]; with
/// `FLINT_LOG_FORMAT=json` one JSON object a line, for a log collector, text otherwise. (An
/// environment variable rather than a setting, so that reading the settings is logged the same way.)
pub fn init() {
    let level = || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let filter = level().and(cap());
    let json = std::env::var("FLINT_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let registry = tracing_subscriber::registry();
    if json {
        registry.with(fmt::layer().json().with_current_span(true).with_filter(filter)).init();
    } else {
        registry.with(fmt::layer().with_filter(filter)).init();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_holds_frame_printing_libraries_at_info_and_passes_flints_own_lines() {
        let cap = cap();
        for target in ["tungstenite::protocol", "tokio_tungstenite", "hyper::proto::h1::io", "h2::codec"] {
            assert!(cap.would_enable(target, &tracing::Level::INFO), "{target} at info");
            assert!(!cap.would_enable(target, &tracing::Level::DEBUG), "{target} at debug");
            assert!(!cap.would_enable(target, &tracing::Level::TRACE), "{target} at trace");
        }
        assert!(cap.would_enable("flint_gateway::ws::connection", &tracing::Level::TRACE));
    }
}
