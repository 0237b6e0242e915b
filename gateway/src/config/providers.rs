//! `[[providers]]`: the servers the gateway relays to, told apart by `kind`, and their models.

use std::path::PathBuf;

use serde::Deserialize;

/// `[[providers]]`, told apart by `kind`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderConfig {
    /// Any OpenAI-compatible `/chat/completions` server: Cerebras, Groq, OpenRouter, vLLM,
    /// llama.cpp's server, Ollama, OpenAI.
    Openai(OpenAiConfig),
    /// OpenAI's Responses API (`/responses`), over its WebSocket mode or HTTP streaming: the
    /// only way to reach Codex models.
    Responses(ResponsesConfig),
    /// The embedded llama.cpp model.
    Local(LocalConfig),
}

/// A Responses API provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResponsesConfig {
    /// Name used in model ids (`name/model`).
    pub name: String,
    /// Base URL up to and including `/v1`; requests go to `{base_url}/responses` (`ws://`/`wss://`
    /// for the WebSocket mode, derived from it).
    pub base_url: String,
    /// Environment variable holding the key (preferred over `api_key`).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The key itself, for local servers that want any non-empty key.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Models offered through this provider.
    pub models: Vec<ModelConfig>,
    /// How requests travel; see [`ResponsesTransport`].
    #[serde(default)]
    pub transport: ResponsesTransport,
    /// Generations sent to this server at once, all tabs together; the rest wait their turn.
    #[serde(default)]
    pub max_concurrent: Option<std::num::NonZeroUsize>,
    /// Oldest WebSocket a response is started on (default 55 minutes: the server ends them at
    /// 60). Not in the file: tests shrink it.
    #[doc(hidden)]
    #[serde(skip)]
    pub websocket_max_age: Option<std::time::Duration>,
    /// Let people use their own key for this provider's models (sent over HTTP streaming: the
    /// WebSocket mode's sockets carry the operator's key).
    #[serde(default)]
    pub allow_user_keys: bool,
    /// Seconds without a byte from the server (keep-alives count) before a stream fails as
    /// interrupted, its text kept; unset: 120 (see `providers::stall`). The page is told of any
    /// silence past 10 s as it happens.
    #[serde(default)]
    pub stall_timeout_secs: Option<std::num::NonZeroU64>,
    /// Ask reasoning models for a summary of their reasoning (`reasoning.summary`), shown in the
    /// thinking panel as it streams. Unset: none is asked for, because OpenAI refuses the request
    /// of an organisation it has not verified for summaries; set it where yours is.
    #[serde(default)]
    pub reasoning_summary: Option<ReasoningSummary>,
}

/// The reasoning summary a Responses provider asks for (`reasoning.summary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningSummary {
    /// The most detailed summary the model offers.
    Auto,
    /// A short one.
    Concise,
    /// A long one.
    Detailed,
}

impl ReasoningSummary {
    /// The word the API takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Concise => "concise",
            Self::Detailed => "detailed",
        }
    }
}

/// How a Responses provider reaches its server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponsesTransport {
    /// One persistent socket per tab (and per concurrent answer), follow-ups sent as
    /// `previous_response_id` plus the new input; falls back to HTTP if the socket cannot open.
    #[default]
    Websocket,
    /// One streaming POST per answer, the whole conversation each time.
    Http,
}

/// An OpenAI-compatible provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiConfig {
    /// Name used in model ids (`name/model`).
    pub name: String,
    /// Base URL up to and including `/v1`.
    pub base_url: String,
    /// Environment variable holding the key (preferred over `api_key`). Neither set: the server
    /// wants no key (llama.cpp, Ollama, vLLM) and requests carry no `Authorization`.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The key itself, for local servers that want any non-empty key.
    #[serde(default)]
    pub api_key: Option<String>,
    /// `api_key_env` may be unset: the quick start names its variable whether or not the server
    /// wants a key. Not in the file, where naming a variable means the key is needed.
    #[serde(skip)]
    pub api_key_optional: bool,
    /// Models offered through this provider.
    pub models: Vec<ModelConfig>,
    /// Name of the length-limit field sent upstream; see [`MaxTokensField`].
    #[serde(default)]
    pub max_tokens_field: MaxTokensField,
    /// Generations sent to this server at once, all tabs together; the rest wait their turn.
    /// Unset: what llama.cpp's server reports as its `total_slots`, else no limit. Single-slot
    /// servers that do not report it (llama-cpp-python) need 1: they cut the running answer short
    /// when another request arrives.
    #[serde(default)]
    pub max_concurrent: Option<std::num::NonZeroUsize>,
    /// Let people use their own key for this provider's models (kept in their browser, sent over
    /// their socket, used for their streams only; the operator's quotas do not apply to them).
    #[serde(default)]
    pub allow_user_keys: bool,
    /// Seconds without a byte from the server (keep-alives count) before a stream fails as
    /// interrupted, its text kept; unset: 120 (see `providers::stall`). The page is told of any
    /// silence past 10 s as it happens.
    #[serde(default)]
    pub stall_timeout_secs: Option<std::num::NonZeroU64>,
}

/// A provider's `stall_timeout_secs` when its configuration names none.
///
/// A reasoning model that streams its reasoning sends bytes all along, and servers that think
/// without showing it (OpenAI's reasoning models over chat completions) or queue a request
/// (OpenRouter) send keep-alives, which count; so two minutes of total silence is a dead
/// connection, not a slow model. That is well under the HTTP client's 300 s read timeout it stands
/// in for, and a provider known to go quiet longer can be given more.
pub const DEFAULT_STALL_TIMEOUT_SECS: u64 = 120;

/// A provider's stall timeout: as configured, else [`DEFAULT_STALL_TIMEOUT_SECS`].
pub fn stall_timeout(configured: Option<std::num::NonZeroU64>) -> std::time::Duration {
    std::time::Duration::from_secs(configured.map_or(DEFAULT_STALL_TIMEOUT_SECS, std::num::NonZeroU64::get))
}

/// Which request field carries the length limit.
///
/// `max_tokens` is the default because every target server honours it; OpenAI's reasoning models
/// (o-series, gpt-5) reject it and need `max_completion_tokens`, which Ollama silently ignores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_tokens`.
    #[default]
    MaxTokens,
    /// `max_completion_tokens`.
    MaxCompletionTokens,
}

impl MaxTokensField {
    /// The JSON field name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxTokens => "max_tokens",
            Self::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// One model of a provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The model's name at the provider.
    pub id: String,
    /// Label shown in the picker; defaults to `id`.
    #[serde(default)]
    pub label: Option<String>,
    /// Context window in tokens; the server's own figure wins when it reports one, and without
    /// either the window is [guessed](GUESSED_CONTEXT_WINDOW).
    #[serde(default)]
    pub context_window: Option<u32>,
    /// How it counts tokens (`o200k` or `estimate`); guessed from `id` when absent.
    #[serde(default)]
    pub tokenizer: Option<flint_protocol::Tokenizer>,
    /// Whether it takes reasoning keys (`reasoning_effort`); guessed from `id` when absent
    /// ([`flint_protocol::guess_reasoning`]).
    #[serde(default)]
    pub reasoning: Option<bool>,
    /// Whether it sees images (`image_url` / `input_image` parts); guessed from `id` when absent
    /// ([`flint_protocol::guess_vision`]). A model that does not see is never sent an image.
    #[serde(default)]
    pub vision: Option<bool>,
    /// Dollars per million tokens, `{ input = 1.75, output = 14.0 }`: shown as cost per stream,
    /// run and session. Unset: no cost is shown.
    #[serde(default)]
    pub price: Option<PriceConfig>,
}

/// A model's price, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceConfig {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million generated tokens.
    pub output: f64,
}

impl ModelConfig {
    /// Whether the model takes reasoning keys: as configured, else guessed from its id.
    pub fn reasoning(&self) -> bool {
        self.reasoning.unwrap_or_else(|| flint_protocol::guess_reasoning(&self.id))
    }

    /// Whether the model sees images: as configured, else guessed from its id.
    pub fn vision(&self) -> bool {
        self.vision.unwrap_or_else(|| flint_protocol::guess_vision(&self.id))
    }

    /// The price for `/api/models`.
    pub fn price(&self) -> Option<flint_protocol::Price> {
        self.price.map(|p| flint_protocol::Price { input_per_mtok: p.input, output_per_mtok: p.output })
    }
}

/// The context window assumed for a model neither configured nor reported by its server, and
/// labelled as a guess in `/api/models`: today's common size for hosted models.
pub const GUESSED_CONTEXT_WINDOW: u32 = 128_000;

/// The embedded model.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LocalConfig {
    /// Name used in model ids.
    pub name: String,
    /// The model's id in `/api/models`.
    pub model: String,
    /// Path of the GGUF file; defaults to the set-up's cached SmolLM2.
    pub model_path: Option<PathBuf>,
    /// Context window per stream, in tokens.
    pub context_window: u32,
    /// CPU threads for decoding; defaults to the number of cores.
    pub threads: Option<usize>,
    /// Streams decoded together in one batch.
    pub max_parallel: usize,
    /// KV cache cells shared by all streams; defaults to twice `context_window`. llama.cpp
    /// allocates them all at start.
    pub kv_tokens: Option<u32>,
    /// System prompt put in front of every conversation (combined with the client's own, if any);
    /// unset: the one tuned for SmolLM2; `""`: none.
    pub system_prompt: Option<String>,
    /// Start every answer with the opening of an HTML fenced block and end it at the fence that
    /// closes the document: small models then return a whole page far more often.
    pub prime_html: bool,
    /// Longest answer in tokens, whatever the request asks. A small model that loops instead of
    /// closing its page would otherwise decode until the context window is full.
    pub max_tokens: u32,
    /// Requests waiting for a free sequence (not yet started), all tabs together. More are refused
    /// at once (`rate_limited`): a queue the model cannot drain only holds memory and promises.
    pub max_waiting: usize,
    /// Requests one tab (connection) may have waiting; more are refused at once. At least 1:
    /// every request waits a moment, even for a free sequence.
    pub max_waiting_per_connection: usize,
    /// Prompt bytes waiting, all tabs together; more are refused at once.
    pub max_waiting_bytes: usize,
    /// Prompt bytes one tab may have waiting; more are refused at once.
    pub max_waiting_bytes_per_connection: usize,
}

impl Default for LocalConfig {
    fn default() -> Self {
        Self {
            name: "local".into(),
            model: "smollm2-135m-instruct".into(),
            model_path: None,
            context_window: 8192,
            threads: None,
            max_parallel: 8,
            kv_tokens: None,
            system_prompt: None,
            prime_html: true,
            max_tokens: 2048,
            // Eight rounds of eight sequences: at 2,048 tokens a stream on 2 cores the last one
            // would already wait minutes. See `local::queue`.
            max_waiting: 64,
            // `server.max_streams_per_connection`'s default: a tab alone is never refused here.
            max_waiting_per_connection: 16,
            // About 6 s of tokenizing (2.7 MB/s on 2 cores): the longest a newcomer can find
            // the tokenizer busy with others' prompts.
            max_waiting_bytes: 16 << 20,
            // 16 prompts of 256 kB; a full 8,192-token prompt of code or prose is about 40 kB.
            max_waiting_bytes_per_connection: 4 << 20,
        }
    }
}

impl ProviderConfig {
    /// The provider's configured name.
    pub fn name(&self) -> &str {
        match self {
            Self::Openai(c) => &c.name,
            Self::Responses(c) => &c.name,
            Self::Local(c) => &c.name,
        }
    }
}
