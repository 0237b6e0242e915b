//! The embedded llama.cpp model as a provider.
//!
//! The model is loaded when the provider is built. When that fails (missing, truncated or
//! non-GGUF file) the provider still exists: `/api/models` lists the model as unavailable with the
//! reason, its streams fail with [`ProviderError::ModelUnavailable`], and the gateway goes on
//! serving its other providers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use flint_protocol::{ChatMessage, ModelInfo, Role};

use super::{EventStream, GenRequest, Provider, ProviderError};
use crate::config::LocalConfig;
use crate::local::code_end::CodeEnd;
use crate::local::engine::{Engine, EngineConfig};
use crate::local::queue::WaitingLimits;
use crate::local::sequence::{Job, Sampling};
use crate::local::template::{ChatTemplate, TUNED_SYSTEM_PROMPT, with_system_prompt};
use crate::local::{default_threads, model_file};

/// Temperature when the request sets none: low, because this small model drifts off the format
/// quickly when sampled hotter.
pub const DEFAULT_TEMPERATURE: f32 = 0.2;
/// Nucleus threshold when the request sets none.
pub const DEFAULT_TOP_P: f32 = 0.95;

/// With `prime_html`, every answer starts with this (it ends the prompt and is sent as the first
/// text), and ends when its code is complete ([`CodeEnd`]): at `</html>`, with the fence closed
/// for it, or where the model closes the fence itself.
pub const HTML_PRIMER: &str = "```html\n<!DOCTYPE html>\n<html>\n";

/// Builds the local provider from its configuration. Never fails: a model that cannot be loaded
/// yields a provider that says why.
pub fn build(config: &LocalConfig) -> Arc<dyn Provider> {
    Arc::new(LocalProvider::new(config))
}

/// The embedded model provider.
pub struct LocalProvider {
    config: LocalConfig,
    state: Result<Ready, String>,
}

struct Ready {
    engine: Engine,
    template: ChatTemplate,
    system_prompt: String,
}

impl LocalProvider {
    /// Loads the model named by `config` (or the default model file, see
    /// [`model_file::default_model_path`]) and starts its engine thread.
    pub fn new(config: &LocalConfig) -> Self {
        let path = config.model_path.clone().unwrap_or_else(model_file::default_model_path);
        let engine_config = EngineConfig {
            model_path: path.clone(),
            context_window: config.context_window.max(16),
            // Room for a few streams of full length; llama.cpp allocates all of it up front.
            kv_tokens: config.kv_tokens.unwrap_or(config.context_window.max(16).saturating_mul(2)),
            threads: config.threads.unwrap_or_else(default_threads),
            max_parallel: config.max_parallel.clamp(1, 64),
            // Every request waits a moment, even for a free sequence: at least one must fit.
            waiting: WaitingLimits {
                requests: config.max_waiting.max(1),
                requests_per_connection: config.max_waiting_per_connection.max(1),
                bytes: config.max_waiting_bytes.max(1),
                bytes_per_connection: config.max_waiting_bytes_per_connection.max(1),
            },
        };
        let state = Engine::start(engine_config).map_err(|e| e.to_string()).and_then(|engine| {
            let loaded = engine.loaded();
            let template = ChatTemplate::new(loaded.gguf.chat_template.as_deref(), &loaded.bos, &loaded.eos)
                .map_err(|e| e.to_string())?;
            let system_prompt = config.system_prompt.clone().unwrap_or_else(|| TUNED_SYSTEM_PROMPT.into());
            if let Some(prefix) = prompt_prefix(&template, &system_prompt) {
                engine.set_prompt_prefix(prefix);
            }
            tracing::info!(
                model = %config.model,
                path = %path.display(),
                template = ?template.source(),
                "local model loaded"
            );
            Ok(Ready { engine, template, system_prompt })
        });
        if let Err(problem) = &state {
            tracing::error!(model = %config.model, "local model unavailable: {problem}");
        }
        Self { config: config.clone(), state }
    }

    /// The running engine, when the model loaded (for tests and benchmarks).
    pub fn engine(&self) -> Option<&Engine> {
        self.state.as_ref().ok().map(|r| &r.engine)
    }

    /// Why the model is unavailable, if it is.
    pub fn problem(&self) -> Option<&str> {
        self.state.as_ref().err().map(String::as_str)
    }

    /// The prompt text the model sees for `request` (system prompt, chat template and any HTML
    /// primer applied), and the primer, which is also the answer's first text.
    pub fn render_prompt(&self, request: &GenRequest) -> Result<(String, String), ProviderError> {
        let ready = self.state.as_ref().map_err(|p| ProviderError::ModelUnavailable(p.clone()))?;
        let messages = with_system_prompt(&request.messages, &ready.system_prompt);
        let mut prompt =
            ready.template.render(&messages).map_err(|e| ProviderError::Unavailable(e.to_string()))?;
        let answering_user = request.messages.last().is_some_and(|m| m.role == Role::User);
        let preamble = if self.config.prime_html && answering_user { HTML_PRIMER } else { "" };
        prompt.push_str(preamble);
        Ok((prompt, preamble.to_owned()))
    }

    fn start(&self, request: GenRequest) -> Result<EventStream, ProviderError> {
        let ready = self.state.as_ref().map_err(|p| ProviderError::ModelUnavailable(p.clone()))?;
        if request.model != self.config.model {
            return Err(ProviderError::UnknownModel(format!(
                "the local provider serves {}, not {}",
                self.config.model, request.model
            )));
        }
        let (prompt, preamble) = self.render_prompt(&request)?;
        let params = &request.params;
        let sampling = Sampling {
            temperature: params.temperature.unwrap_or(DEFAULT_TEMPERATURE).clamp(0.0, 2.0),
            top_p: params.top_p.filter(|p| *p > 0.0).unwrap_or(DEFAULT_TOP_P).min(1.0),
            seed: params.seed.map_or_else(random_seed, fold_seed),
        };
        let (events, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let stop = (!preamble.is_empty()).then(|| CodeEnd::after(&preamble));
        // A refusal comes back here, so the stream's first item says why at once.
        ready.engine.submit(Job {
            client: request.client,
            prompt,
            preamble,
            stop,
            max_tokens: params
                .max_tokens
                .unwrap_or(self.config.max_tokens)
                .clamp(1, self.config.max_tokens.max(1)),
            sampling,
            model_label: self.config.model.clone(),
            events,
        })?;
        // Dropping this stream drops the receiver; the engine sees the closed channel before its
        // next step and frees the sequence.
        Ok(Box::pin(futures::stream::poll_fn(move |cx| rx.poll_recv(cx))))
    }
}

impl Provider for LocalProvider {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn models(&self) -> Vec<ModelInfo> {
        vec![ModelInfo {
            id: format!("{}/{}", self.config.name, self.config.model),
            provider: self.config.name.clone(),
            model: self.config.model.clone(),
            label: label(&self.config.model),
            context_window: self.config.context_window,
            // The window the engine allocates: configured, and exact.
            context_source: flint_protocol::ContextSource::Configured,
            // Its own vocabulary is not in the worker: the meter shows an estimate.
            tokenizer: flint_protocol::Tokenizer::Estimate,
            reasoning: false,
            // The embedded model is text-only: an image is refused before it gets here.
            vision: false,
            price: None,
            user_key: false,
            available: self.state.is_ok(),
            problem: self.problem().map(str::to_owned),
        }]
    }

    fn stream(&self, request: GenRequest) -> EventStream {
        match self.start(request) {
            Ok(stream) => stream,
            Err(e) => Box::pin(futures::stream::once(async move { Err(e) })),
        }
    }
}

/// The picker's label: the shipped SmolLM2 says plainly what it is (the app reads "demo model" to
/// offer a found server's model instead); another configured file is named as it is.
fn label(model: &str) -> String {
    if model == LocalConfig::default().model {
        format!("{model} · 135M demo model (embedded, CPU)")
    } else {
        format!("{model} (embedded, CPU)")
    }
}

/// The prompt text every request without its own system message starts with: the rendered tuned
/// system prompt and the opening of the user's turn. The engine keeps it in its prompt cache.
fn prompt_prefix(template: &ChatTemplate, system_prompt: &str) -> Option<String> {
    const MARK: &str = "\u{1}flint-user-text\u{1}";
    let messages = with_system_prompt(&[ChatMessage::new(Role::User, MARK)], system_prompt);
    let text = template.render(&messages).ok()?;
    text.find(MARK).map(|at| text[..at].to_owned())
}

/// llama.cpp seeds are 32-bit; keep all 64 bits of the client's seed in play.
fn fold_seed(seed: u64) -> u32 {
    (seed ^ (seed >> 32)) as u32
}

/// A seed for requests that set none: differs per request so variations differ.
fn random_seed() -> u32 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // splitmix64 step, so close timestamps give unrelated seeds.
    let mut z = nanos ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    fold_seed(z ^ (z >> 31))
}
