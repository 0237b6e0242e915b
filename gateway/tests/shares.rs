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
