//! The provider contract: what the relay asks of any provider (a stream of [`ProviderEvent`]s for a
//! [`GenRequest`]) and the errors it may end with. It depends on nothing else in the gateway; the
//! registry that builds providers (`crate::providers`) and each kind sit above it.

use std::pin::Pin;
use std::time::Duration;

use flint_protocol::{ChatMessage, ErrorCode, FinishReason, GenParams, ModelInfo};
use futures::Stream;

/// Identifies the connection (one browser tab) a request came from.
pub type ClientId = u64;

/// A generation as a provider sees it.
#[derive(Debug, Clone)]
pub struct GenRequest {
    /// The connection that asked. Providers that queue requests (the embedded model, a provider
    /// with `max_concurrent`) share their capacity fairly between connections, so one tab's many
    /// variations do not starve another.
    pub client: ClientId,
    /// The person who asked (a hash of their [`crate::person::Person`]): providers that queue
    /// take turns between people, so one person's many tabs do not starve another's one.
    pub person: ClientId,
    /// The person's own key for this provider (`allow_user_keys`), used instead of the
    /// operator's; `None`: the operator's.
    pub key: Option<flint_protocol::Secret>,
    /// The model's name at the provider (without the `provider/` prefix).
    pub model: String,
    /// The conversation, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Sampling and length parameters, already clamped by the gateway.
    pub params: GenParams,
}

/// What a provider's stream yields.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    /// The upstream accepted the request; `model` is the model that actually serves it.
    Started {
        /// Model name as reported by the upstream.
        model: String,
    },
    /// The request waits for one of the provider's slots (`max_concurrent`); sent again when the
    /// count changes, and followed by the stream proper once it runs.
    Queued {
        /// Requests that start before this one.
        ahead: u32,
    },
    /// Generated text (one upstream chunk, usually one token).
    Delta(String),
    /// The model is reasoning: one reasoning chunk, with the summary text it carries (often
    /// none). Never part of the answer: it is shown apart and never reaches the code.
    Reasoning(String),
    /// The upstream's count of the answer's reasoning tokens (within its completion tokens).
    ReasoningTokens(u32),
    /// No byte (not even a keep-alive) has arrived for `secs` seconds; 0: bytes flow again.
    Silence {
        /// Seconds since the last byte.
        secs: u32,
    },
    /// Token counts reported by the upstream.
    Usage {
        /// Prompt tokens.
        prompt_tokens: Option<u32>,
        /// Completion tokens.
        completion_tokens: u32,
    },
    /// The answer is complete. Nothing follows.
    Finished(FinishReason),
}

/// Why a provider's stream failed. The message is for the person using Flint: no keys, no internals.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The upstream rejected the key (401/403).
    #[error("{0}")]
    Unauthorized(String),
    /// The upstream does not know the model (404).
    #[error("{0}")]
    UnknownModel(String),
    /// The upstream is rate limiting (429).
    #[error("{message}")]
    RateLimited {
        /// What to tell the person.
        message: String,
        /// The upstream's `retry-after`, if any.
        retry_after: Option<Duration>,
    },
    /// The prompt does not fit the model (400 context length, or the local context).
    #[error("{0}")]
    PromptTooLarge(String),
    /// The upstream failed (5xx, other 4xx) or could not be reached.
    #[error("{0}")]
    Unavailable(String),
    /// The stream stopped before the answer was complete.
    #[error("{0}")]
    Interrupted(String),
    /// The upstream sent bytes that are not a valid event stream.
    #[error("{0}")]
    Protocol(String),
    /// The model is configured but cannot run (missing or corrupt file).
    #[error("{0}")]
    ModelUnavailable(String),
    /// The answer finished without a single character of text.
    ///
    /// Reported as `upstream_unavailable` rather than with a code of its own: the protocol's codes
    /// are a closed enum that an already-open page could not read, and to the person an empty
    /// answer is the provider failing to answer, retried the same way. The message says which.
    #[error("{0}")]
    Empty(String),
}

impl ProviderError {
    /// The protocol code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Unauthorized(_) => ErrorCode::Unauthorized,
            Self::UnknownModel(_) => ErrorCode::UnknownModel,
            Self::RateLimited { .. } => ErrorCode::RateLimited,
            Self::PromptTooLarge(_) => ErrorCode::PromptTooLarge,
            Self::Unavailable(_) | Self::Empty(_) => ErrorCode::UpstreamUnavailable,
            Self::Interrupted(_) => ErrorCode::UpstreamInterrupted,
            Self::Protocol(_) => ErrorCode::UpstreamProtocol,
            Self::ModelUnavailable(_) => ErrorCode::ModelUnavailable,
        }
    }

    /// How long to wait before retrying, when the upstream said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// Keeps a provider's key out of text that arrives in pieces (see `providers::redact`), for text
/// joined from several of its streams: each stream scrubs its own text, but a key cut between two
/// of them is seen only by a scrubber that reads across the join.
pub trait TextScrubber: Send {
    /// The text that may go out now that `text` arrived; `None` when all of it waits or is gone.
    fn push(&mut self, text: String) -> Option<String>;
    /// The text ended: what was held back, which never became the key.
    fn finish(&mut self) -> Option<String>;
}

/// A stream of provider events; dropping it cancels the generation (closes the upstream request or
/// stops the local decode).
pub type EventStream = Pin<Box<dyn Stream<Item = Result<ProviderEvent, ProviderError>> + Send>>;

/// One configured provider.
pub trait Provider: Send + Sync {
    /// The provider's configured name (the `provider` of `provider/model`).
    fn name(&self) -> &str;
    /// The models it offers, for `/api/models`.
    fn models(&self) -> Vec<ModelInfo>;
    /// Starts a generation. Errors before the first token arrive as the stream's first item.
    fn stream(&self, request: GenRequest) -> EventStream;
    /// A scrubber of the key `request` goes with, for text joined from several of its streams
    /// (continuations); `None` where no key is sent.
    fn scrubber(&self, _request: &GenRequest) -> Option<Box<dyn TextScrubber>> {
        None
    }
    /// The connection `client` ended and its streams are gone: a provider that keeps something
    /// open per tab (the Responses provider's sockets) closes it.
    fn client_closed(&self, _client: ClientId) {}
}
