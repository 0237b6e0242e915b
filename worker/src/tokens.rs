//! Token counts for the context budget: exact for OpenAI's o200k_base models, an estimate for the rest.
//!
//! The o200k_base tokenizer comes from the `tiktoken` crate (goliajp/rust-tiktoken), with only that
//! vocabulary compiled in (815 KB, zstd). Measured natively on 500 KB of real HTML, CSS and JS
//! (127,962 tokens): 5.3 ms per count against 19.5 ms for `bpe-openai` (whose prebuilt tables make a
//! 33 MB wasm; building them at run time takes 2 s natively) and 28 ms for `tiktoken-rs`, all three
//! giving the same count (and the same counts on 20,000 random mixed-script strings). In wasm it
//! counts that text in about 6 ms. Building the tokenizer (decompressing the vocabulary) takes about
//! 0.1 s natively and 0.2–0.4 s in wasm, once, and blocks the thread meanwhile: do it while no
//! answer streams. It adds about 2.2 MB to the wasm (1.2 MB gzipped).
//!
//! Models whose vocabulary we do not ship (the embedded SmolLM2 has its own) get [`estimate`], a
//! byte-based guess that [`TokenCounter::is_exact`] labels as such.

use std::fmt;

/// Counts tokens of one model family: exactly (o200k_base) or by [`estimate`].
///
/// Cheap to clone: the exact tokenizer is built once per process and shared.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    /// `None`: estimate.
    exact: Option<&'static tiktoken::CoreBpe>,
}

impl fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.exact.is_some() { "o200k_base" } else { "estimate" };
        f.debug_struct("TokenCounter").field("kind", &kind).finish()
    }
}

impl TokenCounter {
    /// The o200k_base tokenizer (GPT-4o, GPT-4.1, GPT-5, o-series).
    ///
    /// The first call in a process decompresses the vocabulary (0.1 s natively, 0.2–0.4 s in wasm);
    /// later calls are free.
    pub fn o200k() -> Self {
        Self { exact: tiktoken::get_encoding("o200k_base") }
    }

    /// A counter that only estimates (see [`estimate`]), for models whose tokenizer we lack.
    pub fn estimating() -> Self {
        Self { exact: None }
    }

    /// Whether counts are exact; `false` means they are [`estimate`]s and should be shown as such.
    pub fn is_exact(&self) -> bool {
        self.exact.is_some()
    }

    /// Tokens in `text`, without special tokens (text that spells `<|endoftext|>` counts as text).
    pub fn count(&self, text: &str) -> usize {
        match self.exact {
            Some(bpe) => bpe.count(text),
            None => estimate(text),
        }
    }
}

/// An **estimate** of the tokens in `text`: one token per 3 bytes, rounded up.
///
/// Byte-level BPE vocabularies average 3–4 bytes per token on code and English (o200k_base: 3.9 on
/// real HTML/CSS/JS, 2.9 on dense generated markup) and about one token per CJK character (3 bytes);
/// smaller vocabularies such as SmolLM2's 49k need more tokens. Three bytes per token errs on the
/// side of overcounting, which only makes the budget trim a little early.
pub fn estimate(text: &str) -> usize {
    text.len().div_ceil(3)
}

/// Beyond this many pending bytes without a safe cut, [`IncrementalCount`] cuts anyway (and the count
/// may drift by a token or two until [`IncrementalCount::recount`]): a minified one-line answer would
/// otherwise be recounted whole on every chunk.
const MAX_PENDING: usize = 16 * 1024;

/// The token count of a text that grows, as a streamed answer does.
///
/// Each [`push`](Self::push) counts only the new text up to the last *safe cut*: after the last
/// line break of a whitespace run, once the text after the run has arrived (see `safe_cut`). No
/// o200k_base piece spans such a point, so the sum of the parts equals the count of the whole. The tail after the cut stays pending and is
/// counted again on each push (it is usually less than a line). Only a line longer than 16 KB forces
/// an unsafe cut; [`recount`](Self::recount) at stream end makes the count exact in every case.
#[derive(Debug, Clone)]
pub struct IncrementalCount {
    counter: TokenCounter,
    text: String,
    /// Bytes of `text` whose tokens are in `counted`.
    cut: usize,
    counted: usize,
    /// Tokens of `text[cut..]`, as of the last push.
    pending_tokens: usize,
    /// False once an unsafe cut was made (until a recount).
    exact: bool,
}

impl IncrementalCount {
    /// An empty text counted with `counter`.
    pub fn new(counter: TokenCounter) -> Self {
        Self { counter, text: String::new(), cut: 0, counted: 0, pending_tokens: 0, exact: true }
    }

    /// Appends `chunk` and returns the running total.
    pub fn push(&mut self, chunk: &str) -> usize {
        self.text.push_str(chunk);
        let new_cut = match safe_cut(&self.text, self.cut) {
            Some(cut) => Some(cut),
            None if self.text.len() - self.cut > MAX_PENDING => {
                self.exact = false;
                Some(floor_boundary(&self.text, self.text.len() - 1))
            }
            None => None,
        };
        if let Some(cut) = new_cut.filter(|&c| c > self.cut) {
            self.counted += self.counter.count(&self.text[self.cut..cut]);
            self.cut = cut;
        }
        self.pending_tokens = self.counter.count(&self.text[self.cut..]);
        self.tokens()
    }

    /// The running total: counted parts plus the pending tail.
    pub fn tokens(&self) -> usize {
        self.counted + self.pending_tokens
    }

    /// Whether [`tokens`](Self::tokens) equals a count of the whole text (always, unless a line over
    /// 16 KB forced a cut since the last recount; and never for an estimating counter, which is
    /// approximate anyway).
    pub fn is_exact(&self) -> bool {
        self.exact && self.counter.is_exact()
    }

    /// Everything pushed so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Counts the whole text again, for an exact figure at stream end.
    pub fn recount(&mut self) -> usize {
        self.counted = self.counter.count(&self.text);
        self.cut = self.text.len();
        self.pending_tokens = 0;
        self.exact = true;
        self.counted
    }
}

/// The last safe cut in `text[from..]` (see [`IncrementalCount`]): just after the last line break
/// of a whitespace run that is followed, within `text`, by a character other than whitespace, and
/// not by a `/` right after the break.
///
/// Why it is safe: a piece that holds a line break is either whitespace ending with the last line
/// break of its run (`\s*[\r\n]+`) or punctuation followed by `[\r\n/]*`; what follows the run
/// starts afresh, as o200k_base's pattern looks at nothing before a piece.
fn safe_cut(text: &str, from: usize) -> Option<usize> {
    text[from..].rmatch_indices(['\n', '\r']).find_map(|(i, _)| {
        let cut = from + i + 1;
        let rest = &text[cut..];
        let next = rest.find(|c: char| !c.is_whitespace() || c == '\n' || c == '\r')?;
        let c = rest[next..].chars().next()?;
        let ok = c != '\n' && c != '\r' && !(next == 0 && c == '/');
        ok.then_some(cut)
    })
}

/// The largest char boundary of `text` at or below `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text that exercises the cut rule: blank lines, indented lines, comments after a newline,
    /// CRLF, non-ASCII and a Unicode space after a newline.
    fn sample() -> String {
        let mut s = String::new();
        for i in 0..40 {
            s.push_str(&format!("<div class=\"c{i}\">Grüße, 世界 {i} 🌍</div>\n\n"));
            s.push_str("  .x { color: red; }\r\n//comment\n/* block */\n");
            s.push_str("\n\u{3000}\n\tconst a = `x`;\n}\n  // indented\n \n  x\r\n\r\n\ty\n");
        }
        s
    }

    #[test]
    fn o200k_counts_known_strings() {
        let counter = TokenCounter::o200k();
        assert!(counter.is_exact());
        assert_eq!(counter.count(""), 0);
        assert_eq!(counter.count("hello world"), 2);
        assert!(counter.count("<|endoftext|>") > 1, "special tokens count as text");
    }

    #[test]
    fn the_estimate_is_labelled_and_rounds_up() {
        let counter = TokenCounter::estimating();
        assert!(!counter.is_exact());
        assert_eq!(counter.count("abcd"), 2);
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("世"), 1);
        assert!(!IncrementalCount::new(counter).is_exact());
    }

    #[test]
    fn incremental_count_equals_the_whole_for_every_chunk_size() {
        let counter = TokenCounter::o200k();
        let text = sample();
        let whole = counter.count(&text);
        for size in (1..=64).chain([97, 1000, 4096]) {
            let mut inc = IncrementalCount::new(counter);
            let mut at = 0;
            let mut last = 0;
            while at < text.len() {
                let end = floor_boundary(&text, (at + size).min(text.len()));
                let end =
                    if end <= at { at + text[at..].chars().next().map_or(1, char::len_utf8) } else { end };
                last = inc.push(&text[at..end]);
                at = end;
            }
            assert_eq!(last, whole, "chunks of {size} bytes");
            assert!(inc.is_exact());
            assert_eq!(inc.text(), text);
            assert_eq!(inc.recount(), whole);
        }
    }

    #[test]
    fn incremental_count_is_exact_on_random_whitespace_heavy_text() {
        let counter = TokenCounter::o200k();
        let alphabet: Vec<char> = "ab Z9_'/;{}<>\n\n\r\t  \u{3000}\u{a0}\u{2028}é世🌍.-".chars().collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..200 {
            let text: String = (0..400).map(|_| alphabet[next() as usize % alphabet.len()]).collect();
            let mut inc = IncrementalCount::new(counter);
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let len = floor_boundary(rest, (1 + next() as usize % 40).min(rest.len()));
                let len = if len == 0 { rest.chars().next().map_or(1, char::len_utf8) } else { len };
                inc.push(&rest[..len]);
                rest = &rest[len..];
            }
            assert_eq!(inc.tokens(), counter.count(&text), "round {round}: {text:?}");
        }
    }

    #[test]
    fn safe_cuts_avoid_pieces_that_span_a_newline() {
        assert_eq!(safe_cut("a\nb", 0), Some(2));
        assert_eq!(safe_cut("a\n  b", 0), Some(2), "indentation starts a new piece");
        assert_eq!(safe_cut("a\n\u{3000}b", 0), Some(2));
        assert_eq!(safe_cut("a\n\n", 0), None, "the run may go on");
        assert_eq!(safe_cut("a\n  ", 0), None);
        assert_eq!(safe_cut("a\n\nb", 0), Some(3), "after the last break of the run");
        assert_eq!(safe_cut("a\n \n b", 0), Some(4));
        assert_eq!(safe_cut("a\r\nb", 0), Some(3));
        assert_eq!(safe_cut("a;\n//b", 0), None, "punctuation takes a following '/'");
        assert_eq!(safe_cut("a;\n  //b", 0), Some(3));
        assert_eq!(safe_cut("a\nb\nc", 0), Some(4));
        assert_eq!(safe_cut("a\nb\nc", 4), None);
        assert_eq!(safe_cut("x\n世", 0), Some(2));
    }

    #[test]
    fn a_long_line_forces_a_cut_that_recount_repairs() {
        let counter = TokenCounter::o200k();
        let line = "word ".repeat(5_000);
        let mut inc = IncrementalCount::new(counter);
        for chunk in line.as_bytes().chunks(1000) {
            inc.push(std::str::from_utf8(chunk).expect("ASCII"));
        }
        assert!(!inc.is_exact());
        assert_eq!(inc.recount(), counter.count(&line));
        assert!(inc.is_exact());
    }
}
