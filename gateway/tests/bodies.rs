//! Bodies axum refuses before a handler sees them (past the route's limit, not JSON, not the JSON
//! the route reads) are answered in Flint's sentences, not axum's ("length limit exceeded",
//! "Failed to deserialize the JSON body…").

mod common;

use common::start_with;

async fn post(addr: std::net::SocketAddr, path: &str, content_type: &str, body: Vec<u8>) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(format!("http://{addr}{path}"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("request");
    (response.status().as_u16(), response.text().await.expect("body"))
}

#[tokio::test]
async fn a_share_too_large_or_not_json_is_refused_in_a_sentence() {
    let dir = std::env::temp_dir().join(format!("flint-bodies-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let gw = start_with(|c| c.share.database = dir.join("shares.sqlite3")).await;

    let huge = format!("{{\"link\":\"{}\"}}", "a".repeat(40 << 20)).into_bytes();
    let (status, body) = post(gw.addr, "/api/share", "application/json", huge).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("share it without the code"), "{body}");

    for (content_type, bytes, status_was) in [
        ("application/json", b"{\"nope\": 1}".to_vec(), 422),
        ("application/json", b"{not json".to_vec(), 400),
        ("text/plain", b"{\"link\": \"v1.x\"}".to_vec(), 415),
    ] {
        let (status, body) = post(gw.addr, "/api/share", content_type, bytes).await;
        assert_eq!(status, status_was, "{body}");
        assert!(body.starts_with("this request is not what Flint's app sends here ("), "{body}");
        assert!(body.contains("reload the page"), "{body}");
    }
}

#[tokio::test]
async fn a_history_push_past_the_route_limit_is_refused_in_a_sentence() {
    let gw = start_with(|c| c.store.history_max_request_bytes = 1024).await;
    let (status, body) = post(gw.addr, "/api/history/push", "application/json", vec![b' '; 1 << 20]).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("send it in smaller parts"), "{body}");
}
