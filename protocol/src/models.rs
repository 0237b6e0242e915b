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
    /// Whether the model sees images: configured (`vision = true`), or guessed from its name
    /// ([`guess_vision`]). A model that does not see is never sent an image; the embedded model
    /// never sees. Added in protocol 1 without a bump: older gateways leave it out (false).
    #[serde(default)]
    pub vision: bool,
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

/// Whether a model of this name most likely sees images. A guess from published model cards, for
/// ids nobody configured: the operator's `vision = true` or `false` on the model always wins.
/// OpenAI's GPT-4o, GPT-4.1, GPT-5 (not Codex-Spark, text-only to fit one chip) and o3/o4;
/// Claude 3 and 4; Gemini; and the open vision families (LLaVA, Qwen-VL, Llama 3.2 Vision,
/// Llama 4, Pixtral, Gemma 3 from 4B, MiniCPM-V, Moondream, InternVL, Phi-3.5-vision,
/// Phi-4-multimodal).
pub fn guess_vision(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    if name.contains("spark") {
        return false;
    }
    // Gemma 3's smallest sizes are text-only.
    if name.starts_with("gemma-3") || name.starts_with("gemma3") {
        return !["270m", "1b"].iter().any(|size| name.contains(size));
    }
    let starts = [
        "gpt-4o",
        "chatgpt-4o",
        "gpt-4.1",
        "gpt-5",
        "o3",
        "o4",
        "claude-3",
        "claude-4",
        "gemini",
        "llama-4",
        "llama4",
    ];
    let contains = [
        "llava",
        "qwen2-vl",
        "qwen2.5-vl",
        "qwen2.5vl",
        "qwen-vl",
        "qwen3-vl",
        "pixtral",
        "minicpm-v",
        "moondream",
        "internvl",
        "phi-3.5-vision",
        "phi-4-multimodal",
        "claude-sonnet-4",
        "claude-opus-4",
        "claude-haiku-4",
    ];
    let llama_vision =
        name.contains("llama-3.2") && name.contains("vision") || name.starts_with("llama3.2-vision");
    starts.iter().any(|p| name.starts_with(p)) || contains.iter().any(|p| name.contains(p)) || llama_vision
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
    /// The model that describes images for a code model that does not see (`[vision] model` in
    /// the gateway's `flint.toml`): checked at start to be a listed model that sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision_model: Option<String>,
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
    /// The project kind its answers are asked for, unless the person picks one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<crate::prompt::ProjectKind>,
    /// Settings the gateway dropped or doubts, each a sentence naming the key and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
