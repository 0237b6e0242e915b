//! What each kind of model server answers, read without any IO: the kinds Flint looks for, their
//! model lists, and how big a model is (to offer the best-sized one).

use serde_json::Value;

use crate::config::DiscoveryPorts;

/// A kind of model server that runs on people's own machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// Ollama: `/api/tags` lists its models, `/api/show` tells a model's window.
    Ollama,
    /// llama.cpp's `llama-server`: `/v1/models`, `/props` (window and slots).
    LlamaCpp,
    /// LM Studio: `/api/v0/models` with each model's type and `max_context_length`.
    LmStudio,
    /// vLLM: `/v1/models` with `max_model_len`.
    Vllm,
    /// SGLang: `/v1/models` with `max_model_len`.
    Sglang,
    /// LiteLLM's proxy: `/v1/models`, `/model/info`; often wants a key.
    Litellm,
}

impl ServerKind {
    /// Every kind, in the order they are probed and listed.
    pub const ALL: [Self; 6] =
        [Self::Ollama, Self::LlamaCpp, Self::LmStudio, Self::Vllm, Self::Sglang, Self::Litellm];

    /// The provider name its models are listed under.
    pub fn slug(self) -> &'static str {
        match self {
            Self::Ollama => "ollama",
            Self::LlamaCpp => "llama-cpp",
            Self::LmStudio => "lm-studio",
            Self::Vllm => "vllm",
            Self::Sglang => "sglang",
            Self::Litellm => "litellm",
        }
    }

    /// Its name for people.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ollama => "Ollama",
            Self::LlamaCpp => "llama.cpp server",
            Self::LmStudio => "LM Studio",
            Self::Vllm => "vLLM",
            Self::Sglang => "SGLang",
            Self::Litellm => "LiteLLM",
        }
    }

    /// The port to look at (0: not looked for).
    pub fn port(self, ports: &DiscoveryPorts) -> u16 {
        match self {
            Self::Ollama => ports.ollama,
            Self::LlamaCpp => ports.llama_cpp,
            Self::LmStudio => ports.lm_studio,
            Self::Vllm => ports.vllm,
            Self::Sglang => ports.sglang,
            Self::Litellm => ports.litellm,
        }
    }
}

/// A model a found server serves.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundModel {
    /// Its name at the server.
    pub id: String,
    /// The context window the listing told, if it did (others are asked later, as for any
    /// configured server).
    pub window: Option<u32>,
    /// Billions of parameters, from the server or the name.
    pub params: Option<f64>,
}

/// Most models read from one listing: a server with more is listed in part.
const MAX_MODELS: usize = 200;

/// Smallest and largest windows believed (a misread field otherwise).
fn window(value: Option<&Value>) -> Option<u32> {
    let n = value?.as_u64().filter(|n| (256..=100_000_000).contains(n))?;
    u32::try_from(n).ok()
}

/// Models that cannot write a page: embedding and reranking models, which servers list alongside.
pub fn is_embedding(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    id.contains("embed") || id.contains("rerank")
}

fn model(id: &str, window: Option<u32>, params: Option<f64>) -> FoundModel {
    FoundModel { id: id.to_owned(), window, params: params.or_else(|| params_in(id)) }
}

/// The models in an OpenAI-style `GET /v1/models` body (`{"data": [{"id": …}]}`); `None` when the
/// body is not one. vLLM's and SGLang's `max_model_len` is kept.
pub fn openai_models(body: &Value) -> Option<Vec<FoundModel>> {
    let data = body.get("data")?.as_array()?;
    let models = data.iter().filter_map(|entry| {
        let id = entry.get("id")?.as_str()?;
        let window = window(entry.get("max_model_len")).or_else(|| window(entry.get("context_length")));
        Some(model(id, window, None))
    });
    Some(models.filter(|m| !is_embedding(&m.id)).take(MAX_MODELS).collect())
}

/// The models in Ollama's `GET /api/tags` (`{"models": [{"name", "details": {"parameter_size",
/// "family"}}]}`); `None` when the body is not one.
pub fn ollama_models(body: &Value) -> Option<Vec<FoundModel>> {
    let list = body.get("models")?.as_array()?;
    let models = list.iter().filter_map(|entry| {
        let id = entry.get("name").or_else(|| entry.get("model"))?.as_str()?;
        let details = entry.get("details");
        let family = details.and_then(|d| d.get("family")).and_then(Value::as_str).unwrap_or_default();
        if family.contains("bert") {
            return None;
        }
        let size = details.and_then(|d| d.get("parameter_size")).and_then(Value::as_str).and_then(params_in);
        Some(model(id, None, size))
    });
    Some(models.filter(|m| !is_embedding(&m.id)).take(MAX_MODELS).collect())
}

/// The models in LM Studio's `GET /api/v0/models` (`{"data": [{"id", "type", "max_context_length"}]}`),
/// language models only; `None` when the body is not one.
pub fn lm_studio_models(body: &Value) -> Option<Vec<FoundModel>> {
    let data = body.get("data")?.as_array()?;
    let models = data.iter().filter_map(|entry| {
        let id = entry.get("id")?.as_str()?;
        let kind = entry.get("type").and_then(Value::as_str).unwrap_or("llm");
        (kind != "embeddings").then(|| model(id, window(entry.get("max_context_length")), None))
    });
    Some(models.filter(|m| !is_embedding(&m.id)).take(MAX_MODELS).collect())
}

/// The windows in LiteLLM's `GET /model/info` (`{"data": [{"model_name", "model_info":
/// {"max_input_tokens"}}]}`), by model name.
pub fn litellm_windows(body: &Value) -> Vec<(String, u32)> {
    let Some(data) = body.get("data").and_then(Value::as_array) else { return Vec::new() };
    data.iter()
        .filter_map(|entry| {
            let name = entry.get("model_name")?.as_str()?;
            let info = entry.get("model_info")?;
            let n = window(info.get("max_input_tokens")).or_else(|| window(info.get("max_tokens")))?;
            Some((name.to_owned(), n))
        })
        .collect()
}

/// Billions of parameters named in `text`: `7b`, `8B`, `7.6B`, `135M`, `qwen2.5-coder:7b`,
/// `Llama-3.1-8B-Instruct`; the largest when several are named.
pub fn params_in(text: &str) -> Option<f64> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter_map(|word| {
            let word = word.to_ascii_lowercase();
            let (number, scale) = match word.strip_suffix('b') {
                Some(n) => (n, 1.0),
                None => (word.strip_suffix('m')?, 0.001),
            };
            let value: f64 = number.parse().ok().filter(|v: &f64| v.is_finite() && *v > 0.0)?;
            // A version (`3.1`) has no suffix; a count needs a digit first.
            number.starts_with(|c: char| c.is_ascii_digit()).then_some(value * scale)
        })
        .reduce(f64::max)
}

/// The model to offer first: the largest whose size is known, else the first listed.
pub fn best(models: &[FoundModel]) -> Option<&FoundModel> {
    let sized = models.iter().filter(|m| m.params.is_some());
    sized.reduce(|a, b| if b.params > a.params { b } else { a }).or_else(|| models.first())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sizes_are_read_from_names_and_servers() {
        assert_eq!(params_in("qwen2.5-coder:7b"), Some(7.0));
        assert_eq!(params_in("Llama-3.1-8B-Instruct"), Some(8.0));
        assert_eq!(params_in("7.6B"), Some(7.6));
        assert_eq!(params_in("SmolLM2-135M-Instruct"), Some(0.135));
        assert_eq!(params_in("llama3:latest"), None);
        assert_eq!(params_in("gpt-oss-20b"), Some(20.0));
        assert_eq!(params_in("model.q4_k_m.gguf"), None, "a quantisation is not a size");
        assert_eq!(params_in("b"), None);
    }

    #[test]
    fn the_best_is_the_largest_known_else_the_first() {
        let m = |id: &str| model(id, None, None);
        let list = [m("llama3:latest"), m("qwen2.5-coder:1.5b"), m("qwen2.5-coder:7b"), m("phi3:3.8b")];
        assert_eq!(best(&list).map(|m| m.id.as_str()), Some("qwen2.5-coder:7b"));
        assert_eq!(best(&[m("a"), m("b")]).map(|m| m.id.as_str()), Some("a"));
        assert_eq!(best(&[]), None);
    }

    #[test]
    fn ollama_tags_skip_embedding_models_and_keep_sizes() {
        let body = json!({ "models": [
            { "name": "llama3:latest", "details": { "family": "llama", "parameter_size": "8.0B" } },
            { "name": "nomic-embed-text:latest", "details": { "family": "nomic-bert", "parameter_size": "137M" } },
            { "name": "all-minilm", "details": { "family": "bert" } },
        ] });
        let models = ollama_models(&body).expect("a tags body");
        assert_eq!(models, [FoundModel { id: "llama3:latest".into(), window: None, params: Some(8.0) }]);
        assert_eq!(ollama_models(&json!({ "models": [] })), Some(vec![]));
        assert_eq!(ollama_models(&json!({ "data": [] })), None, "not Ollama's shape");
    }

    #[test]
    fn openai_lists_keep_vllm_windows() {
        let body = json!({ "object": "list", "data": [
            { "id": "Qwen/Qwen2.5-Coder-7B-Instruct", "max_model_len": 32768 },
            { "id": "text-embedding-3-small" },
            { "id": "plain" },
        ] });
        let models = openai_models(&body).expect("a models body");
        assert_eq!(models.len(), 2);
        assert_eq!((models[0].window, models[0].params), (Some(32768), Some(7.0)));
        assert_eq!(models[1], FoundModel { id: "plain".into(), window: None, params: None });
        assert_eq!(openai_models(&json!({ "error": "nope" })), None);
        assert_eq!(openai_models(&json!("<html>")), None);
    }

    #[test]
    fn lm_studio_lists_language_models_with_their_windows() {
        let body = json!({ "data": [
            { "id": "qwen2.5-7b-instruct", "type": "llm", "max_context_length": 32768 },
            { "id": "text-embedding-nomic", "type": "embeddings", "max_context_length": 2048 },
            { "id": "llava", "type": "vlm" },
        ] });
        let models = lm_studio_models(&body).expect("an LM Studio body");
        let ids: Vec<_> = models.iter().map(|m| (m.id.as_str(), m.window)).collect();
        assert_eq!(ids, [("qwen2.5-7b-instruct", Some(32768)), ("llava", None)]);
    }

    #[test]
    fn litellm_info_gives_windows() {
        let body = json!({ "data": [
            { "model_name": "gpt-4o", "model_info": { "max_input_tokens": 128000 } },
            { "model_name": "local", "model_info": { "max_tokens": 8192 } },
            { "model_name": "unknown", "model_info": {} },
        ] });
        assert_eq!(litellm_windows(&body), [("gpt-4o".to_owned(), 128_000), ("local".to_owned(), 8192)]);
        assert!(litellm_windows(&json!({})).is_empty());
    }
}
