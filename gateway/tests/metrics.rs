//! `GET /metrics` over a real socket: the figures follow what the relay did, and only peers in
//! `metrics.allow` may read them, never through a proxy.

mod binary;
mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{Client, fixture, start_with};
use flint_gateway::{metrics_app, serve};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

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

/// What nginx sends the gateway in DEPLOY.md's layout (nginx on the same machine forwarding to
/// 127.0.0.1:8787), for a visitor who asks for `https://flint.example.com/metrics`.
const NGINX: &[(&str, &str)] =
    &[("host", "flint.example.com"), ("x-forwarded-for", "203.0.113.9"), ("x-forwarded-proto", "https")];

/// `GET path` over a plain socket from loopback with exactly `headers`: its status and body.
async fn get_with(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    let mut request = format!("GET {path} HTTP/1.1\r\nconnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    tcp.write_all(request.as_bytes()).await.expect("write");
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_string(&mut answer))
        .await
        .expect("answered in time")
        .expect("read");
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, answer)
}

const LOCAL: &[(&str, &str)] = &[("host", "127.0.0.1")];

#[tokio::test]
async fn in_deploy_mds_nginx_layout_a_visitor_never_reads_them_and_the_scraper_reads_its_own_address() {
    // As DEPLOY.md sets it up: the proxy's name served, its address trusted, the figures on an
    // address of their own.
    let gw = start_with(|config| {
        config.server.hosts = vec!["flint.example.com".into()];
        config.auth.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
        config.metrics.listen = Some("127.0.0.1:0".parse().unwrap());
    })
    .await;
    let (status, answer) = get_with(gw.addr, "/metrics", NGINX).await;
    assert_eq!(status, 404, "a visitor read the figures through nginx: {answer}");
    assert_eq!(get_with(gw.addr, "/metrics", LOCAL).await.0, 404, "not on the app's port at all");
    let own = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let own_addr = own.local_addr().expect("address");
    let shutdown = gw.state.shutdown().clone();
    tokio::spawn(serve::serve(own, metrics_app(gw.state.clone()), Duration::from_secs(5), shutdown));
    let (status, answer) = get_with(own_addr, "/metrics", LOCAL).await;
    assert_eq!(status, 200, "the scraper on the same machine: {answer}");
    assert!(answer.contains("flint_connections"), "{answer}");
    let forwarded = [("host", "127.0.0.1"), ("x-forwarded-for", "203.0.113.9")];
    assert_eq!(get_with(own_addr, "/metrics", &forwarded).await.0, 404, "forwarded to the own address");
    assert_eq!(get_with(own_addr, "/api/models", LOCAL).await.0, 404, "only the figures there");
}

#[tokio::test]
async fn without_an_address_of_their_own_a_request_through_a_proxy_is_refused() {
    // An operator who put nginx in front but set neither [metrics] listen nor trusted_proxies.
    let gw = start_with(|config| config.server.hosts = vec!["flint.example.com".into()]).await;
    let (status, answer) = get_with(gw.addr, "/metrics", NGINX).await;
    assert_eq!(status, 404, "a visitor read the figures through nginx: {answer}");
    for header in ["forwarded", "x-real-ip", "via"] {
        let through = [("host", "127.0.0.1"), (header, "203.0.113.9")];
        assert_eq!(get_with(gw.addr, "/metrics", &through).await.0, 404, "{header}");
    }
    assert_eq!(get_with(gw.addr, "/metrics", LOCAL).await.0, 200, "a scraper on the same machine");
}

#[test]
fn the_binary_serves_them_on_metrics_listen_only() {
    let gw = binary::Binary::start("metrics", "[metrics]\nlisten = \"127.0.0.1:0\"\n", "", "info", &[]);
    let line = gw.wait_for("metrics are served on http://", Duration::from_secs(20));
    let own: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line}"));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let (status, answer) = get_with(own, "/metrics", LOCAL).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(get_with(gw.addr, "/metrics", LOCAL).await.0, 404, "not on server.listen");
    });
}
