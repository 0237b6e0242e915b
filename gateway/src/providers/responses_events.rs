//! One event of a Responses API stream → provider events. The same events arrive as SSE `data:`
//! over HTTP and as text frames in WebSocket mode.
//!
//! `response.created` starts the answer, `response.output_text.delta` (and `refusal.delta`, the
//! model's own words when it declines) carries text, and one of `response.completed`,
//! `response.incomplete`, `response.failed` or a top-level `error` ends it. A reasoning item
//! starting and `response.reasoning_summary_text.delta` / `response.reasoning_text.delta` are the
//! model thinking, shown apart from the answer. Every other type (content parts) is ignored. Text passes through a
//! [`Scrubber`] and upstream messages through [`tidy`], so the key never reaches a browser.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

use flint_protocol::FinishReason;
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use super::openai_errors::error_message;
use super::openai_errors::{self, KeyHint, Refusal, is_context_refusal, tidy};
use super::redact::{Redactor, Scrubber};
use super::{ProviderError, ProviderEvent};

/// What the stream yields.
pub(crate) type Item = Result<ProviderEvent, ProviderError>;

/// What the caller does after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// More events follow.
    Continue,
    /// The response ended; its last items are queued.
    Ended,
    /// The server no longer holds `previous_response_id` (WebSocket mode keeps only the
    /// connection's last response): send the whole conversation again. Nothing was queued.
    ResendFull,
    /// The connection reached its time limit: open another and send the whole conversation.
    Reconnect,
}

/// A Responses stream being read.
#[derive(Debug)]
pub(crate) struct Events {
    name: String,
    model: String,
    hint: KeyHint,
    redactor: Arc<Redactor>,
    scrubber: Scrubber,
    /// Reasoning text is scrubbed on its own: it is shown apart from the answer.
    thinking: Scrubber,
    started: bool,
    /// Some text arrived (handed out or held back).
    got_text: bool,
    /// The text handed out so far, as the browser got it: what a follow-up carries back.
    answer: String,
    response_id: Option<String>,
    ended: bool,
}

#[derive(Deserialize)]
struct Kind<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    delta: Cow<'a, str>,
}

impl Events {
    /// A stream from provider `name` for `model`; `hint` says where its key comes from.
    pub(crate) fn new(name: &str, model: &str, hint: &KeyHint, redactor: &Arc<Redactor>) -> Self {
        Self {
            name: name.to_owned(),
            model: model.to_owned(),
            hint: hint.clone(),
            redactor: redactor.clone(),
            scrubber: redactor.stream(),
            thinking: redactor.stream(),
            started: false,
            got_text: false,
            answer: String::new(),
            response_id: None,
            ended: false,
        }
    }

    /// The text handed out so far (held-back text excluded).
    pub(crate) fn answer(&self) -> &str {
        &self.answer
    }

    /// The upstream's id for this response, once it said.
    pub(crate) fn response_id(&self) -> Option<&str> {
        self.response_id.as_deref()
    }

    /// A terminal event was handled.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Handles one event's JSON, queueing what it produces.
    pub(crate) fn on_event(&mut self, data: &str, out: &mut VecDeque<Item>) -> Outcome {
        if self.ended || data.trim() == "[DONE]" {
            return Outcome::Continue;
        }
        let Ok(Kind { kind }) = serde_json::from_str::<Kind<'_>>(data) else {
            return self.fail(out, self.protocol("an event that is not JSON"));
        };
        match kind.as_deref() {
            Some("response.output_text.delta" | "response.refusal.delta") => {
                let Ok(Delta { delta }) = serde_json::from_str::<Delta<'_>>(data) else {
                    return self.fail(out, self.protocol("a text delta without text"));
                };
                self.start(out);
                self.got_text |= !delta.is_empty();
                if !delta.is_empty()
                    && let Some(text) = self.scrubber.push(delta.into_owned())
                {
                    self.answer.push_str(&text);
                    out.push_back(Ok(ProviderEvent::Delta(text)));
                }
                Outcome::Continue
            }
            Some("response.reasoning_summary_text.delta" | "response.reasoning_text.delta") => {
                // Reasoning is shown, never needed: one of another shape is passed over.
                let Ok(Delta { delta }) = serde_json::from_str::<Delta<'_>>(data) else {
                    return Outcome::Continue;
                };
                self.start(out);
                let shown = if delta.is_empty() { None } else { self.thinking.push(delta.into_owned()) };
                out.push_back(Ok(ProviderEvent::Reasoning(shown.unwrap_or_default())));
                Outcome::Continue
            }
            // A reasoning model thinking without a summary shows only that it thinks.
            Some("response.output_item.added") if data.contains(r#""reasoning""#) => {
                let value: Value = serde_json::from_str(data).unwrap_or_default();
                if value.pointer("/item/type").and_then(Value::as_str) == Some("reasoning") {
                    self.start(out);
                    out.push_back(Ok(ProviderEvent::Reasoning(String::new())));
                }
                Outcome::Continue
            }
            Some("response.created" | "response.in_progress") => {
                let value: Value = serde_json::from_str(data).unwrap_or_default();
                self.note_id(&value);
                self.start(out);
                Outcome::Continue
            }
            Some("response.completed" | "response.incomplete" | "response.failed") => {
                let value: Value = serde_json::from_str(data).unwrap_or_default();
                self.note_id(&value);
                self.finish(value.get("response").unwrap_or(&Value::Null), out)
            }
            Some("error") | None => {
                let value: Value = serde_json::from_str(data).unwrap_or_default();
                match value.get("error").or_else(|| kind.is_some().then_some(&value)) {
                    Some(error) => self.upstream_error(value.get("status"), error, out),
                    None => self.fail(out, self.protocol("an event without a type")),
                }
            }
            Some(_) => Outcome::Continue,
        }
    }

    /// The stream ended (the body or the socket closed): unless a terminal event came, the
    /// answer was cut short. The text already sent stays with the person.
    pub(crate) fn end_of_stream(&mut self, out: &mut VecDeque<Item>) {
        if !self.ended {
            let message = format!("{} closed the stream before the answer was complete", self.name);
            self.fail(out, ProviderError::Interrupted(message));
        }
    }

    /// Queues `err` after the text held back, and ends the stream.
    pub(crate) fn fail(&mut self, out: &mut VecDeque<Item>, err: ProviderError) -> Outcome {
        self.release(out);
        self.ended = true;
        out.push_back(Err(err));
        Outcome::Ended
    }

    fn protocol(&self, what: &str) -> ProviderError {
        ProviderError::Protocol(format!("{} sent {what}", self.name))
    }

    fn note_id(&mut self, event: &Value) {
        if let Some(id) = event.pointer("/response/id").and_then(Value::as_str) {
            self.response_id = Some(id.to_owned());
        }
    }

    /// Reports the model the person picked: the upstream's `model` is free text that no browser
    /// needs (see `openai_chunk`).
    fn start(&mut self, out: &mut VecDeque<Item>) {
        if !self.started {
            self.started = true;
            out.push_back(Ok(ProviderEvent::Started { model: self.model.clone() }));
        }
    }

    fn release(&mut self, out: &mut VecDeque<Item>) {
        if let Some(text) = self.thinking.finish() {
            out.push_back(Ok(ProviderEvent::Reasoning(text)));
        }
        if let Some(text) = self.scrubber.finish() {
            self.answer.push_str(&text);
            out.push_back(Ok(ProviderEvent::Delta(text)));
        }
    }

    /// `response.completed`, `.incomplete` or `.failed`: usage, then how it ended.
    fn finish(&mut self, response: &Value, out: &mut VecDeque<Item>) -> Outcome {
        self.start(out);
        if response.get("status").and_then(Value::as_str) == Some("failed") {
            let error = response.get("error").unwrap_or(&Value::Null);
            return self.upstream_error(None, error, out);
        }
        self.release(out);
        self.ended = true;
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            let count = |field: &str| usage.pointer(field).and_then(Value::as_u64).map(saturate);
            if let Some(reasoning) = count("/output_tokens_details/reasoning_tokens") {
                out.push_back(Ok(ProviderEvent::ReasoningTokens(reasoning)));
            }
            out.push_back(Ok(ProviderEvent::Usage {
                prompt_tokens: count("/input_tokens"),
                completion_tokens: count("/output_tokens").unwrap_or(0),
            }));
        }
        let reason = response.pointer("/incomplete_details/reason").and_then(Value::as_str);
        let item = match (response.get("status").and_then(Value::as_str), reason) {
            (Some("incomplete"), Some("max_output_tokens")) => {
                Ok(ProviderEvent::Finished(FinishReason::Length))
            }
            (Some("incomplete"), reason) => {
                let why = match reason {
                    Some("content_filter") => "its content filter stopped it".to_owned(),
                    Some(other) => format!("it stopped early: {}", tidy(other, &self.redactor)),
                    None => "it stopped early without saying why".to_owned(),
                };
                Err(ProviderError::Interrupted(format!("{} left the answer incomplete: {why}", self.name)))
            }
            _ => Ok(ProviderEvent::Finished(FinishReason::Stop)),
        };
        out.push_back(item);
        Outcome::Ended
    }

    /// An `error` event (WebSocket mode: `{"status", "error": {"code", "message"}}`; SSE:
    /// `{"code", "message"}`) or a failed response's `error`.
    fn upstream_error(&mut self, status: Option<&Value>, error: &Value, out: &mut VecDeque<Item>) -> Outcome {
        let code = error.get("code").and_then(Value::as_str).unwrap_or_default();
        // Both only ever come before any text; after some, resending would repeat it.
        if !self.got_text {
            match code {
                "previous_response_not_found" => return Outcome::ResendFull,
                "websocket_connection_limit_reached" => return Outcome::Reconnect,
                _ => {}
            }
        }
        let message = tidy(&error_message(error), &self.redactor);
        let status = status
            .and_then(Value::as_u64)
            .and_then(|s| StatusCode::from_u16(u16::try_from(s).ok()?).ok())
            .or_else(|| status_of_code(code));
        let err = if is_context_refusal(error) {
            ProviderError::PromptTooLarge(format!(
                "the prompt does not fit {}'s context: {message}",
                self.model
            ))
        } else if let Some(status) = status.filter(|s| s.is_client_error()) {
            let refusal = Refusal { status, upstream: Some(message), context: false, retry_after: None };
            openai_errors::classify(&self.name, &self.model, &self.hint, refusal)
        } else {
            ProviderError::Unavailable(format!("{} failed mid-answer: {message}", self.name))
        };
        self.fail(out, err)
    }
}

/// The status an error `code` stands for, when the event carries none (SSE mode).
fn status_of_code(code: &str) -> Option<StatusCode> {
    match code {
        "rate_limit_exceeded" | "insufficient_quota" => Some(StatusCode::TOO_MANY_REQUESTS),
        "invalid_api_key" => Some(StatusCode::UNAUTHORIZED),
        "model_not_found" => Some(StatusCode::NOT_FOUND),
        _ => None,
    }
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "responses_events_tests.rs"]
mod tests;
