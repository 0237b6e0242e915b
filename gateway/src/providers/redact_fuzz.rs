//! The scrubber against random text, random disguises of the key and random cuts: a megabyte of
//! text per key, cut into pieces of one byte, of up to five, and of up to 4096, must come out the
//! same as the text scrubbed whole, give or take the few characters a key may show before it is
//! recognised, and never with a run of the key long enough to count.
//!
//! The text comes from a small deterministic generator, so a failure replays from its seed.

use std::collections::HashSet;

use super::*;

/// The operator's key, in OpenAI's project format.
const OPERATOR_KEY: &str = "sk-proj-Zx81kQ0pLmN4vB7cR2tY9gE5aH6jD3sF1wU8iO2eTq";
/// A person's own key, in Groq's format.
const PERSON_KEY: &str = "gsk_4fT9qWm2Lx7Rb0Nc5Vy8Kd3Hs6Jp1Ge9Az2Uo7Xi4PwBn";
/// Text scrubbed per key.
const TEXT_BYTES: usize = 1 << 20;
/// Disguised keys hidden in it.
const KEYS_IN_TEXT: usize = 300;

/// SplitMix64: a few lines, no dependency, and good enough to place cuts and pick letters.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// The key with each letter's case flipped at random, its separators swapped, dropped or
/// multiplied, and new separators between its characters.
fn disguise(key: &str, rng: &mut Rng) -> String {
    let mut out = String::new();
    for c in key.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(if rng.below(2) == 0 { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() });
        } else {
            out.push_str(rng.pick(&["-", "_", "", " ", ".", "--", "\n"]));
        }
        if rng.below(6) == 0 {
            out.push_str(rng.pick(&[" ", "-", "_", "\n", ". ", "  ", "/", "\t"]));
        }
    }
    out
}

/// About `bytes` of text like an answer's (words, markup, digits, letters of any key, other
/// scripts), with [`KEYS_IN_TEXT`] disguised copies of `key`; and how many copies went in.
fn text_with(key: &str, bytes: usize, rng: &mut Rng) -> (String, usize) {
    let words = [
        "the",
        "<div class=\"card\">",
        "</p>",
        "const",
        "=",
        "x",
        "{",
        "}",
        "0.5rem;",
        "naïve",
        "漢字",
        "sk",
        "proj",
        "key:",
        "Bearer",
        "é",
        "—",
        "4",
        "a1",
        "Zx",
        "kQ0p",
        "gsk",
        "9gE5",
        "Tq",
    ];
    let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let every = bytes / KEYS_IN_TEXT;
    let (mut text, mut keys) = (String::with_capacity(bytes + 4096), 0);
    while text.len() < bytes {
        if text.len() / every > keys {
            keys += 1;
            // A character that is no key's stops the text before from running into the key.
            text.push_str(rng.pick(&[" § ", "\"", " é ", "\n§"]));
            text.push_str(&disguise(key, rng));
            text.push_str(rng.pick(&[" § ", "\"", " é ", "§\n"]));
            continue;
        }
        if rng.below(3) == 0 {
            // Random letters and digits: short runs of the key's characters, by chance.
            for _ in 0..=rng.below(8) {
                text.push(char::from(alphabet[rng.below(alphabet.len())]));
            }
        } else {
            text.push_str(rng.pick(&words));
        }
        text.push_str(rng.pick(&[" ", " ", "\n", ", ", "", "-", "  "]));
    }
    (text, keys)
}

/// `text` cut at random into pieces of 1 to `max` bytes (moved to character boundaries).
fn cut(text: &str, max: usize, rng: &mut Rng) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + 1 + rng.below(max)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(text[at..end].to_owned());
        at = end;
    }
    pieces
}

fn scrub_pieces(redactor: &Arc<Redactor>, pieces: Vec<String>) -> String {
    let mut scrubber = redactor.stream();
    let mut out = String::new();
    for piece in pieces {
        out.extend(scrubber.push(piece));
    }
    out.extend(scrubber.finish());
    out
}

/// Whether `text` holds [`MIN_RUN`] of the key's letters and digits in a row (case and
/// separators folded): checked apart from the automaton, with every such stretch of the key in a
/// set.
fn shows_key(text: &str, key: &str) -> Option<String> {
    let skeleton: Vec<u8> =
        key.bytes().filter(u8::is_ascii_alphanumeric).map(|b| b.to_ascii_lowercase()).collect();
    let pieces: HashSet<&[u8]> = skeleton.windows(MIN_RUN).collect();
    let mut run: Vec<u8> = Vec::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() {
            run.push(b.to_ascii_lowercase());
            if run.len() >= MIN_RUN && pieces.contains(&run[run.len() - MIN_RUN..]) {
                return Some(String::from_utf8_lossy(&run).into_owned());
            }
        } else if !(b.is_ascii_punctuation() || b.is_ascii_whitespace() || b.is_ascii_control()) {
            run.clear();
        }
    }
    None
}

/// Checks `streamed` against `whole` (the text scrubbed in one piece): the same markers, and
/// between them the same text, except that before a marker at most three of the key's
/// characters (with separators) may have gone out while the key could not yet be told apart.
fn check_against_whole(streamed: &str, whole: &str, what: &str) {
    let streamed: Vec<&str> = streamed.split(REDACTED).collect();
    let whole: Vec<&str> = whole.split(REDACTED).collect();
    assert_eq!(streamed.len(), whole.len(), "{what}: a different number of markers");
    let last = whole.len() - 1;
    for (n, (s, w)) in streamed.iter().zip(&whole).enumerate() {
        let leaked = s.strip_prefix(w).unwrap_or_else(|| panic!("{what}: part {n} differs"));
        if n == last {
            assert!(leaked.is_empty(), "{what}: the end differs");
            continue;
        }
        let characters = leaked.bytes().filter(u8::is_ascii_alphanumeric).count();
        let only_key = leaked
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b.is_ascii_punctuation() || b.is_ascii_whitespace());
        assert!(characters <= 3 && only_key, "{what}: {leaked:?} went out before marker {n}");
    }
}

#[test]
fn any_cut_of_a_megabyte_with_disguised_keys_is_scrubbed_alike() {
    let mut rng = Rng(0x5EED_F11A_7000_0025);
    for key in [OPERATOR_KEY, PERSON_KEY] {
        let redactor = Arc::new(Redactor::new(Some(key)));
        let (text, keys) = text_with(key, TEXT_BYTES, &mut rng);
        assert!(shows_key(&text, key).is_some(), "the text must hold the key to test anything");
        let whole = scrub_pieces(&redactor, vec![text.clone()]);
        assert_eq!(whole.matches(REDACTED).count(), keys, "every disguised key is found, once");
        assert_eq!(shows_key(&whole, key), None, "scrubbed whole");
        for max in [1, 5, 4096] {
            let pieces = cut(&text, max, &mut rng);
            let streamed = scrub_pieces(&redactor, pieces);
            let what = format!("{} key, pieces of up to {max} bytes", &key[..3]);
            assert_eq!(shows_key(&streamed, key), None, "{what}");
            check_against_whole(&streamed, &whole, &what);
        }
    }
}

#[test]
fn text_without_a_key_comes_out_unchanged_however_it_is_cut() {
    let mut rng = Rng(25);
    let (text, _) = text_with("not-a-key", 64 * 1024, &mut rng);
    let redactor = Arc::new(Redactor::new(Some(OPERATOR_KEY)));
    for max in [1, 5, 4096] {
        let pieces = cut(&text, max, &mut rng);
        assert_eq!(scrub_pieces(&redactor, pieces), text, "pieces of up to {max} bytes");
    }
}

/// The cost of scrubbing, per piece, for pieces the size of a token and of one byte:
/// `cargo test --release -p flint-gateway --lib redact::fuzz::cost -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a test: run it in release"]
fn cost_per_piece() {
    let mut rng = Rng(1);
    let (text, _) = text_with(OPERATOR_KEY, TEXT_BYTES, &mut rng);
    let redactor = Arc::new(Redactor::new(Some(OPERATOR_KEY)));
    for max in [1, 8, 4096] {
        let pieces = cut(&text, max, &mut rng);
        let count = pieces.len();
        let started = std::time::Instant::now();
        let out = scrub_pieces(&redactor, pieces);
        let elapsed = started.elapsed();
        std::hint::black_box(out);
        println!(
            "pieces of up to {max} bytes: {count} pieces, {:.1} ns per piece, {:.2} ns per byte",
            elapsed.as_nanos() as f64 / count as f64,
            elapsed.as_nanos() as f64 / text.len() as f64
        );
    }
}
