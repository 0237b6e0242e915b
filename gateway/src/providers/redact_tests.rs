//! The redactor against the forms a key takes in upstream text.

use super::*;

/// Random-looking, like a real key; `a`, `d`, `f`, `h`, `i`, `u` and `w` are not in it, so the
/// text around it in these tests cannot run into it.
const KEY: &str = "sk-proj-Zx81kQ0pLmN4vB7cR2tY9gE5";

fn redactor() -> Arc<Redactor> {
    Arc::new(Redactor::new(Some(KEY)))
}

/// Pushes `pieces` through one scrubber and returns what went out, piece by piece.
fn stream(pieces: &[&str]) -> Vec<String> {
    let mut scrubber = redactor().stream();
    let mut out: Vec<String> = pieces.iter().filter_map(|p| scrubber.push((*p).to_owned())).collect();
    out.extend(scrubber.finish());
    out
}

#[test]
fn case_and_separators_do_not_hide_the_key() {
    let spaced: String = KEY.chars().map(|c| format!("{c} ")).collect();
    let forms = [
        KEY.to_owned(),
        KEY.to_uppercase(),
        KEY.to_lowercase(),
        spaced.trim_end().to_owned(),
        KEY.replace('-', "_"),
        KEY.chars().map(|c| format!("{c}.")).collect::<String>().trim_end_matches('.').to_owned(),
        format!("{}\n{}", &KEY[..10], &KEY[10..]),
    ];
    for form in forms {
        let scrubbed = redactor().scrub(&format!("aha: {form} ahi"));
        assert_eq!(scrubbed, "aha: [redacted] ahi", "{form:?}");
    }
}

#[test]
fn pieces_of_twelve_or_more_are_redacted_and_shorter_ones_are_not() {
    let twelve = &KEY[14..26];
    assert_eq!(redactor().scrub(&format!("aha {twelve} ahi")), "aha [redacted] ahi");
    let eleven = &KEY[14..25];
    assert_eq!(redactor().scrub(&format!("aha {eleven} ahi")), format!("aha {eleven} ahi"));
    let innocent = "<!DOCTYPE html><p class=\"sk-proj\">Keys look like sk-proj-xxxx; 0123456789</p>";
    assert_eq!(redactor().scrub(innocent), innocent, "naming a key's format is not the key");
}

#[test]
fn masked_forms_are_redacted() {
    for masked in ["sk-pr****gE5", "SK-PROJ-…", "sk-...9gE5", "****9ge5", "sk-pr•••••gE5"] {
        let scrubbed = redactor().scrub(&format!("Incorrect API key provided: {masked}. Check it."));
        assert_eq!(scrubbed, "Incorrect API key provided: [redacted]. Check it.", "{masked}");
    }
    for innocent in ["**bold**", "***", "etc...", "wait…", "a****b", "(sk)"] {
        let text = format!("a {innocent} b");
        assert_eq!(redactor().scrub(&text), text, "{innocent} is not a key");
    }
}

#[test]
fn short_keys_are_matched_only_exactly_and_placeholders_not_at_all() {
    let empty = Redactor::new(Some("EMPTY"));
    assert_eq!(empty.scrub("key EMPTY, prompt empty, E M P T Y"), "key [redacted], prompt empty, E M P T Y");
    assert_eq!(Redactor::new(Some("x")).scrub("x marks"), "x marks");
    assert_eq!(Redactor::new(None).scrub(KEY), KEY);
}

#[test]
fn a_key_cut_anywhere_across_pieces_shows_at_most_three_characters() {
    let text = format!("aha: {KEY} ahi");
    let cuts: Vec<usize> = (1..text.len()).collect();
    for &a in &cuts {
        for &b in cuts.iter().filter(|&&b| b > a) {
            let out = stream(&[&text[..a], &text[a..b], &text[b..]]).concat();
            let (before, after) = out.split_once(REDACTED).unwrap_or_else(|| panic!("{a},{b}: {out}"));
            assert_eq!(after, " ahi", "cut at {a},{b}: {out}");
            let shown = before.strip_prefix("aha: ").unwrap_or_else(|| panic!("{a},{b}: {out}"));
            assert!(shown.chars().filter(char::is_ascii_alphanumeric).count() <= 3, "cut at {a},{b}: {out}");
        }
    }
}

#[test]
fn a_key_sent_one_character_at_a_time_is_redacted_whole() {
    for form in [KEY.to_owned(), KEY.to_uppercase(), KEY.replace('-', " - ")] {
        let text = format!("aha: {form} ahi");
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let out = stream(&pieces).concat();
        let (before, after) = out.split_once(REDACTED).unwrap_or_else(|| panic!("{form}: {out}"));
        assert_eq!(after, " ahi", "{form}: {out}");
        let shown = before.strip_prefix("aha: ").unwrap_or_else(|| panic!("{form}: {out}"));
        assert!(shown.chars().filter(char::is_ascii_alphanumeric).count() <= 3, "{form}: {out}");
    }
}

#[test]
fn a_key_in_two_character_pieces_shows_at_most_three_characters() {
    // The old scrubber read held text twice, so its matching fell out of step: with pieces of two
    // characters, the key's first six characters went out before it was recognised.
    let text = format!("aha: {KEY} ahi");
    for offset in 0..2 {
        let mut pieces = vec![&text[..offset]];
        let mut at = offset;
        while at < text.len() {
            let next = (at + 2).min(text.len());
            pieces.push(&text[at..next]);
            at = next;
        }
        let out = stream(&pieces).concat();
        let (before, after) = out.split_once(REDACTED).unwrap_or_else(|| panic!("{offset}: {out}"));
        assert_eq!(after, " ahi", "{offset}: {out}");
        let shown = before.strip_prefix("aha: ").unwrap_or_else(|| panic!("{offset}: {out}"));
        assert!(shown.chars().filter(char::is_ascii_alphanumeric).count() <= 3, "{offset}: {out}");
    }
}

#[test]
fn a_piece_ending_like_the_key_waits_for_the_next_and_goes_out_if_the_key_does_not_follow() {
    assert_eq!(stream(&["see skproj", " and more"]), ["see ", "skproj and more"]);
    assert_eq!(stream(&["see skproj"]), ["see ", "skproj"], "held text goes out at the end");
    assert_eq!(stream(&["x sk", "p"]), ["x sk", "p"], "three characters are not worth the wait");
}

#[test]
fn a_key_spread_over_many_pieces_gets_one_marker() {
    let pieces: Vec<&str> =
        KEY.as_bytes().chunks(3).map(|c| std::str::from_utf8(c).expect("ascii")).collect();
    let mut all = vec!["aha "];
    all.extend(&pieces);
    all.push(" ahi");
    let out = stream(&all).concat();
    assert_eq!(out.matches(REDACTED).count(), 1, "{out}");
    assert!(out.ends_with("[redacted] ahi"), "{out}");
}

#[test]
fn text_without_the_key_is_passed_on_without_a_copy() {
    let mut scrubber = redactor().stream();
    let text = String::from("<p>Hello, world</p>");
    let at = text.as_ptr();
    let out = scrubber.push(text).expect("text goes out");
    assert_eq!(out.as_ptr(), at, "the common case must not allocate");
}

#[test]
fn debug_output_never_spells_the_key() {
    let mut scrubber = redactor().stream();
    assert_eq!(scrubber.push("aha sk-proj".into()).as_deref(), Some("aha "), "the key's start is held");
    let shown = format!("{scrubber:?} {:?}", redactor());
    assert!(!shown.contains("proj"), "{shown}");
}

#[test]
fn the_automaton_knows_every_substring_of_the_key_and_nothing_else() {
    // Small alphabet, so that texts share long stretches with the key.
    let mut seed = 7u64;
    let mut letter = || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        [b'a', b'b', b'c'][(seed >> 33) as usize % 3]
    };
    let key: Vec<u8> = (0..40).map(|_| letter()).collect();
    let text: Vec<u8> = (0..400).map(|_| letter()).collect();
    let m = Matcher::new(std::str::from_utf8(&key).expect("ascii"), MIN_RUN, HOLD_RUN).expect("a matcher");
    let mut at = Cursor::default();
    for end in 0..text.len() {
        m.step(&mut at, m.class[usize::from(text[end])]);
        let longest =
            (1..=end + 1).rev().find(|&n| key.windows(n).any(|w| w == &text[end + 1 - n..=end])).unwrap_or(0);
        assert_eq!(at.len, longest, "at byte {end}");
    }
}

#[test]
fn an_exact_key_longer_than_the_scrubbers_memory_or_not_ascii_is_redacted_in_any_pieces() {
    // Fewer than twelve letters and digits: matched byte for byte, separators and all.
    for key in ["a.b.c.d.e.f.g.h.i.j", "clé-secrète"] {
        let redactor = Arc::new(Redactor::new(Some(key)));
        let text = format!("x {key} y");
        assert_eq!(redactor.scrub(&text), "x [redacted] y", "{key}");
        let mut scrubber = redactor.stream();
        let mut out: String = text.chars().filter_map(|c| scrubber.push(c.to_string())).collect();
        out.extend(scrubber.finish());
        assert!(out.starts_with("x ") && out.ends_with("[redacted] y"), "{key}: {out}");
        assert!(out.len() <= "x [redacted] y".len() + 3, "at most three bytes go out first: {out}");
    }
}
