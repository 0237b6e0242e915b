//! One `data:` payload of an OpenAI-compatible stream → provider events.
//!
//! Chunks are parsed borrowing from the event's text, and only the first choice is kept (Flint asks
//! for one), so a token costs one allocation: the `String` of its [`ProviderEvent::Delta`]. The
//! text passes through a [`Scrubber`] on its way out, so an upstream echoing the key in its answer
//! does not show it; text that could be the key's start waits for the next chunk, and is
//! [released](ChunkState::release) before whatever ends the stream.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use flint_protocol::FinishReason;
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};

use super::openai_chunk_scan::Common;
use super::openai_chunk_template::Templates;
use super::openai_errors::{error_message, is_context_refusal, tidy};
use super::openai_reasoning::{DeltaFields, Ending};
use super::redact::{Redactor, Scrubber};
use super::{ProviderError, ProviderEvent};

/// Where a stream is: started, its finish reason, `[DONE]` seen, text held back.
#[derive(Debug)]
pub(crate) struct ChunkState {
    requested_model: String,
    redactor: Arc<Redactor>,
    scrubber: Scrubber,
    /// The reasoning is upstream text too: scrubbed on its own, since it is shown apart.
    reasoning: Scrubber,
    templates: Templates,
    started: bool,
    finish: Option<Ending>,
    done: bool,
}

/// Why a payload could not be used.
#[derive(Debug, PartialEq)]
pub(crate) enum ChunkError {
    /// Not JSON, or not a chunk.
    Json,
    /// The upstream sent an error object in the stream.
    Upstream {
        /// Its message.
        message: String,
        /// It says the prompt does not fit the context.
        context: bool,
    },
    /// `[DONE]` came, but no chunk carried a `finish_reason`: the server stopped without saying
    /// the answer was complete (llama.cpp does so when a slot is cut off), so it may be partial.
    Unfinished,
    /// The answer ended for a reason other than `stop` or `length` (`content_filter`, …).
    Ended(String),
}

impl ChunkError {
    /// The error to report for provider `name`, its upstream text without the key.
    pub(crate) fn into_error(self, name: &str, redactor: &Redactor) -> ProviderError {
        match self {
            Self::Json => ProviderError::Protocol(format!("{name} sent an event that is not a valid chunk")),
            Self::Upstream { message, context: true } => ProviderError::PromptTooLarge(format!(
                "the prompt does not fit the model's context; {name} stopped: {}",
                tidy(&message, redactor)
            )),
            Self::Upstream { message, context: false } => {
                ProviderError::Unavailable(format!("{name} failed mid-answer: {}", tidy(&message, redactor)))
            }
            Self::Unfinished => ProviderError::Interrupted(format!(
                "{name} ended the answer without saying it was complete (no finish_reason); it may be cut short"
            )),
            Self::Ended(reason) => {
                ProviderError::Interrupted(super::openai_reasoning::other_ending(name, &reason, redactor))
            }
        }
    }
}

#[derive(Debug, PartialEq, Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    choices: FirstChoice<'a>,
    #[serde(default)]
    usage: Option<ChunkUsage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Debug, PartialEq, Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Option<DeltaFields<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, PartialEq, Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: Option<u32>,
    #[serde(default)]
    completion_tokens: u32,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Debug, PartialEq, Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u32>,
}

/// `choices`, keeping only the first element without collecting a `Vec`.
#[derive(Debug, Default, PartialEq)]
struct FirstChoice<'a>(Option<Choice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct First<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for First<'a> {
            type Value = FirstChoice<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let first = seq.next_element::<Choice<'a>>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(FirstChoice(None))
            }
        }
        deserializer.deserialize_any(First(std::marker::PhantomData))
    }
}

impl<'a> From<Common<'a>> for Chunk<'a> {
    fn from(common: Common<'a>) -> Self {
        let choice = common.choice.map(|choice| Choice {
            delta: choice.delta.map(DeltaFields::text),
            finish_reason: choice.finish_reason,
        });
        Self { model: common.model, choices: FirstChoice(choice), usage: None, error: None }
    }
}

/// One payload as a chunk: the common shape by the scanner (by the stream's last template where it
/// fits), the rest by serde.
fn parse<'a>(templates: &mut Templates, data: &'a str) -> Result<Chunk<'a>, ChunkError> {
    match templates.read(data) {
        Some(common) => Ok(common.into()),
        None => serde_json::from_str(data).map_err(|_| ChunkError::Json),
    }
}

impl ChunkState {
    /// A stream for `requested_model`, whose text is scrubbed by `redactor`.
    pub(crate) fn new(requested_model: &str, redactor: &Arc<Redactor>) -> Self {
        Self {
            requested_model: requested_model.to_owned(),
            redactor: redactor.clone(),
            scrubber: redactor.stream(),
            reasoning: redactor.stream(),
            templates: Templates::default(),
            started: false,
            finish: None,
            done: false,
        }
    }

    /// Hands out the text held back (it did not turn out to be the key): the stream is ending.
    pub(crate) fn release(&mut self, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        if let Some(text) = self.reasoning.finish() {
            out.push_back(Ok(ProviderEvent::Reasoning(text)));
        }
        if let Some(text) = self.scrubber.finish() {
            out.push_back(Ok(ProviderEvent::Delta(text)));
        }
    }

    /// `[DONE]` was received.
    pub(crate) fn done(&self) -> bool {
        self.done
    }

    /// How the answer ended, by the finish reason seen so far: `None` if none came.
    pub(crate) fn finish_reason(&self) -> Option<Result<FinishReason, ChunkError>> {
        self.finish.as_ref().map(|ending| match ending {
            Ending::Stop => Ok(FinishReason::Stop),
            Ending::Length => Ok(FinishReason::Length),
            Ending::Other(reason) => Err(ChunkError::Ended(reason.clone())),
        })
    }

    /// Handles one event's data, queueing the events it produces.
    pub(crate) fn on_data(
        &mut self,
        data: &str,
        out: &mut VecDeque<Result<ProviderEvent, ProviderError>>,
    ) -> Result<(), ChunkError> {
        if self.done {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            self.start(None, out);
            self.release(out);
            self.done = true;
            let reason = self.finish_reason().ok_or(ChunkError::Unfinished)??;
            out.push_back(Ok(ProviderEvent::Finished(reason)));
            return Ok(());
        }
        let chunk = parse(&mut self.templates, data)?;
        if let Some(error) = chunk.error {
            return Err(ChunkError::Upstream {
                message: error_message(&error),
                context: is_context_refusal(&error),
            });
        }
        self.start(chunk.model.as_deref(), out);
        if let Some(choice) = chunk.choices.0 {
            if let Some(mut delta) = choice.delta {
                if let Some(thought) = delta.reasoning() {
                    // An empty chunk still says the model is thinking; held-back text waits.
                    let shown = if thought.is_empty() { Some(thought) } else { self.reasoning.push(thought) };
                    out.push_back(Ok(ProviderEvent::Reasoning(shown.unwrap_or_default())));
                }
                if let Some(content) = delta.content.filter(|c| !c.is_empty())
                    && let Some(text) = self.scrubber.push(content.into_owned())
                {
                    out.push_back(Ok(ProviderEvent::Delta(text)));
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(Ending::parse(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            if let Some(reasoning) = usage.completion_tokens_details.and_then(|d| d.reasoning_tokens) {
                out.push_back(Ok(ProviderEvent::ReasoningTokens(reasoning)));
            }
            out.push_back(Ok(ProviderEvent::Usage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
            }));
        }
        Ok(())
    }

    /// Reports the model the person picked, whatever the upstream calls it: its `model` field is
    /// free text (a buggy proxy has put the key there), so it only goes to the log, scrubbed.
    fn start(&mut self, served: Option<&str>, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        if !self.started {
            self.started = true;
            if let Some(served) = served.filter(|m| !m.is_empty() && *m != self.requested_model) {
                tracing::debug!(requested = %self.requested_model, served = %self.redactor.scrub(served), "the upstream names its model differently");
            }
            out.push_back(Ok(ProviderEvent::Started { model: self.requested_model.clone() }));
        }
    }
}

#[cfg(test)]
#[path = "openai_chunk_scan_tests.rs"]
mod scan_tests;

#[cfg(test)]
#[path = "openai_chunk_tests.rs"]
mod tests;
