//! The connection loop driven through channels, with a scripted in-memory provider.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::ws::Message;
use flint_protocol::{ErrorCode, FinishReason, ServerMessage};
use futures::StreamExt;
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use tokio::task::JoinHandle;

use super::serve_socket;
use crate::AppState;
use crate::config::{Config, ServerConfig};
use crate::person::Person;
use crate::providers::Provider;

#[tokio::test(start_paused = true)]
async fn a_stream_is_started_streamed_and_done_in_order() {
    let mut c = connect();
    c.hello().await;
    c.start(1, "echo");
    let frames = c.until_end(1).await;
    assert!(
        matches!(&frames[0], ServerMessage::Started { stream: 1, provider, model } if provider == "fake" && model == "echo"),
        "{frames:?}"
    );
    assert_eq!(text_of(&frames).0, "Hello");
    let Some(ServerMessage::Done { finish, usage, metrics, .. }) = frames.last() else {
        panic!("{frames:?}")
    };
    assert_eq!(*finish, FinishReason::Stop);
    assert_eq!(usage.completion_tokens, 2, "without upstream usage, chunks are counted");
    assert!(metrics.total_ms >= metrics.ttft_ms);
}

#[tokio::test(start_paused = true)]
async fn fast_tokens_are_coalesced_but_the_first_goes_out_alone() {
    let mut c = connect();
    c.hello().await;
    c.start(1, "burst");
    let frames = c.until_end(1).await;
    let (text, seqs) = text_of(&frames);
    assert_eq!(text, (0..100).map(|i| format!("t{i} ")).collect::<String>());
    assert_eq!(seqs, [0, 1], "first token alone, the other 99 in one frame");
}

#[tokio::test(start_paused = true)]
async fn paced_tokens_go_out_about_once_per_frame() {
    let mut c = connect();
    c.hello().await;
    c.start(1, "paced");
    let frames = c.until_end(1).await;
    let (text, seqs) = text_of(&frames);
    assert_eq!(text, "x".repeat(10));
    // 10 tokens 5 ms apart span 45 ms: the first alone, then about one frame per 16 ms.
    assert!((3..=5).contains(&seqs.len()), "{seqs:?}");
    assert_eq!(seqs, (0..seqs.len() as u32).collect::<Vec<_>>(), "seq counts delta frames");
}

#[tokio::test(start_paused = true)]
async fn cancel_answers_done_cancelled_and_drops_the_provider_stream() {
    let mut c = connect();
    c.hello().await;
    c.start(4, "hang");
    assert!(matches!(c.next().await, ServerMessage::Started { stream: 4, .. }));
    c.send(r#"{"type":"cancel","stream":4}"#);
    let frames = c.until_end(4).await;
    assert!(
        matches!(frames.last(), Some(ServerMessage::Done { finish: FinishReason::Cancelled, .. })),
        "{frames:?}"
    );
    assert_eq!(c.fake.dropped.load(Ordering::SeqCst), 1, "the provider stream must be dropped");
}

#[tokio::test(start_paused = true)]
async fn bad_frames_are_answered_and_the_connection_carries_on() {
    let mut c = connect();
    c.hello().await;
    c.send("{not json");
    let frame = c.next().await;
    assert_eq!(error_code(&frame), Some((None, ErrorCode::BadFrame)), "malformed JSON: {frame:?}");
    c.send(r#"{"type":"explode"}"#);
    let frame = c.next().await;
    let ServerMessage::Error { message, .. } = &frame else { panic!("{frame:?}") };
    assert!(message.contains("explode"), "the message names the unknown type: {message}");
    c.to_gateway.unbounded_send(Ok(Message::Binary(Bytes::from_static(b"\x01")))).expect("open");
    assert_eq!(error_code(&c.next().await), Some((None, ErrorCode::BadFrame)), "binary frame");
    c.send(r#"{"type":"ping","nonce":42}"#);
    assert_eq!(c.next().await, ServerMessage::Pong { nonce: 42 });
}

#[tokio::test(start_paused = true)]
async fn stream_limits_are_enforced() {
    let server =
        ServerConfig { max_streams_per_connection: 2, max_frame_bytes: 300, ..ServerConfig::default() };
    let mut c = connect_with(server, None);
    c.hello().await;
    c.start(1, "hang");
    c.start(2, "hang");
    assert!(matches!(c.next().await, ServerMessage::Started { .. }));
    assert!(matches!(c.next().await, ServerMessage::Started { .. }));
    c.start(1, "hang");
    assert_eq!(error_code(&c.next().await), Some((None, ErrorCode::DuplicateStream)));
    c.start(3, "hang");
    let frame = c.next().await;
    assert_eq!(error_code(&frame), Some((Some(3), ErrorCode::TooManyStreams)));
    let ServerMessage::Error { message, .. } = &frame else { panic!("{frame:?}") };
    assert!(message.contains("2 streams") && message.contains("max_streams_per_connection"), "{message}");
    c.start(5, "nope");
    assert_eq!(
        error_code(&c.next().await),
        Some((Some(5), ErrorCode::TooManyStreams)),
        "limit checked first"
    );
    let big = format!(
        r#"{{"type":"start","stream":9,"model":"fake/echo","messages":[{{"role":"user","content":"{}"}}]}}"#,
        "a".repeat(400)
    );
    c.send(&big);
    assert_eq!(error_code(&c.next().await), Some((Some(9), ErrorCode::PromptTooLarge)));
}

#[tokio::test(start_paused = true)]
async fn unknown_models_are_refused_by_name() {
    let mut c = connect();
    c.hello().await;
    c.send(r#"{"type":"start","stream":1,"model":"other/echo","messages":[]}"#);
    let frame = c.next().await;
    assert_eq!(error_code(&frame), Some((Some(1), ErrorCode::UnknownModel)), "{frame:?}");
}

#[tokio::test(start_paused = true)]
async fn max_tokens_gets_the_default_and_the_cap() {
    let server = ServerConfig { max_tokens: 100, ..ServerConfig::default() };
    let mut c = connect_with(server, None);
    c.hello().await;
    c.start(1, "echo");
    c.until_end(1).await;
    c.send(r#"{"type":"start","stream":2,"model":"fake/echo","messages":[],"params":{"max_tokens":5000}}"#);
    c.until_end(2).await;
    c.send(r#"{"type":"start","stream":3,"model":"fake/echo","messages":[],"params":{"max_tokens":7}}"#);
    c.until_end(3).await;
    c.send(r#"{"type":"start","stream":4,"model":"fake/echo","messages":[],"params":{"max_tokens":0}}"#);
    c.until_end(4).await;
    let sent: Vec<_> =
        c.fake.requests.lock().expect("not poisoned").iter().map(|r| r.params.max_tokens).collect();
    assert_eq!(sent, [Some(100), Some(100), Some(7), Some(1)], "upstreams reject 0");
}

#[tokio::test(start_paused = true)]
async fn a_cap_of_zero_still_sends_a_usable_limit() {
    let mut c = connect_with(ServerConfig { max_tokens: 0, ..ServerConfig::default() }, None);
    c.hello().await;
    c.start(1, "echo");
    c.until_end(1).await;
    let sent: Vec<_> =
        c.fake.requests.lock().expect("not poisoned").iter().map(|r| r.params.max_tokens).collect();
    assert_eq!(sent, [Some(1)]);
}

#[tokio::test(start_paused = true)]
async fn requests_name_their_connection_as_the_client() {
    let mut c = connect_as(42, ServerConfig::default(), None);
    c.hello().await;
    c.start(1, "echo");
    c.start(2, "echo");
    c.until_end(1).await;
    c.until_end(2).await;
    let clients: Vec<_> = c.fake.requests.lock().expect("not poisoned").iter().map(|r| r.client).collect();
    assert_eq!(clients, [42, 42], "the local model shares its sequences by this id");
}

#[tokio::test(start_paused = true)]
async fn text_before_a_failure_is_delivered_before_the_error() {
    let mut c = connect();
    c.hello().await;
    c.start(1, "fail");
    let frames = c.until_end(1).await;
    assert_eq!(text_of(&frames).0, "partial");
    assert_eq!(error_code(frames.last().expect("frames")), Some((Some(1), ErrorCode::UpstreamInterrupted)));
}

#[tokio::test(start_paused = true)]
async fn a_protocol_mismatch_is_answered_then_closed() {
    let mut c = connect_with(ServerConfig::default(), Some("99"));
    c.hello().await;
    assert_eq!(error_code(&c.next().await), Some((None, ErrorCode::UnsupportedVersion)));
    tokio::time::timeout(Duration::from_secs(5), &mut c.connection).await.expect("closed").expect("no panic");
}

#[tokio::test(start_paused = true)]
async fn a_page_that_leaves_cancels_its_streams_at_once() {
    let mut c = connect();
    c.hello().await;
    c.start(1, "hang");
    c.start(2, "hang");
    c.next().await;
    c.next().await;
    // A page that closes or navigates away says "going away" (1001): nothing is kept for it.
    let goodbye = axum::extract::ws::CloseFrame { code: 1001, reason: "".into() };
    c.to_gateway.unbounded_send(Ok(Message::Close(Some(goodbye)))).expect("open");
    c.to_gateway.close_channel();
    tokio::time::timeout(Duration::from_secs(5), &mut c.connection).await.expect("ends").expect("no panic");
    assert_eq!(c.fake.dropped.load(Ordering::SeqCst), 2, "both provider streams dropped");
}

#[tokio::test(start_paused = true)]
async fn started_names_the_model_picked_never_the_upstreams_string() {
    let mut c = connect();
    c.hello().await;
    c.start(1, "leaky");
    let frames = c.until_end(1).await;
    assert!(
        matches!(&frames[0], ServerMessage::Started { model, .. } if model == "leaky"),
        "Started must name the configured model: {frames:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn sampling_parameters_out_of_range_are_refused_with_a_reason() {
    let mut c = connect();
    c.hello().await;
    let start = |id: u32, params: &str| {
        format!(r#"{{"type":"start","stream":{id},"model":"fake/echo","messages":[],"params":{{{params}}}}}"#)
    };
    let top_p = [r#""top_p":-3"#, r#""top_p":0"#, r#""top_p":1.5"#];
    // 1e39 is too large for an f32: it arrives as infinity.
    let temperature = [r#""temperature":-0.1"#, r#""temperature":2.5"#, r#""temperature":1e39"#];
    for (id, params) in (1..).zip(top_p.into_iter().chain(temperature)) {
        c.send(&start(id, params));
        let frame = c.next().await;
        let name = params.split('"').nth(1).unwrap_or_default();
        assert!(
            matches!(&frame, ServerMessage::Error { stream: Some(s), code: ErrorCode::InvalidParams, message, .. }
                if *s == id && message.contains(name)),
            "{params}: {frame:?}"
        );
    }
    assert!(c.fake.requests.lock().expect("not poisoned").is_empty(), "nothing out of range goes upstream");
    for (id, params) in [(50, r#""temperature":0,"top_p":1"#), (51, r#""temperature":2,"top_p":0.01"#)] {
        c.send(&start(id, params));
        let end = c.until_end(id).await;
        assert!(matches!(end.last(), Some(ServerMessage::Done { .. })), "{params} is allowed: {end:?}");
    }
}

#[path = "resume_tests.rs"]
mod resume;

#[path = "tests_fixture.rs"]
mod fixture;

use fixture::*;
