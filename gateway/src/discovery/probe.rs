//! Asking one port on 127.0.0.1 whether a model server of a given kind answers there, and which
//! models it serves.
//!
//! Every probe is a plain `GET` to a loopback address with no key, no cookie and no proxy; it never
//! follows a redirect (a 3xx is "nothing here"), gives up after [`REQUEST_TIMEOUT`] and reads at
//! most [`MAX_BODY`] bytes. A port where nothing listens is refused at once, so looking costs
//! nothing on a machine that runs no server.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use super::shapes::{self, FoundModel, ServerKind};

/// Longest wait for a connection: loopback connects in microseconds or is refused.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(250);
/// Longest wait for one whole answer: a local server lists its models in milliseconds; one that
/// does not answer in time is treated as absent.
pub const REQUEST_TIMEOUT: Duration = Duration::from_millis(800);
/// Largest answer read: a model list is a few kilobytes; whatever sends more is not one.
pub const MAX_BODY: usize = 1 << 20;

/// What a probe found at a port.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The kind looked for there.
    pub kind: ServerKind,
    /// The port.
    pub port: u16,
    /// Its models (none when it wants a key, or has none yet).
    pub models: Vec<FoundModel>,
    /// It answered 401 or 403: it wants a key, which a probe never sends.
    pub needs_key: bool,
}

/// The probes' HTTP client: no proxy (a proxy would see which servers run here, and could
/// answer for them), no redirects, short timeouts, and no key is ever added to its requests.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        .user_agent(concat!("flint-gateway/", env!("CARGO_PKG_VERSION"), " (discovery)"))
        .build()
        .unwrap_or_default()
}

/// One answer to a probe.
#[derive(Debug)]
enum Answer {
    Json(Value),
    NeedsKey,
    Nothing,
}

async fn get(client: &reqwest::Client, port: u16, path: &str) -> Answer {
    let url = format!("http://127.0.0.1:{port}{path}");
    let Ok(mut response) = client.get(url).send().await else { return Answer::Nothing };
    match response.status() {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => return Answer::NeedsKey,
        status if !status.is_success() => return Answer::Nothing,
        _ => {}
    }
    if response.content_length().is_some_and(|n| n > MAX_BODY as u64) {
        return Answer::Nothing;
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_BODY {
                    return Answer::Nothing;
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(_) => return Answer::Nothing,
        }
    }
    serde_json::from_slice(&body).map_or(Answer::Nothing, Answer::Json)
}

/// Looks for a `kind` server at `port` on 127.0.0.1.
pub async fn probe(client: &reqwest::Client, kind: ServerKind, port: u16) -> Option<Found> {
    let found = |models: Vec<FoundModel>, needs_key| Some(Found { kind, port, models, needs_key });
    // Servers with a richer list of their own are asked for it first.
    let native = match kind {
        ServerKind::Ollama => Some(("/api/tags", shapes::ollama_models as fn(&Value) -> _)),
        ServerKind::LmStudio => Some(("/api/v0/models", shapes::lm_studio_models as fn(&Value) -> _)),
        _ => None,
    };
    if let Some((path, read)) = native {
        match get(client, port, path).await {
            Answer::Json(body) => {
                if let Some(models) = read(&body) {
                    return found(models, false);
                }
            }
            Answer::NeedsKey => return found(Vec::new(), true),
            Answer::Nothing => {}
        }
    }
    let mut models = match get(client, port, "/v1/models").await {
        Answer::Json(body) => shapes::openai_models(&body)?,
        Answer::NeedsKey => return found(Vec::new(), true),
        Answer::Nothing => return None,
    };
    if kind == ServerKind::Litellm
        && let Answer::Json(info) = get(client, port, "/model/info").await
    {
        for (name, window) in shapes::litellm_windows(&info) {
            if let Some(m) = models.iter_mut().find(|m| m.id == name && m.window.is_none()) {
                m.window = Some(window);
            }
        }
    }
    found(models, false)
}
