//! The gateway over a real socket, relaying the scripted upstream: streaming, concurrency, cancel,
//! and every upstream failure the protocol names.

mod common;

use std::time::Duration;

use common::{Client, Gateway, KEY, KEY_ENV, fixture, start, start_with};
use flint_gateway::config::{ModelConfig, ProviderConfig};
use flint_protocol::{ClientMessage, ErrorCode, FinishReason, ServerMessage};
use flint_scripted_upstream::{DROP_MIDWAY_TEXT, LEAK_PREFIX, LEAK_SUFFIX};

fn error_of(end: &ServerMessage) -> (ErrorCode, &str, Option<u64>) {
    match end {
        ServerMessage::Error { code, message, retry_after_ms, .. } => {
            (*code, message.as_str(), *retry_after_ms)
        }
        other => panic!("expected an error frame, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stream_arrives_in_order_and_complete() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "counter@20000").await;
    assert_eq!(outcome.started.as_deref(), Some("counter@20000"), "Started names the model picked");
    assert_eq!(outcome.text, fixture("counter"), "the relayed text differs from the fixture");
    let expected: Vec<u32> = (0..outcome.seqs.len() as u32).collect();
    assert_eq!(outcome.seqs, expected, "seq must count delta frames without gaps");
    let ServerMessage::Done { finish, usage, metrics, .. } = outcome.end else { panic!("{:?}", outcome.end) };
    assert_eq!(finish, FinishReason::Stop);
    let tokens = flint_scripted_upstream::tokenize(&fixture("counter")).len() as u32;
    assert_eq!(usage.completion_tokens, tokens, "usage is the upstream's count");
    assert!(usage.prompt_tokens.is_some(), "the upstream's prompt count is passed on");
    assert!(metrics.ttft_ms > 0.0 && metrics.total_ms >= metrics.ttft_ms, "{metrics:?}");
}

#[tokio::test]
async fn finished_streams_leave_the_upstream_connection_reusable() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    client.run(1, "counter@20000").await;
    client.run(2, "counter@20000").await;
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].peer, log[1].peer, "the second request should reuse the first one's connection");
}

#[tokio::test]
async fn ten_concurrent_streams_on_one_socket_all_complete() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let ids: Vec<u32> = (10..20).collect();
    for &id in &ids {
        client.start(id, "counter@5000").await;
    }
    let (done, others) = client.collect(&ids).await;
    assert!(others.is_empty(), "frames for no stream: {others:?}");
    let expected = fixture("counter");
    for (id, outcome) in done {
        assert!(
            matches!(outcome.end, ServerMessage::Done { finish: FinishReason::Stop, .. }),
            "stream {id}: {:?}",
            outcome.end
        );
        assert_eq!(outcome.text, expected, "stream {id} has the wrong text");
    }
    assert_eq!(gw.upstream.requests().len(), 10, "one upstream request per stream");
}

#[tokio::test]
async fn cancel_is_answered_and_closes_the_upstream_request() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    client.start(7, "large@200").await;
    assert!(matches!(client.next().await, ServerMessage::Started { stream: 7, .. }), "expected Started");
    assert!(matches!(client.next().await, ServerMessage::Delta { stream: 7, .. }), "expected a first delta");
    client.send(&ClientMessage::Cancel { stream: 7 }).await;
    let (mut done, _) = client.collect(&[7]).await;
    let outcome = done.remove(0).1;
    assert!(
        matches!(outcome.end, ServerMessage::Done { finish: FinishReason::Cancelled, .. }),
        "cancel must end with Done(cancelled), got {:?}",
        outcome.end
    );
    let (seen, log) = gw
        .upstream
        .wait_for(Duration::from_secs(5), |r| r.iter().any(|r| r.model == "large@200" && r.closed_early))
        .await;
    assert!(seen, "the upstream never saw the request closed early: {log:?}");
}

#[tokio::test]
async fn rate_limits_carry_retry_after() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "fail-429").await;
    let (code, message, retry) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::RateLimited);
    assert_eq!(retry, Some(7000), "retry-after: 7 must become 7000 ms");
    assert!(message.contains("scripted"), "the message names the provider: {message}");
}

#[tokio::test]
async fn a_server_error_is_upstream_unavailable_with_its_message() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "fail-500").await;
    let (code, message, _) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamUnavailable);
    assert!(message.contains("500") && message.contains("error while processing"), "{message}");
}

#[tokio::test]
async fn a_rejected_key_names_the_env_var_but_never_the_key() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "fail-401").await;
    let (code, message, _) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::Unauthorized);
    assert!(message.contains(KEY_ENV), "the message must say which variable to check: {message}");
    assert!(!message.contains("sk-"), "no part of a key may be shown: {message}");
    assert!(client.raw.iter().all(|frame| !frame.contains(KEY)), "the key leaked into a frame");
    let sent = &gw.upstream.requests()[0].body;
    assert_eq!(sent["stream"], true, "the gateway must ask for a stream");
}

#[tokio::test]
async fn a_stream_dropped_midway_keeps_its_text_then_reports_interrupted() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "drop-midway@2000").await;
    assert_eq!(outcome.text, DROP_MIDWAY_TEXT, "the text sent before the drop must be delivered");
    assert_eq!(error_of(&outcome.end).0, ErrorCode::UpstreamInterrupted);
}

#[tokio::test]
async fn bytes_that_are_not_sse_are_a_protocol_error() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "garbage").await;
    assert_eq!(error_of(&outcome.end).0, ErrorCode::UpstreamProtocol, "{:?}", outcome.end);
}

#[tokio::test]
async fn a_context_length_refusal_is_prompt_too_large() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "fail-context").await;
    assert_eq!(error_of(&outcome.end).0, ErrorCode::PromptTooLarge, "{:?}", outcome.end);
}

#[tokio::test]
async fn a_model_the_gateway_does_not_offer_is_unknown() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "not-configured").await;
    assert_eq!(error_of(&outcome.end).0, ErrorCode::UnknownModel);
    assert!(gw.upstream.requests().is_empty(), "an unknown model must not reach the upstream");
}

#[tokio::test]
async fn a_model_the_upstream_does_not_know_is_unknown() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "nope").await;
    assert_eq!(error_of(&outcome.end).0, ErrorCode::UnknownModel, "upstream 404 must map to unknown_model");
}

#[tokio::test]
async fn a_malformed_frame_is_answered_while_another_stream_completes() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    client.start(1, "counter@2000").await;
    client.send_raw("{\"type\":\"start\",").await;
    let (mut done, others) = client.collect(&[1]).await;
    let bad = others.iter().find_map(|f| match f {
        ServerMessage::Error { stream: None, code: ErrorCode::BadFrame, message, .. } => Some(message),
        _ => None,
    });
    assert!(bad.is_some_and(|m| m.contains("JSON")), "expected a bad_frame error naming JSON: {others:?}");
    let outcome = done.remove(0).1;
    assert_eq!(outcome.text, fixture("counter"), "the other stream must still complete");
}

#[tokio::test]
async fn streams_beyond_the_limit_are_refused() {
    let gw = start_with(|config| config.server.max_streams_per_connection = 2).await;
    let mut client = Client::connect(gw.addr).await;
    client.start(1, "large@200").await;
    client.start(2, "large@200").await;
    client.start(3, "large@200").await;
    let (mut done, _) = client.collect(&[3]).await;
    assert_eq!(error_of(&done.remove(0).1.end).0, ErrorCode::TooManyStreams);
    client.send(&ClientMessage::Cancel { stream: 1 }).await;
    client.send(&ClientMessage::Cancel { stream: 2 }).await;
    let (done, _) = client.collect(&[1, 2]).await;
    assert!(
        done.iter()
            .all(|(_, o)| matches!(o.end, ServerMessage::Done { finish: FinishReason::Cancelled, .. }))
    );
}

/// A gateway that also offers the `leak-*` scripts, which echo the key they were sent.
async fn start_leaky() -> Gateway {
    start_with(|config| {
        for provider in &mut config.providers {
            if let ProviderConfig::Openai(openai) = provider {
                let leaks = ["leak-model", "leak-masked", "leak-upper", "leak-spaced", "leak-piece"]
                    .into_iter()
                    .chain(["leak-midstream", "leak-content@40", "leak-not-sse"]);
                openai.models.extend(leaks.map(|id| ModelConfig {
                    id: id.into(),
                    label: None,
                    context_window: Some(8192),
                    tokenizer: None,
                    reasoning: None,
                    vision: None,
                    price: None,
                }));
            }
        }
    })
    .await
}

/// Letters and digits only, lower-cased: what is left of a key once case and separators are gone.
fn skeleton(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
}

/// What of the key `text` shows, if anything: 12 or more of its letters and digits in a row
/// (whatever the case or the separators between them), or its masked form.
fn shows_key(text: &str) -> Option<String> {
    let (key, text_skeleton) = (skeleton(KEY), skeleton(text));
    if let Some(run) = (0..=key.len() - 12).map(|at| &key[at..at + 12]).find(|w| text_skeleton.contains(*w)) {
        return Some(format!("{run:?} of the key"));
    }
    let lower = text.to_lowercase();
    (lower.contains("sk-sc") || lower.contains("*cret")).then(|| "the masked key".to_owned())
}

/// Checks that no frame the client received shows the key, nor the text of all deltas together.
fn assert_no_key(client: &Client, text: &str) {
    for frame in &client.raw {
        assert_eq!(shows_key(frame), None, "a frame shows the key: {frame}");
    }
    assert_eq!(shows_key(text), None, "the streamed text shows the key: {text}");
}

#[tokio::test]
async fn an_upstream_naming_the_key_as_its_model_is_reported_by_the_model_picked() {
    let gw = start_leaky().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "leak-model").await;
    assert_eq!(outcome.started.as_deref(), Some("leak-model"), "Started names the model picked");
    assert!(matches!(outcome.end, ServerMessage::Done { .. }), "{:?}", outcome.end);
    assert_no_key(&client, &outcome.text);
}

/// Runs `model`, which fails with the key disguised in its message, and checks the message.
async fn assert_error_hides_the_key(model: &str) {
    let gw = start_leaky().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, model).await;
    let (code, message, _) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamUnavailable, "{message}");
    assert!(message.contains("Invalid request made with [redacted]; see the docs"), "{message}");
    assert_no_key(&client, &outcome.text);
}

#[tokio::test]
async fn a_masked_key_in_an_error_body_is_redacted() {
    assert_error_hides_the_key("leak-masked").await;
}

#[tokio::test]
async fn an_upper_cased_key_in_an_error_body_is_redacted() {
    assert_error_hides_the_key("leak-upper").await;
}

#[tokio::test]
async fn a_spaced_out_key_in_an_error_body_is_redacted() {
    assert_error_hides_the_key("leak-spaced").await;
}

#[tokio::test]
async fn a_long_piece_of_the_key_in_an_error_body_is_redacted() {
    assert_error_hides_the_key("leak-piece").await;
}

#[tokio::test]
async fn a_key_in_an_error_event_mid_stream_is_redacted() {
    let gw = start_leaky().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "leak-midstream").await;
    assert_eq!(outcome.text, LEAK_PREFIX, "the text before the error is delivered");
    let (code, message, _) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamUnavailable, "{message}");
    assert!(message.contains("failed while serving [redacted]"), "{message}");
    assert_no_key(&client, &outcome.text);
}

#[tokio::test]
async fn a_key_echoed_in_the_text_is_redacted_even_across_frames() {
    let gw = start_leaky().await;
    let mut client = Client::connect(gw.addr).await;
    // 40 tokens/s is slower than one frame per 16 ms, so every token of the key is its own frame.
    let outcome = client.run(1, "leak-content@40").await;
    assert!(matches!(outcome.end, ServerMessage::Done { .. }), "{:?}", outcome.end);
    assert!(outcome.seqs.len() > 5, "the key should be spread over frames: {:?}", outcome.seqs);
    assert_no_key(&client, &outcome.text);
    assert!(outcome.text.starts_with(LEAK_PREFIX), "the text around the key is kept: {}", outcome.text);
    assert!(outcome.text.ends_with(&format!("[redacted]{LEAK_SUFFIX}")), "{}", outcome.text);
}

#[tokio::test]
async fn a_key_in_a_line_that_is_not_sse_is_redacted() {
    let gw = start_leaky().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "leak-not-sse").await;
    let (code, message, _) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamProtocol, "{message}");
    assert!(message.contains("not an event stream"), "{message}");
    assert_no_key(&client, &outcome.text);
}

/// The relay keeps the upstream's pace: a 1,000 tok/s answer arrives in about the time the
/// upstream takes to send it, on the runtime the gateway ships with (several worker threads). A
/// relay that read the upstream only when a frame fell due got 2 of its chunks per 16 ms frame
/// (hyper hands a body over one chunk at a time) and took 4–6 times as long.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_arrives_at_the_upstreams_pace() {
    let gw = start().await;
    let mut client = Client::connect(gw.addr).await;
    let tokens = flint_scripted_upstream::tokenize(&fixture("counter")).len();
    let sent_in = Duration::from_secs_f64(tokens as f64 / 1000.0);
    let t0 = std::time::Instant::now();
    let outcome = client.run(1, "counter@1000").await;
    let took = t0.elapsed();
    assert_eq!(outcome.text, fixture("counter"), "{:?}", outcome.end);
    assert!(
        took < sent_in * 2,
        "{tokens} tokens sent in {sent_in:?} took {took:?} to relay, in {} frames",
        outcome.seqs.len()
    );
}
