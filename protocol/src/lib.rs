//! The contract between Flint's app, worker and gateway.
//!
//! Every WebSocket frame is one JSON object tagged by `type`: [`ClientMessage`] from the browser to the
//! gateway and [`ServerMessage`] back. Many generations share one socket; each is named by a
//! client-chosen [`StreamId`]. The gateway greets with [`ServerMessage::Hello`] carrying
//! [`PROTOCOL_VERSION`]; a client built for another version must reload. Messages between the page
//! and its web worker live in [`worker`]; shareable prompt links in [`share`].

use serde::{Deserialize, Serialize};

pub mod diff;
pub mod frames;
pub mod image;
pub mod language;
mod models;
mod params;
pub mod picture;
pub mod project;
pub mod prompt;
pub mod share;
pub mod stored_link;
pub mod sync;
pub mod worker;

pub use models::*;
pub use params::*;

/// Bumped whenever a frame changes shape in a way an older peer would misread.
pub const PROTOCOL_VERSION: u32 = 1;

/// A generation's id, chosen by the client and unique within its connection.
pub type StreamId = u32;

/// Frames sent by the browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Start a new generation.
    Start(StartRequest),
    /// Stop a generation; the gateway aborts the upstream request and answers with `Done` (cancelled).
    Cancel {
        /// The stream to stop.
        stream: StreamId,
    },
    /// Use the person's own key for a provider's models on this connection (`key: None` stops).
    /// Sent only over the socket, kept in the gateway's memory for this connection alone, and
    /// refused for providers whose operator did not allow it ([`ModelInfo::user_key`]). Trimmed; a
    /// key that is not printable ASCII without spaces, or longer than 1,024 characters, is refused
    /// with `invalid_params` and not kept. Added in protocol 1 without a bump: a gateway that does
    /// not know it answers `bad_frame`.
    UseKey {
        /// The provider's name (the `provider` of `provider/model`).
        provider: String,
        /// The key, or `None` to go back to the operator's.
        #[serde(default)]
        key: Option<Secret>,
    },
    /// Picks up a dropped connection's streams: sent as the first frame on a new socket, with the
    /// `resume` token of the last `Hello` and, for each stream still open on the page, the last
    /// delta `seq` received. The gateway sends exactly the frames after those (`Done` and `Error`
    /// included), then carries on live; a stream it no longer has gets `resume_expired`. Added in
    /// protocol 1 without a bump: only a page that got a token sends it.
    Resume(ResumeRequest),
    /// Liveness check, answered with `Pong`.
    Ping {
        /// Echoed back unchanged.
        nonce: u64,
    },
}

/// What [`ClientMessage::Resume`] asks for.
/// The token is a [`Secret`]: as good as the connection, it never shows in a log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumeRequest {
    /// The `resume` token of the dropped connection's `Hello`.
    pub token: Secret,
    /// The streams still open on the page.
    #[serde(default)]
    pub streams: Vec<ResumeStream>,
}

/// One stream of a [`ResumeRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeStream {
    /// The stream.
    pub stream: StreamId,
    /// The last delta `seq` the page received; `None` if it received none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<u32>,
}

/// What to generate and with which model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartRequest {
    /// Client-chosen id for this generation.
    pub stream: StreamId,
    /// A model id as listed by `/api/models` (`provider/model`).
    pub model: String,
    /// The conversation to continue, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Sampling and length parameters.
    #[serde(default)]
    pub params: GenParams,
}

/// One message of a chat conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: String,
    /// Images that go with the text (a person's message only), at most [`image::MAX_IMAGES`]; the
    /// gateway checks each with [`image::check_sent`].
    /// Added in protocol 1 without a bump: absent in older frames, and left out when empty so
    /// frames without images are byte-for-byte as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<image::ImageData>,
}

impl ChatMessage {
    /// A message with the given role.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self { role, content: content.into(), images: Vec::new() }
    }

    /// A message with the given role and images.
    pub fn with_images(role: Role, content: impl Into<String>, images: Vec<image::ImageData>) -> Self {
        Self { role, content: content.into(), images }
    }
}

/// The author of a [`ChatMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The person using Flint.
    User,
    /// The model.
    Assistant,
}

/// Sampling and length parameters; `None` leaves the choice to the gateway and the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenParams {
    /// Upper bound on generated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Nucleus sampling threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Seed for reproducible sampling where the provider supports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// How hard a reasoning model thinks before answering; sent only to models that accept it
    /// ([`ModelInfo::reasoning`]), dropped for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// How long an answer the model aims for, where the model accepts it (GPT-5 family).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<Verbosity>,
    /// Continuations the gateway may ask for when the answer stops at its length limit, each
    /// joined to the text before it in the same stream; capped by the gateway. None or 0: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_continue: Option<u8>,
}

/// Frames sent by the gateway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// First frame on every connection.
    Hello {
        /// The gateway's [`PROTOCOL_VERSION`].
        protocol: u32,
        /// The gateway's build version, for display.
        gateway: String,
        /// Names this connection for [`ClientMessage::Resume`] should the socket drop; absent when
        /// the gateway does not keep dropped connections (`server.resume_grace_secs = 0`). Added in
        /// protocol 1 without a bump: a page that does not know it ignores it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume: Option<Secret>,
        /// The person may sync their history here (`/api/history*`): signed in, on a gateway that
        /// keeps history. A page asks `/api/history` only when this is true, so a local or
        /// anonymous page never hears a refusal. Added in protocol 1 without a bump: an older
        /// hello lacks it and reads as false.
        #[serde(default)]
        history: bool,
    },
    /// The stream waits for its provider: the provider runs as many generations as it may at once
    /// (`max_concurrent`, or the slots its server reports). Sent again when the count ahead changes;
    /// `Started` follows once it runs. Added in protocol 1 without a bump: a page that does not
    /// know it ignores it and shows the stream as streaming.
    Queued {
        /// The stream that waits.
        stream: StreamId,
        /// Generations that will start before this one (0: it is next).
        ahead: u32,
    },
    /// The upstream accepted the request.
    Started {
        /// The stream that started.
        stream: StreamId,
        /// The provider serving it.
        provider: String,
        /// The model actually serving it, as the upstream names it.
        model: String,
    },
    /// Generated text, coalesced: at most about one frame per stream per display frame.
    Delta {
        /// The stream this text belongs to.
        stream: StreamId,
        /// 0, 1, 2… per stream, so a client can tell a gap from a repeat.
        seq: u32,
        /// Text to append.
        text: String,
    },
    /// The model's reasoning so far, before or between its text: never code, never for the
    /// preview. Coalesced like `Delta` (at most about one frame per stream per display frame);
    /// `text` is what the provider summarised since the last one (often nothing: many providers
    /// keep the reasoning to themselves and only its pace shows). Added in protocol 1 without a
    /// bump: a page that does not know it ignores it.
    Thinking {
        /// The stream that thinks.
        stream: StreamId,
        /// Reasoning tokens so far: the provider's count once it reports one, else the reasoning
        /// chunks received.
        tokens: u32,
        /// Bytes of summary text sent before this frame's: a frame sent again after a resume
        /// is recognised and not appended twice.
        #[serde(default)]
        from: u32,
        /// Summary text to append to what came before, when the provider gives one.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
    },
    /// The provider has sent nothing (not even a keep-alive) for `silent_secs` seconds: sent when
    /// a stream goes quiet for 10 s, then every few seconds, and once with `silent_secs: 0` when
    /// bytes flow again. A stream that stays silent past its provider's `stall_timeout_secs` fails
    /// as `upstream_interrupted`. Added in protocol 1 without a bump: a page that does not know it
    /// ignores it.
    Stalled {
        /// The stream that waits.
        stream: StreamId,
        /// Seconds since the provider's last byte; 0: it is sending again.
        silent_secs: u32,
        /// The provider, for the notice ("no data from groq for 12 s").
        provider: String,
    },
    /// The stream ended normally (finished, hit its length limit, or was cancelled).
    Done {
        /// The stream that ended.
        stream: StreamId,
        /// Why it ended.
        finish: FinishReason,
        /// Token counts.
        usage: Usage,
        /// Timing as seen by the gateway.
        metrics: StreamMetrics,
    },
    /// Something went wrong. With a `stream`, that stream is over (text already sent stays valid);
    /// without one, the frame the client sent could not be used and the connection carries on.
    Error {
        /// The stream that failed, if the error belongs to one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stream: Option<StreamId>,
        /// Machine-readable kind.
        code: ErrorCode,
        /// A sentence a person can act on.
        message: String,
        /// When retrying makes sense, how long to wait first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
    },
    /// The person's daily token quota, when the gateway has one for them: sent after `Hello` and
    /// before each stream's last frame. Added in protocol 1 without a bump: a page that does not
    /// know it ignores it.
    Quota {
        /// Tokens generated today (UTC), all tabs together.
        used: u64,
        /// The day's quota.
        limit: u64,
        /// Until it renews (midnight UTC), in milliseconds.
        resets_in_ms: u64,
    },
    /// Answer to `Ping`.
    Pong {
        /// The ping's nonce.
        nonce: u64,
    },
}

/// Why a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The answer hit `max_tokens`.
    Length,
    /// The client cancelled it.
    Cancelled,
}

/// Token counts for one stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, when the upstream reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u32>,
    /// Generated tokens: the upstream's count when reported, else the number of streamed chunks.
    /// Reasoning tokens are among them (they are billed as output).
    pub completion_tokens: u32,
    /// Of `completion_tokens`, those spent reasoning, when the model reasoned (the upstream's
    /// `reasoning_tokens`, else the reasoning chunks). Added in protocol 1 without a bump.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
}

/// Timing for one stream, measured at the gateway.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamMetrics {
    /// From receiving `Start` to the first generated text (the code, not the reasoning).
    pub ttft_ms: f64,
    /// From receiving `Start` to the first reasoning, when the model reasoned. Added in protocol 1
    /// without a bump.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfr_ms: Option<f64>,
    /// From receiving `Start` to the end.
    pub total_ms: f64,
    /// Completion tokens per second after the first token.
    pub tokens_per_s: f64,
}

/// Kinds of [`ServerMessage::Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The frame was not valid JSON or not a known message.
    BadFrame,
    /// The client speaks another protocol version.
    UnsupportedVersion,
    /// No configured provider serves that model id.
    UnknownModel,
    /// A stream with that id is already running on this connection.
    DuplicateStream,
    /// Too many streams are running on this connection.
    TooManyStreams,
    /// The request is larger than the gateway or the model accepts.
    PromptTooLarge,
    /// The provider rejected the gateway's key.
    Unauthorized,
    /// The provider is rate limiting; see `retry_after_ms`.
    RateLimited,
    /// The provider failed or could not be reached.
    UpstreamUnavailable,
    /// The provider stopped sending in the middle of an answer.
    UpstreamInterrupted,
    /// The provider sent something that is not a valid stream.
    UpstreamProtocol,
    /// The model is configured but cannot run (for example its file is missing).
    ModelUnavailable,
    /// A generation parameter is out of range (for example `top_p` above 1); the message says which.
    InvalidParams,
    /// A resumed connection's stream the gateway no longer has (the grace period ended, the token
    /// is unknown, or its frames outgrew what the gateway keeps); the message says which. Sent only
    /// in answer to `Resume`, so older pages never see it.
    ResumeExpired,
    /// A bug in the gateway; details are in its log.
    Internal,
    /// The messages carry images and the model does not see them; the message names the model and
    /// the configured `[vision] model` that describes images for it, or says that none is. Added in
    /// protocol 1 without a bump: only a page that sends images gets it.
    ImagesNotSeen,
    /// An image was refused (not an image Flint reads, a size or type it lies about, over a limit
    /// of [`image`]); the message says which and what to do. Added in protocol 1 without a bump.
    ImageRefused,
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
