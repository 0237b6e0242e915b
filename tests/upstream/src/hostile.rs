//! The [`Hostile`] scripts: answers no well-behaved server gives, for the gateway's limits.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde_json::json;

use crate::Shared;
use crate::script::{COMMENT_INTERVAL, ENDLESS_TEXT, HUGE_ANSWER_BYTES, Hostile, INTERNAL_TEXT};

/// Text per event of `huge-answer`, and events per write.
const HUGE_EVENT_BYTES: usize = 1024;
const HUGE_EVENTS_PER_WRITE: usize = 64;

/// The response for `script`, on the server at `origin` (`http://ADDR`).
pub(crate) fn response(script: Hostile, origin: &str) -> Response {
    match script {
        Hostile::EndlessComments => {
            let first = Bytes::from(format!("data: {}\n\n", chunk(ENDLESS_TEXT, None)));
            let comments = futures::stream::unfold(0u64, |n| async move {
                tokio::time::sleep(COMMENT_INTERVAL).await;
                Some((Ok::<_, Infallible>(Bytes::from(format!(": keep-alive {n}\n\n"))), n + 1))
            });
            let body = futures::stream::once(async { Ok(first) }).chain(comments);
            event_stream(Body::from_stream(body))
        }
        Hostile::HugeAnswer => {
            let event = format!("data: {}\n\n", chunk(&"x".repeat(HUGE_EVENT_BYTES), None));
            let write = Bytes::from(event.repeat(HUGE_EVENTS_PER_WRITE));
            let writes = HUGE_ANSWER_BYTES / (HUGE_EVENT_BYTES * HUGE_EVENTS_PER_WRITE);
            let end = Bytes::from(format!("data: {}\n\ndata: [DONE]\n\n", chunk("", Some("stop"))));
            let body = futures::stream::iter(
                std::iter::repeat_n(write, writes).chain([end]).map(Ok::<_, Infallible>),
            );
            event_stream(Body::from_stream(body))
        }
        Hostile::Redirect(status) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::TEMPORARY_REDIRECT);
            (status, [(header::LOCATION, format!("{origin}/internal"))]).into_response()
        }
    }
}

/// `/internal`: where the redirects point. Counts who came, and answers with words only the
/// gateway's host should ever read.
pub(crate) async fn internal(State(shared): State<Arc<Shared>>) -> Response {
    shared.internal.fetch_add(1, Ordering::Relaxed);
    let body = json!({ "error": { "message": INTERNAL_TEXT, "type": "invalid_request_error" } });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// One chat-completions chunk carrying `text`, finishing with `finish` if given.
fn chunk(text: &str, finish: Option<&str>) -> String {
    json!({
        "model": "hostile",
        "choices": [{ "index": 0, "delta": { "content": text }, "finish_reason": finish }],
    })
    .to_string()
}

fn event_stream(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
