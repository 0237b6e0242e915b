//! Stored share links over a real socket: store, open, survive a restart, and refuse what is not a
//! link, too large, unknown or switched off; off by default off loopback, quotas per person, expiry,
//! deleting one's own, and databases made before owners and expiry.

mod common;

use std::path::PathBuf;

use common::start_with;
use flint_gateway::shares::{Clock, ShareCreated};
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

    let off = start_with(|c| c.share.enabled = Some(false)).await;
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

/// A client whose requests come from `127.0.0.<n>`: to the gateway (no sign-in), person `n`.
fn person(n: u8) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(std::net::IpAddr::from([127, 0, 0, n]))
        .build()
        .expect("client")
}

async fn post_as(client: &reqwest::Client, addr: std::net::SocketAddr, link: &str) -> (u16, String) {
    let response = client
        .post(format!("http://{addr}/api/share"))
        .json(&serde_json::json!({ "link": link }))
        .send()
        .await
        .expect("request");
    (response.status().as_u16(), response.text().await.expect("body"))
}

async fn delete_as(client: &reqwest::Client, addr: std::net::SocketAddr, id: &str) -> (u16, String) {
    let response = client.delete(format!("http://{addr}/api/share/{id}")).send().await.expect("request");
    (response.status().as_u16(), response.text().await.expect("body"))
}

fn created(status: u16, body: &str) -> ShareCreated {
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(body).expect("json answer")
}

/// A link of about `bytes` characters that decodes (distinct for each `tag`).
fn link_of(tag: usize, bytes: usize) -> String {
    let mut shared = SharedPrompt::new(format!("prompt {tag}"));
    // Pseudo-random text barely compresses, so the link grows with it.
    let mut x: u32 = 0x9E37_79B9 ^ tag as u32;
    let noise: String = (0..bytes * 3 / 4)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            char::from(b'!' + (x % 94) as u8)
        })
        .collect();
    shared.code = Some(noise);
    encode(&shared)
}

fn rows(path: &std::path::Path, id: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("open the database");
    conn.query_row("SELECT COUNT(*) FROM shares WHERE id = ?1", [id], |r| r.get(0)).expect("count")
}

const PUBLIC: &str = "0.0.0.0:0";

#[tokio::test]
async fn stored_links_are_off_by_default_on_a_public_address() {
    let path = db("public-default");
    let gw = start_with(|c| {
        c.server.listen = PUBLIC.parse().expect("address");
        c.share.database = path.clone();
    })
    .await;
    let (status, body) = post_link(gw.addr, &sample_link()).await;
    assert_eq!(status, 404, "a stranger's link must not be stored: {body}");
    assert!(body.contains("does not store shared links"), "{body}");
    assert!(!path.exists(), "no database is even created");
}

#[tokio::test]
async fn an_explicit_enabled_stores_links_on_a_public_address() {
    let gw = start_with(|c| {
        c.server.listen = PUBLIC.parse().expect("address");
        c.share.database = db("public-on");
        c.share.enabled = Some(true);
    })
    .await;
    let (status, body) = post_link(gw.addr, &sample_link()).await;
    let made = created(status, &body);
    let (status, _, body) = open(gw.addr, &made.path).await;
    assert_eq!(status, 303, "{body}");
}

#[tokio::test]
async fn one_person_keeps_at_most_max_links_per_person_and_another_is_unaffected() {
    let gw = start_with(|c| {
        c.share.database = db("quota-count");
        c.share.max_links_per_person = 3;
    })
    .await;
    let (a, b) = (person(2), person(3));
    for i in 0..3 {
        let (status, body) = post_as(&a, gw.addr, &link_of(i, 200)).await;
        assert_eq!(status, 200, "link {i}: {body}");
    }
    let (status, body) = post_as(&a, gw.addr, &link_of(3, 200)).await;
    assert_eq!(status, 429, "the fourth link passes the quota: {body}");
    assert!(body.contains("share.max_links_per_person") && body.contains("delete"), "{body}");
    let (status, body) = post_as(&b, gw.addr, &link_of(4, 200)).await;
    assert_eq!(status, 200, "another person has their own quota: {body}");
}

#[tokio::test]
async fn one_person_keeps_at_most_max_bytes_per_person_and_another_is_unaffected() {
    let first = link_of(0, 3000);
    let gw = start_with(|c| {
        c.share.database = db("quota-bytes");
        // Two such links fit, a third does not.
        c.share.max_bytes_per_person = first.len() * 5 / 2;
    })
    .await;
    let (a, b) = (person(4), person(5));
    let made = created_as(&a, gw.addr, &first).await;
    let (status, body) = post_as(&a, gw.addr, &link_of(1, 3000)).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post_as(&a, gw.addr, &link_of(2, 3000)).await;
    assert_eq!(status, 429, "the third link passes the byte quota: {body}");
    assert!(body.contains("share.max_bytes_per_person"), "{body}");
    let (status, body) = post_as(&b, gw.addr, &link_of(3, 3000)).await;
    assert_eq!(status, 200, "another person has their own quota: {body}");
    // Deleting one gives its bytes back.
    assert_eq!(delete_as(&a, gw.addr, &made.id).await.0, 204);
    let (status, body) = post_as(&a, gw.addr, &link_of(2, 3000)).await;
    assert_eq!(status, 200, "{body}");
}

async fn created_as(client: &reqwest::Client, addr: std::net::SocketAddr, link: &str) -> ShareCreated {
    let (status, body) = post_as(client, addr, link).await;
    created(status, &body)
}

#[tokio::test]
async fn an_expired_link_answers_gone_and_its_row_is_deleted() {
    let path = db("expiry");
    let clock = Clock::manual(1_700_000_000);
    let gw = start_with(|c| {
        c.share.database = path.clone();
        c.share.ttl_days = 2;
        c.share.clock = clock.clone();
    })
    .await;
    let made = created_as(&person(6), gw.addr, &sample_link()).await;
    assert_eq!(made.expires_at, Some(1_700_000_000 + 2 * 86_400), "the answer says when it expires");
    clock.advance(2 * 86_400 - 1);
    assert_eq!(open(gw.addr, &made.path).await.0, 303, "still there a second before");
    clock.advance(1);
    let (status, location, body) = open(gw.addr, &made.path).await;
    assert_eq!((status, location), (410, None), "{body}");
    assert!(body.contains("expired") && body.contains("new link"), "{body}");
    assert_eq!(rows(&path, &made.id), 0, "the expired row is deleted");
    assert_eq!(open(gw.addr, &made.path).await.0, 404);
}

#[tokio::test]
async fn expired_links_are_deleted_when_another_is_stored() {
    let path = db("cleanup");
    let clock = Clock::manual(1_700_000_000);
    let gw = start_with(|c| {
        c.share.database = path.clone();
        c.share.ttl_days = 1;
        c.share.clock = clock.clone();
    })
    .await;
    let old = created_as(&person(7), gw.addr, &link_of(0, 100)).await;
    clock.advance(86_400);
    // Someone else stores a link; nobody opens the old one.
    created_as(&person(8), gw.addr, &link_of(1, 100)).await;
    assert_eq!(rows(&path, &old.id), 0, "an expired link does not wait to be opened to be deleted");
}

#[tokio::test]
async fn links_never_expire_with_ttl_days_zero() {
    let clock = Clock::manual(1_700_000_000);
    let gw = start_with(|c| {
        c.share.database = db("forever");
        c.share.ttl_days = 0;
        c.share.clock = clock.clone();
    })
    .await;
    let made = created_as(&person(9), gw.addr, &sample_link()).await;
    assert_eq!(made.expires_at, None);
    clock.advance(10 * 365 * 86_400);
    assert_eq!(open(gw.addr, &made.path).await.0, 303);
}

#[tokio::test]
async fn a_person_deletes_their_own_link_and_nobody_elses() {
    let path = db("delete");
    let gw = start_with(|c| c.share.database = path.clone()).await;
    let (owner, stranger) = (person(10), person(11));
    let made = created_as(&owner, gw.addr, &sample_link()).await;
    assert_eq!(made.delete, format!("DELETE /api/share/{}", made.id), "the answer says how to delete it");

    let (status, body) = delete_as(&stranger, gw.addr, &made.id).await;
    assert_eq!(status, 404, "another person's link is not theirs to delete: {body}");
    let (_, unknown) = delete_as(&stranger, gw.addr, &"0".repeat(32)).await;
    assert_eq!(body, unknown, "someone else's link looks like one never stored");
    assert_eq!(open(gw.addr, &made.path).await.0, 303, "it still opens");

    let (status, body) = delete_as(&owner, gw.addr, &made.id).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(rows(&path, &made.id), 0);
    assert_eq!(open(gw.addr, &made.path).await.0, 404, "deleted links are gone");
    assert_eq!(delete_as(&owner, gw.addr, &made.id).await.0, 404, "and cannot be deleted twice");
}

#[tokio::test]
async fn a_database_from_before_owners_and_expiry_opens_and_its_links_still_open() {
    let path = db("old-schema");
    std::fs::create_dir_all(path.parent().expect("folder")).expect("folder");
    let link = sample_link();
    let id = "b".repeat(32);
    {
        // Exactly what the previous gateway made: one table, schema version 1.
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch(
            "CREATE TABLE shares (id TEXT PRIMARY KEY, link TEXT NOT NULL, created_at INTEGER NOT NULL) STRICT;
             PRAGMA user_version = 1;",
        )
        .expect("old schema");
        conn.execute(
            "INSERT INTO shares (id, link, created_at) VALUES (?1, ?2, 1)",
            rusqlite::params![id, link],
        )
        .expect("an old link, stored long ago");
    }
    let clock = Clock::manual(1_700_000_000);
    let gw = start_with(|c| {
        c.share.database = path.clone();
        c.share.ttl_days = 30;
        c.share.clock = clock.clone();
    })
    .await;
    let (status, location, body) = open(gw.addr, &format!("/s/{id}")).await;
    assert_eq!((status, location), (303, Some(format!("/#p={link}"))), "an old link still opens: {body}");
    let made = created_as(&person(12), gw.addr, &sample_link()).await;
    assert!(made.expires_at.is_some(), "new links are stored in the migrated table");
    assert_eq!(delete_as(&person(12), gw.addr, &id).await.0, 404, "old links have no owner to delete them");
    // Their expiry counts from the upgrade, not from when they were stored.
    clock.advance(30 * 86_400);
    assert_eq!(open(gw.addr, &format!("/s/{id}")).await.0, 410, "old links expire like new ones");
}
