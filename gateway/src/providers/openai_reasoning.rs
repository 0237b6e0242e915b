//! Reasoning in a chat-completions stream, and how such a stream says it ended.
//!
//! Servers put a reasoning model's thinking beside the answer in each chunk's `delta`, under one of
//! three names: `reasoning_content` (DeepSeek, vLLM, llama.cpp's server), `reasoning` (gpt-oss on
//! OpenRouter, Groq, Cerebras) or `reasoning_details`, a list of typed parts (OpenRouter:
//! `reasoning.text` with `text`, `reasoning.summary` with `summary`, `reasoning.encrypted` with
//! nothing readable). All of it goes to the person as thinking and none of it into the answer.
//!
//! `finish_reason` is free text: `stop` and `length` are the answers Flint expects; every other
//! reason (`content_filter`, `tool_calls`, a server's own) ends the stream with a sentence saying
//! what happened, not as a clean stop that would pass a cut answer off as finished.

use std::borrow::Cow;

use serde::Deserialize;

use super::openai_errors::tidy;
use super::redact::Redactor;

/// One chunk's `delta`: the answer's text and the reasoning beside it.
#[derive(Debug, Default, PartialEq, Deserialize)]
pub(crate) struct DeltaFields<'a> {
    /// The answer's text.
    #[serde(default, borrow)]
    pub(crate) content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_details: Option<Vec<Detail<'a>>>,
}

/// One part of `reasoning_details`; parts of other types carry nothing readable.
#[derive(Debug, PartialEq, Deserialize)]
struct Detail<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    summary: Option<Cow<'a, str>>,
}

impl<'a> DeltaFields<'a> {
    /// A delta that carries the answer's text alone.
    pub(crate) fn text(content: Option<Cow<'a, str>>) -> Self {
        Self { content, ..Self::default() }
    }

    /// The reasoning this chunk carries: `None` when it carries none, `Some("")` when the model is
    /// reasoning but shows nothing of it (an encrypted part). A server that sends the same text
    /// under two names (OpenRouter: `reasoning` and `reasoning_details`) is read once.
    pub(crate) fn reasoning(&mut self) -> Option<String> {
        if let Some(text) = self.reasoning_content.take().or(self.reasoning.take()).filter(|t| !t.is_empty())
        {
            return Some(text.into_owned());
        }
        let details = self.reasoning_details.take().filter(|d| !d.is_empty())?;
        let mut text = String::new();
        for detail in details {
            if let Some(part) = detail.text.or(detail.summary) {
                text.push_str(&part);
            }
        }
        Some(text)
    }
}

/// How a chat-completions answer said it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// `stop` (or `eos`, llama.cpp's older word): the answer is complete.
    Stop,
    /// `length`: the length limit cut it.
    Length,
    /// Anything else, as the upstream wrote it.
    Other(String),
}

impl Ending {
    /// Reads a `finish_reason`.
    pub(crate) fn parse(reason: &str) -> Self {
        match reason {
            "stop" | "eos" | "end_turn" | "stop_sequence" => Self::Stop,
            "length" | "max_tokens" => Self::Length,
            other => Self::Other(other.to_owned()),
        }
    }
}

/// The sentence for an answer that ended for `reason`, neither finished nor cut by its length.
pub(crate) fn other_ending(name: &str, reason: &str, redactor: &Redactor) -> String {
    match reason {
        "content_filter" => format!(
            "{name}'s content filter stopped the answer, so it is incomplete; rephrase the prompt or try another model"
        ),
        "tool_calls" | "function_call" => format!(
            "{name} says the model stopped to call a tool, which Flint does not offer, so the answer is incomplete; try again or try another model"
        ),
        "recitation" => format!(
            "{name} stopped the answer because it repeated published text; rephrase the prompt or try another model"
        ),
        other => format!(
            "{name} ended the answer for a reason Flint does not know (\"{}\"), so it may be incomplete; try again",
            tidy(other, redactor)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reasoning(delta: &str) -> Option<String> {
        serde_json::from_str::<DeltaFields<'_>>(delta).expect("a delta").reasoning()
    }

    #[test]
    fn every_name_of_the_reasoning_field_is_read() {
        assert_eq!(reasoning(r#"{"reasoning_content":"Plan"}"#).as_deref(), Some("Plan"));
        assert_eq!(reasoning(r#"{"reasoning":"Plan"}"#).as_deref(), Some("Plan"));
        let details = r#"{"reasoning_details":[{"type":"reasoning.text","text":"Pl"},
            {"type":"reasoning.summary","summary":"an"}]}"#;
        assert_eq!(reasoning(details).as_deref(), Some("Plan"));
        let encrypted = r#"{"reasoning_details":[{"type":"reasoning.encrypted","data":"xx"}]}"#;
        assert_eq!(reasoning(encrypted).as_deref(), Some(""), "thinking, nothing to show");
        assert_eq!(reasoning(r#"{"content":"<p>"}"#), None);
        assert_eq!(reasoning(r#"{"reasoning":"","reasoning_details":[]}"#), None);
        let twice = r#"{"reasoning":"once","reasoning_details":[{"type":"reasoning.text","text":"once"}]}"#;
        assert_eq!(reasoning(twice).as_deref(), Some("once"), "the same text under two names is read once");
    }

    #[test]
    fn every_ending_but_stop_and_length_is_told_in_a_sentence() {
        let redactor = Redactor::new(Some("sk-secret-0123456789"));
        assert_eq!(Ending::parse("stop"), Ending::Stop);
        assert_eq!(Ending::parse("length"), Ending::Length);
        assert_eq!(Ending::parse("content_filter"), Ending::Other("content_filter".into()));
        for (reason, words) in [
            ("content_filter", "content filter stopped the answer"),
            ("tool_calls", "call a tool"),
            ("function_call", "call a tool"),
            ("sk-secret-0123456789", "a reason Flint does not know (\"[redacted]\")"),
        ] {
            let message = other_ending("groq", reason, &redactor);
            assert!(message.contains(words) && message.starts_with("groq"), "{reason}: {message}");
        }
    }
}
