//! The common chat-completions chunk read without serde: the one cost per token left in the relay.
//!
//! Nearly every chunk of every server is one shape: an object whose only fields Flint reads are
//! `model`, the first choice's `delta.content` and its `finish_reason`, beside fields it ignores
//! (`id`, `object`, `created`, `system_fingerprint`, `obfuscation`, `x_groq`, `timings`, `logprobs`,
//! …) and `usage` or `error` set to `null`. [`read`] reads that shape in one pass over the bytes
//! and answers `None` for anything else: reasoning, usage, an error object, a duplicate field,
//! half a surrogate pair in a string it keeps, nesting deeper than [`MAX_DEPTH`], and any text that
//! is not JSON.
//! Those go to serde, which decides, so this path never accepts what serde would refuse, and reads
//! what it accepts as serde would (a test compares the two on generated chunks). Measured:
//! `bench/scale.md`. Most chunks do not even come here: `openai_chunk_template` reads a stream's
//! chunks by their text alone once the bytes around it repeat.

use std::borrow::Cow;

/// The fields of a chunk of the common shape.
#[derive(Debug, PartialEq)]
pub(super) struct Common<'a> {
    /// `model`, as the upstream wrote it.
    pub(super) model: Option<Cow<'a, str>>,
    /// The first choice, when `choices` had one.
    pub(super) choice: Option<CommonChoice<'a>>,
}

/// The first choice of a [`Common`] chunk.
#[derive(Debug, PartialEq)]
pub(super) struct CommonChoice<'a> {
    /// `delta` (`None` when absent or `null`), and its `content`.
    pub(super) delta: Option<Option<Cow<'a, str>>>,
    /// `finish_reason`.
    pub(super) finish_reason: Option<Cow<'a, str>>,
}

/// Deeper than this, a chunk goes to serde (which steps over ignored values of any depth), so the
/// scanner's recursion stays shallow.
const MAX_DEPTH: u32 = 32;

/// Reads `data` if it is a chunk of the common shape; `None` sends it to serde. (The relay reads
/// through [`read_marked`], by way of a stream's templates; the tests compare with this.)
#[cfg(test)]
pub(super) fn read(data: &str) -> Option<Common<'_>> {
    read_marked(data).map(|(chunk, _)| chunk)
}

/// [`read`], and where the first choice's `delta.content` is when it is a string: the indices of
/// its opening and closing quotes.
pub(super) fn read_marked(data: &str) -> Option<(Common<'_>, Option<(usize, usize)>)> {
    let mut scan = Scan::new(data, 0);
    let chunk = scan.chunk()?;
    scan.ws();
    (scan.at == data.len()).then_some((chunk, scan.content_quotes))
}

/// A reader over `text`, at byte `at`.
pub(super) struct Scan<'a> {
    text: &'a str,
    pub(super) at: usize,
    /// Where `delta.content`'s quotes were, once read as a string.
    content_quotes: Option<(usize, usize)>,
}

/// Marks a known field seen, failing on its second appearance (serde refuses duplicates).
fn first_time(seen: &mut u8, bit: u8) -> Option<()> {
    (*seen & bit == 0).then(|| *seen |= bit)
}

impl<'a> Scan<'a> {
    pub(super) fn new(text: &'a str, at: usize) -> Self {
        Self { text, at, content_quotes: None }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, which must be `byte`.
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// `null`, consumed: `Some(true)`; anything else is left for the caller: `Some(false)`.
    fn null(&mut self) -> Option<bool> {
        self.ws();
        if self.peek()? != b'n' {
            return Some(false);
        }
        self.literal("null")?;
        Some(true)
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let end = self.at + word.len();
        (self.text.as_bytes().get(self.at..end)? == word.as_bytes()).then(|| self.at = end)
    }

    /// An object's members, each handed to `member` with its key and the scanner at its value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>) -> Option<()> {
        self.items(b'{', b'}', |scan, _| {
            scan.ws();
            let key = scan.string()?;
            scan.eat(b':')?;
            member(scan, key)
        })
    }

    /// An array's elements, each handed to `element` with its index and the scanner at it.
    fn array(&mut self, element: impl FnMut(&mut Self, usize) -> Option<()>) -> Option<()> {
        self.items(b'[', b']', element)
    }

    /// What lies between `open` and `close`, separated by commas: each item read by `item`.
    fn items(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        self.eat(open)?;
        self.ws();
        if self.peek()? == close {
            self.at += 1;
            return Some(());
        }
        for index in 0.. {
            item(self, index)?;
            self.ws();
            match self.peek()? {
                b',' => self.at += 1,
                byte if byte == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
        None
    }

    fn chunk(&mut self) -> Option<Common<'a>> {
        let (mut model, mut choice, mut seen) = (None, None, 0u8);
        self.object(|scan, key| match &*key {
            "model" => {
                first_time(&mut seen, 1)?;
                model = scan.optional_string()?;
                Some(())
            }
            "choices" => {
                first_time(&mut seen, 2)?;
                choice = scan.choices()?;
                Some(())
            }
            "usage" => first_time(&mut seen, 4).and_then(|()| scan.null()?.then_some(())),
            "error" => first_time(&mut seen, 8).and_then(|()| scan.null()?.then_some(())),
            _ => scan.skip(1),
        })?;
        Some(Common { model, choice })
    }

    /// `choices`: `null`, or a list whose first element is read and the rest skipped.
    fn choices(&mut self) -> Option<Option<CommonChoice<'a>>> {
        if self.null()? {
            return Some(None);
        }
        let mut first = None;
        self.array(|scan, index| {
            if index == 0 {
                first = Some(scan.choice()?);
                Some(())
            } else {
                scan.skip(2)
            }
        })?;
        Some(first)
    }

    fn choice(&mut self) -> Option<CommonChoice<'a>> {
        let (mut delta, mut finish_reason, mut seen) = (None, None, 0u8);
        self.object(|scan, key| match &*key {
            "delta" => {
                first_time(&mut seen, 1)?;
                if !scan.null()? {
                    delta = Some(scan.delta()?);
                }
                Some(())
            }
            "finish_reason" => {
                first_time(&mut seen, 2)?;
                finish_reason = scan.optional_string()?;
                Some(())
            }
            _ => scan.skip(3),
        })?;
        Some(CommonChoice { delta, finish_reason })
    }

    /// A `delta` without reasoning: its `content`.
    fn delta(&mut self) -> Option<Option<Cow<'a, str>>> {
        let (mut content, mut seen) = (None, 0u8);
        self.object(|scan, key| match &*key {
            "content" => {
                first_time(&mut seen, 1)?;
                scan.ws();
                let open = scan.at;
                content = scan.optional_string()?;
                if content.is_some() {
                    scan.content_quotes = Some((open, scan.at - 1));
                }
                Some(())
            }
            "reasoning_content" => first_time(&mut seen, 2).and_then(|()| scan.null()?.then_some(())),
            "reasoning" => first_time(&mut seen, 4).and_then(|()| scan.null()?.then_some(())),
            "reasoning_details" => first_time(&mut seen, 8).and_then(|()| scan.null()?.then_some(())),
            _ => scan.skip(4),
        })?;
        Some(content)
    }

    /// `null` or a string.
    fn optional_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.null()? { Some(None) } else { self.string().map(Some) }
    }

    /// Moves past the plain bytes of a string: to its closing quote, an escape or a control byte.
    fn plain(&mut self) {
        let bytes = self.text.as_bytes();
        let rest = &bytes[self.at..];
        let run = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(rest.len());
        self.at += run;
    }

    /// A string, borrowed when it has no escapes.
    pub(super) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.at;
        self.plain();
        if self.peek()? == b'"' {
            self.at += 1;
            return Some(Cow::Borrowed(&self.text[start..self.at - 1]));
        }
        let mut owned = String::from(&self.text[start..self.at]);
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(Cow::Owned(owned));
                }
                b'\\' => {
                    self.at += 1;
                    owned.push(self.escape()?);
                }
                _ => return None, // a control byte
            }
            let from = self.at;
            self.plain();
            owned.push_str(&self.text[from..self.at]);
        }
    }

    /// The character of the escape after a backslash.
    fn escape(&mut self) -> Option<char> {
        let byte = self.peek()?;
        self.at += 1;
        Some(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => match self.hex4()? {
                // A pair's first half (Python's `json.dumps` writes every emoji so): the second
                // must follow. A half alone is no character, and serde refuses it.
                high @ 0xD800..=0xDBFF => {
                    self.literal("\\u")?;
                    let low = self.hex4()?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?
                }
                unit => char::from_u32(unit)?,
            },
            _ => return None,
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.at..self.at + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u32::from_str_radix(digits, 16).ok()
    }

    /// Steps over a string without keeping it; any `\u` escape goes, as serde ignores one.
    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            self.plain();
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => {
                    self.at += 1;
                    if self.peek()? == b'u' {
                        self.at += 1;
                        self.hex4()?;
                    } else {
                        self.escape()?;
                    }
                }
                _ => return None,
            }
        }
    }

    /// Steps over any value at `depth`, checking it is JSON.
    fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => self.object(|scan, _| scan.skip(depth + 1)),
            b'[' => self.array(|scan, _| scan.skip(depth + 1)),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// A number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }
}
