//! A gateway on port 0 in front of the scripted upstream, and a WebSocket client for it.

#![allow(dead_code, missing_docs)]

pub mod tokens;

use std::net::SocketAddr;
use std::time::Duration;

use flint_gateway::config::{Config, ModelConfig, OpenAiConfig, ProviderConfig};
use flint_gateway::{AppState, app, serve};
use flint_protocol::{ClientMessage, ServerMessage, StartRequest};
use flint_scripted_upstream::{Options, ScriptedUpstream, fixtures_dir};
use futures::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The key the tests configure; it must never reach a client.
pub const KEY: &str = "sk-scripted-0123456789-very-secret";
/// The environment variable the key is read from.
pub const KEY_ENV: &str = "SCRIPTED_API_KEY";
/// The scripted models the gateway is configured with.
pub const MODELS: &[&str] = &[
    "counter@20000",
    "counter@5000",
    "counter@2000",
    "counter@1000",
    "large@200",
    "fail-429",
    "fail-500",
    "fail-401",
    "fail-context",
    "drop-midway@2000",
    "garbage",
    "nope",
];

pub struct Gateway {
    pub upstream: ScriptedUpstream,
    pub addr: SocketAddr,
    pub state: AppState,
    server: JoinHandle<std::io::Result<()>>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.state.shutdown().cancel();
        self.server.abort();
    }
}

/// The provider config pointing at `base_url`, keyed by [`KEY_ENV`].
pub fn scripted_provider(base_url: String) -> ProviderConfig {
    ProviderConfig::Openai(OpenAiConfig {
        name: "scripted".into(),
        base_url,
        api_key_env: Some(KEY_ENV.into()),
        api_key: None,
        api_key_optional: false,
        models: MODELS
            .iter()
            .map(|id| ModelConfig {
                id: (*id).into(),
                label: None,
                context_window: Some(8192),
                tokenizer: None,
                reasoning: None,
                vision: None,
                price: None,
            })
            .collect(),
        max_tokens_field: Default::default(),
        max_concurrent: None,
        allow_user_keys: false,
        stall_timeout_secs: None,
    })
}

pub fn env(name: &str) -> Option<String> {
    (name == KEY_ENV).then(|| KEY.to_owned())
}

/// Starts the upstream and a gateway relaying to it; `configure` may change the config.
pub async fn start_with(configure: impl FnOnce(&mut Config)) -> Gateway {
    start_upstream_with(Options::new(fixtures_dir()), configure).await
}

/// Like [`start_with`], with the upstream started with `options`.
pub async fn start_upstream_with(options: Options, configure: impl FnOnce(&mut Config)) -> Gateway {
    let upstream = ScriptedUpstream::start(options).await.expect("upstream starts");
    let mut config = Config { providers: vec![scripted_provider(upstream.base_url())], ..Config::default() };
    // Tests never write to the user's data folder.
    config.share.database = std::env::temp_dir()
        .join(format!("flint-test-shares-{}-{}", std::process::id(), upstream.addr().port()))
        .join("shares.sqlite3");
    config.auth.database = config.share.database.with_file_name("auth.sqlite3");
    configure(&mut config);
    let state = AppState::from_config(&config, &env);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("port 0 binds");
    let addr = listener.local_addr().expect("bound address");
    let router = app(state.clone());
    let shutdown = state.shutdown().clone();
    let timeout = Duration::from_millis(config.server.header_read_timeout_ms);
    let server = tokio::spawn(serve::serve(listener, router, timeout, shutdown));
    Gateway { upstream, addr, state, server }
}

pub async fn start() -> Gateway {
    start_with(|_| {}).await
}

pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixtures_dir().join(format!("{name}.md"))).expect("fixture exists")
}

/// Opens `/ws` with `origin` (none: no `Origin` header); the gateway's refusal is the error.
pub async fn handshake(
    addr: SocketAddr,
    origin: Option<&str>,
) -> Result<WebSocketStream<MaybeTlsStream<TcpStream>>, tokio_tungstenite::tungstenite::Error> {
    let mut request = format!("ws://{addr}/ws?protocol=1").into_client_request()?;
    if let Some(origin) = origin {
        request.headers_mut().insert("origin", origin.parse().expect("origin header"));
    }
    tokio_tungstenite::connect_async(request).await.map(|(ws, _)| ws)
}

pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// Longest wait for the next frame (10 s; real servers on a busy machine need more).
    pub patience: Duration,
    /// Every text frame received, verbatim, to check nothing leaks.
    pub raw: Vec<String>,
}

/// What one stream produced.
#[derive(Debug)]
pub struct Outcome {
    pub started: Option<String>,
    pub text: String,
    pub seqs: Vec<u32>,
    pub end: ServerMessage,
}

impl Client {
    /// A client on a socket opened elsewhere; nothing is read yet.
    pub fn from_socket(ws: WebSocketStream<MaybeTlsStream<TcpStream>>) -> Self {
        Self { ws, raw: Vec::new(), patience: Duration::from_secs(10) }
    }

    /// Connects as a page of the gateway's own origin would, and checks the `Hello`.
    pub async fn connect(addr: SocketAddr) -> Self {
        let ws = handshake(addr, Some(&format!("http://{addr}"))).await.expect("WebSocket handshake");
        let mut client = Self { ws, raw: Vec::new(), patience: Duration::from_secs(10) };
        let hello = client.next().await;
        assert!(
            matches!(hello, ServerMessage::Hello { protocol: 1, .. }),
            "first frame must be Hello: {hello:?}"
        );
        client
    }

    /// Connects from another local address (`127.0.0.2`…): another person, as the gateway's
    /// per-person limits see anonymous people. Returns the socket before reading anything.
    pub async fn connect_from(addr: SocketAddr, local: std::net::IpAddr) -> Self {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.bind(SocketAddr::new(local, 0)).expect("bind a loopback address");
        let tcp = socket.connect(addr).await.expect("connect");
        let mut request = format!("ws://{addr}/ws?protocol=1").into_client_request().expect("request");
        request.headers_mut().insert("origin", format!("http://{addr}").parse().expect("origin"));
        let (ws, _) =
            tokio_tungstenite::client_async(request, MaybeTlsStream::Plain(tcp)).await.expect("handshake");
        Self { ws, raw: Vec::new(), patience: Duration::from_secs(10) }
    }

    /// Closes as a browser does for a tab that is closed ("going away"): the gateway keeps
    /// nothing of it for a resume. (Dropping the client instead is a dropped network.)
    pub async fn leave(mut self) {
        use tokio_tungstenite::tungstenite::protocol::CloseFrame;
        use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
        let goodbye = CloseFrame { code: CloseCode::Away, reason: "".into() };
        let _ = self.ws.close(Some(goodbye)).await;
    }

    pub async fn send_raw(&mut self, text: &str) {
        self.ws.send(Message::Text(text.into())).await.expect("send");
    }

    pub async fn send(&mut self, message: &ClientMessage) {
        let json = serde_json::to_string(message).expect("serialises");
        self.send_raw(&json).await;
    }

    pub async fn start(&mut self, stream: u32, model: &str) {
        let start = StartRequest {
            stream,
            model: format!("scripted/{model}"),
            messages: vec![flint_protocol::ChatMessage::new(flint_protocol::Role::User, "make a page")],
            params: Default::default(),
        };
        self.send(&ClientMessage::Start(start)).await;
    }

    pub async fn next(&mut self) -> ServerMessage {
        loop {
            let message = tokio::time::timeout(self.patience, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no frame within {:?}", self.patience))
                .expect("socket open")
                .expect("frame readable");
            if let Message::Text(text) = message {
                let frame = serde_json::from_str(text.as_str()).expect("gateway frames parse");
                self.raw.push(text.as_str().to_owned());
                return frame;
            }
        }
    }

    /// The next frame, or `None` once the socket is closed (or broken).
    pub async fn next_or_closed(&mut self) -> Option<ServerMessage> {
        loop {
            match self.ws.next().await? {
                Ok(Message::Text(text)) => {
                    self.raw.push(text.as_str().to_owned());
                    return Some(serde_json::from_str(text.as_str()).expect("gateway frames parse"));
                }
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// Reads until each of `streams` has ended; frames of other streams are returned in `others`.
    pub async fn collect(&mut self, streams: &[u32]) -> (Vec<(u32, Outcome)>, Vec<ServerMessage>) {
        let mut open: Vec<(u32, Option<String>, String, Vec<u32>)> =
            streams.iter().map(|s| (*s, None, String::new(), Vec::new())).collect();
        let mut done = Vec::new();
        let mut others = Vec::new();
        while !open.is_empty() {
            let frame = self.next().await;
            let id = match &frame {
                ServerMessage::Started { stream, .. }
                | ServerMessage::Delta { stream, .. }
                | ServerMessage::Done { stream, .. }
                | ServerMessage::Error { stream: Some(stream), .. } => Some(*stream),
                _ => None,
            };
            let Some(at) = id.and_then(|id| open.iter().position(|o| o.0 == id)) else {
                others.push(frame);
                continue;
            };
            match frame {
                ServerMessage::Started { model, .. } => open[at].1 = Some(model),
                ServerMessage::Delta { text, seq, .. } => {
                    open[at].2.push_str(&text);
                    open[at].3.push(seq);
                }
                end => {
                    let (id, started, text, seqs) = open.remove(at);
                    done.push((id, Outcome { started, text, seqs, end }));
                }
            }
        }
        (done, others)
    }

    pub async fn run(&mut self, stream: u32, model: &str) -> Outcome {
        self.start(stream, model).await;
        let (mut done, others) = self.collect(&[stream]).await;
        assert!(others.is_empty(), "unexpected frames: {others:?}");
        done.remove(0).1
    }
}

/// Opens `/ws` as the gateway's own page would, with `cookie` (a signed-in browser); the
/// gateway's refusal is the error.
pub async fn handshake_with_cookie(
    addr: SocketAddr,
    cookie: &str,
) -> Result<WebSocketStream<MaybeTlsStream<TcpStream>>, tokio_tungstenite::tungstenite::Error> {
    let mut request = format!("ws://{addr}/ws?protocol=1").into_client_request()?;
    request.headers_mut().insert("origin", format!("http://{addr}").parse().expect("origin header"));
    request.headers_mut().insert("cookie", cookie.parse().expect("cookie header"));
    tokio_tungstenite::connect_async(request).await.map(|(ws, _)| ws)
}

impl Client {
    /// Like [`Client::connect`], signed in with `cookie` (`flint_session=…`).
    pub async fn connect_with_cookie(addr: SocketAddr, cookie: &str) -> Self {
        let ws = handshake_with_cookie(addr, cookie).await.expect("WebSocket handshake");
        let mut client = Self { ws, raw: Vec::new(), patience: Duration::from_secs(10) };
        let hello = client.next().await;
        assert!(matches!(hello, ServerMessage::Hello { .. }), "first frame must be Hello: {hello:?}");
        client
    }
}
