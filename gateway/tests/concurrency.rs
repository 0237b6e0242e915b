//! `max_concurrent`: a server with one slot (llama-cpp-python, a stock llama.cpp server) gets one
//! generation at a time; the others wait in the gateway, are told so, and can be cancelled there.

mod common;

use std::num::NonZeroUsize;
use std::time::Duration;

use common::{Client, Gateway, fixture, start_upstream_with};
use flint_gateway::config::{Config, ProviderConfig};
use flint_protocol::{ClientMessage, ErrorCode, FinishReason, ServerMessage};
use flint_scripted_upstream::{ContextReport, Options, fixtures_dir};

/// Sets `max_concurrent` on the scripted provider.
fn limit(n: usize) -> impl FnOnce(&mut Config) {
    move |config: &mut Config| {
        for provider in &mut config.providers {
            if let ProviderConfig::Openai(openai) = provider {
                openai.max_concurrent = NonZeroUsize::new(n);
            }
        }
    }
}

/// An upstream that, like llama-cpp-python, cuts the running answer short for the next request.
fn single_slot() -> Options {
    Options::new(fixtures_dir()).single_slot()
}

/// Reads frames until `stream`'s `Queued` arrives; panics naming what came instead.
async fn queued_ahead(client: &mut Client, stream: u32) -> u32 {
    let mut seen = Vec::new();
    for _ in 0..200 {
        match client.next().await {
            ServerMessage::Queued { stream: s, ahead } if s == stream => return ahead,
            other => seen.push(other),
        }
    }
    panic!("stream {stream} was never queued; frames instead: {seen:?}");
}

/// Starts streams 1‥=4 on one socket and checks they all finish complete, one at a time.
async fn four_streams_finish_in_turn(gw: &Gateway) {
    let mut client = Client::connect(gw.addr).await;
    let ids = [1, 2, 3, 4];
    for id in ids {
        client.start(id, "counter@2000").await;
    }
    let (done, others) = client.collect(&ids).await;
    let expected = fixture("counter");
    for (id, outcome) in &done {
        assert!(
            matches!(outcome.end, ServerMessage::Done { finish: FinishReason::Stop, .. }),
            "stream {id} did not finish: {:?}",
            outcome.end
        );
        assert_eq!(outcome.text, expected, "stream {id} has the wrong text");
    }
    let order: Vec<u32> = done.iter().map(|(id, _)| *id).collect();
    assert_eq!(order, ids, "the streams should finish in the order they were started");
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 4, "one upstream request per stream: {log:?}");
    assert!(log.iter().all(|r| !r.interrupted), "the upstream cut an answer short: {log:?}");
    assert_eq!(gw.upstream.max_in_flight(), 1, "the upstream saw more than one answer at once");
    let queued: Vec<(u32, u32)> = others
        .iter()
        .filter_map(|f| match f {
            ServerMessage::Queued { stream, ahead } => Some((*stream, *ahead)),
            _ => None,
        })
        .collect();
    for (stream, ahead) in [(2, 0), (3, 1), (4, 2)] {
        assert!(
            queued.contains(&(stream, ahead)),
            "stream {stream} should be queued {ahead} ahead: {queued:?}"
        );
    }
    assert!(!queued.iter().any(|(s, _)| *s == 1), "the first stream has a free slot: {queued:?}");
}

#[tokio::test]
async fn a_single_slot_server_gets_one_stream_at_a_time() {
    let gw = start_upstream_with(single_slot(), limit(1)).await;
    four_streams_finish_in_turn(&gw).await;
}

#[tokio::test]
async fn total_slots_1_in_props_limits_to_one_without_configuration() {
    let report =
        ContextReport { props_n_ctx: Some(4096), props_total_slots: Some(1), ..ContextReport::default() };
    let gw = start_upstream_with(single_slot().context(report), |_| {}).await;
    // Discovery runs in the background; the window it learns shows it has read `/props`.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let list: flint_protocol::ModelList = reqwest::get(format!("http://{}/api/models", gw.addr))
            .await
            .expect("GET /api/models")
            .json()
            .await
            .expect("a model list");
        let window = list.models.iter().find(|m| m.id == "scripted/counter@2000").map(|m| m.context_window);
        if window == Some(4096) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "/props was never read: {window:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    four_streams_finish_in_turn(&gw).await;
}

#[tokio::test]
async fn a_cancelled_waiting_stream_never_reaches_the_upstream() {
    let gw = start_upstream_with(single_slot(), limit(1)).await;
    let mut client = Client::connect(gw.addr).await;
    client.start(1, "large@200").await;
    client.start(2, "counter@5000").await;
    assert_eq!(queued_ahead(&mut client, 2).await, 0, "stream 2 waits behind stream 1 alone");
    client.send(&ClientMessage::Cancel { stream: 2 }).await;
    let (done, _) = client.collect(&[2]).await;
    assert!(
        matches!(done[0].1.end, ServerMessage::Done { finish: FinishReason::Cancelled, .. }),
        "a cancelled waiting stream ends as cancelled: {:?}",
        done[0].1.end
    );
    client.send(&ClientMessage::Cancel { stream: 1 }).await;
    client.collect(&[1]).await;
    // The slot is free again: a new stream starts without waiting for the cancelled one.
    let outcome = client.run(3, "counter@20000").await;
    assert!(
        matches!(outcome.end, ServerMessage::Done { finish: FinishReason::Stop, .. }),
        "{:?}",
        outcome.end
    );
    let models: Vec<String> = gw.upstream.requests().into_iter().map(|r| r.model).collect();
    assert_eq!(models, ["large@200", "counter@20000"], "the cancelled stream reached the upstream");
}

#[tokio::test]
async fn a_full_queue_is_refused_naming_the_setting() {
    let gw = start_upstream_with(single_slot(), |config: &mut Config| {
        limit(1)(config);
        config.server.max_streams_per_connection = 100;
        config.limits.signed_in.streams = 0;
    })
    .await;
    let mut client = Client::connect(gw.addr).await;
    client.start(1, "large@200").await;
    // 64 may wait; the 65th waiting one is refused.
    let last = 66;
    for id in 2..=last {
        client.start(id, "counter@5000").await;
    }
    let (done, _) = client.collect(&[last]).await;
    let ServerMessage::Error { code, message, .. } = &done[0].1.end else {
        panic!("the stream beyond the queue should fail: {:?}", done[0].1.end)
    };
    assert_eq!(*code, ErrorCode::RateLimited, "{message}");
    assert!(message.contains("max_concurrent"), "the message should name the setting: {message}");
    assert_eq!(gw.upstream.requests().len(), 1, "only the running stream reached the upstream");
}

#[tokio::test]
async fn people_take_turns_for_the_slot() {
    let gw = start_upstream_with(single_slot(), limit(1)).await;
    let mut first_tab = Client::connect(gw.addr).await;
    // Another person (another address): turns are taken between people, not tabs.
    let mut second_tab = Client::connect_from(gw.addr, [127, 0, 0, 2].into()).await;
    assert!(matches!(second_tab.next().await, ServerMessage::Hello { .. }));
    for id in 1..=3 {
        first_tab.start(id, "counter@2000").await;
    }
    assert_eq!(queued_ahead(&mut first_tab, 3).await, 1);
    second_tab.start(1, "counter@5000").await;
    assert_eq!(queued_ahead(&mut second_tab, 1).await, 1, "the other tab's turn comes after one more");
    let (first, second) = tokio::join!(first_tab.collect(&[1, 2, 3]), second_tab.collect(&[1]));
    for (id, outcome) in first.0.iter().chain(&second.0) {
        assert!(
            matches!(outcome.end, ServerMessage::Done { finish: FinishReason::Stop, .. }),
            "{id}: {:?}",
            outcome.end
        );
    }
    let models: Vec<String> = gw.upstream.requests().into_iter().map(|r| r.model).collect();
    assert_eq!(models, ["counter@2000", "counter@2000", "counter@5000", "counter@2000"]);
    assert_eq!(gw.upstream.max_in_flight(), 1);
}
