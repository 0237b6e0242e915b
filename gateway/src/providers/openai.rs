//! Any OpenAI-compatible `/chat/completions` server, streamed over SSE.
//!
//! One POST per generation with `"stream": true` and `stream_options.include_usage`, read
//! incrementally: each `data:` chunk's `choices[0].delta.content` becomes a
//! [`ProviderEvent::Delta`] (`openai_reading.rs`, which also asks a body that ended with no event
//! at all why, unstreamed). Dropping the stream drops the response, which closes the upstream
//! connection: that is how cancel reaches the provider.
//!
//! At most `max_concurrent` (else the slots the server reports) run at once; the others wait in
//! the provider's slots (`providers/slots.rs`), which say where they stand as
//! [`ProviderEvent::Queued`].
//!
//! The length limit goes out as `max_tokens` unless the provider is configured otherwise
//! ([`MaxTokensField`]): it is the one name every target server honours. OpenAI deprecated it in
//! favour of `max_completion_tokens` (and its reasoning models reject it), but Ollama's
//! OpenAI-compatible endpoint silently ignores `max_completion_tokens`, and llama.cpp's server only
//! learned it in 2026; Cerebras, Groq and vLLM accept both.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use flint_protocol::{ChatMessage, ModelInfo};
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::{Value, json};

use self::reading::Reading;
use super::openai_context;
use super::openai_errors::{self, KeyHint};
use super::redact::Redactor;
use super::slots::{Admission, Slots, Waiter, take_turn};
use super::upstream_http::UpstreamClient;
use super::{EventStream, GenRequest, Provider, ProviderError, ProviderEvent, TextScrubber};
use crate::config::{MaxTokensField, ModelConfig, OpenAiConfig};

#[path = "openai_keys.rs"]
mod keys;
#[path = "openai_reading.rs"]
mod reading;

pub(crate) use self::keys::{Credentials, credentials, key_for, missing_key, scrubber_for};

/// An OpenAI-compatible provider.
pub struct OpenAiProvider {
    inner: Arc<Inner>,
    models: Vec<ModelConfig>,
    /// Context windows the server reported, by model; filled once, in the background.
    discovered: Arc<RwLock<HashMap<String, u32>>>,
    /// The discovery task, stopped with the provider.
    discovery: Option<tokio::task::AbortHandle>,
}

impl Drop for OpenAiProvider {
    fn drop(&mut self) {
        if let Some(task) = &self.discovery {
            task.abort();
        }
    }
}

/// What a stream needs after the provider call returned.
#[derive(Clone)]
struct Inner {
    name: String,
    endpoint: String,
    client: UpstreamClient,
    /// `Bearer <key>`, marked sensitive so it never shows in debug output.
    authorization: Option<HeaderValue>,
    /// Scrubs the key from everything the upstream says that reaches a browser.
    redactor: Arc<Redactor>,
    hint: KeyHint,
    max_tokens_field: MaxTokensField,
    /// The models that take reasoning keys ([`ModelConfig::reasoning`]); the others do not get them.
    reasoning: HashSet<String>,
    /// Generations sent at once (`max_concurrent`, else the server's slots); the rest wait here.
    slots: Arc<Slots>,
    /// People may use their own key (`allow_user_keys`).
    allow_user_keys: bool,
    /// Whether the limit is `max_concurrent` rather than what the server reported.
    limit_configured: bool,
    /// Silence after which a stream fails (`stall_timeout_secs`).
    stall_timeout: std::time::Duration,
    /// Turns true when the background look at the server's windows and slots has ended
    /// ([`openai_context::spawn`]); a sender dropped unsent means there was none.
    learnt: tokio::sync::watch::Receiver<bool>,
}

impl std::fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("name", &self.inner.name)
            .field("endpoint", &self.inner.endpoint)
            .field("key", &self.inner.authorization.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl OpenAiProvider {
    /// Builds the provider; `env` looks up environment variables (for `api_key_env`).
    pub fn new(config: &OpenAiConfig, client: UpstreamClient, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let Credentials { authorization, redactor, hint } = credentials(
            config.api_key_env.as_deref(),
            config.api_key.as_deref(),
            config.api_key_optional,
            env,
        );
        let endpoint = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        let discovered = Arc::new(RwLock::new(HashMap::new()));
        let limit = config.max_concurrent.map(std::num::NonZeroUsize::get);
        let slots = Slots::new(limit);
        let (learning, learnt) = tokio::sync::watch::channel(false);
        let discovery = openai_context::spawn(
            config,
            client.plain(),
            authorization.clone(),
            discovered.clone(),
            limit.is_none().then(|| slots.clone()),
            learning,
        );
        Self {
            discovered,
            discovery,
            inner: Arc::new(Inner {
                name: config.name.clone(),
                endpoint,
                client,
                authorization,
                redactor,
                hint,
                max_tokens_field: config.max_tokens_field,
                reasoning: config.models.iter().filter(|m| m.reasoning()).map(|m| m.id.clone()).collect(),
                slots,
                limit_configured: limit.is_some(),
                allow_user_keys: config.allow_user_keys,
                stall_timeout: crate::config::stall_timeout(config.stall_timeout_secs),
                learnt,
            }),
            models: config.models.clone(),
        }
    }

    fn problem(&self) -> Option<String> {
        missing_key(&self.inner.name, &self.inner.hint, self.inner.authorization.as_ref())
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.inner.name
    }

    fn models(&self) -> Vec<ModelInfo> {
        let problem = self.problem();
        let discovered = self.discovered.read().unwrap_or_else(|e| e.into_inner());
        self.models
            .iter()
            .map(|m| {
                let window = discovered.get(&m.id).copied();
                super::model_info(&self.inner.name, m, window, self.inner.allow_user_keys, &problem)
            })
            .collect()
    }

    fn stream(&self, request: GenRequest) -> EventStream {
        let inner = match key_for(&self.inner.name, &request, self.inner.allow_user_keys, self.problem()) {
            Ok(None) => self.inner.clone(),
            Ok(Some(Credentials { authorization, redactor, hint })) => {
                Arc::new(Inner { authorization, redactor, hint, ..(*self.inner).clone() })
            }
            Err(err) => return Box::pin(futures::stream::once(async move { Err(err) })),
        };
        let start = State::Start { inner, request };
        Box::pin(futures::stream::unfold(start, step))
    }

    fn scrubber(&self, request: &GenRequest) -> Option<Box<dyn TextScrubber>> {
        scrubber_for(&self.inner.redactor, request, self.inner.allow_user_keys)
    }
}

type Item = Result<ProviderEvent, ProviderError>;

enum State {
    Start { inner: Arc<Inner>, request: GenRequest },
    Waiting { inner: Arc<Inner>, request: GenRequest, waiter: Box<Waiter> },
    Reading(Box<Reading>),
    Over,
}

/// Longest a generation waits for the look at the server to end (each of its requests has 2 s).
const LEARNING_WAIT: Duration = Duration::from_secs(3);

async fn step(state: State) -> Option<(Item, State)> {
    let (inner, request, waiter) = match state {
        State::Start { inner, request } => {
            // The first answers wait for the look at the server: llama-cpp-python's server ends
            // the answer it is streaming when any other request arrives (`interrupt_requests`),
            // and the slot count the look learns should bound the first answers too.
            let mut learnt = inner.learnt.clone();
            let _ = tokio::time::timeout(LEARNING_WAIT, learnt.wait_for(|done| *done)).await;
            (inner, request, None)
        }
        State::Waiting { inner, request, waiter } => (inner, request, Some(waiter)),
        State::Reading(reading) => return reading.next().await,
        State::Over => return None,
    };
    let slot =
        match take_turn(&inner.slots, request.person, waiter, &inner.name, inner.limit_configured).await {
            Admission::Run(slot) => slot,
            Admission::Wait(waiter, queued) => {
                return Some((Ok(queued), State::Waiting { inner, request, waiter }));
            }
            Admission::Refused(err) => return Some((Err(err), State::Over)),
        };
    match send(&inner, &request).await {
        Ok(response) => Reading::new(inner, request, response, slot).next().await,
        Err(err) => Some((Err(err), State::Over)),
    }
}

/// How long to wait for the end of a body after `[DONE]`.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(50);

/// Reads a body to its end after the last event: only a response read to the end lets the
/// connection go back to the pool, and a reused connection saves the next request a TCP and TLS
/// handshake (tens of milliseconds of time to first token with a remote provider). The end
/// normally arrives with the last event, so this rarely waits.
pub(crate) async fn drain(response: &mut reqwest::Response) {
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async { while let Ok(Some(_)) = response.chunk().await {} })
        .await;
}

/// Sends the request and checks the status.
async fn send(inner: &Inner, request: &GenRequest) -> Result<reqwest::Response, ProviderError> {
    let reasoning = inner.reasoning.contains(&request.model);
    let body = request_body(inner.max_tokens_field, reasoning, request);
    let response = inner
        .client
        .post_json(&inner.endpoint, inner.authorization.as_ref(), &body)
        .await
        .map_err(|err| openai_errors::connect_error(&inner.name, &err))?;
    if response.status().is_success() {
        return Ok(response);
    }
    Err(openai_errors::status_error(&inner.name, &request.model, &inner.hint, &inner.redactor, response)
        .await)
}

/// A POST of `body` to the endpoint, with the key, through reqwest (for short answers).
fn post(inner: &Inner, body: &Value) -> reqwest::RequestBuilder {
    let http = inner.client.plain().post(&inner.endpoint).json(body);
    match &inner.authorization {
        Some(auth) => http.header(AUTHORIZATION, auth.clone()),
        None => http,
    }
}

/// The JSON body of a streaming chat-completions request. `reasoning`: the model takes reasoning
/// keys; other models do not get them (some servers refuse unknown keys), and the profile's
/// warnings tell the person.
pub(crate) fn request_body(field: MaxTokensField, reasoning: bool, request: &GenRequest) -> Value {
    let mut body = json!({
        "model": request.model,
        "messages": chat_messages(&request.messages),
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    let params = &request.params;
    if let Some(max) = params.max_tokens {
        body[field.as_str()] = max.into();
    }
    if let Some(t) = params.temperature {
        body["temperature"] = super::decimal(t);
    }
    if let Some(p) = params.top_p {
        body["top_p"] = super::decimal(p);
    }
    if let Some(seed) = params.seed {
        body["seed"] = seed.into();
    }
    if reasoning {
        // Chat Completions' flat names (the Responses API nests them as `reasoning.effort` and
        // `text.verbosity`).
        if let Some(effort) = params.reasoning_effort {
            body["reasoning_effort"] = effort.as_str().into();
        }
        if let Some(verbosity) = params.verbosity {
            body["verbosity"] = verbosity.as_str().into();
        }
    }
    body
}

/// Messages as chat completions takes them: `{"role", "content"}` with the text as a string, as
/// before images existed; a message with images gets a list of parts instead, its text first, then
/// one `image_url` part per image as a data URL (the only form every compatible server takes: a
/// remote URL would have the provider fetch it).
fn chat_messages(messages: &[ChatMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            if m.images.is_empty() {
                return json!({ "role": m.role, "content": m.content });
            }
            let text = std::iter::once(json!({ "type": "text", "text": m.content }));
            let images =
                m.images.iter().map(|i| json!({ "type": "image_url", "image_url": { "url": i.data_url() } }));
            json!({ "role": m.role, "content": text.chain(images).collect::<Vec<_>>() })
        })
        .collect()
}

/// The shared HTTP client for all OpenAI-compatible providers.
pub fn http_client() -> UpstreamClient {
    UpstreamClient::new()
}

#[cfg(test)]
mod tests {
    use flint_protocol::{ChatMessage, GenParams, ReasoningEffort, Role, Verbosity};

    use super::*;

    #[test]
    fn request_body_streams_with_usage_and_the_configured_length_field() {
        let request = GenRequest {
            client: 1,
            person: 1,
            key: None,
            model: "llama-3.3-70b".into(),
            messages: vec![ChatMessage::new(Role::User, "hi")],
            params: GenParams { max_tokens: Some(64), temperature: Some(0.3), ..GenParams::default() },
        };
        let body = request_body(MaxTokensField::MaxTokens, false, &request);
        assert_eq!(body["temperature"], 0.3, "sent as written, not as 0.30000001192092896");
        assert_eq!(
            body["messages"][0],
            json!({ "role": "user", "content": "hi" }),
            "text alone stays a string"
        );
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(body["messages"][0]["role"], "user");
        assert!(body.get("top_p").is_none());
        let body = request_body(MaxTokensField::MaxCompletionTokens, false, &request);
        assert_eq!(body["max_completion_tokens"], 64);
        assert!(body.get("max_tokens").is_none());
    }

    #[test]
    fn reasoning_keys_go_only_to_reasoning_models() {
        let params = GenParams {
            reasoning_effort: Some(ReasoningEffort::Xhigh),
            verbosity: Some(Verbosity::Low),
            ..GenParams::default()
        };
        let request = GenRequest {
            client: 1,
            person: 1,
            key: None,
            model: "gpt-5-codex".into(),
            messages: Vec::new(),
            params,
        };
        let body = request_body(MaxTokensField::MaxCompletionTokens, true, &request);
        assert_eq!(body["reasoning_effort"], "xhigh");
        assert_eq!(body["verbosity"], "low");
        let body = request_body(MaxTokensField::MaxTokens, false, &request);
        assert!(body.get("reasoning_effort").is_none(), "{body}");
        assert!(body.get("verbosity").is_none(), "{body}");
        let request = GenRequest { params: GenParams::default(), ..request };
        let body = request_body(MaxTokensField::MaxCompletionTokens, true, &request);
        assert!(body.get("reasoning_effort").is_none(), "none asked, none sent: {body}");
        assert!(body.get("verbosity").is_none(), "none asked, none sent: {body}");
    }
}
