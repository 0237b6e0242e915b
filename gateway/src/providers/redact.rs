//! Keeps a provider's API key out of everything an upstream says that reaches a browser: error
//! messages, and the generated text itself (a buggy proxy or a hostile upstream can echo the key).
//!
//! Case and separators do not hide a key: text and key are compared by their ASCII letters and
//! digits, lower-cased, with ASCII spaces and punctuation between them ignored, so `SK-…`,
//! `s k - 1 2 3 …` and `sk_1_2_3…` are all the key. Any [`MIN_RUN`] or more of the key's letters
//! and digits in a row count as the key, wherever in it they come from; fewer are let through,
//! because a few characters of a random key reveal nothing, while common words would otherwise be
//! redacted. A suffix automaton of the key (`redact/automaton.rs`) finds, at each byte of a text,
//! the longest stretch ending there that occurs in the key, in amortised constant time per byte.
//!
//! Generated text arrives in pieces, cut wherever the upstream likes (one character each, if it
//! wants). A [`Scrubber`] carries the automaton's state from piece to piece, so each byte is read
//! once and the verdict never depends on where the cuts fall; it holds back the end of a piece
//! while that end is [`HOLD_RUN`] or more characters of the key, until later text shows whether
//! the key goes on (never more than 3 characters of a key leave before it is recognised).
//! Providers' own masked forms (`sk-ab****wxyz`) are recognised in error messages, where
//! providers print them.

use std::fmt;
use std::sync::Arc;

use self::automaton::{ABSENT, Cursor, Matcher, SKIP};

mod automaton;
mod masked;

/// What a redacted stretch becomes.
pub(crate) const REDACTED: &str = "[redacted]";

/// Fewest letters and digits of a key in a row that count as the key. Twelve random base-62
/// characters are ~71 bits: innocent text never matches them by chance; twelve is also more than
/// the public prefix of common key formats (`sk-ant-api03-` has ten), so text that merely names
/// a format is left alone; and a stretch of eleven leaves the rest of a 40+ character key secret.
const MIN_RUN: usize = 12;
/// A piece of streamed text that ends in this many characters of the key is held back.
const HOLD_RUN: usize = 4;
/// Key characters whose positions a scrubber remembers: at least [`MIN_RUN`], a power of two.
const RING: usize = 16;
/// Keys shorter than this are placeholders (`x`), not secrets: redacting them would mangle text.
const MIN_KEY: usize = 4;

/// Finds a key in text. Built once per provider (and per person's own key).
pub(crate) struct Redactor {
    matcher: Option<Matcher>,
}

// The automaton spells the key: never print it.
impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Redactor(..)")
    }
}

impl Redactor {
    /// A redactor for `key`; with no key (or a placeholder) it passes text through.
    pub(crate) fn new(key: Option<&str>) -> Self {
        let key = key.map(str::trim).filter(|k| k.len() >= MIN_KEY);
        Self { matcher: key.and_then(|k| Matcher::new(k, MIN_RUN, HOLD_RUN)) }
    }

    /// A scrubber for one stream of generated text.
    pub(crate) fn stream(self: &Arc<Self>) -> Scrubber {
        Scrubber { redactor: self.clone(), progress: Progress::default() }
    }

    /// `text` without the key in any form: for messages, which arrive whole.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let Some(m) = &self.matcher else { return text.to_owned() };
        let mut progress = Progress::default();
        let mut out = progress.push(m, text.to_owned()).unwrap_or_default();
        out.push_str(&progress.pending);
        match &m.skeleton {
            Some(key) => masked::redact_masked(&out, key),
            None => out,
        }
    }
}

/// A stretch of text to redact, in bytes from the start of the stream.
#[derive(Clone, Copy)]
struct Stretch {
    start: u64,
    end: u64,
    /// Whether it gets a marker: not when it goes on from a stretch whose marker is already out.
    marked: bool,
}

/// The state of one text being scrubbed piece by piece. Positions count bytes from the start of
/// the whole text, so they mean the same whichever piece they were seen in.
#[derive(Default)]
struct Progress {
    at: Cursor,
    /// Positions of the most recent key characters (the last at `seen - 1`, modulo [`RING`]):
    /// where the current run of them starts.
    recent: [u64; RING],
    seen: usize,
    /// Text held back, from position `held_at`: the start of what may be the key, or the
    /// separators after a redacted stretch that the key going on would swallow.
    pending: String,
    held_at: u64,
    /// Where the last redacted stretch ends.
    redacted_to: Option<u64>,
    /// The stretches of the current piece (kept to reuse the allocation).
    stretches: Vec<Stretch>,
}

impl Progress {
    /// Takes the next piece of text; returns what may go out now and keeps what must wait.
    fn push(&mut self, m: &Matcher, text: String) -> Option<String> {
        let base = self.held_at + self.pending.len() as u64;
        self.stretches.clear();
        for (i, &b) in text.as_bytes().iter().enumerate() {
            let symbol = m.class[usize::from(b)];
            if symbol == SKIP {
                continue;
            }
            if symbol == ABSENT {
                // `recent` keeps older positions: no run reaches back past this byte.
                self.at = Cursor::default();
                continue;
            }
            self.key_character(m, symbol, base + i as u64);
        }
        let end = base + text.len() as u64;
        let hold_from = if self.at.len >= m.min_run {
            // Inside the key, which may go on in the next piece: keep the separators after it.
            self.redacted_to.unwrap_or(end)
        } else if self.at.len >= m.hold_run {
            let start = self.run_start(self.at.len);
            start.max(self.redacted_to.unwrap_or(0))
        } else {
            end
        }
        .max(self.held_at);
        if self.stretches.is_empty() && hold_from == self.held_at {
            self.pending.push_str(&text);
            return None;
        }
        if self.stretches.is_empty() && hold_from == end && self.pending.is_empty() {
            // The common case: nothing to change, nothing to keep, no copy.
            self.held_at = end;
            return (!text.is_empty()).then_some(text);
        }
        let mut buf = std::mem::take(&mut self.pending);
        buf.push_str(&text);
        self.cut(buf, hold_from)
    }

    /// One key character at `pos`: moves the automaton and marks what turns out to be the key.
    #[inline]
    fn key_character(&mut self, m: &Matcher, symbol: u8, pos: u64) {
        let was_key = self.at.len >= m.min_run;
        m.step(&mut self.at, symbol);
        if self.at.len == 0 {
            // Not in the key: no run starts here.
            return;
        }
        self.recent[self.seen % RING] = pos;
        self.seen += 1;
        if self.at.len < m.min_run {
            return;
        }
        // A run that is the key. Going on from one already marked (grown by a character, or a
        // shorter match overlapping it), it joins that; else it starts `min_run` characters back.
        let start = if was_key { self.redacted_to.unwrap_or(pos) } else { self.run_start(m.min_run) };
        // What already went out cannot be taken back: at most the run's first few characters.
        let start = start.max(self.held_at).max(self.redacted_to.unwrap_or(0));
        match self.stretches.last_mut() {
            Some(last) if last.end == start => last.end = pos + 1,
            _ => {
                self.stretches.push(Stretch { start, end: pos + 1, marked: self.redacted_to != Some(start) })
            }
        }
        self.redacted_to = Some(pos + 1);
    }

    /// Where the last `len` key characters start (`len` at least 1).
    fn run_start(&self, len: usize) -> u64 {
        if len <= RING {
            self.recent[(self.seen - len) % RING]
        } else {
            // Only a key matched exactly (no separators skipped) has longer runs, and those are
            // contiguous.
            self.recent[(self.seen - 1) % RING] + 1 - len as u64
        }
    }

    /// Sends `buf` (the held text and the new piece) up to `hold_from` with its stretches
    /// redacted, and keeps the rest.
    fn cut(&mut self, mut buf: String, hold_from: u64) -> Option<String> {
        let index = |pos: u64| usize::try_from(pos - self.held_at).unwrap_or(usize::MAX).min(buf.len());
        let mut out = String::with_capacity(buf.len());
        let mut cursor = 0;
        for stretch in &self.stretches {
            let (start, end) = (floor(&buf, index(stretch.start)), ceil(&buf, index(stretch.end)));
            out.push_str(&buf[cursor..start.max(cursor)]);
            if stretch.marked {
                out.push_str(REDACTED);
            }
            cursor = end.max(cursor);
        }
        let keep = floor(&buf, index(hold_from)).max(cursor);
        out.push_str(&buf[cursor..keep]);
        buf.drain(..keep);
        self.held_at += keep as u64;
        self.pending = buf;
        (!out.is_empty()).then_some(out)
    }
}

/// `at`, or the character boundary before it (a key that is not ASCII matches bytes, which may
/// fall inside a character).
fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `at`, or the character boundary after it.
fn ceil(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

impl crate::provider::TextScrubber for Scrubber {
    fn push(&mut self, text: String) -> Option<String> {
        Scrubber::push(self, text)
    }

    fn finish(&mut self) -> Option<String> {
        Scrubber::finish(self)
    }
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
            Some(m) => self.progress.push(m, text),
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

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "redact_fuzz.rs"]
mod fuzz;
