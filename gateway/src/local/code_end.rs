//! Where the embedded model's code is complete, read from its text as it is decoded, so the
//! engine stops there instead of letting a small model ramble on to its token limit (a second
//! page, prose, the same lines again).
//!
//! The code is complete when a fenced block that holds an HTML document closes, or when
//! `</html>` ends a document (the fence, if one is open, is then closed for the model). Not when
//! `</html>` or a fence line sits inside a `<script>` (a string or a template literal in the
//! page's JavaScript): the HTML parser itself ends a script only at `</script>`, so nothing
//! inside one can end the document either. A fence that holds no document (a CSS block before
//! the page) closes without ending the answer, and a fence that never closes runs to the limit.

/// The text after which the answer ends, found in one chunk of decoded text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    /// Bytes of the chunk that belong to the answer.
    pub keep: usize,
    /// Text sent after them: the closing fence when `</html>` ended a document inside one.
    pub then: &'static str,
}

/// The closing fence sent after `</html>` when the model's fence is still open.
pub const CLOSE_FENCE: &str = "\n```\n";

/// Reads an answer's text as it arrives; see the module's header.
#[derive(Debug, Clone, Default)]
pub struct CodeEnd {
    /// The current line so far (up to a fence's length; longer lines cannot be fences).
    line: String,
    /// Whether the current line is still only spaces and backticks.
    line_fence_like: bool,
    /// Backticks of the open fence, if one is open.
    fence: Option<usize>,
    /// Whether a document (`<html` or `<!doctype`) began outside any script.
    document: bool,
    /// Inside a `<script>` element.
    script: bool,
    /// The last characters, lower case, to recognise tags cut between chunks.
    tail: String,
    /// Found the end already: nothing more is read.
    ended: bool,
}

/// Longest tag looked for (`<!doctype`, `</script`).
const TAIL: usize = 9;

impl CodeEnd {
    /// A reader whose answer begins with `preamble`, already sent (the HTML primer opens a fence
    /// and a document).
    pub fn after(preamble: &str) -> Self {
        let mut this = Self { line_fence_like: true, ..Self::default() };
        // The primer itself never ends the answer.
        let _ = this.push(preamble);
        this
    }

    /// Reads `chunk`; `Some` when the answer ends inside it.
    pub fn push(&mut self, chunk: &str) -> Option<End> {
        if self.ended {
            return Some(End { keep: 0, then: "" });
        }
        for (at, c) in chunk.char_indices() {
            let keep = at + c.len_utf8();
            if let Some(end) = self.read(c) {
                self.ended = true;
                return Some(End { keep, then: end });
            }
        }
        None
    }

    /// One character; `Some(then)` when the answer ends with it.
    fn read(&mut self, c: char) -> Option<&'static str> {
        if c == '\n' {
            let ended = self.line_ends();
            self.line.clear();
            self.line_fence_like = true;
            if ended {
                return Some("");
            }
        } else {
            self.line_fence_like &=
                c == '`' || c == ' ' || c == '\t' || (self.line.contains('`') && c.is_alphanumeric());
            if self.line.len() < 64 {
                self.line.push(c);
            }
        }
        self.tail.push(c.to_ascii_lowercase());
        if self.tail.len() > TAIL * 4 {
            let cut = self.tail.len() - TAIL;
            let cut = (cut..self.tail.len()).find(|i| self.tail.is_char_boundary(*i)).unwrap_or(0);
            self.tail.drain(..cut);
        }
        let tail = self.tail.as_str();
        if self.script {
            if tail.ends_with("</script") {
                self.script = false;
            }
            return None;
        }
        if tail.ends_with("<script") {
            self.script = true;
        } else if tail.ends_with("<html") || tail.ends_with("<!doctype") {
            self.document = true;
        } else if tail.ends_with("</html>") && self.document {
            return Some(if self.fence.is_some() { CLOSE_FENCE } else { "" });
        }
        None
    }

    /// A line ended: a fence opens or closes; `true` when a fence holding a document closed.
    fn line_ends(&mut self) -> bool {
        if self.script || !self.line_fence_like {
            return false;
        }
        let line = self.line.trim();
        let ticks = line.chars().take_while(|c| *c == '`').count();
        if ticks < 3 {
            return false;
        }
        match self.fence {
            None => {
                self.fence = Some(ticks);
                false
            }
            // A closing fence has no language and at least the opening's backticks.
            Some(open) if ticks >= open && line.len() == ticks => {
                self.fence = None;
                self.document
            }
            Some(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer as sent: `text` fed in pieces of `size` bytes (at character boundaries), cut
    /// where the reader says, with its `then`.
    fn answer(preamble: &str, text: &str, size: usize) -> (String, bool) {
        let mut reader = CodeEnd::after(preamble);
        let mut sent = preamble.to_owned();
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = size.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            let (chunk, after) = rest.split_at(cut);
            if let Some(end) = reader.push(chunk) {
                sent.push_str(&chunk[..end.keep]);
                sent.push_str(end.then);
                return (sent, true);
            }
            sent.push_str(chunk);
            rest = after;
        }
        (sent, false)
    }

    const PRIMER: &str = "```html\n<!DOCTYPE html>\n<html>\n";

    fn each_size(preamble: &str, text: &str) -> (String, bool) {
        let whole = answer(preamble, text, usize::MAX);
        for size in [1, 2, 3, 5, 7] {
            assert_eq!(answer(preamble, text, size), whole, "cut every {size} bytes");
        }
        whole
    }

    #[test]
    fn a_primed_page_ends_at_its_closing_tag_with_the_fence_closed() {
        let (sent, ended) = each_size(PRIMER, "<body><p>hi</p></body>\n</html>\nThis page shows hi.");
        assert!(ended);
        assert_eq!(sent, format!("{PRIMER}<body><p>hi</p></body>\n</html>{CLOSE_FENCE}"));
    }

    #[test]
    fn a_fence_without_language_ends_when_it_closes() {
        let text =
            "Here it is:\n```\n<!doctype html><html><body>\n<p>x</p>\n```\nNow a second page:\n```html\n";
        let (sent, ended) = each_size("", text);
        assert!(ended, "the fence closed on a document");
        assert!(sent.ends_with("<p>x</p>\n```\n"), "{sent}");
        let (sent, _) = each_size(PRIMER, "<body><p>1</p>\n```\nAnd then more text");
        assert!(
            sent.ends_with("<p>1</p>\n```\n"),
            "a primed page whose model closes the fence early: {sent}"
        );
    }

    #[test]
    fn a_bare_document_ends_at_its_closing_tag_and_prose_after_it_is_dropped() {
        let (sent, ended) =
            each_size("", "<!DOCTYPE html>\n<html><body></body></html>\n\nI hope this helps!");
        assert!(ended);
        assert_eq!(sent, "<!DOCTYPE html>\n<html><body></body></html>");
    }

    #[test]
    fn a_closing_tag_inside_a_script_string_does_not_end_the_page() {
        let body = "<body><script>\nconst page = \"<html></html>\";\nconst t = `\n```\n${page}</html>`;\n</script>\n";
        let (sent, ended) = each_size(PRIMER, &format!("{body}</body>\n</html>\nmore"));
        assert!(ended);
        assert_eq!(sent, format!("{PRIMER}{body}</body>\n</html>{CLOSE_FENCE}"));
    }

    #[test]
    fn backticks_inside_lines_are_not_fences() {
        let body = "<body><p>Use `code` and ``` in text</p>\n<script>let s = `a ${1} b`;</script>\n";
        let (sent, ended) = each_size(PRIMER, &format!("{body}</body></html>"));
        assert!(ended);
        assert!(sent.ends_with("</body></html>\n```\n"), "{sent}");
    }

    #[test]
    fn an_unclosed_fence_or_an_unfinished_page_never_ends() {
        assert!(!each_size(PRIMER, "<body><p>still going").1);
        assert!(!each_size("", "```html\n<html><body>\n<p>").1);
        assert!(!each_size("", "Prose that mentions </html> before any page.\n").1, "no document began");
    }

    #[test]
    fn a_fence_without_a_document_closes_without_ending() {
        let text = "```css\nbody { color: red }\n```\n```html\n<html><body></body></html>\n```\n";
        let (sent, ended) = each_size("", text);
        assert!(ended);
        assert!(sent.ends_with("<html><body></body></html>\n```\n"), "{sent}");
        assert!(sent.starts_with("```css"), "{sent}");
    }
}
