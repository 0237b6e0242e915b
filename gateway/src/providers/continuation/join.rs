//! The seamless join of a continuation to the text before it.
//!
//! Asked to go on, models often start by repeating the end of what they wrote, or reopen the code
//! block they were in (```` ```html ````), though told not to. Either would show in the editor and
//! break the page, so the start of a continuation is trimmed before it is passed on:
//!
//! 1. inside an open fence, a reopened fence line (one with an info string, after any blank lines)
//!    is removed. A bare ```` ``` ```` is kept: it is as likely the block's legitimate end;
//! 2. then the longest start that repeats the previous text's end is removed, if it is at least
//!    [`MIN_OVERLAP_CHARS`] long or is the whole last line (at least three visible characters), so
//!    that a short token legitimately written twice (`1, 2, 1, 2`) is kept.
//!
//! Text arrives token by token, so the start is held back until it can be decided: until no
//! longer repeat is still possible (usually the first token or two), at most about [`WINDOW`]
//! bytes. Everything after that passes through untouched.

/// The shortest repeat removed when it is not a whole line.
pub const MIN_OVERLAP_CHARS: usize = 8;
/// The longest repeat looked for, in bytes of the previous text's end (a few lines of code).
pub const WINDOW: usize = 512;
/// A line longer than this is not a reopened fence, so the text is not held back waiting for it.
const MAX_FENCE_LINE: usize = 80;

/// Joins one continuation to the text before it; sans-IO, fed the continuation's pieces in order.
#[derive(Debug)]
pub struct Joiner {
    /// The previous text's last [`WINDOW`] bytes (from a character boundary).
    tail: String,
    /// Whether `tail` starts at the beginning of a line.
    tail_at_line_start: bool,
    /// Whether the previous text ends inside an open code fence.
    in_fence: bool,
    /// The continuation's start, held back until the join is decided.
    pending: String,
    stage: Stage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Looking for a reopened fence.
    Fence,
    /// Looking for a repeat of the previous text's end.
    Overlap,
    /// Decided: everything passes through.
    Through,
}

/// What the held-back text says so far.
enum Verdict {
    /// More text is needed to decide.
    Wait,
    /// Remove this many bytes from the start.
    Cut(usize),
}

impl Joiner {
    /// A joiner for a continuation of `previous` (the whole text so far).
    pub fn new(previous: &str) -> Self {
        let mut start = previous.len().saturating_sub(WINDOW);
        while !previous.is_char_boundary(start) {
            start += 1;
        }
        Self {
            tail: previous[start..].to_owned(),
            tail_at_line_start: start == 0 || previous[..start].ends_with('\n'),
            in_fence: ends_in_open_fence(previous),
            pending: String::new(),
            stage: Stage::Fence,
        }
    }

    /// Takes the next piece of the continuation; returns the text to pass on now (often empty
    /// while the start is being decided).
    pub fn push(&mut self, piece: &str) -> String {
        if self.stage == Stage::Through {
            return piece.to_owned();
        }
        self.pending.push_str(piece);
        self.decide(false)
    }

    /// The continuation ended: returns what was still held back, trimmed as far as it can tell.
    pub fn finish(&mut self) -> String {
        let out = self.decide(true);
        self.stage = Stage::Through;
        out
    }

    fn decide(&mut self, end: bool) -> String {
        if self.stage == Stage::Fence {
            let verdict = if self.in_fence { reopened_fence(&self.pending, end) } else { Verdict::Cut(0) };
            match verdict {
                Verdict::Wait => return String::new(),
                Verdict::Cut(n) => {
                    self.pending.drain(..n);
                    self.stage = Stage::Overlap;
                }
            }
        }
        if self.stage == Stage::Overlap {
            match repeat(&self.tail, self.tail_at_line_start, &self.pending, end) {
                Verdict::Wait => return String::new(),
                Verdict::Cut(n) => {
                    self.pending.drain(..n);
                    self.stage = Stage::Through;
                }
            }
        }
        std::mem::take(&mut self.pending)
    }
}

/// The length of a reopened fence line (and the blank lines before it) at the start of `text`.
fn reopened_fence(text: &str, end: bool) -> Verdict {
    let body = text.trim_start_matches([' ', '\t', '\r', '\n']);
    let skipped = text.len() - body.len();
    let ch = match body.as_bytes().first() {
        Some(&c @ (b'`' | b'~')) => c,
        Some(_) => return Verdict::Cut(0),
        None if end => return Verdict::Cut(0),
        None => return Verdict::Wait,
    };
    let run = body.bytes().take_while(|&b| b == ch).count();
    if run < 3 && run < body.len() {
        return Verdict::Cut(0);
    }
    let Some(newline) = body.find('\n') else {
        if end || body.len() > MAX_FENCE_LINE {
            return Verdict::Cut(0);
        }
        return Verdict::Wait;
    };
    let info = body[run..newline].trim();
    // CommonMark: a backtick fence's info string holds no backtick (that would be inline code).
    let opening = !info.is_empty() && (ch != b'`' || !info.contains('`'));
    Verdict::Cut(if opening { skipped + newline + 1 } else { 0 })
}

/// The length of the longest start of `text` that repeats the end of `tail` and is long enough to
/// be a repeat rather than the same few characters written again.
fn repeat(tail: &str, tail_at_line_start: bool, text: &str, end: bool) -> Verdict {
    // Longest candidate first: the first one that matches whole is the answer, unless a longer one
    // could still match once more text arrives.
    for (start, _) in tail.char_indices() {
        let suffix = &tail[start..];
        let at_line_start = if start == 0 { tail_at_line_start } else { tail[..start].ends_with('\n') };
        if !long_enough(suffix, at_line_start) {
            continue;
        }
        if text.len() >= suffix.len() {
            if text.as_bytes().starts_with(suffix.as_bytes()) {
                return Verdict::Cut(suffix.len());
            }
        } else if !end && suffix.as_bytes().starts_with(text.as_bytes()) {
            return Verdict::Wait;
        }
    }
    Verdict::Cut(0)
}

fn long_enough(repeat: &str, at_line_start: bool) -> bool {
    repeat.chars().count() >= MIN_OVERLAP_CHARS
        || (at_line_start && repeat.chars().filter(|c| !c.is_whitespace()).count() >= 3)
}

/// Whether `text` ends inside a fenced code block (``` or ~~~, as the worker's parser reads them).
fn ends_in_open_fence(text: &str) -> bool {
    let mut open: Option<(u8, usize)> = None;
    for line in text.split('\n') {
        let line = line.trim_start_matches([' ', '\t']);
        let Some(&ch) = line.as_bytes().first().filter(|c| matches!(c, b'`' | b'~')) else {
            continue;
        };
        let run = line.bytes().take_while(|&b| b == ch).count();
        if run < 3 {
            continue;
        }
        let rest = line[run..].trim();
        open = match open {
            None if !(ch == b'`' && rest.contains('`')) => Some((ch, run)),
            Some((c, len)) if c == ch && run >= len && rest.is_empty() => None,
            unchanged => unchanged,
        };
    }
    open.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Joins `continuation` to `previous` fed in `pieces`.
    fn join(previous: &str, pieces: &[&str]) -> String {
        let mut joiner = Joiner::new(previous);
        let mut out: String = pieces.iter().map(|p| joiner.push(p)).collect();
        out.push_str(&joiner.finish());
        out
    }

    /// Checks the join gives `expected` however the continuation is cut into pieces: whole, one
    /// character at a time, and split at every pair of character boundaries.
    fn check(previous: &str, continuation: &str, expected: &str) {
        assert_eq!(join(previous, &[continuation]), expected, "whole: {continuation:?}");
        let chars: Vec<String> = continuation.chars().map(String::from).collect();
        let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(join(previous, &chars), expected, "char by char: {continuation:?}");
        let cuts: Vec<usize> =
            continuation.char_indices().map(|(i, _)| i).chain([continuation.len()]).collect();
        for (n, &a) in cuts.iter().enumerate() {
            for &b in &cuts[n..] {
                let pieces = [&continuation[..a], &continuation[a..b], &continuation[b..]];
                assert_eq!(join(previous, &pieces), expected, "split at {a} and {b}: {pieces:?}");
            }
        }
    }

    #[test]
    fn a_clean_continuation_passes_unchanged() {
        check("Hello, wor", "ld! Bye.", "ld! Bye.");
        check("", "Anything at all", "Anything at all");
        check("Some text", "", "");
    }

    #[test]
    fn a_repeated_end_is_removed() {
        check("<p>Some text here", "text here and more", " and more");
        check("naïve café ünïcode", "café ünïcode — more", " — more");
    }

    #[test]
    fn the_longest_repeat_is_removed() {
        check("line one\nline one\n", "line one\nline one\nline two", "line two");
    }

    #[test]
    fn a_short_repeat_is_kept_unless_it_is_the_whole_last_line() {
        check("1, 2, 1, 2", ", 1, 2, 3", ", 1, 2, 3");
        check("<ul>\n  <li>", "  <li>One</li>", "One</li>");
        // A lone brace is too little to call a repeat, even as a whole line.
        check("if a {\n}\n}", "}\n", "}\n");
    }

    #[test]
    fn a_reopened_fence_is_removed_inside_an_open_fence() {
        check("Here:\n```html\n<p>Hi</p>\n", "```html\n<p>Bye</p>\n```\n", "<p>Bye</p>\n```\n");
        check("~~~js\nlet a = 1;\n", "\n\n~~~js\nlet b = 2;\n", "let b = 2;\n");
    }

    #[test]
    fn a_reopened_fence_and_a_repeat_are_both_removed() {
        let previous = "```html\n<body>\n  <h1>Title</h1>\n  <p>Some";
        check(previous, "\n```html\n  <h1>Title</h1>\n  <p>Some text</p>", " text</p>");
    }

    #[test]
    fn fences_that_do_not_reopen_are_kept() {
        // Outside a fence, a fence line opens a new block.
        check("Intro text.\n\n", "```html\n<p>x</p>\n```", "```html\n<p>x</p>\n```");
        // A closed block is not open.
        check("```css\na {}\n```\n", "```html\n<p>x</p>\n", "```html\n<p>x</p>\n");
        // A bare fence inside a block is its end.
        check("```html\n<p>x</p>\n", "```\nDone.", "```\nDone.");
    }

    #[test]
    fn held_back_text_comes_out_at_the_end() {
        check("Some long line", "long li", "long li");
        check("```html\n<p>", "``", "``");
    }

    #[test]
    fn the_start_is_decided_as_soon_as_no_repeat_can_match() {
        let mut joiner = Joiner::new("<p>Hello there</p>\n");
        assert_eq!(joiner.push("<div>"), "<div>");
        let mut joiner = Joiner::new("```html\n<p>Hello there</p>\n");
        assert_eq!(joiner.push("```"), "", "could still be a reopened fence");
        assert_eq!(joiner.push("html\n<p>Hello"), "", "could still repeat the last line");
        assert_eq!(joiner.push(" again"), "<p>Hello again");
        assert_eq!(joiner.push("!"), "!");
    }

    #[test]
    fn the_window_bounds_what_is_held_back() {
        let previous = "x".repeat(WINDOW * 2);
        let mut joiner = Joiner::new(&previous);
        assert_eq!(joiner.push(&"x".repeat(WINDOW - 1)), "");
        assert_eq!(joiner.push("xxy"), "xy", "the window's worth of repeat is removed");
    }
}
