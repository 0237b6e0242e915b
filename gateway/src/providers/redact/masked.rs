//! Providers' own masked forms of a key (`sk-ab****wxyz`, `sk-…wxyz`), as they print them in
//! error messages.

use super::REDACTED;

/// Replaces words that are the key as providers mask it: a prefix of the key or a suffix of it
/// (compared loosely) next to a run of mask characters, as in `sk-ab****wxyz` or `sk-…wxyz`.
pub(super) fn redact_masked(text: &str, key: &[u8]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for word in text.split(|c: char| c.is_whitespace()) {
        let offset = word.as_ptr() as usize - text.as_ptr() as usize;
        let core = word.trim_matches(|c: char| "\"'`()[]{}<>,;:".contains(c));
        // A full stop ends the sentence, unless it ends an ellipsis (`sk-...`).
        let core = core.strip_suffix('.').filter(|rest| !rest.ends_with('.')).unwrap_or(core);
        if is_masked_key(core, key) {
            let start = offset + (core.as_ptr() as usize - word.as_ptr() as usize);
            out.push_str(&text[cursor..start]);
            out.push_str(REDACTED);
            cursor = start + core.len();
        }
    }
    out.push_str(&text[cursor..]);
    out
}

fn is_masked_key(word: &str, key: &[u8]) -> bool {
    let is_mask = |c: char| matches!(c, '*' | '•' | '●' | '∗' | '…' | '.');
    // A mask is three or more mask characters in a row, or an ellipsis: `**bold**` is not one.
    let mut runs = Vec::new();
    let mut chars = word.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if !is_mask(c) {
            continue;
        }
        let (mut end, mut weight) = (start + c.len_utf8(), if c == '…' { 3 } else { 1 });
        while let Some(&(at, c)) = chars.peek().filter(|(_, c)| is_mask(*c)) {
            end = at + c.len_utf8();
            weight += if c == '…' { 3 } else { 1 };
            chars.next();
        }
        if weight >= 3 {
            runs.push((start, end));
        }
    }
    let (Some(first), Some(last)) = (runs.first(), runs.last()) else { return false };
    let loose = |s: &str| -> Vec<u8> {
        s.bytes().filter(u8::is_ascii_alphanumeric).map(|b| b.to_ascii_lowercase()).collect()
    };
    let (head, tail) = (loose(&word[..first.0]), loose(&word[last.1..]));
    (head.len() >= 2 && key.starts_with(&head)) || (tail.len() >= 3 && key.ends_with(&tail))
}
