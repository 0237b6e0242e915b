//! An incremental parser for server-sent events (the `text/event-stream` format).
//!
//! Bytes arrive in chunks cut anywhere: inside a line, between `\r` and `\n`, inside a UTF-8
//! character. The parser keeps the unfinished line and hands out each complete event's `data`
//! (multi-line data joined by `\n`) without copying it again. Comments (`:`…) and the `id` and
//! `retry` fields are skipped.
//!
//! Unlike a browser, which ignores unknown fields, this parser rejects them: an OpenAI-compatible
//! stream only ever uses `data` and `event`, and a line like `<html>` or `{"error": …}` means the
//! upstream sent something that is not an event stream at all (an error page behind a proxy), which
//! the person should hear about rather than wait for a stream that never comes.

/// Longest unfinished line or event accepted before the input is declared not to be SSE.
const MAX_PENDING: usize = 8 * 1024 * 1024;

/// Why the bytes are not an event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line that is neither a comment nor a known field.
    #[error("a line that is not an event-stream field: {0:?}")]
    NotEventStream(String),
    /// A line that is not UTF-8.
    #[error("bytes that are not UTF-8 text")]
    InvalidUtf8,
    /// A line or event larger than the parser accepts.
    #[error("a line longer than {MAX_PENDING} bytes")]
    TooLong,
}

/// One dispatched event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field, empty when absent (the default "message" type).
    pub event: &'a str,
    /// The `data:` lines, joined by `\n`.
    pub data: &'a str,
}

/// Incremental SSE parser; feed it bytes as they arrive.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The unfinished last line.
    line: Vec<u8>,
    /// Data of the event being built, each line followed by `\n`.
    data: String,
    /// Whether the event being built had any `data` field (an empty `data:` still counts).
    has_data: bool,
    event: String,
    /// The previous chunk ended with `\r`: a `\n` starting this one belongs to that line end.
    after_cr: bool,
    /// Still at the very start of the stream, where a byte-order mark is skipped.
    at_start: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self { at_start: true, ..Self::default() }
    }

    /// Parses `bytes`, calling `on_event` for each event completed by them.
    pub fn feed(&mut self, mut bytes: &[u8], mut on_event: impl FnMut(SseEvent<'_>)) -> Result<(), SseError> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.after_cr {
            self.after_cr = false;
            if let [b'\n', rest @ ..] = bytes {
                bytes = rest;
            }
        }
        // memchr scans a word at a time: this loop was the parser's own largest cost per token.
        while let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) {
            let (head, tail) = bytes.split_at(end);
            // `\r\n` is one line end; a `\r` at the end of the chunk may still be followed by `\n`.
            bytes = match tail {
                [b'\r', b'\n', rest @ ..] => rest,
                [b'\r'] => {
                    self.after_cr = true;
                    &[]
                }
                [_, rest @ ..] => rest,
                [] => &[],
            };
            if self.line.is_empty() {
                self.line_done(head, &mut on_event)?;
            } else {
                self.line.extend_from_slice(head);
                let line = std::mem::take(&mut self.line);
                let result = self.line_done(&line, &mut on_event);
                self.line = line;
                self.line.clear();
                result?;
            }
        }
        if self.line.len() + bytes.len() > MAX_PENDING {
            return Err(SseError::TooLong);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Whether an event has started but not been dispatched (the stream ended mid-event).
    pub fn has_partial_event(&self) -> bool {
        self.has_data || !self.line.is_empty()
    }

    /// The stream ended: checks the unterminated last line, so a body that is not SSE and has no
    /// line end is still reported. Like a browser, it never dispatches an unfinished event.
    pub fn finish(&mut self) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            return Ok(());
        }
        // A final line cannot complete an event (that takes an empty line), so nothing is emitted.
        self.line_done(&line, &mut |_| {})
    }

    fn line_done(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) -> Result<(), SseError> {
        let mut line = std::str::from_utf8(line).map_err(|_| SseError::InvalidUtf8)?;
        if self.at_start {
            self.at_start = false;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            if self.has_data {
                let data = self.data.strip_suffix('\n').unwrap_or(&self.data);
                on_event(SseEvent { event: &self.event, data });
            }
            self.data.clear();
            self.event.clear();
            self.has_data = false;
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() > MAX_PENDING {
                    return Err(SseError::TooLong);
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            "id" | "retry" => {}
            _ => {
                let shown: String = line.chars().take(60).collect();
                return Err(SseError::NotEventStream(shown));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` cut at each of `cuts` and returns the events' (event, data).
    fn parse_in_pieces(input: &[u8], cuts: &[usize]) -> Result<Vec<(String, String)>, SseError> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
            parser.feed(&input[start..cut], |e| events.push((e.event.to_owned(), e.data.to_owned())))?;
            start = cut;
        }
        Ok(events)
    }

    fn every_split(input: &[u8]) -> Vec<Vec<(String, String)>> {
        let mut results = vec![parse_in_pieces(input, &[]).expect("whole input parses")];
        for a in 0..=input.len() {
            results.push(parse_in_pieces(input, &[a]).expect("one cut parses"));
            for b in a..=input.len() {
                results.push(parse_in_pieces(input, &[a, b]).expect("two cuts parse"));
            }
        }
        results
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected.iter().map(|(e, d)| ((*e).to_owned(), (*d).to_owned())).collect()
    }

    #[test]
    fn events_are_the_same_wherever_the_chunks_are_cut() {
        let input = "data: {\"a\":\"é\"}\n\n: keep-alive\r\nevent: x\r\ndata: one\r\ndata:two\r\n\r\ndata: [DONE]\n\n";
        let expected = pairs(&[("", "{\"a\":\"é\"}"), ("x", "one\ntwo"), ("", "[DONE]")]);
        for (i, events) in every_split(input.as_bytes()).into_iter().enumerate() {
            assert_eq!(events, expected, "split #{i} changed the events");
        }
    }

    #[test]
    fn bare_carriage_returns_end_lines() {
        let events = parse_in_pieces(b"data: a\rdata: b\r\rdata: c\r\r", &[8]).expect("parses");
        assert_eq!(events, pairs(&[("", "a\nb"), ("", "c")]));
    }

    #[test]
    fn comments_ids_and_retry_are_skipped_and_empty_data_counts() {
        let input = b": hello\nid: 4\nretry: 100\ndata:\n\n\n\ndata: x\n\n";
        let events = parse_in_pieces(input, &[]).expect("parses");
        assert_eq!(events, pairs(&[("", ""), ("", "x")]));
    }

    #[test]
    fn a_leading_byte_order_mark_is_skipped() {
        let events = parse_in_pieces("\u{feff}data: x\n\n".as_bytes(), &[1]).expect("parses");
        assert_eq!(events, pairs(&[("", "x")]));
    }

    #[test]
    fn an_unfinished_event_is_not_dispatched() {
        let mut parser = SseParser::new();
        let mut count = 0;
        parser.feed(b"data: partial\n", |_| count += 1).expect("parses");
        assert_eq!(count, 0);
        assert!(parser.has_partial_event());
    }

    #[test]
    fn html_and_json_bodies_are_not_event_streams() {
        for body in ["<html><body>502</body></html>\n", "{\"error\":{\"message\":\"no\"}}\n"] {
            let err = parse_in_pieces(body.as_bytes(), &[3]).expect_err("not SSE");
            assert!(matches!(err, SseError::NotEventStream(_)), "{body}: {err:?}");
        }
        let mut parser = SseParser::new();
        parser.feed(b"<html>", |_| {}).expect("no line end yet");
        assert!(matches!(parser.finish(), Err(SseError::NotEventStream(_))));
        let err = parse_in_pieces(b"data: \xff\xfe\n\n", &[]).expect_err("not UTF-8");
        assert_eq!(err, SseError::InvalidUtf8);
    }
}
