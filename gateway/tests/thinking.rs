//! Reasoning shown apart from the answer, and every way an answer ends told: a chat-completions
//! stream's reasoning fields become `Thinking` frames (never `Delta`s), a filtered answer ends with
//! a sentence instead of a clean stop, and a silent upstream is told live and then given up on,
//! its text kept.

mod common;

use std::time::{Duration, Instant};

use common::{Client, Gateway, start_with};
use flint_gateway::config::{ModelConfig, ProviderConfig};
use flint_protocol::{ErrorCode, FinishReason, ServerMessage};
use flint_scripted_upstream::{
    ENDLESS_TEXT, FILTERED_TEXT, REASONED_PAGE, REASONING_TEXT, REASONING_TOKENS, STALL_TEXT,
};

/// Starts a gateway whose scripted provider also offers `models`, failing silent streams after
/// `stall_secs`.
async fn gateway(models: &[&str], stall_secs: u64) -> Gateway {
    start_with(|config| {
        for provider in &mut config.providers {
            if let ProviderConfig::Openai(openai) = provider {
                openai.stall_timeout_secs = std::num::NonZeroU64::new(stall_secs);
                openai.models.extend(models.iter().map(|id| ModelConfig {
                    id: (*id).into(),
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

/// Every frame of `stream` until its last.
async fn frames(client: &mut Client, stream: u32, model: &str) -> Vec<ServerMessage> {
    client.start(stream, model).await;
    let mut frames = Vec::new();
    loop {
        let frame = client.next().await;
        let last = matches!(frame, ServerMessage::Done { .. } | ServerMessage::Error { .. });
        frames.push(frame);
        if last {
            return frames;
        }
    }
}

fn text(frames: &[ServerMessage]) -> String {
    frames
        .iter()
        .filter_map(|f| if let ServerMessage::Delta { text, .. } = f { Some(text.as_str()) } else { None })
        .collect()
}

#[tokio::test]
async fn reasoning_arrives_as_thinking_frames_never_as_text_and_counts_in_usage() {
    let gw = gateway(&["reasoning"], 120).await;
    let mut client = Client::connect(gw.addr).await;
    let frames = frames(&mut client, 1, "reasoning").await;
    let mut summary = String::new();
    let mut thinking_frames = 0;
    let mut last_tokens = 0;
    for frame in &frames {
        if let ServerMessage::Thinking { from, text, tokens, .. } = frame {
            assert_eq!(*from as usize, summary.len(), "each frame goes on where the last one ended");
            assert!(*tokens >= last_tokens, "the count only grows");
            last_tokens = *tokens;
            summary.push_str(text);
            thinking_frames += 1;
        }
    }
    assert_eq!(summary, REASONING_TEXT, "the reasoning, whole, both field names read");
    assert!(thinking_frames >= 2, "reasoning is shown as it comes: {frames:?}");
    let first_thinking = frames.iter().position(|f| matches!(f, ServerMessage::Thinking { .. }));
    let first_delta = frames.iter().position(|f| matches!(f, ServerMessage::Delta { .. }));
    assert!(first_thinking < first_delta, "thinking comes before the text: {frames:?}");
    assert_eq!(text(&frames), REASONED_PAGE, "no reasoning in the answer");
    let Some(ServerMessage::Done { finish, usage, metrics, .. }) = frames.last() else {
        panic!("the stream finishes: {frames:?}")
    };
    assert_eq!(*finish, FinishReason::Stop);
    assert_eq!(usage.reasoning_tokens, Some(REASONING_TOKENS), "the provider's count");
    assert_eq!(usage.completion_tokens, REASONING_TOKENS + 20, "reasoning is billed as output");
    let ttfr = metrics.ttfr_ms.expect("time to first reasoning");
    assert!(ttfr < metrics.ttft_ms, "it thought before it wrote: {metrics:?}");
}

#[tokio::test]
async fn a_plain_stream_has_no_reasoning_figures() {
    let gw = gateway(&[], 120).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "counter@20000").await;
    let ServerMessage::Done { usage, metrics, .. } = outcome.end else { panic!("{:?}", outcome.end) };
    assert_eq!((usage.reasoning_tokens, metrics.ttfr_ms), (None, None));
}

#[tokio::test]
async fn a_filtered_answer_ends_with_a_sentence_and_keeps_its_text() {
    let gw = gateway(&["filtered"], 120).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "filtered").await;
    assert_eq!(outcome.text, FILTERED_TEXT);
    let ServerMessage::Error { code, message, .. } = &outcome.end else {
        panic!("a filtered answer is not a clean stop: {:?}", outcome.end)
    };
    assert_eq!(*code, ErrorCode::UpstreamInterrupted);
    assert!(message.contains("content filter stopped the answer"), "{message}");
}

#[tokio::test]
async fn a_silent_upstream_is_told_live_then_fails_naming_the_setting() {
    let gw = gateway(&["stall"], 3).await;
    let mut client = Client::connect(gw.addr).await;
    let began = Instant::now();
    let frames = frames(&mut client, 1, "stall").await;
    let took = began.elapsed();
    assert_eq!(text(&frames), STALL_TEXT, "the text before the silence is kept");
    let notices: Vec<u32> = frames
        .iter()
        .filter_map(|f| {
            if let ServerMessage::Stalled { silent_secs, provider, .. } = f {
                assert_eq!(provider, "scripted");
                Some(*silent_secs)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(notices, [1, 2], "told at a third of the timeout, then each second: {frames:?}");
    let Some(ServerMessage::Error { code, message, .. }) = frames.last() else { panic!("{frames:?}") };
    assert_eq!(*code, ErrorCode::UpstreamInterrupted);
    assert!(
        message.contains("no data from scripted for 3 s") && message.contains("stall_timeout_secs"),
        "{message}"
    );
    assert!(took >= Duration::from_secs(3) && took < Duration::from_secs(6), "failed after {took:?}");
}

#[tokio::test]
async fn a_pause_shorter_than_the_timeout_is_told_and_then_cleared() {
    let gw = gateway(&["stall-resume"], 6).await;
    let mut client = Client::connect(gw.addr).await;
    let frames = frames(&mut client, 1, "stall-resume").await;
    let notices: Vec<u32> = frames
        .iter()
        .filter_map(|f| {
            if let ServerMessage::Stalled { silent_secs, .. } = f { Some(*silent_secs) } else { None }
        })
        .collect();
    assert_eq!(notices, [2, 0], "quiet for 2.5 s: told at 2 s, then that data flows again: {frames:?}");
    assert!(
        matches!(frames.last(), Some(ServerMessage::Done { finish: FinishReason::Stop, .. })),
        "{frames:?}"
    );
}

#[tokio::test]
async fn keep_alive_comments_are_not_silence() {
    let gw = gateway(&["endless-comments"], 2).await;
    let mut client = Client::connect(gw.addr).await;
    client.start(1, "endless-comments").await;
    // Two and a half timeouts of comments and no text: never stalled.
    let quiet_until = Instant::now() + Duration::from_secs(5);
    let mut got = String::new();
    while Instant::now() < quiet_until {
        match tokio::time::timeout(Duration::from_millis(200), client.next()).await {
            Ok(ServerMessage::Delta { text, .. }) => got.push_str(&text),
            Ok(ServerMessage::Started { .. }) | Err(_) => {}
            Ok(other) => panic!("a server sending keep-alives is not stalled: {other:?}"),
        }
    }
    assert_eq!(got, ENDLESS_TEXT);
}
