//! The log of requests the scripted upstream received, for tests to observe.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

/// One `POST /v1/chat/completions`, as `GET /__requests` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// 1, 2, 3… in arrival order (not reset by `/__reset`).
    pub id: u64,
    /// The request's `model` field.
    pub model: String,
    /// The client's address: the same for requests over one reused connection.
    pub peer: String,
    /// The whole request body as received.
    pub body: serde_json::Value,
    /// The status the upstream answered with.
    pub status: u16,
    /// Tokens written so far.
    pub tokens_sent: u32,
    /// The script ran to its end (for `drop-midway`: it sent its part and closed).
    pub finished: bool,
    /// The client closed the connection before the script ended: a cancel seen at the upstream.
    pub closed_early: bool,
    /// The request carried an `Authorization` header (a keyless provider must send none).
    #[serde(default)]
    pub authorization: bool,
    /// The last four characters of the key sent, to tell which key a request went with (never
    /// the whole key).
    #[serde(default)]
    pub key_tail: Option<String>,
    /// A later request ended this answer early (a single-slot server, [`crate::Options::single_slot`]).
    #[serde(default)]
    pub interrupted: bool,
    /// For a Responses API request (`/v1/responses`): how it came and what it continued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<ResponsesRecord>,
}

/// What a Responses API request was, beyond its body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesRecord {
    /// `"http"` (a POST) or `"websocket"` (a `response.create` frame).
    pub transport: String,
    /// The socket it came on (1, 2, 3… in the order they opened); `None` over HTTP.
    pub socket: Option<u64>,
    /// How many items its `input` held.
    pub input_items: usize,
    /// Its `previous_response_id`, if any.
    pub previous_response_id: Option<String>,
    /// The previous response was found and the answer continued it (else, with an id, the
    /// request was refused with `previous_response_not_found`).
    pub continued: bool,
    /// The id of the response it created, if it created one.
    pub response_id: Option<String>,
}

/// One WebSocket to `/v1/responses`, or one handshake for it that was refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SocketRecord {
    /// 1, 2, 3… in the order they opened.
    pub id: u64,
    /// The client's address.
    pub peer: String,
    /// The handshake carried an `Authorization` header.
    pub authorization: bool,
    /// `response.create` frames received on it.
    pub requests: u32,
    /// The socket has closed (either side).
    pub closed: bool,
    /// The handshake was refused ([`crate::Options::without_responses_websocket`], or a key
    /// other than [`crate::Options::responses_key`]): no socket.
    pub refused: bool,
}

/// Shared, append-only log with change notification.
#[derive(Debug, Default)]
pub(crate) struct RequestLog {
    records: Mutex<Vec<RequestRecord>>,
    next_id: Mutex<u64>,
    changed: Notify,
    /// Answers streaming now, and the most there ever were at once.
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl RequestLog {
    pub fn next_id(&self) -> u64 {
        let mut next = self.next_id.lock().unwrap_or_else(|e| e.into_inner());
        *next += 1;
        *next
    }

    pub fn push(&self, record: RequestRecord) {
        self.records.lock().unwrap_or_else(|e| e.into_inner()).push(record);
        self.changed.notify_waiters();
    }

    pub fn update(&self, id: u64, change: impl FnOnce(&mut RequestRecord)) {
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(record) = records.iter_mut().find(|r| r.id == id) {
            change(record);
        }
        drop(records);
        self.changed.notify_waiters();
    }

    /// An answer started streaming.
    pub fn answer_began(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
    }

    /// An answer stopped streaming (finished, interrupted or closed by the client).
    pub fn answer_ended(&self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn snapshot(&self) -> Vec<RequestRecord> {
        self.records.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn clear(&self) {
        self.records.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Waits until `done` holds for the log, or `timeout` passes; returns the last snapshot and
    /// whether the condition held.
    pub async fn wait_until(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&[RequestRecord]) -> bool,
    ) -> (bool, Vec<RequestRecord>) {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            let records = self.snapshot();
            if done(&records) {
                return (true, records);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                let records = self.snapshot();
                return (done(&records), records);
            }
        }
    }
}
