//! `GET /ws`: one WebSocket per browser tab, many generations multiplexed over it.
//!
//! [`serve_socket`] is the connection: generic over any `Sink`/`Stream` of messages so unit tests
//! drive it with channels. Each generation runs in its own task ([`stream::run`]) that sends
//! ready-serialised frames back over an mpsc channel.

use axum::Extension;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;

use crate::AppState;
use crate::auth::SignedIn;
use crate::person::Who;

mod coalesce;
mod connection;
mod frames;
mod own_key;
mod peer;
mod replay;
mod resume;
mod resumed;
mod session;
mod signed_in;
mod start;
mod stream;
mod stream_frames;
#[cfg(test)]
mod tests;
mod thinking;

pub use coalesce::FRAME_INTERVAL;
pub use connection::serve_socket;
pub use peer::Peers;
pub use resume::Resumes;

/// Bytes read from a socket at a time. tungstenite zero-fills its read buffer up to this size before
/// every read, so all of it is resident for every open tab: at its default (128 KiB) 10,000 idle
/// tabs held 1.4 GB (`bench/scale-issue13.md`). A client's frames are small, and a larger one (a long
/// prompt) is simply read in several goes, so 4 KiB costs no speed.
pub const READ_BUFFER_BYTES: usize = 4 * 1024;

/// Query parameters of `GET /ws`.
#[derive(Debug, Deserialize)]
pub struct WsParams {
    /// The protocol version the client was built for; a mismatch is answered and closed.
    #[serde(default)]
    pub protocol: Option<String>,
}

/// Upgrades to a WebSocket and serves it.
pub async fn handler(
    ws: WebSocketUpgrade,
    Query(params): Query<WsParams>,
    State(state): State<AppState>,
    Who(person): Who,
    signed_in: Option<Extension<SignedIn>>,
) -> Response {
    // The socket's own limit is generous; frames between `max_frame_bytes` and this are answered
    // with `prompt_too_large` instead of killing the connection.
    let hard_limit = state.limits().max_frame_bytes.saturating_mul(2).max(1 << 20);
    let conn = state.next_connection_id();
    let protocol = params.protocol;
    // Registered now, so a sign-out from here on closes this socket.
    let signin = signed_in.map(|Extension(signed_in)| state.auth().watch(&signed_in));
    let ws = ws.read_buffer_size(READ_BUFFER_BYTES);
    ws.max_message_size(hard_limit).max_frame_size(hard_limit).on_upgrade(move |socket| async move {
        let (sink, incoming) = socket.split();
        let metrics = std::sync::Arc::clone(state.metrics());
        metrics.socket_opened();
        serve_socket(sink, incoming, state, conn, protocol.as_deref(), person, signin).await;
        metrics.socket_closed();
    })
}

/// `GET /peer/ws`: another gateway relaying a tab whose session this one holds. Refused without
/// this deployment's `server.peer_secret`; the person is the one the relaying gateway identified,
/// and a resume still hands a session only to its own person.
pub async fn peer_handler(
    ws: WebSocketUpgrade,
    Query(params): Query<WsParams>,
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if !state.peers().admits(header(peer::SECRET_HEADER)) {
        let message = "this route is for other Flint gateways of the same deployment; they send \
                       server.peer_secret, which must be the same on every gateway";
        return (StatusCode::FORBIDDEN, message).into_response();
    }
    let Some(person) = header(peer::PERSON_HEADER).and_then(peer::person_from_header) else {
        return (StatusCode::BAD_REQUEST, "the relaying gateway named no person; upgrade it").into_response();
    };
    let hard_limit = state.limits().max_frame_bytes.saturating_mul(2).max(1 << 20);
    let conn = state.next_connection_id();
    let ws = ws.read_buffer_size(READ_BUFFER_BYTES);
    ws.max_message_size(hard_limit).max_frame_size(hard_limit).on_upgrade(move |socket| async move {
        let (sink, incoming) = socket.split();
        // The page's own socket is counted on the relaying gateway; only the tab's work is here.
        serve_socket(sink, incoming, state, conn, params.protocol.as_deref(), person, None).await;
    })
}
