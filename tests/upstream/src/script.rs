//! What a request's `model` asks the scripted upstream to do, and how answers are cut into tokens.

use std::time::Duration;

/// The text `drop-midway` streams before it closes the response without finishing.
pub const DROP_MIDWAY_TEXT: &str = "Here is the beginning of an answer that never";

/// Seconds `fail-429` asks the client to wait, in its `retry-after` header.
pub const RETRY_AFTER_SECS: u64 = 7;

/// The body `garbage` answers with (status 200, not an event stream).
pub const GARBAGE_BODY: &str = "<html>\n<body>502 upstream proxy error</body>\n</html>\n";

/// The text `no-finish` streams before `[DONE]`, never naming a `finish_reason`.
pub const NO_FINISH_TEXT: &str = "An answer the server cut off without saying why";

/// What `ctx-2048-refusal` answers (llama.cpp's server, refusing a prompt beyond its `-c 2048`).
pub const CONTEXT_REFUSAL: &str = "Requested tokens (6015) exceed context window of 2048";

/// What `wants-key` streams once it gets a key.
pub const WANTS_KEY_TEXT: &str = "Your key was accepted.";

/// The error event `ctx-midstream` ends with (vLLM's phrasing, sent after the stream started).
pub const CONTEXT_MIDSTREAM: &str =
    "This model's maximum context length is 2048 tokens. However, you requested 6015 tokens.";

/// What `ctx-empty-stream` answers when asked without `stream` (llama-cpp-python's words for a
/// prompt beyond its `--n_ctx 2048`).
pub const CONTEXT_UNSTREAMED: &str = "This model's maximum context length is 2048 tokens. However, you \
     requested 3016 tokens (3015 in the messages, 1 in the completion). Please reduce the length of the \
     messages or completion.";

/// What `whole-only` streams when the conversation comes whole.
pub const WHOLE_ONLY_TEXT: &str = "Sent whole, the conversation is answered.";

/// How `whole-only` fails a Responses request that continues an earlier response (LiteLLM's
/// words when llama-cpp-python refuses the earlier turns as LiteLLM rebuilds them).
pub const CONTINUATION_FAILURE: &str = "litellm.InternalServerError: InternalServerError: \
     LlamafileException - 10 validation errors";

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
    /// Stream [`NO_FINISH_TEXT`], then `[DONE]` with no chunk ever carrying a `finish_reason`.
    NoFinish,
    /// Finish normally (`stop`, usage, `[DONE]`) without a single character of content.
    EmptyAnswer,
    /// Answer 400 with llama.cpp's context refusal, [`CONTEXT_REFUSAL`].
    ContextRefusal,
    /// Answer 400 the way llama.cpp's server does since 2025 (`exceed_context_size_error`).
    ContextSizeRefusal,
    /// Start streaming, then send an error event saying the prompt is too long
    /// ([`CONTEXT_MIDSTREAM`]).
    ContextMidstream,
    /// A prompt beyond the window, as llama-cpp-python answers it: streamed, `200` and an empty
    /// body (its reason goes only to its log); unstreamed, 400 [`CONTEXT_UNSTREAMED`].
    ContextEmptyStream,
    /// `200` and an empty body, for no reason it tells (unstreamed, it is refused as any model is).
    EmptyStream,
    /// Answer 401 unless the request carries a key: a server started with `--api-key`.
    WantsKey,
    /// Stream [`WHOLE_ONLY_TEXT`]; a Responses request continuing an earlier response
    /// (`previous_response_id`) fails before any text with [`CONTINUATION_FAILURE`], as LiteLLM in
    /// front of llama-cpp-python does.
    WholeOnly,
    /// Echo the key the request carried (its `Authorization: Bearer`), the way a buggy or hostile
    /// upstream might, for tests that check it never reaches a browser.
    Leak(Leak),
    /// Misbehave the way a broken or hostile server might, to test the gateway's limits.
    Hostile(Hostile),
    /// Think aloud, end for an odd reason or go quiet: how an answer is shown and ends.
    Thinking(Thinking),
    /// Answer with what images arrived, as `saw 2 images: image/png 64x48, image/jpeg 10x10`
    /// (every request's image parts are checked whatever its script; this one says what they were).
    SeeImages,
}

/// What a [`Script::Thinking`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thinking {
    /// Stream [`REASONING_TEXT`] as reasoning (`reasoning_content`, then gpt-oss's `reasoning`,
    /// with an OpenRouter-style comment between), then [`REASONED_PAGE`] as the answer, with
    /// usage counting [`REASONING_TOKENS`] reasoning tokens.
    Reasoning,
    /// Stream [`FILTERED_TEXT`], then end with `finish_reason: "content_filter"` and `[DONE]`.
    Filtered,
    /// Stream [`STALL_TEXT`], then send nothing, keeping the response open.
    Stall,
    /// Stream [`STALL_TEXT`], go quiet for [`STALL_PAUSE`], then finish the page.
    StallThenResume,
}

/// What `reasoning` thinks, in pieces.
pub const REASONING_TEXT: &str = "The person wants a counter. Plan: a button, a number, a click handler.";
/// What `reasoning` answers once it has thought.
pub const REASONED_PAGE: &str =
    "<!doctype html><html><body><h1>Counter</h1><button>Add</button></body></html>";
/// The reasoning tokens `reasoning` reports in its usage.
pub const REASONING_TOKENS: u32 = 321;
/// What `filtered` streams before its filter stops it.
pub const FILTERED_TEXT: &str = "<!doctype html><html><body><h1>Half a";
/// What `stall` and `stall-resume` stream before they go quiet.
pub const STALL_TEXT: &str = "<!doctype html><html><body><h1>Waiting";
/// How long `stall-resume` stays quiet.
pub const STALL_PAUSE: Duration = Duration::from_millis(2_500);

/// What a [`Script::Hostile`] does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hostile {
    /// Send [`ENDLESS_TEXT`], then an SSE comment every [`COMMENT_INTERVAL`], for ever.
    EndlessComments,
    /// Stream [`HUGE_ANSWER_BYTES`] of text as fast as it is read, then finish.
    HugeAnswer,
    /// Answer with this redirect status to `/internal` on the same server, which answers 400
    /// with [`INTERNAL_TEXT`] (a page the gateway's host can reach and a browser must not read).
    Redirect(u16),
}

/// The text `endless-comments` sends before its comments.
pub const ENDLESS_TEXT: &str = "Thinking";
/// How often `endless-comments` sends a comment.
pub const COMMENT_INTERVAL: Duration = Duration::from_millis(100);
/// How much text `huge-answer` streams (far more than any answer a page should get).
pub const HUGE_ANSWER_BYTES: usize = 100 * 1024 * 1024;
/// What `/internal` answers: a `redirect-*` script's target.
pub const INTERNAL_TEXT: &str = "internal admin page: db password hunter2";

/// Where and in what form a [`Script::Leak`] echoes the key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Leak {
    /// A normal stream whose chunks name the key as their `model`.
    Model,
    /// A 400 whose message holds the key masked the way providers print it (`sk-sc****cret`).
    Masked,
    /// A 400 whose message holds the key upper-cased.
    Upper,
    /// A 400 whose message holds the key with a space between every character.
    Spaced,
    /// A 400 whose message holds 16 characters from the middle of the key.
    Piece,
    /// A stream that sends some text, then an error event holding the key upper-cased.
    MidStream,
    /// A stream whose text holds the key, cut into tokens like any other text.
    Content {
        /// Tokens per second; `None` uses the server's default rate.
        rate: Option<f64>,
    },
    /// A 200 event stream whose first line is `Authorization: Bearer <key>` (an echoing proxy).
    NotSse,
    /// A stream whose text holds the key, one character per chunk.
    Chars,
}

/// The text before the key in [`Leak::Content`] and [`Leak::MidStream`].
pub const LEAK_PREFIX: &str = "Here is the key you sent: ";
/// The text after the key in [`Leak::Content`].
pub const LEAK_SUFFIX: &str = ". Done.";

impl Leak {
    /// The key as this leak shows it, in an error message.
    pub fn disguise(self, key: &str) -> String {
        match self {
            Self::Masked => {
                let chars: Vec<char> = key.chars().collect();
                let head: String = chars.iter().take(5).collect();
                let tail: String = chars[chars.len().saturating_sub(4)..].iter().collect();
                format!("{head}****{tail}")
            }
            Self::Upper | Self::MidStream => key.to_uppercase(),
            Self::Spaced => key.chars().map(String::from).collect::<Vec<_>>().join(" "),
            Self::Piece => {
                let start = key.chars().count() / 4;
                key.chars().skip(start).take(16).collect()
            }
            Self::Model | Self::Content { .. } | Self::NotSse | Self::Chars => key.to_owned(),
        }
    }
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
            "no-finish" => Self::NoFinish,
            "empty-answer" => Self::EmptyAnswer,
            "ctx-2048-refusal" => Self::ContextRefusal,
            "ctx-size-refusal" => Self::ContextSizeRefusal,
            "ctx-midstream" => Self::ContextMidstream,
            "ctx-empty-stream" => Self::ContextEmptyStream,
            "empty-stream" => Self::EmptyStream,
            "wants-key" => Self::WantsKey,
            "whole-only" => Self::WholeOnly,
            "leak-model" => Self::Leak(Leak::Model),
            "leak-masked" => Self::Leak(Leak::Masked),
            "leak-upper" => Self::Leak(Leak::Upper),
            "leak-spaced" => Self::Leak(Leak::Spaced),
            "leak-piece" => Self::Leak(Leak::Piece),
            "leak-midstream" => Self::Leak(Leak::MidStream),
            "leak-content" => Self::Leak(Leak::Content { rate }),
            "leak-not-sse" => Self::Leak(Leak::NotSse),
            "leak-chars" => Self::Leak(Leak::Chars),
            "endless-comments" => Self::Hostile(Hostile::EndlessComments),
            "huge-answer" => Self::Hostile(Hostile::HugeAnswer),
            "redirect-303" => Self::Hostile(Hostile::Redirect(303)),
            "redirect-307" => Self::Hostile(Hostile::Redirect(307)),
            "reasoning" => Self::Thinking(Thinking::Reasoning),
            "filtered" => Self::Thinking(Thinking::Filtered),
            "stall" => Self::Thinking(Thinking::Stall),
            "stall-resume" => Self::Thinking(Thinking::StallThenResume),
            "see-images" => Self::SeeImages,
            _ => Self::Fixture { name: name.to_owned(), rate },
        }
    }

    /// The names of the special behaviours, for `GET /v1/models`.
    pub const SPECIAL: [&'static str; 33] = [
        "fail-429",
        "fail-500",
        "fail-401",
        "fail-context",
        "drop-midway",
        "garbage",
        "no-finish",
        "empty-answer",
        "ctx-2048-refusal",
        "ctx-size-refusal",
        "ctx-midstream",
        "ctx-empty-stream",
        "empty-stream",
        "wants-key",
        "whole-only",
        "leak-model",
        "leak-masked",
        "leak-upper",
        "leak-spaced",
        "leak-piece",
        "leak-midstream",
        "leak-content",
        "leak-not-sse",
        "leak-chars",
        "endless-comments",
        "huge-answer",
        "redirect-303",
        "redirect-307",
        "reasoning",
        "filtered",
        "stall",
        "stall-resume",
        "see-images",
    ];
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
        assert_eq!(Script::parse("no-finish"), Script::NoFinish);
        assert_eq!(Script::parse("ctx-2048-refusal"), Script::ContextRefusal);
        assert_eq!(Script::parse("drop-midway@20"), Script::DropMidway { rate: Some(20.0) });
        assert_eq!(Script::parse("leak-content@40"), Script::Leak(Leak::Content { rate: Some(40.0) }));
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
    fn leaks_disguise_the_key_as_named() {
        let key = "sk-scripted-0123456789-very-secret";
        assert_eq!(Leak::Masked.disguise(key), "sk-sc****cret");
        assert_eq!(Leak::Upper.disguise(key), "SK-SCRIPTED-0123456789-VERY-SECRET");
        assert!(Leak::Spaced.disguise(key).starts_with("s k - s c r"));
        assert_eq!(Leak::Piece.disguise(key), "ted-0123456789-v");
    }

    #[test]
    fn empty_text_has_no_tokens() {
        assert!(tokenize("").is_empty());
    }
}
