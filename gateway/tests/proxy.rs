//! Identity behind a trusted proxy: `X-Forwarded-For` hops as proxies write them (`ip:port`,
//! `[v6]:port`, quoted) are different people, a hidden or unreadable client hop is refused rather
//! than taken for the proxy's own address, and an identity header given twice (or holding several
//! names) is refused. Each attack is listed in SECURITY.md.

mod common;

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use common::{env, start_with};
use flint_gateway::config::{AuthMode, Config};
use flint_gateway::{AppState, app};
use flint_protocol::{ClientMessage, ErrorCode, ServerMessage};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tower::ServiceExt as _;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Opens `/ws` as the gateway's own page behind a proxy that wrote `forwarded_for`.
async fn through_proxy(addr: SocketAddr, forwarded_for: &str) -> Result<Socket, WsError> {
    let mut request = format!("ws://{addr}/ws?protocol=1").into_client_request()?;
    request.headers_mut().insert("origin", format!("http://{addr}").parse().expect("origin"));
    request.headers_mut().insert("x-forwarded-for", forwarded_for.parse().expect("header"));
    tokio_tungstenite::connect_async(request).await.map(|(ws, _)| ws)
}

async fn next(ws: &mut Socket) -> ServerMessage {
    loop {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(10), ws.next())
            .await
            .expect("a frame within 10 s")
            .expect("socket open")
            .expect("readable");
        if let Message::Text(text) = frame {
            return serde_json::from_str(text.as_str()).expect("gateway frames parse");
        }
    }
}

/// Whether the socket was let in: a ping is answered (a person over their tabs is refused).
async fn let_in(ws: &mut Socket) -> Result<(), String> {
    assert!(matches!(next(ws).await, ServerMessage::Hello { .. }));
    let ping = serde_json::to_string(&ClientMessage::Ping { nonce: 1 }).expect("json");
    // A refused socket may already be closing: its refusal is read below either way.
    let _ = ws.send(Message::Text(ping.into())).await;
    match next(ws).await {
        ServerMessage::Pong { nonce: 1 } => Ok(()),
        ServerMessage::Error { code: ErrorCode::RateLimited, message, .. } => Err(message),
        other => Err(format!("{other:?}")),
    }
}

#[tokio::test]
async fn visitors_behind_a_proxy_writing_ports_are_different_people() {
    let gw = start_with(|config| {
        config.auth.trusted_proxies = vec!["127.0.0.1/32".parse().expect("range")];
        // One tab per person: a second tab of the same person is refused, another person's is not.
        config.limits.signed_in.sockets = 1;
    })
    .await;
    let mut open = Vec::new();
    for hop in [
        "203.0.113.1:5000",
        "198.51.100.7, 203.0.113.2:6000",
        "[2001:db8::1]:443",
        "\"[2001:db8:0:1::1]:443\"",
        "2001:db8:0:2::1",
    ] {
        let mut ws = through_proxy(gw.addr, hop).await.expect("handshake");
        let_in(&mut ws).await.unwrap_or_else(|why| panic!("{hop} was taken for someone already here: {why}"));
        open.push(ws);
    }
    let mut again = through_proxy(gw.addr, "203.0.113.1:7000").await.expect("handshake");
    let refused =
        let_in(&mut again).await.expect_err("the same address from another port is the same person");
    assert!(refused.contains("limits.signed_in.sockets"), "{refused}");
}

/// A request to `path` through the whole router from `peer`, with `headers`.
async fn from_peer(state: &AppState, path: &str, peer: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = Request::builder().uri(path).header("host", "127.0.0.1:8787");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request = request.extension(ConnectInfo(SocketAddr::new(peer.parse().expect("peer"), 40000)));
    let response =
        app(state.clone()).oneshot(request.body(Body::empty()).expect("request")).await.expect("answer");
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn behind_proxy(tag: &str, configure: impl FnOnce(&mut Config)) -> AppState {
    let dir = std::env::temp_dir().join(format!("flint-proxy-{tag}-{}", std::process::id()));
    let mut config = Config::default();
    config.share.database = dir.join("shares.sqlite3");
    config.auth.database = dir.join("auth.sqlite3");
    config.auth.trusted_proxies = vec!["10.0.0.0/8".parse().expect("range")];
    configure(&mut config);
    AppState::from_config(&config, &env)
}

#[tokio::test]
async fn a_hidden_or_unreadable_client_address_is_refused_not_taken_for_the_proxys() {
    let state = behind_proxy("hidden", |_| {});
    for hop in ["unknown", "_hidden", "\"_hidden:_port\"", "203.0.113.9, unknown:80", "not-an-address"] {
        let (status, body) = from_peer(&state, "/api/models", "10.1.2.3", &[("x-forwarded-for", hop)]).await;
        assert_eq!(status, 400, "{hop}: {body}");
        assert!(body.contains("X-Forwarded-For") && body.contains("operator"), "{hop}: {body}");
    }
    let (status, _) =
        from_peer(&state, "/api/models", "10.1.2.3", &[("x-forwarded-for", "203.0.113.9:443")]).await;
    assert_eq!(status, 200, "a port is read, not refused");
    let (status, _) =
        from_peer(&state, "/api/models", "203.0.113.5", &[("x-forwarded-for", "unknown")]).await;
    assert_eq!(status, 200, "a stranger's X-Forwarded-For is not read at all");
}

#[tokio::test]
async fn an_identity_header_given_twice_or_holding_several_names_is_refused() {
    let state = behind_proxy("identity", |config| {
        config.auth.mode = AuthMode::Proxy;
        config.auth.allow_anonymous = true;
    });
    let one = [("x-forwarded-user", "ada@example.org")];
    assert_eq!(from_peer(&state, "/api/models", "10.1.2.3", &one).await.0, 200);
    // The client's own header first, the proxy's appended after it.
    let twice = [("x-forwarded-user", "admin"), ("x-forwarded-user", "eve@example.org")];
    let joined = [("x-forwarded-user", "admin, eve@example.org")];
    for (what, headers) in [("twice", &twice[..]), ("joined", &joined[..])] {
        let (status, body) = from_peer(&state, "/api/models", "10.1.2.3", headers).await;
        assert_eq!(status, 400, "{what}: not served as anyone, anonymous included: {body}");
        assert!(body.contains("more than one person"), "{what}: {body}");
    }
}
