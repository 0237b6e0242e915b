//! Ends an answer that has become a loop. Small models, the embedded 135M one above all, fall into
//! writing the same piece over and over until their length limit: on the 20 quality prompts 5 of
//! 20 answers did, 35–43 s each of the first minute (`bench/local-quality.md`), for text that
//! adds nothing. A loop is the last [`LOOP_BYTES`] of text equal to the same span one period
//! earlier, for a period of at most [`MAX_PERIOD`] bytes: a line, a tag or a block written again
//! and again. Pages repeat too (a row of cells, a list), so the span is long: over a kilobyte of
//! text that is the same piece again, well past the rows and cells a page writes by hand.

/// Bytes that must repeat, one period back, to call the text a loop.
pub const LOOP_BYTES: usize = 1200;
/// The longest piece that may repeat (a block of several lines).
pub const MAX_PERIOD: usize = 400;
/// Text looked at again after this many new bytes, so the check costs little per token.
const CHECK_EVERY: usize = 64;

/// Watches an answer's text for a loop.
#[derive(Debug, Default)]
pub struct LoopWatch {
    /// The last `LOOP_BYTES + MAX_PERIOD` bytes of text.
    tail: Vec<u8>,
    /// New bytes since the last look.
    unchecked: usize,
}

impl LoopWatch {
    /// Takes the answer's next text; whether the answer is now a loop.
    pub fn push(&mut self, text: &str) -> bool {
        self.tail.extend_from_slice(text.as_bytes());
        let keep = LOOP_BYTES + MAX_PERIOD;
        if self.tail.len() > 2 * keep {
            self.tail.drain(..self.tail.len() - keep);
        }
        self.unchecked += text.len();
        if self.unchecked < CHECK_EVERY {
            return false;
        }
        self.unchecked = 0;
        looping(&self.tail).is_some()
    }
}

/// The period of the loop `text` ends in, if it ends in one.
pub fn looping(text: &[u8]) -> Option<usize> {
    let n = text.len();
    let recent = text.get(n.checked_sub(LOOP_BYTES)?..)?;
    (1..=MAX_PERIOD.min(n - LOOP_BYTES)).find(|&period| text[n - LOOP_BYTES - period..n - period] == *recent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch_all(text: &str, piece: usize) -> Option<usize> {
        let mut watch = LoopWatch::default();
        let mut fed = 0;
        for chunk in text.as_bytes().chunks(piece) {
            fed += chunk.len();
            if watch.push(std::str::from_utf8(chunk).expect("ascii")) {
                return Some(fed);
            }
        }
        None
    }

    #[test]
    fn a_line_written_again_and_again_is_a_loop() {
        let head = "<!DOCTYPE html>\n<html>\n<body>\n<p>Roll the dice:</p>\n";
        let line = "<button onclick=\"roll()\">Roll</button>\n";
        let text = format!("{head}{}", line.repeat(100));
        let stopped = watch_all(&text, 3).expect("a loop");
        // Found within a check of the first moment it could be: the head, the span and a period.
        assert!(stopped <= head.len() + LOOP_BYTES + line.len() + 2 * CHECK_EVERY, "{stopped}");
        assert_eq!(looping(text.as_bytes()), Some(line.len()));
    }

    #[test]
    fn a_block_of_lines_and_a_single_character_loop_too() {
        let block = "<div class=\"row\">\n  <span>Total</span>\n  <span>0</span>\n</div>\n";
        assert_eq!(looping(block.repeat(40).as_bytes()), Some(block.len()));
        assert_eq!(looping(" ".repeat(2000).as_bytes()), Some(1));
    }

    #[test]
    fn a_page_that_repeats_by_hand_is_not_a_loop() {
        // Nine identical cells, ten list items that differ, and a long varied page.
        let cells = "<div class=\"cell\"></div>\n".repeat(9);
        let items: String = (1..=10).map(|i| format!("<li>Item {i}</li>\n")).collect();
        let varied: String =
            (0..200).map(|i| format!("<p id=\"p{i}\">Paragraph {i} of the story.</p>\n")).collect();
        for page in [cells, items, varied] {
            assert_eq!(watch_all(&page, 5), None, "{page:.80}");
        }
    }

    #[test]
    fn a_short_text_is_never_a_loop() {
        assert_eq!(looping(b"abcabc"), None);
        assert_eq!(looping(&[]), None);
    }
}
