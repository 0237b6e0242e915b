//! Tests of shareable links (a separate file keeps `share.rs` short).

use proptest::prelude::*;

use super::*;

/// A v1 link committed once; it must open to [`fixture_payload`] in every later Flint.
const V1_FIXTURE: &str = include_str!("../../tests/fixtures/share-links/v1.txt");

fn fixture_payload() -> SharedPrompt {
    SharedPrompt {
        prompt: "Un minuteur pomodoro — démarrer, pause ✓, 重置 🍅".into(),
        system: Some("Keep it to one file.".into()),
        model: Some("scripted/counter@300".into()),
        variations: 3,
        code: Some("<!doctype html>\n<button>0</button>\n".into()),
        profile: None,
        kind: None,
    }
}

/// `v1.` followed by base64url of the zlib-compressed `json`, as a hand-made link would be.
fn v1_link_of(json: &[u8]) -> String {
    format!("v1.{}", BASE64.encode(miniz_oxide::deflate::compress_to_vec_zlib(json, 6)))
}

fn payloads() -> impl Strategy<Value = SharedPrompt> {
    (
        any::<String>(),
        proptest::option::of(any::<String>()),
        proptest::option::of(any::<String>()),
        1..=MAX_VARIATIONS,
        proptest::option::of(any::<String>()),
        proptest::option::of(any::<String>()),
        proptest::option::of(proptest::sample::select(ProjectKind::ALL.to_vec())),
    )
        .prop_map(|(prompt, system, model, variations, code, profile, kind)| SharedPrompt {
            prompt,
            system,
            model,
            variations,
            code,
            profile,
            kind,
        })
}

proptest! {
    #[test]
    fn any_payload_round_trips(shared in payloads()) {
        let link = encode(&shared);
        prop_assert!(link.starts_with("v1."), "link {link:?} lacks its version");
        prop_assert!(
            link[3..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "link {link:?} has characters that are not base64url"
        );
        prop_assert_eq!(decode(&link), Ok(shared));
    }

    #[test]
    fn one_changed_character_never_opens_a_different_prompt(shared in payloads(), at in any::<prop::sample::Index>(), with in 0..64usize) {
        let link = encode(&shared);
        let at = 3 + at.index(link.len() - 3);
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut replacement = alphabet[with];
        if replacement == link.as_bytes()[at] {
            replacement = alphabet[(with + 1) % 64];
        }
        let mut altered = link.clone().into_bytes();
        altered[at] = replacement;
        let altered = String::from_utf8(altered).expect("ASCII stays UTF-8");
        // Deflate ignores a few padding bits, so some changes read the same; none may read differently.
        let read = decode(&altered);
        prop_assert!(read.is_err() || read == Ok(shared), "{altered:?} opened as {read:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn large_code_round_trips(prompt in any::<String>(), code in prop::collection::vec(any::<char>(), 50_000..100_000)) {
        let shared = SharedPrompt { code: Some(code.into_iter().collect()), ..SharedPrompt::new(prompt) };
        prop_assert_eq!(decode(&encode(&shared)), Ok(shared));
    }
}

#[test]
fn empty_and_default_payloads_round_trip() {
    let empty = SharedPrompt {
        prompt: String::new(),
        system: Some(String::new()),
        model: Some(String::new()),
        variations: 1,
        code: Some(String::new()),
        profile: Some(String::new()),
        kind: Some(ProjectKind::Html),
    };
    assert_eq!(decode(&encode(&empty)), Ok(empty));
    assert_eq!(decode(&encode(&SharedPrompt::default())), Ok(SharedPrompt::default()));
}

#[test]
fn the_committed_v1_link_opens_forever() {
    assert_eq!(V1_FIXTURE.lines().count(), 1, "the fixture must be one line");
    assert_eq!(decode(V1_FIXTURE), Ok(fixture_payload()));
}

#[test]
fn padding_and_surrounding_whitespace_are_tolerated() {
    let link = encode(&fixture_payload());
    let padded = format!("  {link}{}\n", "=".repeat((4 - (link.len() - 3) % 4) % 4));
    assert_eq!(decode(&padded), Ok(fixture_payload()));
}

#[test]
fn missing_and_out_of_range_variations_are_read_leniently() {
    let read = |json: &str| decode(&v1_link_of(json.as_bytes())).map(|s| s.variations);
    assert_eq!(read(r#"{"prompt":"x"}"#), Ok(1));
    assert_eq!(read(r#"{"prompt":"x","variations":0}"#), Ok(1));
    assert_eq!(read(r#"{"prompt":"x","variations":200}"#), Ok(MAX_VARIATIONS));
}

#[test]
fn a_profile_is_carried_and_links_without_one_open_without_one() {
    let spark = SharedPrompt { profile: Some("spark".into()), ..fixture_payload() };
    let link = encode(&spark);
    assert!(link.starts_with("v1."), "still a v1 link: older Flints open it and ignore the profile");
    assert_eq!(decode(&link), Ok(spark));
    assert_eq!(decode(V1_FIXTURE).map(|s| s.profile), Ok(None));
}

#[test]
fn a_kind_is_carried_and_one_this_flint_does_not_know_reads_as_none() {
    let react = SharedPrompt { kind: Some(ProjectKind::React), ..fixture_payload() };
    let link = encode(&react);
    assert!(link.starts_with("v1."), "still a v1 link: older Flints open it with the words' kind");
    assert_eq!(decode(&link), Ok(react));
    assert_eq!(decode(V1_FIXTURE).map(|s| s.kind), Ok(None));
    let newer = v1_link_of(br#"{"prompt":"x","kind":"vue"}"#);
    assert_eq!(decode(&newer).map(|s| (s.prompt, s.kind)), Ok(("x".into(), None)));
}

#[test]
fn fields_a_later_v1_adds_are_ignored() {
    let shared = decode(&v1_link_of(br#"{"prompt":"x","theme":"dark"}"#));
    assert_eq!(shared, Ok(SharedPrompt::new("x")));
}

#[test]
fn garbled_links_say_so() {
    let garbled = |link: &str| matches!(decode(link), Err(ShareLinkError::Garbled(_)));
    assert!(garbled("v1.!!!"), "not base64url");
    assert!(garbled("hello"), "no version prefix");
    assert!(garbled("v.abc"), "empty version");
    assert!(garbled("vx.abc"), "version is not a number");
    assert!(garbled("v99999999999999999999.abc"), "version overflows");
    assert!(garbled(&format!("v1.{}", BASE64.encode(b"plain bytes, not zlib"))), "not zlib");
    assert!(garbled(&v1_link_of(br#"{"code":"no prompt"}"#)), "JSON without a prompt");
    assert!(garbled(&v1_link_of(b"not json")), "not JSON");
    let message = decode("v1.!!!").expect_err("garbled").to_string();
    assert!(message.contains("Copy the whole link again"), "no advice in: {message}");
}

#[test]
fn every_cut_of_a_link_is_reported_as_cut_short() {
    let link = encode(&fixture_payload());
    for end in 3..link.len() {
        assert_eq!(decode(&link[..end]), Err(ShareLinkError::Truncated), "cut at {end} of {}", link.len());
    }
}

#[test]
fn links_from_a_newer_flint_name_their_version() {
    assert_eq!(decode("v9.abc"), Err(ShareLinkError::UnknownVersion { version: 9 }));
    let body = encode(&fixture_payload())[3..].to_owned();
    assert_eq!(decode(&format!("v2.{body}")), Err(ShareLinkError::UnknownVersion { version: 2 }));
    let message = decode("v9.abc").expect_err("unknown version").to_string();
    assert!(message.contains("newer version of Flint") && message.contains("v9"), "{message}");
}

#[test]
fn decompression_bombs_are_refused() {
    let json = format!(r#"{{"prompt":"{}"}}"#, " ".repeat(2 * MAX_UNPACKED_BYTES));
    let bomb = v1_link_of(json.as_bytes());
    assert!(!is_too_long(&bomb), "the bomb should be a link short enough to send ({} chars)", bomb.len());
    assert_eq!(decode(&bomb), Err(ShareLinkError::TooLarge));
}

#[test]
fn links_over_the_limit_are_too_long() {
    assert!(!is_too_long(&"a".repeat(MAX_LINK_CHARS)));
    assert!(is_too_long(&"a".repeat(MAX_LINK_CHARS + 1)));
    assert!(!is_too_long(&encode(&fixture_payload())));
}
