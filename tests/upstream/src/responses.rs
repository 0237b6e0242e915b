//! `/v1/responses`: OpenAI's Responses API, over HTTP streaming (`POST`, SSE) and its WebSocket
//! mode (`GET` upgrade, `responses_ws.rs`; one `response.create` frame per answer, the same
//! events as frames).
//!
//! The answers are the chat endpoint's scripts ([`decide`]). A response can be continued with
//! `previous_response_id` the way the API allows: on a socket, only that socket's most recent
//! response (what `store: false` keeps in the connection's memory); anywhere, a response created
//! with `store: true` (the API's default). Anything else is refused with
//! `previous_response_not_found`, and [`crate::ScriptedUpstream::forget_responses`] makes every
//! response so far unknown. [`crate::Options::setup_delay`] is waited before each HTTP request
//! and each handshake (a TLS and auth round trip to a remote API), and
//! [`crate::Options::input_token_cost`] per input token the response did not already hold.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::Shared;
use crate::handlers::NO_KEY;
use crate::log::{RequestLog, RequestRecord, ResponsesRecord, SocketRecord};
use crate::responses_stream::{Decision, End, Plan, Responder, decide};
use crate::script::Script;

/// What the server remembers of responses and sockets.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    next_response: AtomicU64,
    /// Bumped by `forget`: what was remembered before is gone.
    pub(crate) epoch: AtomicU64,
    /// Responses created with `store: true`.
    pub(crate) stored: Mutex<HashMap<String, Remembered>>,
    pub(crate) sockets: Mutex<Vec<SocketRecord>>,
}

/// A response a later one may continue.
#[derive(Debug, Clone)]
pub(crate) struct Remembered {
    pub id: String,
    /// Tokens of its whole conversation, its answer included.
    pub context: u32,
    pub epoch: u64,
}

impl Memory {
    pub(crate) fn sockets(&self) -> Vec<SocketRecord> {
        self.sockets.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn forget(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn stored(&self, id: &str) -> Option<u32> {
        let epoch = self.epoch.load(Ordering::SeqCst);
        let stored = self.stored.lock().unwrap_or_else(|e| e.into_inner());
        stored.get(id).filter(|r| r.epoch == epoch).map(|r| r.context)
    }

    pub(crate) fn with_socket(&self, id: u64, change: impl FnOnce(&mut SocketRecord)) {
        let mut sockets = self.sockets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(socket) = sockets.iter_mut().find(|s| s.id == id) {
            change(socket);
        }
    }
}

/// The parts of a request body that matter here.
pub(crate) struct Create {
    model: String,
    input_items: usize,
    /// Tokens of the input, estimated at four characters each.
    input_tokens: u32,
    previous: Option<String>,
    limit: Option<usize>,
    reasoning: bool,
    pub store: bool,
}

impl Create {
    fn read(body: &Value) -> Self {
        let items = body.get("input").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let text = |item: &Value| match item.get("content") {
            Some(Value::String(text)) => text.len(),
            Some(Value::Array(parts)) => {
                parts.iter().filter_map(|p| p.get("text")?.as_str()).map(str::len).sum()
            }
            _ => 0,
        };
        let chars: usize = match body.get("input") {
            Some(Value::String(text)) => text.len(),
            _ => items.iter().map(text).sum(),
        };
        Self {
            model: body.get("model").and_then(Value::as_str).unwrap_or_default().to_owned(),
            input_items: items.len(),
            input_tokens: u32::try_from(chars / 4).unwrap_or(u32::MAX),
            previous: body.get("previous_response_id").and_then(Value::as_str).map(str::to_owned),
            limit: body
                .get("max_output_tokens")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok()),
            reasoning: body.get("reasoning").is_some_and(Value::is_object),
            store: body.get("store").and_then(Value::as_bool).unwrap_or(true),
        }
    }
}

pub(crate) fn bearer(headers: &HeaderMap) -> String {
    let key = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()?.strip_prefix("Bearer "));
    key.unwrap_or(NO_KEY).to_owned()
}

/// Keeps the log's record of a streamed answer current; updated when dropped.
pub(crate) struct Progress {
    log: Arc<RequestLog>,
    id: u64,
    pub sent: usize,
    pub ended: bool,
}

impl Progress {
    pub(crate) fn new(log: &Arc<RequestLog>, id: u64) -> Self {
        log.answer_began();
        Self { log: log.clone(), id, sent: 0, ended: false }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.log.answer_ended();
        let (sent, ended) = (u32::try_from(self.sent).unwrap_or(u32::MAX), self.ended);
        self.log.update(self.id, |record| {
            record.tokens_sent = sent;
            record.finished = ended;
            record.closed_early = !ended;
        });
    }
}

/// One request's decision and its log record.
pub(crate) struct Prepared {
    pub decision: Decision,
    pub record: RequestRecord,
    pub create: Create,
    /// Tokens the continued response already held.
    pub context: u32,
}

/// Where a request came from and what it may continue.
pub(crate) struct Origin<'a> {
    pub peer: SocketAddr,
    pub key: &'a str,
    pub socket: Option<u64>,
    /// The context of the response it continues; `None`: that response is unknown.
    pub previous: Option<u32>,
    /// What is wrong with the request's form, if anything.
    pub invalid: Option<&'static str>,
}

/// Decides a request.
pub(crate) fn prepare(shared: &Shared, body: Value, origin: Origin<'_>) -> Prepared {
    let Origin { peer, key, socket, previous, invalid } = origin;
    let create = Create::read(&body);
    let id = shared.log.next_id();
    let found = create.previous.is_none() || previous.is_some();
    let images = crate::images::seen(&body, crate::images::Api::Responses);
    let decision = if let Some(message) = invalid {
        Decision::Refuse { status: 400, code: "invalid_request_error", message: message.into() }
    } else if let Err(message) = &images {
        Decision::Refuse { status: 400, code: "invalid_request_error", message: message.clone() }
    } else if !found {
        let previous = create.previous.as_deref().unwrap_or_default();
        let message = format!("Previous response with id '{previous}' not found.");
        Decision::Refuse { status: 400, code: "previous_response_not_found", message }
    } else if Script::parse(&create.model) == Script::SeeImages {
        let text = crate::images::answer(images.as_deref().unwrap_or_default());
        let interval = crate::script::interval(shared.options.rate);
        let tokens = crate::handlers::escaped_tokens(&text);
        Decision::Stream(Plan { model: create.model.clone(), tokens, interval, end: End::Completed })
    } else {
        decide(shared, &create.model, key, create.previous.is_some())
    };
    let streams = matches!(decision, Decision::Stream(_));
    let response_id = streams
        .then(|| format!("resp_{}", shared.responses.next_response.fetch_add(1, Ordering::SeqCst) + 1));
    let status = match &decision {
        Decision::Refuse { status, .. } => *status,
        _ => 200,
    };
    let record = RequestRecord {
        id,
        model: create.model.clone(),
        peer: peer.to_string(),
        body,
        status,
        tokens_sent: 0,
        finished: !streams,
        closed_early: false,
        authorization: key != NO_KEY,
        key_tail: crate::handlers::key_tail(key),
        interrupted: false,
        responses: Some(ResponsesRecord {
            transport: if socket.is_some() { "websocket" } else { "http" }.into(),
            socket,
            input_items: create.input_items,
            previous_response_id: create.previous.clone(),
            continued: create.previous.is_some() && found,
            response_id,
        }),
    };
    Prepared { decision, record, create, context: previous.unwrap_or(0) }
}

pub(crate) fn responder(shared: &Shared, prepared: &mut Prepared) -> Option<Responder> {
    if !matches!(prepared.decision, Decision::Stream(_)) {
        return None;
    }
    let Decision::Stream(plan) = std::mem::replace(&mut prepared.decision, Decision::Garbage(String::new()))
    else {
        return None;
    };
    let id = prepared.record.responses.as_ref()?.response_id.clone()?;
    let create = &prepared.create;
    let prefill = shared.options.input_token_cost.saturating_mul(create.input_tokens);
    let input = prepared.context.saturating_add(create.input_tokens);
    Some(Responder::new(plan, id, create.limit, create.reasoning, input, prefill))
}

/// The answer's whole conversation in tokens, for a response that continues it.
pub(crate) fn remembered(responder: &Responder, prepared: &Prepared, epoch: u64) -> Option<Remembered> {
    let id = prepared.record.responses.as_ref()?.response_id.clone()?;
    let output = u32::try_from(responder.sent()).unwrap_or(u32::MAX);
    let context = prepared.context.saturating_add(prepared.create.input_tokens).saturating_add(output);
    Some(Remembered { id, context, epoch })
}

pub(crate) fn error_json(status: u16, code: &str, message: &str) -> Value {
    let kind = if status >= 500 { "server_error" } else { "invalid_request_error" };
    let param = (code == "previous_response_not_found").then_some("previous_response_id");
    json!({ "type": kind, "code": code, "message": message, "param": param })
}

/// `POST /v1/responses`.
pub(crate) async fn http(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    tokio::time::sleep(shared.options.setup_delay).await;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let previous =
        body.get("previous_response_id").and_then(Value::as_str).map(|id| shared.responses.stored(id));
    let invalid = if body.is_null() {
        Some("the request body is not JSON")
    } else if shared.options.responses_key.as_deref().is_some_and(|only| only != bearer(&headers)) {
        // LiteLLM without a database looks any key but its master key up in one.
        Some("No connected db.")
    } else if body.get("stream").and_then(Value::as_bool) != Some(true) {
        Some("this server only streams: set \"stream\": true")
    } else {
        None
    };
    let key = bearer(&headers);
    let origin = Origin { peer, key: &key, socket: None, previous: previous.unwrap_or(Some(0)), invalid };
    let mut prepared = prepare(&shared, body, origin);
    let id = prepared.record.id;
    let store = prepared.create.store;
    let responder = responder(&shared, &mut prepared);
    let decision = std::mem::replace(&mut prepared.decision, Decision::Garbage(String::new()));
    shared.log.push(prepared.record.clone());
    let Some(responder) = responder else {
        return match decision {
            Decision::Refuse { status, code, message } => {
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
                (status, Json(json!({ "error": error_json(status.as_u16(), code, &message) })))
                    .into_response()
            }
            Decision::Garbage(text) => ([(header::CONTENT_TYPE, "text/event-stream")], text).into_response(),
            Decision::Stream(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        };
    };
    let progress = Progress::new(&shared.log, id);
    let state = (responder, progress, prepared, shared);
    let stream = futures::stream::unfold(Some(state), move |state| async move {
        let (mut responder, mut progress, prepared, shared) = state?;
        let Some(events) = responder.next_events().await else {
            progress.ended = responder.over();
            if store && responder.completed() {
                let epoch = shared.responses.epoch.load(Ordering::SeqCst);
                if let Some(memory) = remembered(&responder, &prepared, epoch) {
                    shared
                        .responses
                        .stored
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(memory.id.clone(), memory);
                }
            }
            return None;
        };
        progress.sent = responder.sent();
        let mut bytes = String::with_capacity(events.len() * 200);
        for event in events {
            bytes.push_str("event: ");
            bytes.push_str(event.kind);
            bytes.push_str("\ndata: ");
            bytes.push_str(&event.json);
            bytes.push_str("\n\n");
        }
        Some((
            Ok::<_, std::convert::Infallible>(Bytes::from(bytes)),
            Some((responder, progress, prepared, shared)),
        ))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
