//! A chat-completions answer being read: SSE `data:` chunks → provider events, and what the end
//! of the body means.
//!
//! A body that ends having carried no event at all is asked about once more: llama-cpp-python
//! answers a streamed prompt beyond its window with `200` and an empty body (its reason only
//! reaches its own log), and the same request without `stream` is refused with words a person can
//! act on ("This model's maximum context length is 2048 tokens…"). So the messages go again,
//! unstreamed and with `max_tokens: 1`, and if that is refused because the prompt does not fit,
//! the person hears so. Any other answer explains nothing about the empty stream (a server may
//! refuse every unstreamed request, or limit how often it is asked): the stream stays cut short.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::Value;

use super::{Inner, Item, State, post, request_body};
use crate::providers::slots::Permit;
use crate::providers::sse::{SseError, SseParser};
use crate::providers::stall::{StallWatch, Watched};
use crate::providers::{GenRequest, ProviderError, ProviderEvent, openai_chunk, openai_errors};

/// Longest wait for the answer to the unstreamed request that asks why a stream was empty: a
/// server refuses an oversized prompt before reading it, so a refusal comes at once.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// A response being read.
pub(super) struct Reading {
    inner: std::sync::Arc<Inner>,
    /// Kept to ask again when the body ends empty.
    request: GenRequest,
    response: reqwest::Response,
    parser: SseParser,
    chunks: openai_chunk::ChunkState,
    /// Some event arrived (even one that carried nothing).
    any_event: bool,
    /// Events parsed but not yet handed out (one network read often carries many).
    queue: VecDeque<Item>,
    /// How long the body has been silent.
    stall: StallWatch,
    /// The provider slot this answer holds until it is dropped.
    _slot: Permit,
}

impl Reading {
    pub(super) fn new(
        inner: std::sync::Arc<Inner>,
        request: GenRequest,
        response: reqwest::Response,
        slot: Permit,
    ) -> Box<Self> {
        Box::new(Self {
            stall: StallWatch::new(&inner.name, inner.stall_timeout),
            chunks: openai_chunk::ChunkState::new(&request.model, &inner.redactor),
            inner,
            request,
            response,
            parser: SseParser::new(),
            any_event: false,
            queue: VecDeque::with_capacity(64),
            _slot: slot,
        })
    }

    /// The next item, and the state after it.
    pub(super) async fn next(mut self: Box<Self>) -> Option<(Item, State)> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                let last = matches!(item, Err(_) | Ok(ProviderEvent::Finished(_)));
                if last && self.chunks.done() {
                    super::drain(&mut self.response).await;
                }
                return Some((item, if last { State::Over } else { State::Reading(self) }));
            }
            let read = match self.stall.watch(self.response.chunk()).await {
                Watched::Ready(read) => read,
                Watched::Quiet(notice) => return Some((Ok(notice), State::Reading(self))),
                Watched::Stalled(err) => {
                    self.chunks.release(&mut self.queue);
                    self.queue.push_back(Err(err));
                    continue;
                }
            };
            match read {
                Ok(Some(bytes)) => {
                    if let Some(flowing) = self.stall.bytes(tokio::time::Instant::now()) {
                        self.queue.push_back(Ok(flowing));
                    }
                    self.feed(&bytes);
                }
                Ok(None) => {
                    self.end().await;
                    if self.queue.is_empty() {
                        return None;
                    }
                }
                Err(err) => {
                    let name = &self.inner.name;
                    tracing::debug!(provider = %name, error = %openai_errors::describe(&err), "stream read failed");
                    let message = if err.is_timeout() {
                        format!("{name} stopped sending mid-answer (timed out)")
                    } else {
                        format!("the connection to {name} broke mid-answer")
                    };
                    self.chunks.release(&mut self.queue);
                    self.queue.push_back(Err(ProviderError::Interrupted(message)));
                }
            }
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        let Self { parser, chunks, queue, inner, any_event, .. } = self;
        let mut failed = None;
        let parsed = parser.feed(bytes, |event| {
            *any_event = true;
            if failed.is_some() {
                return;
            }
            if let Err(err) = chunks.on_data(event.data, queue) {
                failed = Some(err.into_error(&inner.name, &inner.redactor));
            }
        });
        if let Err(err) = parsed {
            failed.get_or_insert_with(|| not_sse(inner, &err));
        }
        if let Some(err) = failed {
            chunks.release(queue);
            queue.push_back(Err(err));
        }
    }

    /// The body ended: finish if the upstream said it was done, else the answer was cut short,
    /// or, when the body carried no event at all, never began: the server's refusal says why.
    async fn end(&mut self) {
        if let Err(err) = self.parser.finish() {
            self.chunks.release(&mut self.queue);
            self.queue.push_back(Err(not_sse(&self.inner, &err)));
            return;
        }
        if self.chunks.done() {
            return;
        }
        self.chunks.release(&mut self.queue);
        let item = match self.chunks.finish_reason() {
            // Some servers end with `finish_reason` and no `[DONE]`: the answer is complete.
            Some(Ok(reason)) => Ok(ProviderEvent::Finished(reason)),
            Some(Err(ended)) => Err(ended.into_error(&self.inner.name, &self.inner.redactor)),
            None => {
                let refusal = if self.any_event { None } else { refusal(&self.inner, &self.request).await };
                Err(refusal.unwrap_or_else(|| {
                    let name = &self.inner.name;
                    ProviderError::Interrupted(format!(
                        "{name} closed the stream before the answer was complete"
                    ))
                }))
            }
        };
        self.queue.push_back(item);
    }
}

/// Asks `request` again without streaming, for one token: the server's refusal when it says the
/// prompt does not fit (mapped as any refusal is); `None` when it answers, is refused for another
/// reason, or does not answer in time.
async fn refusal(inner: &Inner, request: &GenRequest) -> Option<ProviderError> {
    tracing::debug!(provider = %inner.name, "the stream ended without an event; asking again unstreamed to learn why");
    let reasoning = inner.reasoning.contains(&request.model);
    let mut body = request_body(inner.max_tokens_field, reasoning, request);
    if let Value::Object(fields) = &mut body {
        fields.remove("stream_options");
        fields.insert("stream".into(), false.into());
        fields.insert(inner.max_tokens_field.as_str().into(), 1.into());
    }
    let asked = async {
        let mut sent = post(inner, &body).send().await;
        if let Err(err) = &sent {
            // llama-cpp-python closes the connection the empty stream came on, and the pool can
            // hand it out again before it sees that: once more, on a new connection.
            tracing::debug!(provider = %inner.name, error = %openai_errors::describe(err), "asking again unstreamed failed; once more");
            sent = post(inner, &body).send().await;
        }
        let response = sent.ok()?;
        if response.status().is_success() {
            tracing::debug!(provider = %inner.name, "asked unstreamed, it answered: the empty stream stays unexplained");
            return None;
        }
        let (name, model, hint) = (&inner.name, &request.model, &inner.hint);
        match openai_errors::status_error(name, model, hint, &inner.redactor, response).await {
            err @ ProviderError::PromptTooLarge(_) => Some(err),
            other => {
                tracing::debug!(provider = %name, error = %other, "asked unstreamed, it refused for another reason");
                None
            }
        }
    };
    tokio::time::timeout(PROBE_TIMEOUT, asked).await.ok().flatten()
}

/// The body is not an event stream. The error quotes the line it choked on, which is upstream text
/// (an echoing proxy's `Authorization: Bearer …`), so it is scrubbed like any other.
fn not_sse(inner: &Inner, err: &SseError) -> ProviderError {
    let message = format!("{} sent a response that is not an event stream ({err})", inner.name);
    ProviderError::Protocol(inner.redactor.scrub(&message))
}
