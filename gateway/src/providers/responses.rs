//! OpenAI's Responses API (`/responses`): the only way to reach Codex models.
//!
//! In WebSocket mode (the default, `providers/responses_ws.rs`) each tab keeps sockets open to
//! the server and a follow-up goes as `previous_response_id` plus the new messages; over HTTP
//! (`transport = "http"`, or after the server refused a WebSocket) each answer is one streaming
//! `POST {base_url}/responses` carrying the whole conversation, read with the SSE parser. Both
//! carry the same events, translated in `responses_events.rs`; dropping the stream closes the
//! request or the socket, which is how cancel reaches the provider.
//!
//! Keys, their scrubbing and `max_concurrent` work as for the OpenAI-compatible provider.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use flint_protocol::ModelInfo;
use reqwest::header::HeaderValue;

use super::openai::{self, Credentials};
use super::openai_errors::{self, KeyHint};
use super::redact::Redactor;
use super::responses_events::{Events, Item, Outcome};
use super::responses_request::Reasoning;
use super::responses_ws::{self, Pool, Turn};
use super::slots::{Admission, Permit, Slots, Waiter, take_turn};
use super::sse::SseParser;
use super::stall::{StallWatch, Watched};
use super::{ClientId, EventStream, GenRequest, Provider, ProviderError, ProviderEvent};
use crate::config::{ModelConfig, ReasoningSummary, ResponsesConfig, ResponsesTransport};

/// A Responses API provider.
pub struct ResponsesProvider {
    inner: Arc<Inner>,
    models: Vec<ModelConfig>,
}

#[derive(Clone)]
struct Inner {
    name: String,
    endpoint: String,
    client: super::upstream_http::UpstreamClient,
    authorization: Option<HeaderValue>,
    redactor: Arc<Redactor>,
    hint: KeyHint,
    /// Whether each configured model takes reasoning keys.
    reasoning: HashMap<String, bool>,
    /// The reasoning summary to ask reasoning models for (`reasoning_summary`).
    reasoning_summary: Option<ReasoningSummary>,
    slots: Arc<Slots>,
    limit_configured: bool,
    /// The WebSocket mode's sockets; `None` with `transport = "http"`, and for a request with the
    /// person's own key (the pool's sockets carry the operator's).
    sockets: Option<Arc<Pool>>,
    /// People may use their own key (`allow_user_keys`).
    allow_user_keys: bool,
    /// Silence after which a stream fails (`stall_timeout_secs`).
    stall_timeout: std::time::Duration,
}

impl std::fmt::Debug for ResponsesProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponsesProvider")
            .field("name", &self.inner.name)
            .field("endpoint", &self.inner.endpoint)
            .field("key", &self.inner.authorization.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl ResponsesProvider {
    /// Builds the provider; `env` looks up environment variables (for `api_key_env`).
    pub fn new(
        config: &ResponsesConfig,
        client: super::upstream_http::UpstreamClient,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let credentials =
            openai::credentials(config.api_key_env.as_deref(), config.api_key.as_deref(), false, env);
        let base = config.base_url.trim_end_matches('/');
        let sockets = (config.transport == ResponsesTransport::Websocket).then(|| {
            let max_age = config.websocket_max_age.unwrap_or(responses_ws::MAX_SOCKET_AGE);
            let mut pool = Pool::new(&config.name, base, &credentials, max_age);
            pool.stall_timeout = crate::config::stall_timeout(config.stall_timeout_secs);
            Arc::new(pool)
        });
        let Credentials { authorization, redactor, hint } = credentials;
        let limit = config.max_concurrent.map(std::num::NonZeroUsize::get);
        Self {
            inner: Arc::new(Inner {
                name: config.name.clone(),
                endpoint: format!("{base}/responses"),
                client,
                authorization,
                redactor,
                hint,
                reasoning: config.models.iter().map(|m| (m.id.clone(), m.reasoning())).collect(),
                reasoning_summary: config.reasoning_summary,
                stall_timeout: crate::config::stall_timeout(config.stall_timeout_secs),
                slots: Slots::new(limit),
                limit_configured: limit.is_some(),
                sockets,
                allow_user_keys: config.allow_user_keys,
            }),
            models: config.models.clone(),
        }
    }

    fn problem(&self) -> Option<String> {
        openai::missing_key(&self.inner.name, &self.inner.hint, self.inner.authorization.as_ref())
    }
}

impl Provider for ResponsesProvider {
    fn name(&self) -> &str {
        &self.inner.name
    }

    fn models(&self) -> Vec<ModelInfo> {
        let problem = self.problem();
        self.models
            .iter()
            .map(|m| super::model_info(&self.inner.name, m, None, self.inner.allow_user_keys, &problem))
            .collect()
    }

    fn stream(&self, request: GenRequest) -> EventStream {
        let inner =
            match openai::key_for(&self.inner.name, &request, self.inner.allow_user_keys, self.problem()) {
                Ok(None) => self.inner.clone(),
                Ok(Some(Credentials { authorization, redactor, hint })) => {
                    Arc::new(Inner { authorization, redactor, hint, sockets: None, ..(*self.inner).clone() })
                }
                Err(err) => return Box::pin(futures::stream::once(async move { Err(err) })),
            };
        let start = State::Start { inner, request };
        Box::pin(futures::stream::unfold(start, step))
    }

    fn scrubber(&self, request: &GenRequest) -> Option<Box<dyn super::TextScrubber>> {
        openai::scrubber_for(&self.inner.redactor, request, self.inner.allow_user_keys)
    }

    fn client_closed(&self, client: ClientId) {
        if let Some(pool) = &self.inner.sockets {
            pool.close_client(client);
        }
    }
}

enum State {
    Start { inner: Arc<Inner>, request: GenRequest },
    Waiting { inner: Arc<Inner>, request: GenRequest, waiter: Box<Waiter> },
    Http(Box<HttpReading>),
    Socket(Box<Turn>),
    Over,
}

async fn step(state: State) -> Option<(Item, State)> {
    let (inner, request, waiter) = match state {
        State::Start { inner, request } => (inner, request, None),
        State::Waiting { inner, request, waiter } => (inner, request, Some(waiter)),
        State::Http(reading) => {
            return reading.next().await.map(|(item, next)| (item, next.map_or(State::Over, State::Http)));
        }
        State::Socket(turn) => {
            return turn.next().await.map(|(item, next)| (item, next.map_or(State::Over, State::Socket)));
        }
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
    let on = inner
        .reasoning
        .get(&request.model)
        .copied()
        .unwrap_or_else(|| flint_protocol::guess_reasoning(&request.model));
    let reasoning = Reasoning { on, summary: inner.reasoning_summary };
    let (request, slot) = match inner.sockets.as_ref().filter(|pool| !pool.http_only()) {
        Some(pool) => match Turn::start(pool.clone(), request, reasoning, slot).await {
            Ok(turn) => {
                return turn.next().await.map(|(item, next)| (item, next.map_or(State::Over, State::Socket)));
            }
            Err(responses_ws::Refused::Fail(err)) => return Some((Err(err), State::Over)),
            // No WebSocket for this one: the same request over HTTP.
            Err(responses_ws::Refused::UseHttp(request, slot)) => (*request, slot),
        },
        None => (request, slot),
    };
    let events = Events::new(&inner.name, &request.model, &inner.hint, &inner.redactor);
    match send(&inner, &request, reasoning).await {
        Ok(response) => {
            let reading = HttpReading {
                stall: StallWatch::new(&inner.name, inner.stall_timeout),
                inner,
                response,
                parser: SseParser::new(),
                events,
                queue: VecDeque::with_capacity(64),
                _slot: slot,
            };
            let reading = Box::new(reading);
            reading.next().await.map(|(item, next)| (item, next.map_or(State::Over, State::Http)))
        }
        Err(err) => Some((Err(err), State::Over)),
    }
}

/// A streaming HTTP response being read.
struct HttpReading {
    inner: Arc<Inner>,
    response: reqwest::Response,
    parser: SseParser,
    events: Events,
    queue: VecDeque<Item>,
    /// How long the body has been silent.
    stall: StallWatch,
    /// The provider slot this answer holds until it is dropped.
    _slot: Permit,
}

impl HttpReading {
    /// The next item, and the reading if more may follow.
    async fn next(mut self: Box<Self>) -> Option<(Item, Option<Box<Self>>)> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                let last = matches!(item, Err(_) | Ok(ProviderEvent::Finished(_)));
                if last {
                    openai::drain(&mut self.response).await;
                }
                return Some((item, (!last).then_some(self)));
            }
            if self.events.ended() {
                return None;
            }
            let read = match self.stall.watch(self.response.chunk()).await {
                Watched::Ready(read) => read,
                Watched::Quiet(notice) => return Some((Ok(notice), Some(self))),
                Watched::Stalled(err) => {
                    self.events.fail(&mut self.queue, err);
                    continue;
                }
            };
            match read {
                Ok(Some(bytes)) => {
                    if let Some(flowing) = self.stall.bytes(tokio::time::Instant::now()) {
                        self.queue.push_back(Ok(flowing));
                    }
                    self.feed(&bytes);
                }
                Ok(None) => {
                    if let Err(err) = self.parser.finish() {
                        let err = not_sse(&self.inner, &err);
                        self.events.fail(&mut self.queue, err);
                    }
                    self.events.end_of_stream(&mut self.queue);
                }
                Err(err) => {
                    tracing::debug!(provider = %self.inner.name, error = %openai_errors::describe(&err), "stream read failed");
                    let message = format!("the connection to {} broke mid-answer", self.inner.name);
                    self.events.fail(&mut self.queue, ProviderError::Interrupted(message));
                }
            }
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        let Self { parser, events, queue, inner, .. } = self;
        let parsed = parser.feed(bytes, |event| {
            // Neither a lost `previous_response_id` nor a socket's time limit can come over HTTP,
            // where nothing is sent with an id: a server saying so is confused.
            if !events.ended()
                && matches!(events.on_event(event.data, queue), Outcome::ResendFull | Outcome::Reconnect)
            {
                let message = format!("{} lost the conversation it was continuing", inner.name);
                events.fail(queue, ProviderError::Unavailable(message));
            }
        });
        if let Err(err) = parsed
            && !events.ended()
        {
            let err = not_sse(inner, &err);
            events.fail(queue, err);
        }
    }
}

/// The body is not an event stream; the error quotes upstream text, so it is scrubbed.
fn not_sse(inner: &Inner, err: &super::sse::SseError) -> ProviderError {
    let message = format!("{} sent a response that is not an event stream ({err})", inner.name);
    ProviderError::Protocol(inner.redactor.scrub(&message))
}

/// Sends the whole conversation and checks the status.
async fn send(
    inner: &Inner,
    request: &GenRequest,
    reasoning: Reasoning,
) -> Result<reqwest::Response, ProviderError> {
    let mut body = super::responses_request::body(request, reasoning, &request.messages, None);
    body["stream"] = true.into();
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
