//! A person's own key (`allow_user_keys`): sent over their socket, used for their streams only,
//! never in a frame or a log line, outside the operator's daily quota; refused where the operator
//! did not allow it.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::{Client, Gateway, KEY, start_upstream_with};
use flint_gateway::config::{ModelConfig, PersonLimits, ProviderConfig};
use flint_protocol::{ClientMessage, ErrorCode, Secret, ServerMessage};
use flint_scripted_upstream::{Options, fixtures_dir};

const OWN_KEY: &str = "sk-own-9f8e7d6c5b4a39281706";

async fn gateway(allow: bool, tokens_per_day: u64) -> Gateway {
    start_upstream_with(Options::new(fixtures_dir()), |config| {
        config.limits.signed_in = PersonLimits { tokens_per_day, ..PersonLimits::default() };
        if let ProviderConfig::Openai(openai) = &mut config.providers[0] {
            openai.allow_user_keys = allow;
            // Echoes the key it was sent into the answer, as a buggy proxy might.
            let echo = ModelConfig { id: "leak-content@5000".into(), ..openai.models[0].clone() };
            openai.models.push(echo);
        }
    })
    .await
}

fn use_key(key: Option<&str>) -> ClientMessage {
    ClientMessage::UseKey { provider: "scripted".into(), key: key.map(Secret::new) }
}

/// Runs one stream to its end; quota frames on the way are fine.
async fn run(tab: &mut Client, id: u32, model: &str) -> ServerMessage {
    tab.start(id, model).await;
    let (mut done, _) = tab.collect(&[id]).await;
    done.remove(0).1.end
}

fn tail(key: &str) -> String {
    key[key.len() - 4..].to_owned()
}

#[tokio::test]
async fn the_persons_key_goes_with_their_streams_only_and_never_comes_back() {
    let gw = gateway(true, 0).await;
    let mut mine = Client::connect(gw.addr).await;
    let mut other = Client::connect(gw.addr).await;
    mine.send(&use_key(Some(OWN_KEY))).await;
    let outcome = mine.run(1, "leak-content@5000").await;
    assert!(matches!(outcome.end, ServerMessage::Done { .. }), "{:?}", outcome.end);
    other.run(2, "counter@5000").await;
    let log = gw.upstream.requests();
    assert_eq!(log[0].key_tail.as_deref(), Some(tail(OWN_KEY).as_str()), "my stream went with my key");
    assert_eq!(
        log[1].key_tail.as_deref(),
        Some(tail(KEY).as_str()),
        "another tab's went with the operator's"
    );
    let frames = mine.raw.join("\n");
    assert!(!frames.contains(OWN_KEY) && !frames.contains(&OWN_KEY[3..]), "the key came back: {frames}");
    // Back to the operator's key.
    mine.send(&use_key(None)).await;
    mine.run(3, "counter@5000").await;
    assert_eq!(gw.upstream.requests()[2].key_tail.as_deref(), Some(tail(KEY).as_str()));
}

#[tokio::test]
async fn a_provider_that_does_not_allow_own_keys_says_so() {
    let gw = gateway(false, 0).await;
    let mut tab = Client::connect(gw.addr).await;
    tab.send(&use_key(Some(OWN_KEY))).await;
    match tab.next().await {
        ServerMessage::Error { stream: None, code: ErrorCode::Unauthorized, message, .. } => {
            assert!(message.contains("allow_user_keys"), "{message}");
            assert!(!message.contains(OWN_KEY), "{message}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    tab.run(1, "counter@5000").await;
    assert_eq!(
        gw.upstream.requests()[0].key_tail.as_deref(),
        Some(tail(KEY).as_str()),
        "the refused key was used"
    );
}

#[tokio::test]
async fn the_operators_daily_quota_does_not_apply_to_an_own_key() {
    let gw = gateway(true, 50).await;
    let mut tab = Client::connect(gw.addr).await;
    assert!(matches!(tab.next().await, ServerMessage::Quota { limit: 50, .. }));
    tab.send(&use_key(Some(OWN_KEY))).await;
    for id in 1..=3 {
        let end = run(&mut tab, id, "counter@5000").await;
        assert!(matches!(end, ServerMessage::Done { .. }), "own key, stream {id}: {end:?}");
    }
    tab.send(&use_key(None)).await;
    run(&mut tab, 4, "counter@5000").await;
    let refused = run(&mut tab, 5, "counter@5000").await;
    assert!(
        matches!(&refused, ServerMessage::Error { code: ErrorCode::RateLimited, .. }),
        "the operator's key is within quota again: {refused:?}"
    );
}

#[tokio::test]
async fn a_key_no_header_can_carry_is_refused_with_a_sentence_and_not_kept() {
    let gw = gateway(true, 0).await;
    let mut tab = Client::connect(gw.addr).await;
    let long = "k".repeat(1_025);
    for bad in [&format!("{OWN_KEY}\r\nX-Injected: 1"), "sk own key", "sk-\u{e9}t\u{e9}", long.as_str()] {
        tab.send(&use_key(Some(bad))).await;
        match tab.next().await {
            ServerMessage::Error { stream: None, code: ErrorCode::InvalidParams, message, .. } => {
                assert!(message.contains("not a key scripted can take"), "{message}");
                assert!(
                    !message.contains(OWN_KEY) && !message.contains("kkkk"),
                    "the key came back: {message}"
                );
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    // Surrounding whitespace is trimmed, and the 1,024-character key is taken.
    tab.send(&use_key(Some(&format!("  {OWN_KEY}\n")))).await;
    tab.run(1, "counter@5000").await;
    tab.send(&use_key(Some(&long[..1_024]))).await;
    tab.run(2, "counter@5000").await;
    let log = gw.upstream.requests();
    assert!(log.iter().all(|r| r.authorization), "a request went without a key: {log:?}");
    assert_eq!(log[0].key_tail.as_deref(), Some(tail(OWN_KEY).as_str()), "the trimmed key went");
    assert_eq!(log[1].key_tail.as_deref(), Some("kkkk"));
}

#[tokio::test]
async fn an_own_key_does_not_skip_starts_per_minute_or_running_streams() {
    let gw = start_upstream_with(Options::new(fixtures_dir()), |config| {
        config.limits.signed_in =
            PersonLimits { streams: 2, starts_per_minute: 3, ..PersonLimits::default() };
        if let ProviderConfig::Openai(openai) = &mut config.providers[0] {
            openai.allow_user_keys = true;
        }
    })
    .await;
    let mut tab = Client::connect(gw.addr).await;
    // A junk key, on an upstream that does not check keys.
    tab.send(&use_key(Some("junk"))).await;
    tab.start(1, "large@200").await;
    tab.start(2, "large@200").await;
    // Both are running (and reached the upstream) before the third asks.
    let mut started = 0;
    while started < 2 {
        if matches!(tab.next().await, ServerMessage::Started { .. }) {
            started += 1;
        }
    }
    tab.start(3, "large@200").await;
    let (ended, _) = tab.collect(&[3]).await;
    match &ended[0].1.end {
        ServerMessage::Error { code: ErrorCode::RateLimited, message, .. } => {
            assert!(message.contains("limits.signed_in.streams"), "{message}");
        }
        other => panic!("a third stream at once is over the limit: {other:?}"),
    }
    for id in [1, 2] {
        tab.send(&ClientMessage::Cancel { stream: id }).await;
    }
    tab.collect(&[1, 2]).await;
    tab.start(4, "counter@5000").await;
    tab.start(5, "counter@5000").await;
    let (ended, _) = tab.collect(&[4, 5]).await;
    let refused: Vec<_> = ended
        .iter()
        .filter_map(|(_, o)| match &o.end {
            ServerMessage::Error { code: ErrorCode::RateLimited, message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 1, "three starts a minute, with an own key too: {ended:?}");
    assert!(refused[0].contains("starts_per_minute"), "{}", refused[0]);
    assert_eq!(gw.upstream.requests().len(), 3, "a refused start reached the upstream");
}

/// Every log line, at `trace`, while a person's key is used.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_key_is_in_no_log_line_even_at_trace() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let gw = gateway(true, 0).await;
        let mut tab = Client::connect(gw.addr).await;
        tab.send(&use_key(Some(OWN_KEY))).await;
        tab.run(1, "fail-401").await;
        tab.run(2, "counter@5000").await;
    });
    let logs = String::from_utf8_lossy(&captured.0.lock().expect("not poisoned")).into_owned();
    assert!(logs.contains("own key"), "the capture saw nothing: {logs:.500}");
    assert!(!logs.contains(OWN_KEY) && !logs.contains(&OWN_KEY[3..20]), "the key is in the log");
}
