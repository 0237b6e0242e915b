//! Unit tests of line diffs and partial acceptance (a separate file keeps `diff.rs` readable).

use super::*;

const OLD: &str =
    "<ul>\n  <li>one</li>\n  <li>two</li>\n</ul>\n<p>keep</p>\n<p>drop me</p>\n<footer>old</footer>\n";
const NEW: &str =
    "<ol>\n  <li>one</li>\n  <li>two</li>\n</ol>\n<p>keep</p>\n<footer>new</footer>\n<script>go()</script>\n";

/// Every subset of `n` hunks, as accept masks.
fn masks(n: usize) -> impl Iterator<Item = Vec<bool>> {
    (0..1u32 << n).map(move |bits| (0..n).map(|i| bits & (1 << i) != 0).collect())
}

#[test]
fn hunks_cover_the_changed_lines() {
    let hunks = diff(OLD, NEW);
    let lines: Vec<_> = hunks.iter().map(|h| (h.old.clone(), h.new.clone())).collect();
    assert_eq!(lines, [(0..1, 0..1), (3..4, 3..4), (5..7, 5..7)]);
    assert_eq!(&OLD[hunks[0].old_bytes.clone()], "<ul>\n");
    assert_eq!(&NEW[hunks[0].new_bytes.clone()], "<ol>\n");
    assert_eq!(&OLD[hunks[2].old_bytes.clone()], "<p>drop me</p>\n<footer>old</footer>\n");
}

#[test]
fn identical_texts_have_no_hunks() {
    assert!(diff(OLD, OLD).is_empty());
    assert!(diff("", "").is_empty());
    assert_eq!(apply_hunks(OLD, OLD, &[]), OLD);
}

#[test]
fn words_changed_are_highlighted_on_both_sides() {
    let hunks = diff(OLD, NEW);
    let h = &hunks[0];
    let old: Vec<&str> = h.old_words.iter().map(|r| &OLD[r.clone()]).collect();
    let new: Vec<&str> = h.new_words.iter().map(|r| &NEW[r.clone()]).collect();
    assert_eq!((old, new), (vec!["ul"], vec!["ol"]));
    let h = &hunks[2];
    let new: Vec<&str> = h.new_words.iter().map(|r| &NEW[r.clone()]).collect();
    assert!(new.contains(&"new"), "{new:?}");
    assert!(new.iter().any(|w| w.contains("script")), "{new:?}");
}

#[test]
fn partial_accept_gives_old_new_and_every_mix() {
    let hunks = diff(OLD, NEW);
    assert_eq!(apply_hunks(OLD, NEW, &[]), OLD, "missing entries are not accepted");
    assert_eq!(apply_hunks(OLD, NEW, &[false; 3]), OLD);
    assert_eq!(apply_hunks(OLD, NEW, &[true; 3]), NEW);
    assert_eq!(
        apply_hunks(OLD, NEW, &[true, false, true]),
        "<ol>\n  <li>one</li>\n  <li>two</li>\n</ul>\n<p>keep</p>\n<footer>new</footer>\n<script>go()</script>\n"
    );
    for mask in masks(hunks.len()) {
        let merged = merge(OLD, NEW, &hunks, &mask).expect("hunks of these texts");
        // Accepting the rest of the hunks of (merged -> new) must land on new.
        assert_eq!(apply_hunks(&merged, NEW, &[true; 8]), NEW, "{mask:?}");
        // And the hunks still open are exactly the ones not accepted.
        assert_eq!(diff(&merged, NEW).len(), mask.iter().filter(|a| !**a).count(), "{mask:?}");
    }
}

#[test]
fn pure_insertions_and_deletions() {
    let hunks = diff("a\nc\n", "a\nb\nc\n");
    assert_eq!(hunks.len(), 1);
    assert!(hunks[0].old.is_empty() && hunks[0].old_words.is_empty());
    assert_eq!(hunks[0].new, 1..2);
    assert_eq!(apply_hunks("a\nb\nc\n", "a\nc\n", &[true]), "a\nc\n");
    assert_eq!(apply_hunks("", "x\ny\n", &[true]), "x\ny\n");
    assert_eq!(apply_hunks("x\ny\n", "", &[true]), "");
    assert_eq!(apply_hunks("x\ny\n", "", &[false]), "x\ny\n");
}

#[test]
fn trailing_newline_changes_are_hunks() {
    for (old, new) in [("a\nb", "a\nb\n"), ("a\nb\n", "a\nb"), ("a", "a\nb"), ("a\n", "a\r\n"), ("", "\n")] {
        let hunks = diff(old, new);
        assert_eq!(hunks.len(), 1, "{old:?} -> {new:?}");
        assert_eq!(apply_hunks(old, new, &[true]), new, "{old:?} -> {new:?}");
        assert_eq!(apply_hunks(old, new, &[false]), old, "{old:?} -> {new:?}");
    }
    let hunks = diff("a\nb", "a\nb\nc");
    assert_eq!((hunks[0].old.clone(), hunks[0].new.clone()), (1..2, 1..3));
}

#[test]
fn non_ascii_lines_and_words() {
    let old = "日本語\nGrüße 🌍 Welt\nende\n";
    let new = "日本語\nGrüße 🌎 Welt\nende\n";
    let hunks = diff(old, new);
    assert_eq!(hunks.len(), 1);
    let h = &hunks[0];
    assert_eq!(&old[h.old_words[0].clone()], "🌍");
    assert_eq!(&new[h.new_words[0].clone()], "🌎");
    assert_eq!(apply_hunks(old, new, &[true]), new);
    assert_eq!(apply_hunks(old, new, &[false]), old);
}

#[test]
fn big_rewrites_get_no_word_highlights() {
    let old = "x\n".repeat(10_000);
    let new = "y\n".repeat(10_000);
    let hunks = diff(&old, &new);
    assert_eq!(hunks.len(), 1);
    assert!(hunks[0].old_words.is_empty() && hunks[0].new_words.is_empty());
    assert_eq!(apply_hunks(&old, &new, &[true]), new);
}

#[test]
fn words_split_into_runs() {
    let parts: Vec<&str> = words("a_b1  = ü(x);\n").collect();
    assert_eq!(parts, ["a_b1", "  ", "=", " ", "ü", "(", "x", ")", ";", "\n"]);
    assert_eq!(words("").count(), 0);
}
