//! Flint's gateway: one WebSocket per browser tab multiplexing many generations, relayed to
//! OpenAI-compatible providers and the embedded model, plus the built app and a model list.
//!
//! [`app`] builds the router from an [`AppState`]; `main.rs` only reads arguments and serves it.
//! Routes: `GET /ws` ([`ws`]), `GET /healthz`, `GET /api/models`, `POST /api/access` ([`access`]),
//! `POST /api/discovery/rescan` ([`discovery`]), `POST /api/share`, `GET /s/<id>` and
//! `GET /api/share/<id>/pictures` ([`shares`]), `POST /api/history/push` and `GET /api/history`
//! ([`history`]), `GET /vendor/…` (the modules previews import, [`vendor`]), and everything else
//! from the built app
//! (`server.dist`, with `index.html` as the fallback for client-side routes), `GET /signin`,
//! `POST /api/signin` and `POST /api/signout` ([`auth`]). Every request passes [`access::guard`]
//! (which pages may ask), then [`auth::check`] (who is asking: a [`person::Person`]), and gets
//! [`headers::security_headers`]; [`serve::serve`] runs it.

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::middleware;
use axum::routing::{delete, get, post};
use tower_http::trace::TraceLayer;

pub mod access;
pub mod allocator;
pub mod auth;
pub mod clock;
pub mod config;
pub mod discovery;
pub mod error;
pub mod headers;
pub mod history;
pub mod http;
pub mod images;
pub mod limits;
/// The embedded llama.cpp engine (owned by the local-model work; see `providers::local`).
#[cfg(feature = "local")]
pub mod local;
pub mod logging;
pub mod metrics;
pub mod models;
pub mod person;
pub mod profiles;
pub mod provider;
pub mod providers;
pub mod serve;
pub mod shares;
mod state;
pub mod static_files;
pub mod store;
pub mod vendor;
pub mod ws;

pub use state::AppState;

/// The gateway's routes.
pub fn app(state: AppState) -> Router {
    // The built app's files, precompressed and cached (`static_files`).
    let files = Router::new()
        .fallback_service(
            static_files::serve_dir(state.dist()).fallback(http::app_fallback.with_state(state.clone())),
        )
        .layer(middleware::from_fn(static_files::cache_headers));
    Router::new()
        .route("/", get(http::index))
        .route("/index.html", get(http::index))
        .route("/ws", get(ws::handler))
        .route("/healthz", get(http::healthz))
        .route("/metrics", get(http::metrics))
        .route("/api/models", get(http::models))
        .route("/api/access", post(access::probe))
        .route("/api/discovery/rescan", post(discovery::rescan))
        .route(
            "/api/share",
            // Room above the link limit, so a link a little too long gets the handler's clear 413.
            post(shares::create).layer(DefaultBodyLimit::max(
                state
                    .share_limit()
                    .saturating_add(shares::pictures::MAX_BODY_BYTES)
                    .saturating_add(64 * 1024),
            )),
        )
        .route("/api/share/{id}", delete(shares::delete))
        .route("/api/share/{id}/pictures", get(shares::pictures::get))
        .route("/api/history", get(history::pull))
        .route(
            "/api/history/push",
            // Room above the push limit, so a push a little too large gets the handler's clear 413.
            post(history::push).layer(DefaultBodyLimit::max(
                state.history_limits().max_request_bytes.saturating_add(64 * 1024),
            )),
        )
        .route("/s/{id}", get(shares::open))
        // The modules previews import; the only routes with CORS (`vendor`).
        .route("/vendor", get(vendor::serve))
        .route("/vendor/", get(vendor::serve))
        .route("/vendor/{*path}", get(vendor::serve))
        .route("/signin", get(auth::signin_page))
        .route("/api/signin", post(auth::sign_in))
        .route("/api/signout", post(auth::sign_out))
        .fallback_service(files)
        // Runs after `access::guard` (layers run outside in): a refused origin never reaches sign-in.
        .layer(middleware::from_fn_with_state(state.clone(), auth::check))
        .layer(middleware::from_fn_with_state(state.clone(), access::guard))
        .layer(middleware::from_fn(headers::security_headers))
        // Other gateways' relayed tabs: outside the sign-in and `Host` checks (a peer names the
        // person itself and reaches this gateway by an internal address); the secret guards it.
        .merge(peer_routes())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// `/peer/ws`, which other gateways relay resumed tabs to; only the shared secret admits.
fn peer_routes() -> Router<AppState> {
    Router::new().route("/peer/ws", get(ws::peer_handler))
}

/// The routes of `server.peer_listen`: the peer route alone, served until the drain ends.
pub fn peer_app(state: AppState) -> Router {
    peer_routes().layer(TraceLayer::new_for_http()).with_state(state)
}

/// The routes of `metrics.listen`, the figures' own address: `/metrics` alone, behind the same
/// `Host` check as the app (against DNS rebinding).
pub fn metrics_app(state: AppState) -> Router {
    Router::new()
        .route("/metrics", get(http::metrics_own_listener))
        .layer(middleware::from_fn_with_state(state.clone(), access::guard))
        .layer(middleware::from_fn(headers::security_headers))
        .with_state(state)
}
