//! Pictures kept with a stored share link (issue 28), over a real socket: stored beside the link
//! and never in its fragment, read back byte-equal from `GET /api/share/<id>/pictures`; hostile
//! pictures refused with a sentence and nothing stored; their bytes count against the person's
//! `share.max_bytes_per_person`; deleting the link deletes them; a damaged row is never served;
//! and the route is same-origin, without CORS, like the rest of `/api`.

mod common;

use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::start_with;
use flint_gateway::shares::ShareCreated;
use flint_protocol::image::{ImageData, ImageType, MAX_IMAGES};
use flint_protocol::share::{SharedPrompt, encode};
use flint_protocol::stored_link::{SharedPicture, StoredPictures};
use serde_json::json;

fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

fn db(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-share-pictures-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("shares.sqlite3")
}

/// A PNG's signature and IHDR, then `extra` bytes of noise: the checks read headers only, and the
/// noise gives the picture a size that counts.
fn png(width: u32, height: u32, extra: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    bytes.extend(width.to_be_bytes());
    bytes.extend(height.to_be_bytes());
    bytes.extend(b"\x08\x02\0\0\0\0\0\0\0");
    let mut x: u32 = 0x2545_F491;
    bytes.extend((0..extra).map(|_| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as u8
    }));
    bytes
}

fn picture(name: &str, media_type: ImageType, bytes: &[u8], width: u32, height: u32) -> SharedPicture {
    SharedPicture {
        name: name.into(),
        image: ImageData { media_type, data: STANDARD.encode(bytes), width, height },
    }
}

fn mock(extra: usize) -> SharedPicture {
    picture("mock.png", ImageType::Png, &png(64, 48, extra), 64, 48)
}

fn link() -> String {
    encode(&SharedPrompt::new("a pricing page like the picture"))
}

async fn share(addr: std::net::SocketAddr, link: &str, pictures: &[SharedPicture]) -> (u16, String) {
    let response = client()
        .post(format!("http://{addr}/api/share"))
        .json(&json!({ "link": link, "pictures": pictures }))
        .send()
        .await
        .expect("request");
    (response.status().as_u16(), response.text().await.expect("body"))
}

async fn stored(addr: std::net::SocketAddr, pictures: &[SharedPicture]) -> ShareCreated {
    let (status, body) = share(addr, &link(), pictures).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("json answer")
}

async fn get(addr: std::net::SocketAddr, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = client().get(format!("http://{addr}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("request")
}

fn rows(path: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("open the database");
    conn.query_row("SELECT COUNT(*) FROM shares", [], |r| r.get(0)).expect("count")
}

#[tokio::test]
async fn a_link_stored_with_pictures_opens_with_them_byte_equal_and_never_in_the_fragment() {
    let path = db("round-trip");
    let gw = start_with(|c| c.share.database = path.clone()).await;
    let sent = vec![mock(5_000), picture("sketch", ImageType::Png, &png(300, 200, 40), 300, 200)];
    let made = stored(gw.addr, &sent).await;
    assert_eq!(made.pictures, 2, "the answer says how many pictures were kept");

    let opened = get(gw.addr, &made.path, &[]).await;
    assert_eq!(opened.status().as_u16(), 303);
    let location = opened.headers().get("location").and_then(|l| l.to_str().ok()).expect("a location");
    assert_eq!(location, format!("/#p={}&s={}", link(), made.id), "the fragment names the id only");

    let answer =
        get(gw.addr, &format!("/api/share/{}/pictures", made.id), &[("sec-fetch-site", "same-origin")]).await;
    assert_eq!(answer.status().as_u16(), 200);
    assert_eq!(answer.headers().get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
    let back: StoredPictures = answer.json().await.expect("json");
    assert_eq!(back.pictures, sent, "the pictures come back byte-equal, names and order kept");

    // A link without pictures opens exactly as before: no id in its fragment, nothing to fetch.
    let plain = stored(gw.addr, &[]).await;
    let opened = get(gw.addr, &plain.path, &[]).await;
    let location = opened.headers().get("location").and_then(|l| l.to_str().ok()).expect("a location");
    assert_eq!(location, format!("/#p={}", link()));
    let none = get(gw.addr, &format!("/api/share/{}/pictures", plain.id), &[]).await;
    assert_eq!(none.status().as_u16(), 404);
}

#[tokio::test]
async fn hostile_pictures_are_refused_with_a_sentence_and_nothing_is_stored() {
    let path = db("hostile");
    let gw = start_with(|c| c.share.database = path.clone()).await;
    let svg = b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>";
    let mut junk = mock(10);
    junk.image.data = "not base64 at all!".into();
    let cases: Vec<(&str, Vec<SharedPicture>, &str)> = vec![
        (
            "a 30,000 px side",
            vec![picture("strip.png", ImageType::Png, &png(30_000, 10, 0), 30_000, 10)],
            "crop or shrink",
        ),
        ("an SVG with a script", vec![picture("x.svg", ImageType::Png, svg, 10, 10)], "SVG"),
        (
            "a PNG claiming to be JPEG",
            vec![picture("x.jpg", ImageType::Jpeg, &png(8, 8, 0), 8, 8)],
            "attach the image again",
        ),
        (
            "a claimed size unlike the header",
            vec![picture("x.png", ImageType::Png, &png(8, 8, 0), 9, 9)],
            "attach the image again",
        ),
        (
            "a side over what a model is sent",
            vec![picture("big.png", ImageType::Png, &png(4_000, 3_000, 0), 4_000, 3_000)],
            "shrink it",
        ),
        ("more than the prompt's cap", vec![mock(1); MAX_IMAGES + 1], "at most 4 pictures"),
        ("data that is not base64", vec![junk], "base64"),
        (
            "a name longer than 200 characters",
            vec![SharedPicture { name: "n".repeat(201), ..mock(1) }],
            "shorter name",
        ),
    ];
    for (what, pictures, says) in cases {
        let (status, body) = share(gw.addr, &link(), &pictures).await;
        assert_eq!(status, 400, "{what}: {body}");
        assert!(body.contains(says), "{what}: the refusal says what to do: {body}");
    }
    assert_eq!(rows(&path), 0, "nothing was stored");
}

#[tokio::test]
async fn pictures_count_against_the_persons_bytes() {
    let path = db("quota");
    let gw = start_with(|c| {
        c.share.database = path.clone();
        c.share.max_bytes_per_person = 20_000;
    })
    .await;
    // 12,000 bytes of picture are 16,000 of base64: one fits, the second would pass 20,000.
    stored(gw.addr, &[mock(12_000)]).await;
    let (status, body) = share(gw.addr, &link(), &[mock(12_000)]).await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("share.max_bytes_per_person") && body.contains("delete some"), "{body}");
    let (status, body) = share(gw.addr, &link(), &[]).await;
    assert_eq!(status, 200, "the link alone still fits: {body}");
}

#[tokio::test]
async fn deleting_the_link_deletes_its_pictures() {
    let path = db("delete");
    let gw = start_with(|c| c.share.database = path.clone()).await;
    stored(gw.addr, &[mock(100)]).await;
    let made = stored(gw.addr, &[mock(100)]).await;
    let deleted =
        client().delete(format!("http://{}/api/share/{}", gw.addr, made.id)).send().await.expect("delete");
    assert_eq!(deleted.status().as_u16(), 204);
    let gone = get(gw.addr, &format!("/api/share/{}/pictures", made.id), &[]).await;
    assert_eq!(gone.status().as_u16(), 404);
    let conn = rusqlite::Connection::open(&path).expect("open the database");
    let left: i64 = conn
        .query_row("SELECT COUNT(*) FROM shares WHERE pictures IS NOT NULL", [], |r| r.get(0))
        .expect("count");
    assert_eq!(left, 1, "only the other link's pictures are left");
}

#[tokio::test]
async fn damaged_stored_pictures_are_never_served() {
    let path = db("damaged");
    let gw = start_with(|c| c.share.database = path.clone()).await;
    let made = stored(gw.addr, &[mock(100)]).await;
    let svg = STANDARD.encode(b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>");
    let edits = [
        "not json".to_owned(),
        json!({ "pictures": [{ "name": "x", "image": { "media_type": "image/png", "data": svg, "width": 1, "height": 1 } }] })
            .to_string(),
        serde_json::to_string(&StoredPictures { pictures: vec![mock(1); MAX_IMAGES + 1] }).expect("json"),
    ];
    let conn = rusqlite::Connection::open(&path).expect("open the database");
    for edit in edits {
        conn.execute("UPDATE shares SET pictures = ?1 WHERE id = ?2", [&edit, &made.id])
            .expect("edit the row");
        let answer = get(gw.addr, &format!("/api/share/{}/pictures", made.id), &[]).await;
        assert_eq!(answer.status().as_u16(), 400, "{edit:.60}");
        let body = answer.text().await.expect("body");
        assert!(body.contains("damaged") && body.contains("new link"), "{body}");
        assert!(
            !body.contains("svg") && !body.contains("pictures\""),
            "nothing of the row is echoed: {body}"
        );
    }
}

#[tokio::test]
async fn the_pictures_route_is_same_origin_and_answers_no_cors() {
    let path = db("origin");
    let gw = start_with(|c| c.share.database = path.clone()).await;
    let made = stored(gw.addr, &[mock(100)]).await;
    let route = format!("/api/share/{}/pictures", made.id);
    for headers in [[("origin", "http://evil.example")], [("sec-fetch-site", "cross-site")]] {
        let answer = get(gw.addr, &route, &headers).await;
        assert_eq!(answer.status().as_u16(), 403, "{headers:?}");
        assert!(answer.headers().get("access-control-allow-origin").is_none(), "{headers:?}");
    }
    let own = get(gw.addr, &route, &[("origin", &format!("http://{}", gw.addr))]).await;
    assert_eq!(own.status().as_u16(), 200);
    assert!(own.headers().get("access-control-allow-origin").is_none(), "no CORS, even for its own pages");
}
