//! The [`Thinking`] scripts: a reasoning stream, an answer its filter stops, a server that goes
//! quiet. Built as whole bodies like the hostile ones: their pacing is the point.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::script::{
    FILTERED_TEXT, REASONED_PAGE, REASONING_TEXT, REASONING_TOKENS, STALL_PAUSE, STALL_TEXT, Thinking,
    tokenize,
};

/// Time between reasoning chunks: slow enough that the page shows the thinking for a while.
const REASONING_GAP: Duration = Duration::from_millis(60);

/// The response for `script`.
pub(crate) fn response(script: Thinking) -> Response {
    let events: Vec<(Duration, String)> = match script {
        Thinking::Reasoning => reasoning(),
        Thinking::Filtered => {
            let mut events = text_events(FILTERED_TEXT);
            events.push((Duration::ZERO, data(&chunk(json!({}), Some("content_filter")))));
            events.push((Duration::ZERO, "data: [DONE]\n\n".into()));
            events
        }
        Thinking::Stall => text_events(STALL_TEXT),
        Thinking::StallThenResume => {
            let mut events = text_events(STALL_TEXT);
            let rest = text_events("</h1></body></html>");
            events.extend(
                rest.into_iter().enumerate().map(|(i, (gap, e))| (if i == 0 { STALL_PAUSE } else { gap }, e)),
            );
            events.push((Duration::ZERO, data(&chunk(json!({}), Some("stop")))));
            events.push((Duration::ZERO, "data: [DONE]\n\n".into()));
            events
        }
    };
    let forever = script == Thinking::Stall;
    let body = futures::stream::iter(events)
        .then(|(gap, event)| async move {
            tokio::time::sleep(gap).await;
            Ok::<_, Infallible>(Bytes::from(event))
        })
        // `stall` keeps the response open and silent until the client gives up.
        .chain(futures::stream::once(async move {
            if forever {
                futures::future::pending::<()>().await;
            }
            Ok(Bytes::new())
        }));
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Reasoning under both names servers use, a comment between, then the page and usage.
fn reasoning() -> Vec<(Duration, String)> {
    let pieces = tokenize(REASONING_TEXT);
    let half = pieces.len() / 2;
    let mut events = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let field = if i < half { "reasoning_content" } else { "reasoning" };
        if i == half {
            events.push((REASONING_GAP, ": OPENROUTER PROCESSING\n\n".to_owned()));
        }
        events.push((REASONING_GAP, data(&chunk(json!({ field: piece }), None))));
    }
    events.extend(text_events(REASONED_PAGE));
    events.push((Duration::ZERO, data(&chunk(json!({}), Some("stop")))));
    let usage = json!({
        "model": "reasoning", "choices": [],
        "usage": { "prompt_tokens": 12, "completion_tokens": REASONING_TOKENS + 20,
            "completion_tokens_details": { "reasoning_tokens": REASONING_TOKENS } },
    });
    events.push((Duration::ZERO, data(&usage)));
    events.push((Duration::ZERO, "data: [DONE]\n\n".into()));
    events
}

fn text_events(text: &str) -> Vec<(Duration, String)> {
    tokenize(text)
        .into_iter()
        .map(|piece| (Duration::from_millis(5), data(&chunk(json!({ "content": piece }), None))))
        .collect()
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({ "model": "scripted", "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
}

fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}
