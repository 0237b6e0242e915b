//! `POST /api/history/push` and `GET /api/history` on a real socket: signed-in people only (named
//! by a trusted proxy here), each person's records their own, every limit a sentence.

mod common;

use std::net::SocketAddr;

use common::{Gateway, start_with};
use flint_gateway::config::{AuthMode, Config};
use flint_protocol::sync::{HistoryRecord, PullAnswer, PushAnswer, RecordKind};
use serde_json::json;

/// The header the test proxy names people with.
const USER: &str = "x-forwarded-user";

fn signed_in(config: &mut Config) {
    config.auth.mode = AuthMode::Proxy;
    config.auth.trusted_proxies = vec!["127.0.0.1".parse().expect("address")];
}

fn record(id: &str, revision: u64, prompt: &str) -> HistoryRecord {
    HistoryRecord {
        id: id.into(),
        kind: RecordKind::Generation,
        body: json!({ "prompt": prompt, "model": "m", "code": "<p></p>", "status": "done" }),
        revision,
        updated_at: 1_700_000_000_000 + revision,
        device: "d1".into(),
        deleted: false,
    }
}

async fn push(addr: SocketAddr, who: Option<&str>, body: String) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/api/history/push"))
        .header("origin", format!("http://{addr}"))
        .header("content-type", "application/json")
        .body(body);
    if let Some(who) = who {
        request = request.header(USER, who);
    }
    let response = request.send().await.expect("request");
    (response.status().as_u16(), response.text().await.expect("body"))
}

async fn push_records(addr: SocketAddr, who: &str, records: &[HistoryRecord]) -> PushAnswer {
    let (status, body) = push(addr, Some(who), json!({ "records": records }).to_string()).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("a push answer")
}

async fn pull(addr: SocketAddr, who: Option<&str>, since: &str) -> (u16, String) {
    let mut request = reqwest::Client::new().get(format!("http://{addr}/api/history?since={since}"));
    if let Some(who) = who {
        request = request.header(USER, who);
    }
    let response = request.send().await.expect("request");
    (response.status().as_u16(), response.text().await.expect("body"))
}

async fn pulled(addr: SocketAddr, who: &str) -> PullAnswer {
    let (status, body) = pull(addr, Some(who), "0").await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("a pull answer")
}

#[tokio::test]
async fn one_person_cannot_read_or_overwrite_anothers_history() {
    let gateway: Gateway = start_with(signed_in).await;
    let addr = gateway.addr;
    let ada = record("1700000000001", 1, "ada's secret page");
    push_records(addr, "ada", std::slice::from_ref(&ada)).await;
    // Bob asks for everything and pushes a newer copy under the same key.
    assert!(pulled(addr, "bob").await.records.is_empty(), "bob sees none of ada's records");
    let forged = record("1700000000001", 99, "bob was here");
    assert_eq!(push_records(addr, "bob", std::slice::from_ref(&forged)).await.kept, [forged]);
    assert_eq!(pulled(addr, "ada").await.records, [ada], "ada's record is untouched");
}

#[tokio::test]
async fn anonymous_people_are_told_to_sign_in() {
    // Loopback with nobody signing in: requests are served, as anonymous.
    let gateway = start_with(|_| {}).await;
    let (status, body) = pull(gateway.addr, None, "0").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("signed in") && body.contains("Export"), "{body}");
    let (status, body) = push(gateway.addr, None, json!({ "records": [] }).to_string()).await;
    assert_eq!(status, 403, "{body}");
    // With sign-in required, nobody named gets the sign-in layer's 401.
    let gateway = start_with(signed_in).await;
    let (status, body) = pull(gateway.addr, None, "0").await;
    assert_eq!(status, 401, "{body}");
}

#[tokio::test]
async fn another_sites_page_cannot_push() {
    let gateway = start_with(signed_in).await;
    let response = reqwest::Client::new()
        .post(format!("http://{}/api/history/push", gateway.addr))
        .header("origin", "https://evil.example")
        .header(USER, "ada")
        .header("content-type", "application/json")
        .body(json!({ "records": [record("1", 1, "x")] }).to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 403);
    assert!(pulled(gateway.addr, "ada").await.records.is_empty(), "nothing was kept");
}

#[tokio::test]
async fn every_limit_is_a_sentence_and_keeps_nothing() {
    let gateway = start_with(|config| {
        signed_in(config);
        config.store.history_max_records = 2;
        config.store.history_max_record_bytes = 200;
        config.store.history_max_request_bytes = 2_000;
    })
    .await;
    let addr = gateway.addr;
    let big = record("1", 1, &"x".repeat(300));
    let (status, body) =
        push(addr, Some("ada"), json!({ "records": [record("0", 1, "ok"), big] }).to_string()).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("entry 1") && body.contains("history_max_record_bytes"), "{body}");
    let many: Vec<_> = (0..20).map(|i| record(&i.to_string(), 1, "a page")).collect();
    let (status, body) = push(addr, Some("ada"), json!({ "records": many }).to_string()).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("2000 bytes"), "{body}");
    assert!(pulled(addr, "ada").await.records.is_empty(), "a refused push keeps nothing");
    push_records(addr, "ada", &[record("a", 1, "one"), record("b", 1, "two")]).await;
    let (status, body) =
        push(addr, Some("ada"), json!({ "records": [record("c", 1, "three")] }).to_string()).await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("history_max_records"), "{body}");
    let (status, body) = push(addr, Some("ada"), "{\"records\": 5}".into()).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = pull(addr, Some("ada"), "yesterday").await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("cursor"), "{body}");
}

#[tokio::test]
async fn the_byte_quota_and_the_write_rate_are_sentences_and_deleting_makes_room() {
    let (a, b, c) = (record("a", 1, &"a".repeat(1_000)), record("b", 1, "two"), record("c", 1, "three"));
    let gateway = start_with(|config| {
        signed_in(config);
        config.store.history_max_bytes_per_person = 1_800;
    })
    .await;
    let addr = gateway.addr;
    push_records(addr, "ada", &[a.clone(), b]).await;
    let (status, body) = push(addr, Some("ada"), json!({ "records": [c.clone()] }).to_string()).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("history_max_bytes_per_person") && body.contains("delete entries"), "{body}");
    // Deleted (sent with its body, as a careless client might), the big entry frees its room.
    let gone = HistoryRecord { revision: 2, deleted: true, ..a };
    let kept = push_records(addr, "ada", &[gone]).await.kept;
    assert!(kept[0].deleted && kept[0].body.is_null(), "{:?}", kept[0]);
    push_records(addr, "ada", &[c]).await;

    let gateway = start_with(|config| {
        signed_in(config);
        config.store.history_max_write_bytes_per_minute = 400;
    })
    .await;
    let addr = gateway.addr;
    push_records(addr, "ada", &[record("a", 1, "one")]).await;
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/api/history/push"))
        .header("origin", format!("http://{addr}"))
        .header(USER, "ada")
        .header("content-type", "application/json")
        .body(json!({ "records": [record("b", 1, "two")] }).to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 429);
    let wait: u64 = response.headers()["retry-after"].to_str().expect("ascii").parse().expect("seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    let body = response.text().await.expect("body");
    assert!(body.contains("history_max_write_bytes_per_minute") && body.contains("by itself"), "{body}");
    push_records(addr, "bob", &[record("b", 1, "two")]).await;
}

#[tokio::test]
async fn pulls_page_by_cursor() {
    let gateway = start_with(signed_in).await;
    let addr = gateway.addr;
    push_records(addr, "ada", &[record("a", 1, "one"), record("b", 1, "two")]).await;
    let first = pulled(addr, "ada").await;
    assert_eq!(first.records.len(), 2);
    assert!(!first.more);
    push_records(addr, "ada", &[record("a", 2, "one, edited")]).await;
    let (status, body) = pull(addr, Some("ada"), &first.cursor.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let next: PullAnswer = serde_json::from_str(&body).expect("json");
    assert_eq!(next.records, [record("a", 2, "one, edited")], "only what changed since the cursor");
}

/// Whether the `Hello` of a socket opened by `who` (nobody: anonymous) offers history sync.
async fn hello_offers_history(addr: SocketAddr, who: Option<&str>) -> bool {
    use futures::StreamExt;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    let mut request = format!("ws://{addr}/ws?protocol=1").into_client_request().expect("request");
    request.headers_mut().insert("origin", format!("http://{addr}").parse().expect("origin"));
    if let Some(who) = who {
        request.headers_mut().insert(USER, who.parse().expect("a person's name"));
    }
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await.expect("handshake");
    let frame = ws.next().await.expect("a first frame").expect("a frame, not an error");
    let text = frame.into_text().expect("a text frame");
    match serde_json::from_str(&text).expect("a server frame") {
        flint_protocol::ServerMessage::Hello { history, .. } => history,
        other => panic!("the first frame must be Hello: {other:?}"),
    }
}

#[tokio::test]
async fn hello_offers_sync_only_to_a_signed_in_person() {
    // A local gateway serves anonymous people: their pages must not ask /api/history at all.
    let gateway = start_with(|_| {}).await;
    assert!(!hello_offers_history(gateway.addr, None).await, "anonymous: no sync");
    let gateway = start_with(signed_in).await;
    assert!(hello_offers_history(gateway.addr, Some("ada")).await, "signed in: sync");
}
