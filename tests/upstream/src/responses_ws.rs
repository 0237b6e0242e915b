//! `GET /v1/responses`: the Responses API's WebSocket mode. One `response.create` at a time per
//! socket; the socket's memory holds only its most recent response (`store: false`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};

use crate::Shared;
use crate::handlers::NO_KEY;
use crate::log::SocketRecord;
use crate::responses::{Origin, Progress, Remembered, bearer, error_json, prepare, remembered, responder};
use crate::responses_stream::Decision;

/// `GET /v1/responses`: the WebSocket mode's handshake.
pub(crate) async fn websocket(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let key = bearer(&headers);
    let wrong_key = shared.options.responses_key.as_deref().is_some_and(|only| only != key);
    let refused = !shared.options.responses_websocket || wrong_key;
    let id = {
        let mut sockets = shared.responses.sockets.lock().unwrap_or_else(|e| e.into_inner());
        let id = sockets.len() as u64 + 1;
        let (peer, authorization) = (peer.to_string(), key != NO_KEY);
        sockets.push(SocketRecord { id, peer, authorization, requests: 0, closed: refused, refused });
        id
    };
    if wrong_key {
        let error = error_json(403, "invalid_api_key", "Authentication Error: invalid proxy server token");
        return (StatusCode::FORBIDDEN, Json(json!({ "error": error }))).into_response();
    }
    if refused {
        let error = error_json(404, "not_found", "this server has no WebSocket mode");
        return (StatusCode::NOT_FOUND, Json(json!({ "error": error }))).into_response();
    }
    tokio::time::sleep(shared.options.setup_delay).await;
    upgrade.on_upgrade(move |socket| async move {
        serve(&shared, socket, peer, &key, id).await;
        shared.responses.with_socket(id, |s| s.closed = true);
    })
}

/// One socket: a `response.create` at a time, until either side closes it.
async fn serve(shared: &Arc<Shared>, socket: WebSocket, peer: SocketAddr, key: &str, socket_id: u64) {
    let (mut sink, mut incoming) = socket.split();
    let mut last: Option<Remembered> = None;
    while let Some(Ok(message)) = incoming.next().await {
        let text = match message {
            Message::Text(text) => text,
            Message::Close(_) => return,
            _ => continue,
        };
        shared.responses.with_socket(socket_id, |s| s.requests += 1);
        let body: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
        let epoch = shared.responses.epoch.load(Ordering::SeqCst);
        let previous = match body.get("previous_response_id").and_then(Value::as_str) {
            None => Some(0),
            Some(id) => last
                .as_ref()
                .filter(|l| l.id == id && l.epoch == epoch)
                .map(|l| l.context)
                .or_else(|| shared.responses.stored(id)),
        };
        let invalid = (body.get("type").and_then(Value::as_str) != Some("response.create"))
            .then_some("expected a response.create event");
        let origin = Origin { peer, key, socket: Some(socket_id), previous, invalid };
        let mut prepared = prepare(shared, body, origin);
        let id = prepared.record.id;
        let store = prepared.create.store;
        let responder = responder(shared, &mut prepared);
        shared.log.push(prepared.record.clone());
        let Some(mut responder) = responder else {
            let frame = match std::mem::replace(&mut prepared.decision, Decision::Garbage(String::new())) {
                Decision::Refuse { status, code, message } => {
                    json!({ "type": "error", "status": status, "error": error_json(status, code, &message) })
                        .to_string()
                }
                Decision::Garbage(text) => text,
                Decision::Stream(_) => continue,
            };
            if sink.send(Message::text(frame)).await.is_err() {
                return;
            }
            continue;
        };
        let mut progress = Progress::new(&shared.log, id);
        loop {
            tokio::select! {
                events = responder.next_events() => {
                    let Some(events) = events else { break };
                    for event in events {
                        if sink.send(Message::text(event.json)).await.is_err() {
                            return;
                        }
                    }
                    progress.sent = responder.sent();
                }
                frame = incoming.next() => match frame {
                    Some(Ok(Message::Text(_))) => {
                        let error = error_json(400, "response_already_in_flight", "a response is already in progress on this connection");
                        let frame = json!({ "type": "error", "status": 400, "error": error }).to_string();
                        if sink.send(Message::text(frame)).await.is_err() {
                            return;
                        }
                    }
                    Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                    Some(Ok(_)) => {}
                },
            }
        }
        progress.ended = responder.over();
        drop(progress);
        if responder.dropped() {
            // The script drops the socket mid-answer.
            return;
        }
        if !responder.completed() {
            last = None;
            continue;
        }
        last = remembered(&responder, &prepared, epoch);
        if let Some(memory) = last.clone().filter(|_| store) {
            shared
                .responses
                .stored
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(memory.id.clone(), memory);
        }
    }
}
