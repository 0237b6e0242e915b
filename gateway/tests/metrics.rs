//! `GET /metrics` over a real socket: the figures follow what the relay did, and only peers in
//! `metrics.allow` may read them.

mod common;

use common::{Client, fixture, start_with};

async fn scrape(addr: std::net::SocketAddr) -> (u16, String) {
    let response = reqwest::get(format!("http://{addr}/metrics")).await.expect("request succeeds");
    (response.status().as_u16(), response.text().await.expect("body"))
}

/// The value of the sample `name` (a whole line's first field, labels included).
fn sample(text: &str, name: &str) -> f64 {
    let line = text.lines().find(|l| l.split(' ').next() == Some(name));
    line.and_then(|l| l.rsplit(' ').next()?.parse().ok()).unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

#[tokio::test]
async fn the_figures_follow_what_the_relay_did() {
    // No grace: a dropped tab's connection ends with its socket (resume keeps it otherwise).
    let gw = start_with(|config| config.server.resume_grace_secs = 0).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "counter@20000").await;
    assert_eq!(outcome.text, fixture("counter"));
    client.run(2, "fail-500").await;

    let (status, text) = scrape(gw.addr).await;
    assert_eq!(status, 200);
    let tokens = flint_scripted_upstream::tokenize(&fixture("counter")).len() as f64;
    assert_eq!(sample(&text, "flint_connections"), 1.0);
    assert_eq!(sample(&text, "flint_streams_started_total"), 2.0);
    assert_eq!(sample(&text, "flint_streams_running"), 0.0, "both streams ended");
    // The scripted upstream reports one token per chunk; the failed stream generated none.
    assert_eq!(sample(&text, "flint_tokens_relayed_total"), tokens, "the provider's count, once");
    assert_eq!(sample(&text, "flint_time_to_first_token_seconds_count"), 1.0, "only the stream with text");
    assert!(sample(&text, "flint_relay_latency_seconds_count") >= 1.0);
    assert_eq!(sample(&text, "flint_errors_total{code=\"upstream_unavailable\"}"), 1.0);
    assert_eq!(sample(&text, "flint_upstream_first_event_seconds_count{provider=\"scripted\"}"), 2.0);

    drop(client);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (_, text) = scrape(gw.addr).await;
    assert_eq!(sample(&text, "flint_connections"), 0.0, "a closed tab is no longer counted");
}

#[tokio::test]
async fn only_peers_in_the_allow_list_may_read_them() {
    let gw = start_with(|config| config.metrics.allow = vec!["10.0.0.0/8".parse().unwrap()]).await;
    let (status, text) = scrape(gw.addr).await;
    assert_eq!(status, 404, "a peer outside metrics.allow read the figures: {text}");
    assert!(!text.contains("flint_"), "{text}");
    let off = start_with(|config| config.metrics.allow.clear()).await;
    assert_eq!(scrape(off.addr).await.0, 404, "an empty list must turn /metrics off");
}
