//! A scripted OpenAI-compatible streaming server, for Flint's tests and benchmarks only.
//!
//! `POST /v1/chat/completions` (with `"stream": true`) answers according to the request's `model`
//! (see [`Script`]): `<fixture>` or `<fixture>@<tokens_per_s>` streams `<fixtures>/<fixture>.md`
//! (or a text registered with [`Options::inline`]) cut into ~4-character tokens, one `data:` event
//! each, paced by a deadline clock; `fail-429`, `fail-500`, `fail-401`, `fail-context`,
//! `drop-midway`, `garbage`, `no-finish`, `empty-answer`, `ctx-*`, `wants-key` and `whole-only`
//! misbehave in the named way (so do `endless-comments`, `huge-answer` and `redirect-*`,
//! [`Hostile`]), and `leak-*` echo the request's key ([`Leak`]) to test that it never reaches a
//! browser. With [`Options::single_slot`] it serves one answer at a time and interrupts it for the
//! next, as llama-cpp-python does. With [`Options::context`] it reports a context window where vLLM (`/v1/models`),
//! llama.cpp (`GET /props`) or Ollama (`POST /api/show`) do. An answer stops at the request's
//! `max_tokens` (or `max_completion_tokens`) with `finish_reason: "length"` (unless
//! [`Options::ignoring_max_tokens`]); with
//! [`Options::continuation`] a request to go on with it gets the rest ([`Continuation`]). Every
//! request is logged:
//! `GET /__requests` returns the [`RequestRecord`]s as JSON (`closed_early` is a cancel seen at the
//! upstream, `authorization` whether a key was sent) and `POST /__reset` clears them. In-process
//! users get the same through [`ScriptedUpstream`].
//!
//! `POST /v1/responses` and the WebSocket mode at `GET /v1/responses` serve the same scripts the
//! way OpenAI's Responses API does (`responses.rs`), logging each request's [`ResponsesRecord`]
//! and each socket ([`ScriptedUpstream::sockets`]).

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

mod continuation;
mod handlers;
mod hostile;
mod images;
mod log;
mod paced;
mod responses;
mod responses_stream;
mod responses_ws;
mod script;
mod thinking;

pub use continuation::Continuation;
pub use log::{RequestRecord, ResponsesRecord, SocketRecord};
pub use script::{
    CONTEXT_MIDSTREAM, CONTEXT_REFUSAL, CONTEXT_UNSTREAMED, CONTINUATION_FAILURE, DROP_MIDWAY_TEXT,
    ENDLESS_TEXT, FILTERED_TEXT, GARBAGE_BODY, HUGE_ANSWER_BYTES, Hostile, INTERNAL_TEXT, LEAK_PREFIX,
    LEAK_SUFFIX, Leak, NO_FINISH_TEXT, REASONED_PAGE, REASONING_TEXT, REASONING_TOKENS, RETRY_AFTER_SECS,
    STALL_PAUSE, STALL_TEXT, Script, Thinking, WANTS_KEY_TEXT, WHOLE_ONLY_TEXT, tokenize,
};

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct Options {
    /// Folder holding `<fixture>.md` files.
    pub fixtures: PathBuf,
    /// Tokens per second when the model names no rate.
    pub rate: f64,
    /// Texts served by name before looking in `fixtures`.
    pub inline: HashMap<String, String>,
    /// Where the server tells its context window; nowhere by default.
    pub context: ContextReport,
    /// Serve one answer at a time the way llama-cpp-python does: a new request ends the running
    /// answer at once with `[DONE]` and no `finish_reason` (logged as `interrupted`).
    pub single_slot: bool,
    /// Continue answers cut off at `max_tokens` when asked to, this way; `None` (the default)
    /// serves such a request from the start like any other.
    pub continuation: Option<Continuation>,
    /// Waited before answering each `POST /v1/responses` and each WebSocket handshake: the TLS
    /// and auth round trips of a remote API. Zero by default.
    pub setup_delay: Duration,
    /// Waited per input token a Responses answer did not already hold (a continued response
    /// holds its conversation), before its first token. Zero by default.
    pub input_token_cost: Duration,
    /// Whether `GET /v1/responses` opens a WebSocket (else 404, as a server without that mode).
    pub responses_websocket: bool,
    /// The only key `/v1/responses` accepts, as LiteLLM without a database: another key's
    /// handshake is refused with 403, and its HTTP request with 400 "No connected db.". `None`
    /// (the default): any key, or none.
    pub responses_key: Option<String>,
    /// Stream whole answers whatever `max_tokens` a chat completion asks for, as a server that
    /// ignores the length limit (off by default).
    pub ignore_max_tokens: bool,
}

/// The context window the server reports, in the places real servers do. Each `None` leaves that
/// place out (`/props` and `/api/show` then answer 404, as on a server of another kind).
#[derive(Debug, Clone, Copy, Default)]
pub struct ContextReport {
    /// vLLM: `max_model_len` in every `GET /v1/models` entry.
    pub max_model_len: Option<u32>,
    /// llama.cpp's server: `default_generation_settings.n_ctx` in `GET /props`.
    pub props_n_ctx: Option<u32>,
    /// llama.cpp's server: `total_slots` in `GET /props` (how many answers it runs at once).
    pub props_total_slots: Option<u32>,
    /// Ollama: `model_info["<arch>.context_length"]` in `POST /api/show` (what it was trained for).
    pub ollama_context_length: Option<u32>,
    /// Ollama: `num_ctx` in `POST /api/show`'s `parameters` (what it runs with).
    pub ollama_num_ctx: Option<u32>,
}

impl Options {
    /// Fixtures from `fixtures`, 1,000 tokens per second by default.
    pub fn new(fixtures: impl Into<PathBuf>) -> Self {
        Self {
            fixtures: fixtures.into(),
            rate: 1000.0,
            inline: HashMap::new(),
            context: ContextReport::default(),
            single_slot: false,
            continuation: None,
            setup_delay: Duration::ZERO,
            input_token_cost: Duration::ZERO,
            responses_websocket: true,
            responses_key: None,
            ignore_max_tokens: false,
        }
    }

    /// Ignores every chat completion's `max_tokens` (see [`Options::ignore_max_tokens`]).
    pub fn ignoring_max_tokens(mut self) -> Self {
        self.ignore_max_tokens = true;
        self
    }

    /// Accepts only `key` at `/v1/responses` (see [`Options::responses_key`]).
    pub fn responses_key(mut self, key: impl Into<String>) -> Self {
        self.responses_key = Some(key.into());
        self
    }

    /// Waits `delay` before each Responses request and handshake (see [`Options::setup_delay`]).
    pub fn setup_delay(mut self, delay: Duration) -> Self {
        self.setup_delay = delay;
        self
    }

    /// Waits `cost` per new input token of a Responses answer (see [`Options::input_token_cost`]).
    pub fn input_token_cost(mut self, cost: Duration) -> Self {
        self.input_token_cost = cost;
        self
    }

    /// Refuses the Responses API's WebSocket mode (404), as a server that only streams over HTTP.
    pub fn without_responses_websocket(mut self) -> Self {
        self.responses_websocket = false;
        self
    }

    /// Serves one answer at a time, interrupting the running one (see [`Options::single_slot`]).
    pub fn single_slot(mut self) -> Self {
        self.single_slot = true;
        self
    }

    /// Continues answers cut off at `max_tokens` the way `how` says (see [`Continuation`]).
    pub fn continuation(mut self, how: Continuation) -> Self {
        self.continuation = Some(how);
        self
    }

    /// Reports a context window the way `report` says.
    pub fn context(mut self, report: ContextReport) -> Self {
        self.context = report;
        self
    }

    /// Sets the default rate in tokens per second.
    pub fn rate(mut self, tokens_per_s: f64) -> Self {
        self.rate = tokens_per_s;
        self
    }

    /// Serves `text` for the model `name` (and `name@rate`).
    pub fn inline(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.inline.insert(name.into(), text.into());
        self
    }
}

/// The repository's `tests/fixtures` folder.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// State shared by the handlers.
#[derive(Debug)]
pub(crate) struct Shared {
    options: Options,
    log: Arc<log::RequestLog>,
    /// Fixture name → its tokens as JSON string literals.
    cache: std::sync::Mutex<HashMap<String, Arc<[String]>>>,
    /// `http://ADDR`, put in place of `{{upstream}}` in fixtures.
    origin: String,
    /// Ends the requests to `/__stall` when the server stops.
    shutdown: CancellationToken,
    /// With [`Options::single_slot`]: interrupts the answer now running.
    slot: std::sync::Mutex<Option<CancellationToken>>,
    /// Responses and sockets of `/v1/responses`.
    responses: responses::Memory,
    /// Requests that reached `/internal`, where the `redirect-*` scripts point.
    internal: std::sync::atomic::AtomicUsize,
}

/// The routes, for embedding in another server.
fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(handlers::chat_completions))
        .route("/v1/responses", post(responses::http).get(responses_ws::websocket))
        .route("/v1/models", get(handlers::models))
        .route("/props", get(handlers::props))
        .route("/api/show", post(handlers::show))
        .route("/__requests", get(handlers::requests))
        .route("/__reset", post(handlers::reset))
        .route("/__stall", get(handlers::stall))
        .route("/internal", axum::routing::any(hostile::internal))
        .with_state(shared)
}

/// A running scripted upstream. Stops when [`ScriptedUpstream::stop`] is awaited or it is dropped.
#[derive(Debug)]
pub struct ScriptedUpstream {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    server: Option<JoinHandle<io::Result<()>>>,
}

impl ScriptedUpstream {
    /// Starts on `127.0.0.1`, on a free port.
    pub async fn start(options: Options) -> io::Result<Self> {
        Self::bind(SocketAddr::from(([127, 0, 0, 1], 0)), options).await
    }

    /// Starts on `addr` (port 0 picks a free port).
    pub async fn bind(addr: SocketAddr, options: Options) -> io::Result<Self> {
        // A deep accept queue: the scale bench starts 2,000 answers at once, and with tokio's
        // default (1,024) the connections beyond it waited for SYN retries, seconds, as a
        // provider's real front end would not make them.
        let socket =
            if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        let listener: TcpListener = socket.listen(4096)?;
        let addr = listener.local_addr()?;
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            options,
            log: Arc::default(),
            cache: Default::default(),
            origin: format!("http://{addr}"),
            shutdown: shutdown.clone(),
            slot: Default::default(),
            responses: Default::default(),
            internal: Default::default(),
        });
        let app = router(shared.clone());
        let stop = shutdown.clone();
        let server = tokio::spawn(async move {
            // No Nagle, as on real servers: a WebSocket answer is many small writes, and the
            // second would wait for the first one's (delayed) acknowledgement.
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
                .with_graceful_shutdown(stop.cancelled_owned())
                .await
        });
        Ok(Self { addr, shared, shutdown, server: Some(server) })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL to configure as a provider: `http://ADDR/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The requests received so far, oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.snapshot()
    }

    /// How many requests reached `/internal` (followed a `redirect-*` script's redirect).
    pub fn internal_requests(&self) -> usize {
        self.shared.internal.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The most answers that were ever streaming at the same time.
    pub fn max_in_flight(&self) -> usize {
        self.shared.log.max_in_flight()
    }

    /// The WebSockets opened to `/v1/responses` so far, oldest first.
    pub fn sockets(&self) -> Vec<SocketRecord> {
        self.shared.responses.sockets()
    }

    /// Forgets every Responses API response so far, on every socket and in the store: continuing
    /// one is refused with `previous_response_not_found`.
    pub fn forget_responses(&self) {
        self.shared.responses.forget();
    }

    /// Forgets the requests received so far.
    pub fn reset(&self) {
        self.shared.log.clear();
    }

    /// Waits up to `timeout` for the log to satisfy `done`; returns whether it did and the log.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        done: impl FnMut(&[RequestRecord]) -> bool,
    ) -> (bool, Vec<RequestRecord>) {
        self.shared.log.wait_until(timeout, done).await
    }

    /// Stops accepting requests and waits for the server task to end. Streams in progress keep
    /// the task alive until they end or their clients go away.
    pub async fn stop(mut self) -> io::Result<()> {
        self.shutdown.cancel();
        match self.server.take() {
            Some(server) => server.await.map_err(io::Error::other)?,
            None => Ok(()),
        }
    }
}

impl Drop for ScriptedUpstream {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(server) = self.server.take() {
            // Dropped without `stop`: end the server with its owner rather than leave it running.
            server.abort();
        }
    }
}
