use base64::Engine as _;
use flint_protocol::image::{ImageData, ImageType, MAX_IMAGES};

use super::*;

/// A PNG's signature and IHDR: all the checks read.
fn png(width: u32, height: u32) -> ImageData {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    bytes.extend(width.to_be_bytes());
    bytes.extend(height.to_be_bytes());
    bytes.extend(b"\x08\x02\0\0\0\0\0\0\0");
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    ImageData { media_type: ImageType::Png, data, width, height }
}

fn shared(name: &str, image: ImageData) -> SharedPicture {
    SharedPicture { name: name.into(), image }
}

#[test]
fn only_an_id_the_gateway_could_make_is_fetched() {
    let id = "0123456789abcdef0123456789ABCDEF";
    assert_eq!(stored_in_hash(&format!("#p=v1.abc&s={id}")), Some(id));
    assert_eq!(stored_in_hash(&format!("p=v1.abc&later=1&s={id}")), Some(id));
    assert_eq!(stored_in_hash("#p=v1.abc"), None, "a link without pictures fetches nothing");
    for hostile in ["#p=v1&s=../../api/models", "#p=v1&s=abc", "#p=v1&s=0123456789abcdef0123456789abcdefg"] {
        assert_eq!(stored_in_hash(hostile), None, "{hostile}");
    }
    assert_eq!(pictures_url(id), format!("/api/share/{id}/pictures"));
}

#[test]
fn shared_pictures_keep_their_order_and_names_cut_to_what_is_kept() {
    let (long, small, wide) = ("n".repeat(300), png(10, 10), png(20, 10));
    let sent = to_share([(long.as_str(), &small), ("sketch", &wide)]);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].name.chars().count(), MAX_PICTURE_NAME_CHARS);
    assert_eq!(sent[1], shared("sketch", png(20, 10)));
    assert!(check_pictures(&sent).is_ok(), "what Share sends passes the gateway's check");
}

#[test]
fn received_pictures_are_checked_before_they_are_attached() {
    let good = StoredPictures { pictures: vec![shared("mock.png", png(64, 48))] };
    let saved = received(good).expect("a good picture is attached");
    assert_eq!(saved, vec![("mock.png".to_owned(), png(64, 48))]);

    let mut svg = png(10, 10);
    svg.data = base64::engine::general_purpose::STANDARD.encode(b"<svg><script>alert(1)</script></svg>");
    let hostile: Vec<Vec<SharedPicture>> = vec![
        vec![shared("x.svg", svg)],
        vec![shared("strip.png", png(30_000, 10))],
        vec![shared("m.png", png(8, 8)); MAX_IMAGES + 1],
        vec![shared("x.png", ImageData { data: "%%%".into(), ..png(8, 8) })],
    ];
    for pictures in hostile {
        let why = received(StoredPictures { pictures }).expect_err("a hostile row is refused");
        assert!(why.starts_with("The shared prompt opened, but its pictures were not attached:"), "{why}");
    }
}

#[test]
fn each_failure_says_what_happened_and_what_to_do() {
    let off = not_carried(2, Some(404), "this Flint does not store shared links");
    assert!(off.contains("not its 2 pictures") && off.contains("share.enabled"), "{off}");
    let quota = not_carried(1, Some(429), "your stored links would take more than 10 bytes.");
    assert!(quota.contains("not its 1 picture:") && quota.contains("10 bytes)"), "{quota}");
    let gone = fetch_problem(Some(410), "");
    assert!(gone.contains("expired") && gone.ends_with("Ask for a new link."), "{gone}");
    let missing = fetch_problem(Some(404), "");
    assert!(missing.contains("no longer stored"), "{missing}");
    assert!(fetch_problem(Some(401), "").contains("sign in, then open the link again"));
    let offline = fetch_problem(None, "cannot reach /api/share/x/pictures: offline");
    assert!(offline.contains("cannot reach"), "{offline}");
    assert_eq!(carried(0, 0), None);
    assert_eq!(carried(3, 3).as_deref(), Some("Carries the prompt and its 3 pictures"));
    let older = carried(2, 0).expect("a sentence");
    assert!(older.starts_with("Carries the prompt only") && older.contains("separately"), "{older}");
}
