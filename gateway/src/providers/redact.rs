//! Keeps a provider's API key out of everything an upstream says that reaches a browser: error
//! messages, and the generated text itself (a buggy proxy or a hostile upstream can echo the key).
//!
//! Case and separators do not hide a key: text and key are compared by their ASCII letters and
//! digits, lower-cased, with ASCII spaces and punctuation between them ignored, so `SK-…`,
//! `s k - 1 2 3 …` and `sk_1_2_3…` are all the key. Any [`MIN_RUN`] or more of the key's letters
//! and digits in a row count as the key, wherever in it they come from; fewer are let through,
//! because a few characters of a random key reveal nothing, while common words would otherwise be
//! redacted. A suffix automaton of the key finds, at each byte of a text, the longest stretch
//! ending there that occurs in the key, in constant time per byte, whatever the key's length.
//!
//! Generated text arrives in pieces, and a key cut between two pieces must not go out half in
//! each: a [`Scrubber`] holds back the end of a piece while it is [`HOLD_RUN`] or more characters
//! of the key, until the next piece shows whether the key goes on (never more than 3 characters
//! of a key leave before it is recognised). Providers' own masked forms (`sk-ab****wxyz`) are
//! recognised in error messages, where providers print them.

use std::fmt;
use std::sync::Arc;

/// What a redacted stretch becomes.
pub(crate) const REDACTED: &str = "[redacted]";

/// Fewest letters and digits of a key in a row that count as the key. Twelve random base-62
/// characters are ~71 bits: innocent text never matches them by chance; twelve is also more than
/// the public prefix of common key formats (`sk-ant-api03-` has ten), so text that merely names
/// a format is left alone; and a stretch of eleven leaves the rest of a 40+ character key secret.
const MIN_RUN: usize = 12;
/// A piece of streamed text that ends in this many characters of the key is held back.
const HOLD_RUN: usize = 4;
/// Keys shorter than this are placeholders (`x`), not secrets: redacting them would mangle text.
const MIN_KEY: usize = 4;

/// Byte classes: a symbol of the key's alphabet, a separator to skip, or a byte not in the key.
const SKIP: u8 = u8::MAX;
const ABSENT: u8 = u8::MAX - 1;
/// No transition.
const NONE: u32 = u32::MAX;

/// Finds a key in text. Built once per provider.
pub(crate) struct Redactor {
    matcher: Option<Matcher>,
}

// The automaton spells the key: never print it.
impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Redactor(..)")
    }
}

struct Matcher {
    /// Byte → symbol, [`SKIP`] or [`ABSENT`].
    class: [u8; 256],
    symbols: usize,
    /// The suffix automaton: `next[state * symbols + symbol]`, suffix links, longest lengths.
    next: Vec<u32>,
    link: Vec<u32>,
    len: Vec<u32>,
    min_run: usize,
    hold_run: usize,
    /// The key's letters and digits, lower-cased, for recognising masked forms; `None` for a key
    /// too short to compare loosely.
    skeleton: Option<Vec<u8>>,
}

/// Where matching stands: the automaton's state and how many key characters end the text so far.
#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    state: u32,
    len: usize,
}

impl Redactor {
    /// A redactor for `key`; with no key (or a placeholder) it passes text through.
    pub(crate) fn new(key: Option<&str>) -> Self {
        let key = key.map(str::trim).filter(|k| k.len() >= MIN_KEY);
        Self { matcher: key.and_then(Matcher::new) }
    }

    /// A scrubber for one stream of generated text.
    pub(crate) fn stream(self: &Arc<Self>) -> Scrubber {
        Scrubber { redactor: self.clone(), progress: Progress::default() }
    }

    /// `text` without the key in any form: for messages, which arrive whole.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let Some(m) = &self.matcher else { return text.to_owned() };
        let mut progress = Progress::default();
        let mut out = m.push(&mut progress, text.to_owned()).unwrap_or_default();
        out.push_str(&progress.pending);
        match &m.skeleton {
            Some(key) => redact_masked(&out, key),
            None => out,
        }
    }
}

impl Matcher {
    /// `None` for a key of more distinct bytes than the byte classes can number (not a real key).
    fn new(key: &str) -> Option<Self> {
        let skeleton: Vec<u8> =
            key.bytes().filter(u8::is_ascii_alphanumeric).map(|b| b.to_ascii_lowercase()).collect();
        // Too few letters and digits to compare loosely: only the exact key, byte for byte.
        let loose = skeleton.len() >= MIN_RUN;
        let spelled: Vec<u8> = if loose { skeleton.clone() } else { key.bytes().collect() };
        let mut class = [ABSENT; 256];
        if loose {
            for b in 0..=u8::MAX {
                if b.is_ascii_punctuation() || b.is_ascii_whitespace() || b.is_ascii_control() {
                    class[usize::from(b)] = SKIP;
                }
            }
        }
        let mut symbols = 0u8;
        for &b in &spelled {
            if class[usize::from(b)] == ABSENT {
                if symbols == ABSENT {
                    return None;
                }
                class[usize::from(b)] = symbols;
                symbols += 1;
            }
        }
        if loose {
            for b in b'A'..=b'Z' {
                class[usize::from(b)] = class[usize::from(b.to_ascii_lowercase())];
            }
        }
        let symbols = usize::from(symbols);
        let sequence: Vec<usize> = spelled.iter().map(|&b| usize::from(class[usize::from(b)])).collect();
        let (next, link, len) = suffix_automaton(&sequence, symbols);
        let min_run = if loose { MIN_RUN } else { spelled.len() };
        Some(Self {
            class,
            symbols,
            next,
            link,
            len,
            min_run,
            hold_run: HOLD_RUN.min(min_run),
            skeleton: loose.then_some(skeleton),
        })
    }

    fn step(&self, at: &mut Cursor, symbol: u8) {
        if symbol == ABSENT {
            *at = Cursor::default();
            return;
        }
        loop {
            let next = self.next[at.state as usize * self.symbols + usize::from(symbol)];
            if next != NONE {
                at.state = next;
                at.len += 1;
                return;
            }
            if at.state == 0 {
                at.len = 0;
                return;
            }
            at.state = self.link[at.state as usize];
            at.len = self.len[at.state as usize] as usize;
        }
    }

    /// Where the last `len` key characters up to byte `end` begin; 0 if before `bytes`.
    fn run_start(&self, bytes: &[u8], end: usize, len: usize) -> usize {
        let mut seen = 0;
        for i in (0..=end).rev() {
            if self.class[usize::from(bytes[i])] != SKIP {
                seen += 1;
                if seen == len {
                    return i;
                }
            }
        }
        0
    }

    /// Marks in `p.ranges` the stretches of `text` that are the key; returns the last key-alphabet
    /// byte's offset, if any.
    fn scan(&self, text: &str, p: &mut Progress) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut open = false;
        let mut last = None;
        for (i, &b) in bytes.iter().enumerate() {
            let symbol = self.class[usize::from(b)];
            if symbol == SKIP {
                continue;
            }
            last = Some(i);
            self.step(&mut p.at, symbol);
            if p.at.len < self.min_run {
                open = false;
            } else if open {
                // Each stretch found overlaps the previous one: the range only grows.
                if let Some(range) = p.ranges.last_mut() {
                    range.1 = i + 1;
                }
            } else {
                open = true;
                let start = self.run_start(bytes, i, p.at.len);
                match p.ranges.last_mut() {
                    Some(range) if start <= range.1 => range.1 = i + 1,
                    _ => p.ranges.push((start, i + 1)),
                }
            }
        }
        last
    }

    /// Takes the next piece of text; returns what may go out now and keeps what must wait.
    fn push(&self, p: &mut Progress, text: String) -> Option<String> {
        let buf = if p.pending.is_empty() {
            text
        } else {
            let mut buf = std::mem::take(&mut p.pending);
            buf.push_str(&text);
            buf
        };
        p.ranges.clear();
        let last = self.scan(&buf, p);
        let continues = p.redacting;
        p.redacting = p.at.len >= self.min_run;
        let hold_from = if p.redacting {
            // The key may go on in the next piece: keep the separators after it until then.
            p.ranges.last().map_or(0, |r| r.1)
        } else if p.at.len >= self.hold_run {
            let start = last.map_or(0, |end| self.run_start(buf.as_bytes(), end, p.at.len));
            start.max(p.ranges.last().map_or(0, |r| r.1))
        } else {
            buf.len()
        };
        if p.ranges.is_empty() && hold_from == buf.len() {
            return (!buf.is_empty()).then_some(buf);
        }
        let mut out = String::with_capacity(buf.len());
        let mut cursor = 0;
        for &(start, end) in &p.ranges {
            out.push_str(&buf[cursor..start]);
            // The same key going on from the previous piece already has its marker.
            if !(start == 0 && continues) {
                out.push_str(REDACTED);
            }
            cursor = end;
        }
        out.push_str(&buf[cursor..hold_from.max(cursor)]);
        p.pending.push_str(&buf[hold_from.max(cursor)..]);
        (!out.is_empty()).then_some(out)
    }
}

/// The state of one text being scrubbed piece by piece.
#[derive(Default)]
struct Progress {
    at: Cursor,
    /// Text held back: it may be the start of the key.
    pending: String,
    /// The previous piece ended inside the key.
    redacting: bool,
    /// Byte ranges of the current piece to redact (kept to reuse the allocation).
    ranges: Vec<(usize, usize)>,
}

/// Scrubs one stream of generated text, piece by piece.
pub(crate) struct Scrubber {
    redactor: Arc<Redactor>,
    progress: Progress,
}

// The held-back text may be the start of the key: never print it.
impl fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Scrubber(..)")
    }
}

impl Scrubber {
    /// The text that may go out now that `text` arrived; `None` when all of it is held or redacted.
    pub(crate) fn push(&mut self, text: String) -> Option<String> {
        match &self.redactor.matcher {
            Some(m) => m.push(&mut self.progress, text),
            None => (!text.is_empty()).then_some(text),
        }
    }

    /// The stream ended: the text held back, which never became the key.
    pub(crate) fn finish(&mut self) -> Option<String> {
        let held = std::mem::take(&mut self.progress.pending);
        self.progress = Progress::default();
        (!held.is_empty()).then_some(held)
    }
}

/// Builds the suffix automaton of `sequence`: every substring of it is a path from state 0.
fn suffix_automaton(sequence: &[usize], symbols: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let states = 2 * sequence.len() + 1;
    let mut next = Vec::with_capacity(states * symbols);
    next.resize(symbols, NONE);
    let (mut link, mut len) = (vec![NONE], vec![0u32]);
    let mut last = 0usize;
    let index = |state: u32| (state != NONE).then_some(state as usize);
    for &c in sequence {
        let cur = len.len();
        len.push(len[last] + 1);
        link.push(0);
        next.resize(next.len() + symbols, NONE);
        let mut p = Some(last);
        while let Some(q) = p.filter(|&q| next[q * symbols + c] == NONE) {
            next[q * symbols + c] = cur as u32;
            p = index(link[q]);
        }
        if let Some(p) = p {
            let q = next[p * symbols + c] as usize;
            if len[p] + 1 == len[q] {
                link[cur] = q as u32;
            } else {
                let clone = len.len();
                len.push(len[p] + 1);
                link.push(link[q]);
                next.extend_from_within(q * symbols..(q + 1) * symbols);
                let mut r = Some(p);
                while let Some(s) = r.filter(|&s| next[s * symbols + c] == q as u32) {
                    next[s * symbols + c] = clone as u32;
                    r = index(link[s]);
                }
                link[q] = clone as u32;
                link[cur] = clone as u32;
            }
        }
        last = cur;
    }
    (next, link, len)
}

/// Replaces words that are the key as providers mask it: a prefix of the key or a suffix of it
/// (compared loosely) next to a run of mask characters, as in `sk-ab****wxyz` or `sk-…wxyz`.
fn redact_masked(text: &str, key: &[u8]) -> String {
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

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
