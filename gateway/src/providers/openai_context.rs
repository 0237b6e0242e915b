//! The context window an OpenAI-compatible server reports for its models, and the number of
//! answers it runs at once (llama.cpp's slots), where it tells.
//!
//! There is no standard field, so each server kind is asked where it answers: vLLM (and
//! OpenRouter) put it in `GET /v1/models` entries, llama.cpp's server in `GET /props`, Ollama in
//! `POST /api/show`. Discovery runs once, in the background, when the provider is built: every
//! request has a short timeout, a stream never waits for it, and a server that answers none of
//! them (a hosted API, a server that is down) leaves the configured window, else a guess.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use flint_protocol::ContextSource;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::{Value, json};

use super::slots::Slots;
use crate::config::{GUESSED_CONTEXT_WINDOW, OpenAiConfig};

/// How long one discovery request may take: a local server answers in milliseconds, and one that
/// does not answer in time is treated as not telling.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// Smallest window believed: a smaller figure is more likely a misread field than a real context.
const MIN_WINDOW: u64 = 256;

/// The window to show for a model, and where it comes from: what the server reported, else what
/// is configured, else a guess.
pub(crate) fn context_of(discovered: Option<u32>, configured: Option<u32>) -> (u32, ContextSource) {
    match (discovered, configured) {
        (Some(n), _) => (n, ContextSource::Discovered),
        (None, Some(n)) => (n, ContextSource::Configured),
        (None, None) => (GUESSED_CONTEXT_WINDOW, ContextSource::Guess),
    }
}

fn window(value: Option<&Value>) -> Option<u32> {
    let n = value?.as_u64().filter(|n| *n >= MIN_WINDOW)?;
    u32::try_from(n).ok()
}

/// `model`'s window in a `GET /v1/models` body: vLLM's `max_model_len`, OpenRouter's
/// `context_length`.
pub(crate) fn from_models_list(body: &Value, model: &str) -> Option<u32> {
    let entry =
        body.get("data")?.as_array()?.iter().find(|e| e.get("id").and_then(Value::as_str) == Some(model))?;
    window(entry.get("max_model_len")).or_else(|| window(entry.get("context_length")))
}

/// The window in llama.cpp's `GET /props`: the context per slot, which is what one request gets
/// (`-c` divided by `--parallel`), under `default_generation_settings` in every version so far.
pub(crate) fn from_props(body: &Value) -> Option<u32> {
    let settings = body.get("default_generation_settings");
    window(settings.and_then(|s| s.get("n_ctx")))
        .or_else(|| window(settings.and_then(|s| s.pointer("/params/n_ctx"))))
        .or_else(|| window(body.get("n_ctx")))
}

/// The window in Ollama's `POST /api/show`: `num_ctx` when the model's parameters set it (what
/// Ollama runs it with), else `<arch>.context_length` (what it was trained for).
pub(crate) fn from_ollama_show(body: &Value) -> Option<u32> {
    let num_ctx = body.get("parameters").and_then(Value::as_str).and_then(|p| {
        p.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse::<u64>().ok()).flatten()
        })
    });
    if let Some(n) = num_ctx {
        return window(Some(&json!(n)));
    }
    let info = body.get("model_info")?.as_object()?;
    info.iter().find(|(k, _)| k.ends_with(".context_length")).and_then(|(_, v)| window(Some(v)))
}

/// The server's root: `base_url` without its `/v1`, where `/props` and `/api/show` live.
pub(crate) fn server_root(base_url: &str) -> &str {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

/// What the server told about itself.
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    /// Context windows, by model.
    pub windows: HashMap<String, u32>,
    /// llama.cpp's `total_slots`: how many answers it runs at once.
    pub total_slots: Option<usize>,
}

/// The number of slots in llama.cpp's `GET /props`: answers it runs at once. With one, a second
/// request waits at the server (llama.cpp) or cuts the first short (servers imitating it).
pub(crate) fn slots_from_props(body: &Value) -> Option<usize> {
    let n = body.get("total_slots")?.as_u64().filter(|n| (1..=MAX_SLOTS).contains(n))?;
    usize::try_from(n).ok()
}

/// Largest slot count believed: more is a misread field, and would be no limit anyway.
const MAX_SLOTS: u64 = 4096;

/// Starts discovery in the background (where a runtime runs): the windows go into `windows`,
/// the server's slots, where it reports them, become `slots`' limit, and `learnt` turns true
/// at the end (or is dropped unsent, with the task or without a runtime).
pub(crate) fn spawn(
    config: &OpenAiConfig,
    client: &reqwest::Client,
    authorization: Option<HeaderValue>,
    windows: Arc<RwLock<HashMap<String, u32>>>,
    slots: Option<Arc<Slots>>,
    learnt: tokio::sync::watch::Sender<bool>,
) -> Option<tokio::task::AbortHandle> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let (client, base_url, name) = (client.clone(), config.base_url.clone(), config.name.clone());
    let models: Vec<String> = config.models.iter().map(|m| m.id.clone()).collect();
    let task = async move {
        let found = discover(&client, &base_url, authorization.as_ref(), &models, slots.is_some()).await;
        if let (Some(n), Some(slots)) = (found.total_slots, slots) {
            tracing::info!(provider = %name, slots = n, "the server reports its slots; sending at most that many at once");
            slots.set_limit(Some(n));
        }
        if !found.windows.is_empty() {
            tracing::info!(provider = %name, windows = ?found.windows, "the server reports its context windows");
        }
        windows.write().unwrap_or_else(|e| e.into_inner()).extend(found.windows);
        learnt.send_replace(true);
    };
    Some(runtime.spawn(task).abort_handle())
}

/// Asks the server at `base_url` for the windows of `models`, and, with `want_slots`, its slots;
/// returns what it told.
pub(crate) async fn discover(
    client: &reqwest::Client,
    base_url: &str,
    authorization: Option<&HeaderValue>,
    models: &[String],
    want_slots: bool,
) -> Discovered {
    let get = |url: String| with_key(client.get(url), authorization);
    let base = base_url.trim_end_matches('/');
    let root = server_root(base_url);
    let mut found = HashMap::new();
    let mut total_slots = None;
    if let Some(list) = fetch(get(format!("{base}/models"))).await {
        found.extend(models.iter().filter_map(|m| Some((m.clone(), from_models_list(&list, m)?))));
    }
    if (want_slots || found.len() < models.len())
        && let Some(props) = fetch(get(format!("{root}/props"))).await
    {
        total_slots = slots_from_props(&props);
        if let Some(n) = from_props(&props) {
            for model in models {
                found.entry(model.clone()).or_insert(n);
            }
        }
    }
    for model in models {
        if found.contains_key(model) {
            continue;
        }
        let show =
            with_key(client.post(format!("{root}/api/show")), authorization).json(&json!({ "model": model }));
        match fetch(show).await.as_ref().and_then(from_ollama_show) {
            Some(n) => {
                found.insert(model.clone(), n);
            }
            // A server that does not know `/api/show` for one model knows it for none.
            None => break,
        }
    }
    Discovered { windows: found, total_slots }
}

fn with_key(
    request: reqwest::RequestBuilder,
    authorization: Option<&HeaderValue>,
) -> reqwest::RequestBuilder {
    match authorization {
        Some(auth) => request.header(AUTHORIZATION, auth.clone()),
        None => request,
    }
}

/// The JSON body of a successful answer, or `None` for anything else.
async fn fetch(request: reqwest::RequestBuilder) -> Option<Value> {
    let response = request.timeout(REQUEST_TIMEOUT).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    tokio::time::timeout(REQUEST_TIMEOUT, response.json::<Value>()).await.ok()?.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_beats_configured_beats_a_guess() {
        assert_eq!(context_of(Some(2048), Some(8192)), (2048, ContextSource::Discovered));
        assert_eq!(context_of(None, Some(8192)), (8192, ContextSource::Configured));
        assert_eq!(context_of(None, None), (GUESSED_CONTEXT_WINDOW, ContextSource::Guess));
    }

    #[test]
    fn vllm_and_openrouter_model_lists_are_read() {
        let body = json!({ "data": [
            { "id": "other", "max_model_len": 1024 },
            { "id": "qwen", "max_model_len": 32768 },
            { "id": "router/model", "context_length": 200000 },
            { "id": "plain" },
        ] });
        assert_eq!(from_models_list(&body, "qwen"), Some(32768));
        assert_eq!(from_models_list(&body, "router/model"), Some(200_000));
        assert_eq!(from_models_list(&body, "plain"), None);
        assert_eq!(from_models_list(&body, "missing"), None);
        assert_eq!(from_models_list(&json!({ "data": [{ "id": "m", "max_model_len": 0 }] }), "m"), None);
    }

    #[test]
    fn llama_cpp_props_are_read_old_and_new() {
        assert_eq!(from_props(&json!({ "default_generation_settings": { "n_ctx": 2048 } })), Some(2048));
        let nested = json!({ "default_generation_settings": { "params": { "n_ctx": 4096 } } });
        assert_eq!(from_props(&nested), Some(4096));
        assert_eq!(from_props(&json!({ "n_ctx": 8192 })), Some(8192));
        assert_eq!(from_props(&json!({ "total_slots": 1 })), None);
    }

    #[test]
    fn llama_cpp_total_slots_are_read() {
        assert_eq!(slots_from_props(&json!({ "total_slots": 1, "n_ctx": 4096 })), Some(1));
        assert_eq!(slots_from_props(&json!({ "total_slots": 4 })), Some(4));
        assert_eq!(slots_from_props(&json!({ "total_slots": 0 })), None, "no slots is a misread");
        assert_eq!(slots_from_props(&json!({ "total_slots": "1" })), None);
        assert_eq!(slots_from_props(&json!({ "n_ctx": 4096 })), None);
    }

    #[test]
    fn ollama_show_prefers_num_ctx_to_the_trained_length() {
        let trained =
            json!({ "model_info": { "general.architecture": "llama", "llama.context_length": 131072 } });
        assert_eq!(from_ollama_show(&trained), Some(131_072));
        let mut set = trained.clone();
        set["parameters"] = json!("stop \"<|eot_id|>\"\nnum_ctx                        8192");
        assert_eq!(from_ollama_show(&set), Some(8192));
        assert_eq!(from_ollama_show(&json!({ "parameters": "temperature 0.7" })), None);
    }

    #[test]
    fn the_root_drops_v1() {
        assert_eq!(server_root("http://127.0.0.1:8080/v1/"), "http://127.0.0.1:8080");
        assert_eq!(server_root("http://127.0.0.1:11434/v1"), "http://127.0.0.1:11434");
        assert_eq!(server_root("https://openrouter.ai/api/v1"), "https://openrouter.ai/api");
        assert_eq!(server_root("http://host/custom"), "http://host/custom");
    }
}
