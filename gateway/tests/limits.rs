//! Per-person limits over real sockets: tabs, running streams, starts per minute and the daily
//! token quota, each refused with `rate_limited`, a sentence naming the setting and when to retry;
//! and turns taken between people, not tabs, for a provider's slot.

mod common;

use std::net::{IpAddr, Ipv4Addr};

use common::{Client, Gateway, start_upstream_with};
use flint_gateway::config::{Config, PersonLimits, ProviderConfig};
use flint_protocol::{ErrorCode, FinishReason, ServerMessage};
use flint_scripted_upstream::{Options, fixtures_dir};

/// A gateway on loopback, where everyone gets `limits.signed_in` (here, `limits`).
async fn gateway(limits: PersonLimits, configure: impl FnOnce(&mut Config)) -> Gateway {
    start_upstream_with(Options::new(fixtures_dir()), |config| {
        config.limits.signed_in = limits;
        configure(config);
    })
    .await
}

fn open() -> PersonLimits {
    PersonLimits { sockets: 0, streams: 0, starts_per_minute: 0, tokens_per_day: 0 }
}

fn person(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

/// The refusal a person got, with its retry delay.
fn refusal(frame: &ServerMessage) -> (&str, Option<u64>) {
    match frame {
        ServerMessage::Error { code: ErrorCode::RateLimited, message, retry_after_ms, .. } => {
            (message.as_str(), *retry_after_ms)
        }
        other => panic!("expected a rate_limited error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_person_over_their_tabs_is_told_why_and_another_person_is_not() {
    let gw = gateway(PersonLimits { sockets: 2, ..open() }, |_| {}).await;
    let _one = Client::connect(gw.addr).await;
    let _two = Client::connect(gw.addr).await;
    let mut third = Client::connect_from(gw.addr, person(1)).await;
    assert!(matches!(third.next().await, ServerMessage::Hello { .. }));
    let frame = third.next().await;
    let (message, retry) = refusal(&frame);
    assert!(message.contains("limits.signed_in.sockets"), "{message}");
    assert!(retry.is_some(), "no retry delay");
    let mut elsewhere = Client::connect_from(gw.addr, person(2)).await;
    assert!(matches!(elsewhere.next().await, ServerMessage::Hello { .. }));
    elsewhere.start(1, "counter@5000").await;
    let (done, _) = elsewhere.collect(&[1]).await;
    assert!(
        matches!(done[0].1.end, ServerMessage::Done { .. }),
        "another person is not limited: {:?}",
        done[0].1.end
    );
}

#[tokio::test]
async fn running_streams_count_across_a_persons_tabs() {
    let gw = gateway(PersonLimits { streams: 2, ..open() }, |_| {}).await;
    let mut a = Client::connect(gw.addr).await;
    let mut b = Client::connect(gw.addr).await;
    a.start(1, "large@200").await;
    a.start(2, "large@200").await;
    // Both of A's streams are running before the other tab asks.
    let mut started = 0;
    while started < 2 {
        if matches!(a.next().await, ServerMessage::Started { .. }) {
            started += 1;
        }
    }
    b.start(7, "large@200").await;
    let (ended, _) = b.collect(&[7]).await;
    let (message, _) = refusal(&ended[0].1.end);
    assert!(
        message.contains("already runs 2 generations") && message.contains("limits.signed_in.streams"),
        "{message}"
    );
}

#[tokio::test]
async fn starts_per_minute_are_refused_with_when_to_retry() {
    let gw = gateway(PersonLimits { starts_per_minute: 3, ..open() }, |_| {}).await;
    let mut tab = Client::connect(gw.addr).await;
    for id in 1..=3 {
        tab.start(id, "counter@5000").await;
    }
    let (done, _) = tab.collect(&[1, 2, 3]).await;
    assert!(done.iter().all(|(_, o)| matches!(o.end, ServerMessage::Done { .. })), "{done:?}");
    tab.start(4, "counter@5000").await;
    let (refused, _) = tab.collect(&[4]).await;
    let (message, retry) = refusal(&refused[0].1.end);
    assert!(message.contains("limits.signed_in.starts_per_minute"), "{message}");
    let retry = retry.expect("says when");
    assert!((1..=20_000).contains(&retry), "{retry} ms");
    assert_eq!(gw.upstream.requests().len(), 3, "a refused start reached the upstream");
}

#[tokio::test]
async fn the_daily_quota_is_reported_spent_and_then_refused_until_midnight() {
    let gw = gateway(PersonLimits { tokens_per_day: 50, ..open() }, |_| {}).await;
    let mut tab = Client::connect(gw.addr).await;
    let first = tab.next().await;
    assert!(
        matches!(first, ServerMessage::Quota { used: 0, limit: 50, resets_in_ms } if resets_in_ms > 0),
        "the quota follows Hello: {first:?}"
    );
    tab.start(1, "counter@5000").await;
    let (done, others) = tab.collect(&[1]).await;
    let ServerMessage::Done { usage, finish, .. } = &done[0].1.end else { panic!("{:?}", done[0].1.end) };
    let spent = u64::from(usage.completion_tokens);
    // The counter fixture is longer than the quota: the stream reserved all of it and was cut there.
    assert_eq!((spent, *finish), (50, FinishReason::Length), "the answer ends at the quota");
    assert!(
        others.iter().any(|f| matches!(f, ServerMessage::Quota { used, .. } if *used == spent)),
        "no quota frame before Done: {others:?}"
    );
    tab.start(2, "counter@5000").await;
    let (refused, _) = tab.collect(&[2]).await;
    let (message, retry) = refusal(&refused[0].1.end);
    assert!(
        message.contains("limits.signed_in.tokens_per_day") && message.contains("midnight UTC"),
        "{message}"
    );
    assert!(retry.is_some_and(|ms| ms <= 24 * 3_600_000), "{retry:?}");
}

#[tokio::test]
async fn a_providers_slot_takes_turns_between_people_not_tabs() {
    let gw = start_upstream_with(Options::new(fixtures_dir()).single_slot(), |config| {
        config.limits.signed_in = open();
        if let ProviderConfig::Openai(openai) = &mut config.providers[0] {
            openai.max_concurrent = std::num::NonZeroUsize::new(1);
        }
    })
    .await;
    // Person A: two tabs, three streams each, all queued behind the first.
    let mut a1 = Client::connect_from(gw.addr, person(1)).await;
    let mut a2 = Client::connect_from(gw.addr, person(1)).await;
    for tab in [&mut a1, &mut a2] {
        assert!(matches!(tab.next().await, ServerMessage::Hello { .. }));
    }
    for id in 1..=3 {
        a1.start(id, "counter@2000").await;
        a2.start(10 + id, "counter@2000").await;
    }
    // Person B: one stream, started last.
    let mut b = Client::connect_from(gw.addr, person(2)).await;
    assert!(matches!(b.next().await, ServerMessage::Hello { .. }));
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    b.start(99, "counter@5000").await;
    let (done, _) = b.collect(&[99]).await;
    assert!(matches!(done[0].1.end, ServerMessage::Done { .. }), "{:?}", done[0].1.end);
    // B's model differs only in its rate, so the upstream's log tells the people apart.
    let order: Vec<String> = gw.upstream.requests().iter().map(|r| r.model.clone()).collect();
    let b_at = order.iter().position(|model| model == "counter@5000").expect("B reached the upstream");
    // A's first runs at once; the slot then alternates between the people waiting, A (first in
    // line) then B. Taking turns by tab, B would also wait for A's second tab.
    assert!(b_at <= 2, "B waited behind A's other tab: B's request was number {} of {order:?}", b_at + 1);
}
