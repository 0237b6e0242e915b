//! `flint.toml`: where the gateway listens and which providers it relays to.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Listening address and limits.
    #[serde(default)]
    pub server: ServerConfig,
    /// Providers, in the order they are listed in `/api/models`.
    #[serde(default)]
    pub providers: Vec<ProviderConfig>,
    /// `provider/model` to preselect; defaults to the first available model.
    #[serde(default)]
    pub default_model: Option<String>,
}

/// `[server]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// The built app (Trunk's `dist/`), served at `/`.
    pub dist: PathBuf,
    /// Concurrent streams one connection may run.
    pub max_streams_per_connection: usize,
    /// Largest client frame accepted, in bytes.
    pub max_frame_bytes: usize,
    /// `max_tokens` used when the client sends none, and the cap on what it sends.
    pub max_tokens: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            dist: PathBuf::from("dist"),
            max_streams_per_connection: 16,
            max_frame_bytes: 2 * 1024 * 1024,
            max_tokens: 8192,
        }
    }
}

/// `[[providers]]`, told apart by `kind`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderConfig {
    /// Any OpenAI-compatible `/chat/completions` server: Cerebras, Groq, OpenRouter, vLLM,
    /// llama.cpp's server, Ollama, OpenAI.
    Openai(OpenAiConfig),
    /// The embedded llama.cpp model.
    Local(LocalConfig),
}

/// An OpenAI-compatible provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiConfig {
    /// Name used in model ids (`name/model`).
    pub name: String,
    /// Base URL up to and including `/v1`.
    pub base_url: String,
    /// Environment variable holding the key (preferred over `api_key`).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The key itself, for local servers that want any non-empty key.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Models offered through this provider.
    pub models: Vec<ModelConfig>,
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
    /// Context window in tokens.
    #[serde(default = "default_context_window")]
    pub context_window: u32,
}

fn default_context_window() -> u32 {
    128_000
}

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
        }
    }
}
