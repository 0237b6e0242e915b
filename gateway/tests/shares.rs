//! Stored share links over a real socket: store, open, survive a restart, and refuse what is not a
//! link, too large, unknown or switched off.

mod common;

use std::path::PathBuf;

use common::start_with;
use flint_gateway::shares::ShareCreated;
use flint_protocol::share::{SharedPrompt, encode};

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

async fn post_link(addr: std::net::SocketAddr, link: &str) -> (u16, String) {
    let response = no_redirects()
        .post(format!("http://{addr}/api/share"))
        .json(&serde_json::json!({ "link": link }))
        .send()
        .await
        .expect("request");
    (response.status().as_u16(), response.text().await.expect("body"))
}

async fn open(addr: std::net::SocketAddr, path: &str) -> (u16, Option<String>, String) {
    let response = no_redirects().get(format!("http://{addr}{path}")).send().await.expect("request");
    let location = response.headers().get("location").map(|l| l.to_str().expect("ascii").to_owned());
    (response.status().as_u16(), location, response.text().await.expect("body"))
}

fn db(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-share-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("shares.sqlite3")
}

fn sample_link() -> String {
    let mut shared = SharedPrompt::new("a pricing table — drei Pläne");
    shared.code = Some("<!DOCTYPE html><p>hi</p>".repeat(50));
    encode(&shared)
}

#[tokio::test]
async fn a_stored_link_opens_the_app_with_it_and_survives_a_restart() {
    let path = db("restart");
    let link = sample_link();
    let gw = start_with(|c| c.share.database = path.clone()).await;
    let (status, body) = post_link(gw.addr, &link).await;
    assert_eq!(status, 200, "{body}");
    let created: ShareCreated = serde_json::from_str(&body).expect("json answer");
    assert_eq!(created.path, format!("/s/{}", created.id));
    assert_eq!(created.id.len(), 32, "ids carry 128 random bits");
    drop(gw);

    let restarted = start_with(|c| c.share.database = path.clone()).await;
    let (status, location, _) = open(restarted.addr, &created.path).await;
    assert_eq!(status, 303, "a stored link redirects");
    assert_eq!(location, Some(format!("/#p={link}")), "it opens the app with the stored link");
}

#[tokio::test]
async fn junk_large_unknown_and_disabled_are_refused_with_a_reason() {
    let gw = start_with(|c| {
        c.share.database = db("refuse");
        c.share.max_link_bytes = 2000;
    })
    .await;
    let (status, body) = post_link(gw.addr, "v1.this-is-not-a-link").await;
    assert_eq!(status, 400, "garbage is not stored: {body}");
    assert!(body.contains("garbled") || body.contains("cut short"), "{body}");

    let mut big = SharedPrompt::new("x");
    big.code = Some((0..4000).map(|i| format!("{i:x}")).collect());
    let (status, body) = post_link(gw.addr, &encode(&big)).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("without the code"), "{body}");

    let (status, _, body) = open(gw.addr, &format!("/s/{}", "0".repeat(32))).await;
    assert_eq!(status, 404);
    assert!(body.contains("copied whole"), "{body}");
    let (status, _, _) = open(gw.addr, "/s/..%2F..%2Fetc").await;
    assert_eq!(status, 404, "ids that are not ours are not looked up");

    let off = start_with(|c| c.share.enabled = false).await;
    let (status, body) = post_link(off.addr, &sample_link()).await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("does not store shared links"), "{body}");
}

#[tokio::test]
async fn a_link_with_a_trailing_newline_is_stored_trimmed_and_opens() {
    let gw = start_with(|c| c.share.database = db("newline")).await;
    let link = sample_link();
    let (status, body) = post_link(gw.addr, &format!("{link}\r\n")).await;
    assert_eq!(status, 200, "{body}");
    let created: ShareCreated = serde_json::from_str(&body).expect("json answer");
    let (status, location, body) = open(gw.addr, &created.path).await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(location, Some(format!("/#p={link}")), "the link is stored without the newline");
}

/// Writes a row the API would refuse, the way an older gateway or a hand edit could have.
fn insert_row(path: &std::path::Path, id: &str, link: &str) {
    let conn = rusqlite::Connection::open(path).expect("open the database");
    conn.execute("INSERT INTO shares (id, link, created_at) VALUES (?1, ?2, 0)", rusqlite::params![id, link])
        .expect("insert a row");
}

#[tokio::test]
async fn stored_rows_with_control_bytes_never_inject_headers() {
    let path = db("control");
    let gw = start_with(|c| c.share.database = path.clone()).await;
    let link = sample_link();
    // An older gateway stored links untrimmed: those still open.
    insert_row(&path, &"a".repeat(32), &format!("{link}\n"));
    let (status, location, body) = open(gw.addr, &format!("/s/{}", "a".repeat(32))).await;
    assert_eq!((status, location), (303, Some(format!("/#p={link}"))), "{body}");
    let hostile = [
        format!("{link}\r\nSet-Cookie: stolen=1"),
        "v1.\r\nX-Injected: 1\r\n\r\n<script>alert(1)</script>".to_owned(),
        format!("{link}\u{0}"),
        format!("{link}\u{7f}"),
        format!("{}\u{1b}[2J{}", &link[..10], &link[10..]),
        format!("{}\t{}", &link[..10], &link[10..]),
    ];
    for (i, row) in hostile.iter().enumerate() {
        let id = format!("{i:032x}");
        insert_row(&path, &id, row);
        let response =
            no_redirects().get(format!("http://{}/s/{id}", gw.addr)).send().await.expect("an answer");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().await.expect("body");
        assert!((400..600).contains(&status), "row {i} must be refused, got {status}");
        assert!(headers.get("location").is_none(), "row {i} must not redirect");
        assert!(headers.get("set-cookie").is_none() && headers.get("x-injected").is_none(), "row {i}");
        assert!(body.contains("damaged") && body.contains("new link"), "row {i} needs a sentence: {body}");
    }
}
