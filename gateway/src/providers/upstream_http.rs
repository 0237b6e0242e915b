//! The HTTP client for upstream providers: reqwest for short requests, and hyper's own client with
//! a bounded read buffer for the streamed answers.
//!
//! Why two: hyper grows an HTTP/1 connection's read buffer while reads fill it, up to ~400 KiB,
//! and reads fill it exactly when the gateway falls behind an upstream (its socket backs up).
//! With thousands of answers streaming at once that buffer was most of the gateway's memory
//! (`bench/scale.md`), and reqwest does not let its size be set. The client here caps it at
//! [`READ_BUFFER_MAX`]: a slow reader then leaves the bytes in the kernel's socket buffer, and TCP
//! slows the upstream down, which is the backpressure an answer stream should have.
//!
//! A plain-HTTP upstream's answers are read on connections of our own, each driven by the task
//! that reads its answer (`upstream_conn`), with the same bound.
//!
//! A proxy named in the environment (`HTTPS_PROXY`, `ALL_PROXY`…, as reqwest reads them) sends the
//! request through reqwest as before: hyper's client does not speak to proxies.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::uri::PathAndQuery;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue, USER_AGENT};

use super::upstream_conn::{Failed, Pool};

/// Most bytes an upstream connection reads ahead of the gateway. A streamed token is tens of
/// bytes of SSE, so 32 KiB still carries hundreds of them per read when the gateway is behind.
pub const READ_BUFFER_MAX: usize = 32 * 1024;

/// An HTTP/2 stream's receive window: how much of one answer the upstream may send unread. The
/// protocol's own default (64 KiB less one byte); hyper's client would allow 2 MiB.
const H2_STREAM_WINDOW: u32 = 65_535;

/// Longest wait to connect, then for the head of an answer: a large prompt on a busy server can
/// take minutes before the first byte.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const HEAD_TIMEOUT: Duration = Duration::from_secs(300);

/// A few warm connections save the next request a handshake; more stay idle for nothing.
pub(super) const IDLE_PER_HOST: usize = 32;
const IDLE_FOR: Duration = Duration::from_secs(15);

type Bounded = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// Both clients; cheap to clone (each is a handle to a shared pool).
#[derive(Clone)]
pub struct UpstreamClient {
    plain: reqwest::Client,
    bounded: Bounded,
    /// Plain-HTTP upstreams' connections, each driven by the task reading its answer.
    in_task: Arc<Pool>,
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Through reqwest (a proxy, or a short request).
    #[error(transparent)]
    Reqwest(#[from] reqwest::Error),
    /// Through the bounded client.
    #[error("the request failed")]
    Bounded {
        /// `host[:port]` of the endpoint.
        host: Option<String>,
        /// The connection could not be made (as opposed to a request that failed on it).
        connect: bool,
        /// The cause.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No answer's head within [`HEAD_TIMEOUT`] (or no connection within [`CONNECT_TIMEOUT`]).
    #[error("no answer in time")]
    TimedOut {
        /// `host[:port]` of the endpoint.
        host: Option<String>,
    },
}

impl SendError {
    /// `host[:port]` the request went to, where known.
    pub fn host(&self) -> Option<String> {
        match self {
            Self::Reqwest(err) => err.url().and_then(|u| {
                u.host_str().map(|h| match u.port() {
                    Some(port) => format!("{h}:{port}"),
                    None => h.to_owned(),
                })
            }),
            Self::Bounded { host, .. } | Self::TimedOut { host } => host.clone(),
        }
    }

    /// The upstream did not answer in time.
    pub fn is_timeout(&self) -> bool {
        match self {
            Self::Reqwest(err) => err.is_timeout(),
            Self::Bounded { .. } => false,
            Self::TimedOut { .. } => true,
        }
    }

    /// No connection could be made.
    pub fn is_connect(&self) -> bool {
        match self {
            Self::Reqwest(err) => err.is_connect(),
            Self::Bounded { connect, .. } => *connect,
            Self::TimedOut { .. } => false,
        }
    }
}

impl UpstreamClient {
    /// Builds both clients with the same timeouts, pool bounds and user agent.
    pub fn new() -> Self {
        Self::idle_for(IDLE_FOR)
    }

    /// Both clients, closing a pooled connection once it has been idle for `idle`.
    fn idle_for(idle: Duration) -> Self {
        Self {
            plain: plain(idle),
            bounded: bounded(idle),
            in_task: Pool::new(idle, IDLE_PER_HOST, READ_BUFFER_MAX),
        }
    }

    /// The reqwest client, for requests whose answers are short (model lists, refusals).
    pub fn plain(&self) -> &reqwest::Client {
        &self.plain
    }

    /// POSTs `body` as JSON to `url` and returns the answer once its head arrived; its body is read
    /// through the bounded buffer unless a proxy carries the request.
    pub async fn post_json(
        &self,
        url: &str,
        authorization: Option<&HeaderValue>,
        body: &serde_json::Value,
    ) -> Result<reqwest::Response, SendError> {
        let uri: http::Uri = match url.parse() {
            Ok(uri) => uri,
            // reqwest explains a bad URL in its own words, as before.
            Err(_) => return Ok(self.via_reqwest(url, authorization, body).await?),
        };
        if proxied(&uri) {
            return Ok(self.via_reqwest(url, authorization, body).await?);
        }
        // Host and port only: the authority can carry `user:password@`, and this goes into
        // messages the page sees.
        let host = uri.host().map(|h| match uri.port_u16() {
            Some(port) => format!("{h}:{port}"),
            None => h.to_owned(),
        });
        if uri.scheme_str() == Some("http") {
            return self.via_own_connection(uri, host, authorization, body).await;
        }
        let bytes = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
        let request = post_request(uri, authorization, bytes);
        let response = match tokio::time::timeout(HEAD_TIMEOUT, self.bounded.request(request)).await {
            Ok(Ok(response)) => response,
            Ok(Err(err)) => {
                let timed_out = err.is_connect() && timed_out(&err);
                if timed_out {
                    return Err(SendError::TimedOut { host });
                }
                return Err(SendError::Bounded { host, connect: err.is_connect(), source: Box::new(err) });
            }
            Err(_) => return Err(SendError::TimedOut { host }),
        };
        Ok(reqwest::Response::from(response.map(reqwest::Body::wrap)))
    }

    /// The request on a connection of our own (`upstream_conn`); `uri` is plain HTTP.
    async fn via_own_connection(
        &self,
        uri: http::Uri,
        host: Option<String>,
        authorization: Option<&HeaderValue>,
        body: &serde_json::Value,
    ) -> Result<reqwest::Response, SendError> {
        let failed = |connect, source: Box<dyn std::error::Error + Send + Sync>| SendError::Bounded {
            host: host.clone(),
            connect,
            source,
        };
        let (Some(name), Some(authority)) = (uri.host(), host.as_deref()) else {
            return Err(failed(true, "the URL names no host".into()));
        };
        let port = uri.port_u16().unwrap_or(80);
        // HTTP/1 wants the path alone on the request line, and the host in its own header
        // (without any `user:password@` the URL carried).
        let target =
            http::Uri::from(uri.path_and_query().cloned().unwrap_or_else(|| PathAndQuery::from_static("/")));
        let host_header = HeaderValue::from_str(authority).map_err(|err| failed(true, Box::new(err)))?;
        let bytes = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
        // Made again for a second try (`upstream_conn`).
        let request = || {
            let mut request = post_request(target.clone(), authorization, bytes.clone());
            request.headers_mut().insert(HOST, host_header.clone());
            request
        };
        let sent = self.in_task.send(name, port, CONNECT_TIMEOUT, request);
        let response = match tokio::time::timeout(HEAD_TIMEOUT, sent).await {
            Ok(Ok(response)) => response,
            Ok(Err(Failed::ConnectTimedOut)) | Err(_) => return Err(SendError::TimedOut { host }),
            Ok(Err(Failed::Connect(err))) => return Err(failed(true, Box::new(err))),
            Ok(Err(Failed::Request(err))) => return Err(failed(false, Box::new(err))),
        };
        Ok(reqwest::Response::from(response.map(reqwest::Body::wrap)))
    }

    async fn via_reqwest(
        &self,
        url: &str,
        authorization: Option<&HeaderValue>,
        body: &serde_json::Value,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let request = self.plain.post(url).json(body);
        match authorization {
            Some(auth) => request.header(AUTHORIZATION, auth.clone()),
            None => request,
        }
        .send()
        .await
    }
}

impl Default for UpstreamClient {
    fn default() -> Self {
        Self::new()
    }
}

const AGENT: &str = concat!("flint-gateway/", env!("CARGO_PKG_VERSION"));

/// The JSON POST both clients send, from parts already valid (so it cannot fail).
fn post_request(
    uri: http::Uri,
    authorization: Option<&HeaderValue>,
    body: Bytes,
) -> http::Request<Full<Bytes>> {
    let mut request = http::Request::new(Full::new(body));
    *request.method_mut() = http::Method::POST;
    *request.uri_mut() = uri;
    let headers = request.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
    headers.insert(USER_AGENT, HeaderValue::from_static(AGENT));
    if let Some(auth) = authorization {
        headers.insert(AUTHORIZATION, auth.clone());
    }
    request
}

/// Whether the environment sends requests for `uri` through a proxy (read on each request, as
/// reqwest reads it once per client: cheap next to a request).
fn proxied(uri: &http::Uri) -> bool {
    Matcher::from_system().intercept(uri).is_some()
}

/// Whether a connect error is the connect timeout (hyper-util says so only in its message).
fn timed_out(err: &hyper_util::client::legacy::Error) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::TimedOut
        {
            return true;
        }
        source = cause.source();
    }
    false
}

fn plain(idle: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(HEAD_TIMEOUT)
        .tcp_nodelay(true)
        .pool_max_idle_per_host(IDLE_PER_HOST)
        .pool_idle_timeout(idle)
        .user_agent(AGENT)
        // A redirect would carry the prompt (a 307 keeps the body) to a host nobody configured,
        // and bring back that host's words; a 3xx is an error naming only its status. (hyper's
        // client never follows one.)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

fn bounded(idle: Duration) -> Bounded {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http);
    Client::builder(TokioExecutor::new())
        // The pool looks at its idle timeout only with a timer to wake it: without one, the idle
        // connections (up to IDLE_PER_HOST per host) stayed open, each with its buffers, until a
        // later request to that host happened to find them expired.
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(idle)
        .pool_max_idle_per_host(IDLE_PER_HOST)
        .http1_max_buf_size(READ_BUFFER_MAX)
        .http2_initial_stream_window_size(H2_STREAM_WINDOW)
        .build(https)
}

#[cfg(test)]
#[path = "upstream_http_tests.rs"]
mod tests;
