//! What an open tab costs the gateway in memory: every socket's read buffer is resident (tungstenite
//! zero-fills it before each read), so its size decides what 10,000 idle tabs cost
//! (`ws::READ_BUFFER_BYTES`, measured in `bench/scale-issue13.md`). Alone in its file: it reads this
//! process's resident memory, which other tests running beside it would disturb.

mod common;

use common::{Client, start_with};
use flint_protocol::{ChatMessage, ClientMessage, Role, ServerMessage, StartRequest};
use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

const SOCKETS: usize = 300;

fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status (Linux)");
    let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).expect("VmRSS line");
    kib.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).expect("VmRSS in kB") * 1024
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A tab whose own read buffer is small, so the memory measured is the gateway's side.
async fn open(addr: std::net::SocketAddr) -> Ws {
    let mut request = format!("ws://{addr}/ws?protocol=1").into_client_request().expect("request");
    request.headers_mut().insert("origin", format!("http://{addr}").parse().expect("origin"));
    let config = WebSocketConfig::default().read_buffer_size(4096);
    let (mut ws, _) =
        tokio_tungstenite::connect_async_with_config(request, Some(config), false).await.expect("handshake");
    match ws.next().await {
        Some(Ok(Message::Text(text))) => {
            let hello: ServerMessage = serde_json::from_str(text.as_str()).expect("JSON");
            assert!(matches!(hello, ServerMessage::Hello { .. }), "{hello:?}");
        }
        other => panic!("expected Hello, got {other:?}"),
    }
    // One frame each way, as a page sends: the read buffer is filled on the first read.
    let ping = serde_json::to_string(&ClientMessage::Ping { nonce: 7 }).expect("JSON");
    ws.send(Message::Text(ping.into())).await.expect("ping");
    let _pong = ws.next().await;
    ws
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_tab_costs_far_less_than_a_default_read_buffer_and_long_prompts_still_arrive() {
    let gw = start_with(|config| {
        config.limits.signed_in.sockets = 0;
    })
    .await;
    // Warm up: the runtime's and the allocator's first allocations are not per-socket costs.
    let mut sockets = Vec::new();
    for _ in 0..20 {
        sockets.push(open(gw.addr).await);
    }
    let before = resident_bytes();
    for _ in 0..SOCKETS {
        sockets.push(open(gw.addr).await);
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let per_socket = resident_bytes().saturating_sub(before) / SOCKETS as u64;
    // tungstenite's default read buffer alone is 128 KiB per socket, all of it resident.
    assert!(
        per_socket < 64 * 1024,
        "each open tab costs {per_socket} bytes resident (gateway and client together); the socket read buffer is too large"
    );

    // A prompt 50 times the read buffer still arrives whole and is answered.
    let mut client = Client::connect(gw.addr).await;
    let prompt = "make a page ".repeat(200_000 / 12);
    let start = StartRequest {
        stream: 1,
        model: "scripted/counter@20000".into(),
        messages: vec![ChatMessage::new(Role::User, prompt)],
        params: Default::default(),
    };
    client.send(&ClientMessage::Start(start)).await;
    let (done, others) = client.collect(&[1]).await;
    assert!(others.is_empty(), "unexpected frames: {others:?}");
    assert!(matches!(done[0].1.end, ServerMessage::Done { .. }), "{:?}", done[0].1.end);
    drop(sockets);
}
