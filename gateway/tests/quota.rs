//! The daily token quota under attack, over real sockets: a batch of starts with the quota unspent,
//! tabs closed and sockets dropped in the middle of their answers (the resume grace running out),
//! an upstream that ignores its length limit, a gateway that stops mid-answer; on SQLite and on
//! PostgreSQL with two gateways. The quota holds to within one answer of its limit, and every token
//! the gateway received is charged.

mod common;
mod pg;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use common::{Client, Gateway, start_upstream_with};
use flint_gateway::config::{Config, ModelConfig, PersonLimits, ProviderConfig};
use flint_gateway::person::Person;
use flint_protocol::{
    ChatMessage, ClientMessage, ErrorCode, FinishReason, GenParams, Role, ServerMessage, StartRequest,
};
use flint_scripted_upstream::{Options, RequestRecord, fixtures_dir};

/// The day's quota in these tests.
const QUOTA: u64 = 2_000;
/// What the day's total may pass the quota by: a provider's count against the gateway's.
const ROUNDING: u64 = 100;
/// What an upstream may write beyond the gateway's count of a stream the gateway stopped (cut,
/// cancelled, its tab closed): what it wrote before it saw the connection close, unread. A few
/// tokens at these rates; hundreds when this machine's two cores are busy with other work.
const IN_FLIGHT: u64 = 1_000;
/// Streams started at once in each attack, each asking for `MAX_TOKENS`.
const BATCH: u32 = 8;
const MAX_TOKENS: u32 = 8_192;
/// `large.md` (about 12,900 tokens) at 4,000 tokens a second: the quota's worth in half a second.
const FAST: &str = "scripted/large@4000";
/// The same at 500 tokens a second: a tab closes, or its socket's grace runs out, long before an
/// answer has written the quota's worth.
const SLOW: &str = "scripted/large@500";

fn limits() -> PersonLimits {
    PersonLimits { sockets: 0, streams: 0, starts_per_minute: 0, tokens_per_day: QUOTA }
}

fn configure(config: &mut Config, store: Option<&str>) {
    // On loopback, everyone gets the signed-in limits.
    config.limits.signed_in = limits();
    // A dropped socket's streams run on for a second, then are stopped.
    config.server.resume_grace_secs = 1;
    config.store.url = store.map(str::to_owned);
    if let ProviderConfig::Openai(openai) = &mut config.providers[0] {
        for model in [FAST, SLOW] {
            let id = model.trim_start_matches("scripted/").into();
            let long = ModelConfig { id, context_window: Some(128_000), ..openai.models[0].clone() };
            openai.models.push(long);
        }
    }
}

/// A gateway on `store` (SQLite without) in front of an upstream that keeps to `max_tokens`.
async fn gateway(store: Option<&str>) -> Gateway {
    start_upstream_with(Options::new(fixtures_dir()), |c| configure(c, store)).await
}

fn start(stream: u32, model: &str) -> ClientMessage {
    ClientMessage::Start(StartRequest {
        stream,
        model: model.into(),
        messages: vec![ChatMessage::new(Role::User, "make a long page")],
        params: GenParams { max_tokens: Some(MAX_TOKENS), ..GenParams::default() },
    })
}

/// The quota frame that follows `Hello`: what the store counts for this person now.
async fn connect(gw: &Gateway) -> (Client, u64) {
    let mut tab = Client::connect(gw.addr).await;
    match tab.next().await {
        ServerMessage::Quota { used, limit, .. } => {
            assert_eq!(limit, QUOTA);
            (tab, used)
        }
        other => panic!("the quota follows Hello: {other:?}"),
    }
}

/// How each stream of a batch ended, and the text received.
#[derive(Default, Debug)]
struct Read {
    ends: HashMap<u32, ServerMessage>,
    chars: usize,
}

impl Read {
    fn refused_for_quota(&self) -> usize {
        self.ends
            .values()
            .filter(|end| match end {
                ServerMessage::Error { code: ErrorCode::RateLimited, message, .. } => {
                    assert!(message.contains("tokens_per_day"), "refused for another reason: {message}");
                    true
                }
                _ => false,
            })
            .count()
    }
}

/// Reads `tab` until every stream of `ids` ended, or `chars` characters of text arrived and all
/// but one ended (the others of a batch are refused at once).
async fn read(tab: &mut Client, ids: &[u32], chars: usize) -> Read {
    let mut read = Read::default();
    while read.ends.len() < ids.len() && (read.chars < chars || read.ends.len() + 1 < ids.len()) {
        match tab.next().await {
            ServerMessage::Delta { text, .. } => read.chars += text.len(),
            end
            @ (ServerMessage::Done { stream, .. } | ServerMessage::Error { stream: Some(stream), .. }) => {
                read.ends.insert(stream, end);
            }
            _ => {}
        }
    }
    read
}

/// Tokens the upstream wrote, over every request it got, once each has ended (an answer's count
/// is logged when the gateway closes it, or it ends).
async fn sent(gws: &[&Gateway]) -> u64 {
    let mut sent = 0;
    for gw in gws {
        let ended = |log: &[RequestRecord]| log.iter().all(|r| r.finished || r.closed_early);
        let (all, log) = gw.upstream.wait_for(Duration::from_secs(10), ended).await;
        assert!(all, "answers still running at the upstream: {log:?}");
        sent += log.iter().map(|r| u64::from(r.tokens_sent)).sum::<u64>();
    }
    sent
}

/// Waits until each gateway's streams have ended and charged what they generated.
async fn settled(gws: &[&Gateway]) {
    for gw in gws {
        assert!(gw.state.people().settled(Duration::from_secs(10)).await, "settlements still running");
    }
}

fn this_machine() -> Person {
    Person::Anonymous(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// One batch of starts with the quota unspent, each from its own tab (round-robin over `gws`),
/// all at once: one start reserves the quota, the others are refused, and the upstream writes no
/// more than the quota.
async fn batch_attack(gws: &[&Gateway]) {
    let mut tabs = Vec::new();
    for id in 1..=BATCH {
        let (tab, used) = connect(gws[id as usize % gws.len()]).await;
        assert_eq!(used, 0);
        tabs.push((id, tab));
    }
    let starts = tabs.iter_mut().map(|(id, tab)| async move {
        tab.send(&start(*id, FAST)).await;
        read(tab, &[*id], usize::MAX).await
    });
    let reads = futures::future::join_all(starts).await;
    let finished: Vec<&ServerMessage> = reads
        .iter()
        .flat_map(|r| r.ends.values())
        .filter(|e| matches!(e, ServerMessage::Done { .. }))
        .collect();
    let refused: usize = reads.iter().map(Read::refused_for_quota).sum();
    assert_eq!((finished.len(), refused), (1, BATCH as usize - 1), "one start reserves it all: {reads:?}");
    let ServerMessage::Done { finish, usage, .. } = finished[0] else { unreachable!() };
    assert_eq!(*finish, FinishReason::Length, "cut where its reservation ended");
    assert_eq!(u64::from(usage.completion_tokens), QUOTA);
    settled(gws).await;
    let sent = sent(gws).await;
    eprintln!("{BATCH} starts at once: {sent} tokens written on a quota of {QUOTA}");
    assert!(sent <= QUOTA, "{BATCH} starts at once got {sent} tokens on a quota of {QUOTA}");
    for gw in gws {
        let (_, used) = connect(gw).await;
        assert_eq!(used, sent, "charged what was written");
    }
}

/// Rounds of starts whose tab is closed (or whose socket drops, its grace running out) in the
/// middle of the answers, round-robin over `gws`, until the quota is spent: every token received
/// is charged, and the upstream writes no more than the quota (and what was in flight).
async fn closing_attack(gws: &[&Gateway]) {
    let mut rounds = 0;
    loop {
        rounds += 1;
        assert!(rounds <= 40, "the quota was never spent: {} tokens written", sent(gws).await);
        let gw = gws[rounds % gws.len()];
        let (mut tab, _) = connect(gw).await;
        let ids: Vec<u32> = (1..=BATCH).collect();
        for id in &ids {
            tab.send(&start(*id, SLOW)).await;
        }
        // About 250 tokens, then away.
        let got = read(&mut tab, &ids, 1_000).await;
        let refused = got.refused_for_quota();
        if refused == ids.len() {
            // The quota is spent, or held by the streams of a dropped socket still running:
            // once they are stopped and charged, the attacker comes back.
            settled(gws).await;
            if connect(gw).await.1 >= QUOTA {
                break;
            }
            continue;
        }
        assert!(refused >= ids.len() - 1, "one stream holds what is left: {got:?}");
        if rounds % 2 == 1 {
            tab.leave().await;
        } else {
            // The socket drops: its stream runs on for the resume grace, then is stopped.
            drop(tab);
        }
    }
    settled(gws).await;
    let sent = sent(gws).await;
    eprintln!("{rounds} rounds of closed tabs: {sent} tokens written on a quota of {QUOTA}");
    assert!(
        sent <= QUOTA + IN_FLIGHT,
        "{rounds} rounds of closed tabs got {sent} tokens on a quota of {QUOTA}"
    );
    for gw in gws {
        let (_, used) = connect(gw).await;
        eprintln!("charged: {used}");
        // Charged what was generated, not what was reserved.
        assert!(used + IN_FLIGHT >= sent && used <= sent + ROUNDING, "{sent} tokens written, {used} charged");
        assert!((QUOTA..=QUOTA + ROUNDING).contains(&used), "{used} charged on a quota of {QUOTA}");
    }
}

#[tokio::test]
async fn a_batch_of_starts_gets_no_more_than_the_quota() {
    let gw = gateway(None).await;
    batch_attack(&[&gw]).await;
    let asked = gw.upstream.requests()[0].body["max_tokens"].as_u64();
    assert_eq!(asked, Some(QUOTA), "the upstream was asked for what the start reserved");
}

#[tokio::test]
async fn closing_tabs_and_dropping_sockets_mid_answer_charges_every_token() {
    let gw = gateway(None).await;
    closing_attack(&[&gw]).await;
}

#[tokio::test]
async fn an_upstream_that_ignores_its_length_limit_is_cut_where_the_reservation_ends() {
    let options = Options::new(fixtures_dir()).ignoring_max_tokens();
    let gw = start_upstream_with(options, |c| configure(c, None)).await;
    let (mut tab, _) = connect(&gw).await;
    tab.send(&start(1, SLOW)).await;
    let got = read(&mut tab, &[1], usize::MAX).await;
    let end = &got.ends[&1];
    // Cut at its reservation, and the one event a provider may hold back to a request's end.
    assert!(
        matches!(end, ServerMessage::Done { finish: FinishReason::Length, usage, .. }
            if (QUOTA..=QUOTA + 1).contains(&u64::from(usage.completion_tokens))),
        "ended as at its length limit: {end:?}"
    );
    settled(&[&gw]).await;
    let sent = sent(&[&gw]).await;
    eprintln!("an upstream ignoring max_tokens {QUOTA}: {sent} tokens written");
    assert!(sent <= QUOTA + IN_FLIGHT, "{sent} written: the answer was not cut");
    let used = connect(&gw).await.1;
    assert!((QUOTA..=QUOTA + 1).contains(&used), "charged what was relayed: {used}");
    tab.send(&start(2, SLOW)).await;
    assert_eq!(read(&mut tab, &[2], usize::MAX).await.refused_for_quota(), 1, "and the quota is spent");
}

#[tokio::test]
async fn a_cancelled_answer_gives_back_what_it_did_not_generate() {
    let gw = gateway(None).await;
    let (mut tab, _) = connect(&gw).await;
    tab.send(&start(1, SLOW)).await;
    read(&mut tab, &[1], 400).await;
    tab.send(&ClientMessage::Cancel { stream: 1 }).await;
    let mut charged = None;
    loop {
        match tab.next().await {
            ServerMessage::Quota { used, .. } => charged = Some(used),
            ServerMessage::Done { finish, usage, .. } => {
                assert_eq!(finish, FinishReason::Cancelled);
                let used = charged.expect("a quota frame before Done");
                assert_eq!(used, u64::from(usage.completion_tokens), "charged what it generated");
                assert!(used < QUOTA / 2, "the rest of the reservation was given back: {used}");
                break;
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_gateway_that_stops_mid_answer_charges_what_was_generated() {
    let gw = gateway(None).await;
    let (mut tab, _) = connect(&gw).await;
    tab.send(&start(1, SLOW)).await;
    let got = read(&mut tab, &[1], 1_000).await;
    assert!(got.ends.is_empty(), "{got:?}");
    // What `main` does at the end of a drain: every socket closes, then the process waits for
    // the charges of the streams it stopped.
    gw.state.shutdown().cancel();
    settled(&[&gw]).await;
    let sent = sent(&[&gw]).await;
    let used = gw.state.people().quota(&this_machine()).await.expect("a quota").used;
    assert!(sent > 0 && sent < QUOTA, "stopped mid-answer: {sent}");
    assert!(used + IN_FLIGHT >= sent && used <= sent, "{sent} tokens written, {used} charged");
}

#[tokio::test]
async fn two_gateways_on_postgresql_hold_one_quota_against_a_batch_of_starts() {
    let cluster = pg::Cluster::shared();
    let url = cluster.fresh_database();
    let (a, b) = (gateway(Some(&url)).await, gateway(Some(&url)).await);
    batch_attack(&[&a, &b]).await;
}

#[tokio::test]
async fn two_gateways_on_postgresql_charge_closed_tabs_and_dropped_sockets() {
    let cluster = pg::Cluster::shared();
    let url = cluster.fresh_database();
    let (a, b) = (gateway(Some(&url)).await, gateway(Some(&url)).await);
    closing_attack(&[&a, &b]).await;
}
