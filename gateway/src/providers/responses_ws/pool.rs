//! Each tab's idle sockets to a Responses server: opened with the key on the handshake, reused by
//! the tab's next answer (the one its last response continues first), never past their age.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderValue, USER_AGENT};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::super::openai::Credentials;
use super::super::openai_errors::{self, KeyHint, Refusal, upstream_message};
use super::super::redact::Redactor;
use super::super::responses_events::Events;
use super::super::responses_request::Thread;
use super::super::{ClientId, ProviderError};

/// Oldest socket a response is started on: the server closes them at 60 minutes, and an answer
/// started later than this could be cut off by that.
pub(crate) const MAX_SOCKET_AGE: Duration = Duration::from_secs(55 * 60);
/// Longest wait for a socket to open (as for HTTP connections).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle sockets kept per tab; the oldest goes first. More than a tab's variations at once are
/// never reused anyway.
const MAX_IDLE_PER_CLIENT: usize = 16;

pub(super) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// An open socket and what the server remembers on it.
pub(super) struct Socket {
    pub(super) ws: Ws,
    pub(super) opened: Instant,
    /// Its last response and the conversation that covered; `None` when there is none to go on.
    pub(super) thread: Option<Thread>,
    /// For the logs.
    pub(super) id: u64,
}

/// A provider's sockets, by tab.
pub(crate) struct Pool {
    pub(super) name: String,
    /// `ws(s)://…/responses`; `None` when `base_url` is neither `http` nor `https`.
    endpoint: Option<String>,
    /// The operator's key (a request with the person's own goes over HTTP), where it comes from,
    /// and what scrubs it.
    authorization: Option<HeaderValue>,
    hint: KeyHint,
    redactor: Arc<Redactor>,
    max_age: Duration,
    /// Silence after which an answer fails (`stall_timeout_secs`); set once built.
    pub(crate) stall_timeout: Duration,
    idle: Mutex<HashMap<ClientId, Vec<Socket>>>,
    /// The server refused the WebSocket mode: HTTP from now on.
    http_only: AtomicBool,
    opened: AtomicU64,
}

/// Why a handshake failed.
pub(super) enum Handshake {
    /// The server has no WebSocket mode (404, 426…) or cannot be reached this way.
    Unsupported(String),
    /// It refused this handshake (429, 5xx…): HTTP says why.
    Refused(u16),
    /// It rejected the key (401, 403).
    KeyRejected(Refusal),
}

impl Pool {
    /// Sockets to `base_url`'s `/responses`, opened with `credentials`; a socket is not reused
    /// once `max_age` old.
    pub(crate) fn new(name: &str, base_url: &str, credentials: &Credentials, max_age: Duration) -> Self {
        let endpoint = if let Some(rest) = base_url.strip_prefix("https://") {
            Some(format!("wss://{rest}/responses"))
        } else {
            base_url.strip_prefix("http://").map(|rest| format!("ws://{rest}/responses"))
        };
        Self {
            name: name.to_owned(),
            endpoint,
            authorization: credentials.authorization.clone(),
            hint: credentials.hint.clone(),
            redactor: credentials.redactor.clone(),
            max_age,
            stall_timeout: Duration::from_secs(crate::config::DEFAULT_STALL_TIMEOUT_SECS),
            idle: Mutex::default(),
            http_only: AtomicBool::new(false),
            opened: AtomicU64::new(0),
        }
    }

    /// The server refused the WebSocket mode; requests go over HTTP.
    pub(crate) fn http_only(&self) -> bool {
        self.http_only.load(Ordering::Relaxed)
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, HashMap<ClientId, Vec<Socket>>> {
        // A panic elsewhere leaves at worst a socket too many or too few in the map.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes `client`'s idle sockets: its tab is gone.
    pub(crate) fn close_client(&self, client: ClientId) {
        let sockets = self.lock().remove(&client);
        drop(sockets);
    }

    /// An idle socket of `client`'s young enough for a response: the one `messages` continues,
    /// else one with nothing to continue, else the oldest returned.
    pub(super) fn checkout(
        &self,
        client: ClientId,
        messages: &[flint_protocol::ChatMessage],
    ) -> Option<Socket> {
        let mut idle = self.lock();
        let list = idle.get_mut(&client)?;
        let (expired, young): (Vec<Socket>, Vec<Socket>) =
            std::mem::take(list).into_iter().partition(|s| s.opened.elapsed() >= self.max_age);
        *list = young;
        let at = list
            .iter()
            .position(|s| s.thread.as_ref().is_some_and(|t| t.new_input(messages).is_some()))
            .or_else(|| list.iter().position(|s| s.thread.is_none()))
            .or_else(|| (!list.is_empty()).then_some(0));
        let socket = at.map(|at| list.remove(at));
        if list.is_empty() {
            idle.remove(&client);
        }
        drop(idle);
        if !expired.is_empty() {
            tracing::debug!(provider = %self.name, count = expired.len(), "closing sockets near the server's time limit");
        }
        socket
    }

    pub(super) fn give_back(&self, client: ClientId, socket: Socket) {
        let mut idle = self.lock();
        let list = idle.entry(client).or_default();
        let evicted = (list.len() >= MAX_IDLE_PER_CLIENT).then(|| list.remove(0));
        list.push(socket);
        drop(idle);
        drop(evicted);
    }

    pub(super) async fn connect(&self) -> Result<Socket, Handshake> {
        let endpoint = self
            .endpoint
            .as_deref()
            .ok_or_else(|| Handshake::Unsupported("base_url is not http(s)".into()))?;
        let mut request = endpoint
            .into_client_request()
            .map_err(|err| Handshake::Unsupported(format!("bad URL: {err}")))?;
        let headers = request.headers_mut();
        if let Some(auth) = &self.authorization {
            headers.insert(AUTHORIZATION, auth.clone());
        }
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("flint-gateway/", env!("CARGO_PKG_VERSION"))),
        );
        // No Nagle: a frame per answer, its first token waited for.
        let connecting = tokio_tungstenite::connect_async_with_config(request, None, true);
        match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
            Ok(Ok((ws, _))) => {
                let id = self.opened.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::debug!(provider = %self.name, socket = id, "socket opened");
                Ok(Socket { ws, opened: Instant::now(), thread: None, id })
            }
            Ok(Err(tungstenite::Error::Http(response))) => match response.status().as_u16() {
                status @ (400 | 404 | 405 | 426 | 501) => {
                    Err(Handshake::Unsupported(format!("it answered {status}")))
                }
                401 | 403 => {
                    let upstream =
                        response.body().as_deref().and_then(|b| upstream_message(b, &self.redactor));
                    tracing::warn!(provider = %self.name, status = %response.status(), message = upstream.as_deref().unwrap_or(""), "handshake refused: the key was rejected");
                    let refusal =
                        Refusal { status: response.status(), upstream, context: false, retry_after: None };
                    Err(Handshake::KeyRejected(refusal))
                }
                status => Err(Handshake::Refused(status)),
            },
            // The error names the host, not the URL's credentials (there are none: the key
            // travels in a header).
            Ok(Err(err)) => Err(Handshake::Unsupported(err.to_string())),
            Err(_) => Err(Handshake::Unsupported("the handshake timed out".into())),
        }
    }

    /// The key was rejected: what the person hears, the same as over HTTP.
    pub(super) fn key_rejected(&self, model: &str, refusal: Refusal) -> ProviderError {
        openai_errors::classify(&self.name, model, &self.hint, refusal)
    }

    /// A fresh reading of a response to `model`.
    pub(super) fn events(&self, model: &str) -> Events {
        Events::new(&self.name, model, &self.hint, &self.redactor)
    }

    /// Gives up on the WebSocket mode, saying so once.
    pub(super) fn fall_back(&self, why: &str) {
        if !self.http_only.swap(true, Ordering::Relaxed) {
            tracing::warn!(provider = %self.name, reason = why, "no WebSocket mode for the Responses API; using HTTP streaming from now on");
        }
    }
}
