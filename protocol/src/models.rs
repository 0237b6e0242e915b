//! `GET /api/models`: the models a gateway serves, what they cost, and the profiles built on them.

use serde::{Deserialize, Serialize};

use crate::GenParams;

/// One entry of `GET /api/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Id to put in [`StartRequest::model`]: `provider/model`.
    pub id: String,
    /// The provider's configured name.
    pub provider: String,
    /// The model's name at the provider.
    pub model: String,
    /// Human-readable label.
    pub label: String,
    /// Context window in tokens.
    pub context_window: u32,
    /// Where `context_window` comes from; a [guess](ContextSource::Guess) may be far off.
    #[serde(default)]
    pub context_source: ContextSource,
    /// How the model counts tokens (for the context meter).
    #[serde(default)]
    pub tokenizer: Tokenizer,
    /// Whether the model takes reasoning keys (`reasoning_effort`): configured, or guessed from
    /// its name ([`guess_reasoning`]). Keys a model does not take are not sent, and a profile that
    /// sets them is warned about.
    #[serde(default)]
    pub reasoning: bool,
    /// Whether a person may use their own key for it (the operator's `allow_user_keys`).
    #[serde(default)]
    pub user_key: bool,
    /// What its tokens cost, when the operator configured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// Whether the model can be used right now; when not, `problem` says why.
    pub available: bool,
    /// What is wrong with the model, for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A model's price in US dollars per million tokens, as the operator configured it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Per million prompt (input) tokens.
    pub input_per_mtok: f64,
    /// Per million generated (output) tokens, reasoning tokens included.
    pub output_per_mtok: f64,
}

impl Price {
    /// The cost of one stream's tokens, in dollars.
    pub fn cost(&self, prompt_tokens: u32, completion_tokens: u32) -> f64 {
        (f64::from(prompt_tokens) * self.input_per_mtok + f64::from(completion_tokens) * self.output_per_mtok)
            / 1_000_000.0
    }
}

/// Whether a model of this name most likely takes reasoning keys: OpenAI's o-series, GPT-5 and
/// Codex models and gpt-oss do; Codex-Spark does not (it is tuned for speed, and a reasoning
/// setting tuned for a deep model only makes its answers confusingly shallow); other open models
/// do not.
pub fn guess_reasoning(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    if name.contains("spark") || name.contains("chat-latest") {
        return false;
    }
    ["gpt-5", "gpt-oss", "o1", "o3", "o4", "codex"].iter().any(|p| name.starts_with(p))
}

/// Where a model's context window was learnt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextSource {
    /// Set in the gateway's configuration (what a gateway that does not say reports).
    #[default]
    Configured,
    /// Reported by the serving model server itself.
    Discovered,
    /// Neither configured nor reported: a common size, which the server may not match.
    Guess,
}

/// How a model splits text into tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tokenizer {
    /// `o200k_base` (GPT-4o, GPT-5 and Codex models): counts are exact.
    O200k,
    /// Another vocabulary: counts are an estimate (o200k counts, labelled as such).
    #[default]
    Estimate,
}

impl Tokenizer {
    /// The tokenizer a model of this name most likely uses: o200k for OpenAI's GPT-4o, GPT-5, o-series
    /// and Codex models; an estimate for anything else.
    pub fn guess(model: &str) -> Self {
        let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
        let openai = ["gpt-4o", "gpt-4.1", "gpt-5", "gpt-oss", "o1", "o3", "o4", "codex", "chatgpt"];
        if openai.iter().any(|p| name.starts_with(p)) { Self::O200k } else { Self::Estimate }
    }
}

/// Body of `GET /api/models`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    /// Configured models, the default first.
    pub models: Vec<ModelInfo>,
    /// The id to preselect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Set-up advice when no model is usable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Configured profiles, in the file's order; the app's toggle switches between the first two.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<Profile>,
    /// Model servers the gateway found by itself on its own machine (Ollama, llama.cpp's server…),
    /// whose models are in `models` under the server's `provider` name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<FoundServer>,
    /// Whether the gateway looks for such servers, so the picker may offer "Rescan".
    #[serde(default)]
    pub discovery: bool,
}

/// A model server found on the gateway's machine without any configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundServer {
    /// The provider name its models are listed under (`ollama`).
    pub provider: String,
    /// What it is, for people (`Ollama`).
    pub kind: String,
    /// Where it answers (`127.0.0.1:11434`).
    pub address: String,
    /// Its largest model by parameter count, where the names or the server say (`ollama/qwen2.5-coder:7b`);
    /// else its first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<String>,
    /// Why its models cannot be used (it wants a key), for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A named set of settings (`[profiles.NAME]` in the gateway's `flint.toml`): a model and how to
/// ask it. The app toggles between the first two (Spark for fast iteration, Deep for hard
/// problems).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The key in `flint.toml` (`spark`), carried in sessions and share links.
    pub name: String,
    /// Shown on the toggle (`Spark`).
    pub label: String,
    /// A model id from the list (`provider/model`).
    pub model: String,
    /// Sampling, length and reasoning settings; keys the model does not take are already removed.
    #[serde(default)]
    pub params: GenParams,
    /// Added to the system prompt of every request made with this profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Settings the gateway dropped or doubts, each a sentence naming the key and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
