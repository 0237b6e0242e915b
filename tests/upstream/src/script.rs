//! What a request's `model` asks the scripted upstream to do, and how answers are cut into tokens.

use std::time::Duration;

/// The text `drop-midway` streams before it closes the response without finishing.
pub const DROP_MIDWAY_TEXT: &str = "Here is the beginning of an answer that never";

/// Seconds `fail-429` asks the client to wait, in its `retry-after` header.
pub const RETRY_AFTER_SECS: u64 = 7;

/// The body `garbage` answers with (status 200, not an event stream).
pub const GARBAGE_BODY: &str = "<html>\n<body>502 upstream proxy error</body>\n</html>\n";

/// One behaviour, chosen by the request's `model` field.
#[derive(Debug, Clone, PartialEq)]
pub enum Script {
    /// Stream a fixture (or inline text) at `rate` tokens per second, then finish normally.
    Fixture {
        /// Fixture name without `.md`.
        name: String,
        /// Tokens per second; `None` uses the server's default rate.
        rate: Option<f64>,
    },
    /// Answer 429 with `retry-after: 7`.
    Fail429,
    /// Answer 500 with an OpenAI-style JSON error.
    Fail500,
    /// Answer 401 as if the key were wrong.
    Fail401,
    /// Answer 400 saying the prompt exceeds the context length.
    FailContext,
    /// Stream [`DROP_MIDWAY_TEXT`], then end the response without `finish_reason` or `[DONE]`.
    DropMidway {
        /// Tokens per second; `None` uses the server's default rate.
        rate: Option<f64>,
    },
    /// Answer 200 with bytes that are not an event stream.
    Garbage,
}

impl Script {
    /// Reads a `model` field: `<fixture>`, `<fixture>@<tokens_per_s>`, or a special name.
    pub fn parse(model: &str) -> Self {
        let (name, rate) = match model.rsplit_once('@') {
            Some((name, rate)) => match rate.parse::<f64>() {
                Ok(rate) if rate.is_finite() && rate > 0.0 => (name, Some(rate)),
                _ => (model, None),
            },
            None => (model, None),
        };
        match name {
            "fail-429" => Self::Fail429,
            "fail-500" => Self::Fail500,
            "fail-401" => Self::Fail401,
            "fail-context" => Self::FailContext,
            "drop-midway" => Self::DropMidway { rate },
            "garbage" => Self::Garbage,
            _ => Self::Fixture { name: name.to_owned(), rate },
        }
    }

    /// The names of the special behaviours, for `GET /v1/models`.
    pub const SPECIAL: [&'static str; 6] =
        ["fail-429", "fail-500", "fail-401", "fail-context", "drop-midway", "garbage"];
}

/// Time between tokens at `rate` tokens per second.
pub fn interval(rate: f64) -> Duration {
    Duration::from_secs_f64(1.0 / rate)
}

/// Cuts text into token-like pieces of about four characters, on character boundaries.
///
/// Whitespace starts a new piece, the way BPE tokens usually carry their leading space, so the
/// stream looks like a model's: `"Here"`, `" is"`, `" a"`, `" sma"`, `"ll"`…
pub fn tokenize(text: &str) -> Vec<&str> {
    let mut tokens = Vec::with_capacity(text.len() / 4 + 1);
    let mut start = 0;
    let mut chars = 0;
    for (at, ch) in text.char_indices() {
        let boundary = chars >= 4 || (chars > 0 && ch.is_whitespace() && !prev_is_space(text, at));
        if boundary {
            tokens.push(&text[start..at]);
            start = at;
            chars = 0;
        }
        chars += 1;
    }
    if start < text.len() {
        tokens.push(&text[start..]);
    }
    tokens
}

fn prev_is_space(text: &str, at: usize) -> bool {
    text[..at].chars().next_back().is_some_and(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_choose_the_script() {
        assert_eq!(Script::parse("counter"), Script::Fixture { name: "counter".into(), rate: None });
        assert_eq!(
            Script::parse("large@50000"),
            Script::Fixture { name: "large".into(), rate: Some(50_000.0) }
        );
        assert_eq!(Script::parse("fail-429"), Script::Fail429);
        assert_eq!(Script::parse("drop-midway@20"), Script::DropMidway { rate: Some(20.0) });
        // A malformed rate is part of the name, so the request fails as an unknown fixture.
        assert_eq!(Script::parse("x@fast"), Script::Fixture { name: "x@fast".into(), rate: None });
    }

    #[test]
    fn tokens_rebuild_the_text_exactly() {
        let text = "Here is a  small\ncounter — with ünïcode and <b>tags</b>.\n\n```html\n";
        let tokens = tokenize(text);
        assert_eq!(tokens.concat(), text);
        assert!(tokens.iter().all(|t| !t.is_empty() && t.chars().count() <= 4), "{tokens:?}");
        assert_eq!(&tokens[..3], &["Here", " is", " a"]);
    }

    #[test]
    fn empty_text_has_no_tokens() {
        assert!(tokenize("").is_empty());
    }
}
