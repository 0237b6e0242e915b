//! Attacks on who may use the gateway, over a real socket: cross-site WebSocket hijacking, DNS
//! rebinding, cross-site API calls, clickjacking headers, and slow request headers. Each is listed
//! in SECURITY.md.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{Client, handshake, start, start_with};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Error as WsError;

/// Sends `request` as is and reads the answer until the server closes (`Connection: close`).
async fn raw(addr: SocketAddr, request: &str) -> String {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer))
        .await
        .expect("an answer within 10 s")
        .expect("read");
    String::from_utf8_lossy(&answer).into_owned()
}

fn status(answer: &str) -> u16 {
    answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The refusal of a WebSocket handshake: its status and body.
async fn refused(addr: SocketAddr, origin: Option<&str>) -> (u16, String) {
    match handshake(addr, origin).await {
        Ok(_) => panic!("the gateway upgraded a socket from {origin:?}"),
        Err(WsError::Http(response)) => {
            let body = response.body().as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
            (response.status().as_u16(), body.unwrap_or_default())
        }
        Err(other) => panic!("expected an HTTP refusal, got {other}"),
    }
}

#[tokio::test]
async fn a_socket_from_another_site_another_port_a_sandbox_or_nowhere_is_refused() {
    let gw = start().await;
    for origin in [Some("https://evil.example"), Some("http://127.0.0.1:9999"), Some("null"), None] {
        let (status, body) = refused(gw.addr, origin).await;
        assert_eq!(status, 403, "{origin:?}");
        assert!(body.contains("only from its own pages"), "{origin:?}: the refusal says why: {body}");
    }
    // The person's own page still connects and streams.
    let mut own = Client::connect(gw.addr).await;
    assert!(own.run(1, "counter@20000").await.text.len() > 10);
}

#[tokio::test]
async fn an_allowed_origin_is_served() {
    let gw = start_with(|c| c.server.allowed_origins = vec!["http://127.0.0.1:8080".into()]).await;
    handshake(gw.addr, Some("http://127.0.0.1:8080")).await.expect("the trunk serve origin connects");
    assert_eq!(refused(gw.addr, Some("http://127.0.0.1:8081")).await.0, 403);
}

#[tokio::test]
async fn dns_rebinding_names_are_refused_everywhere() {
    let gw = start().await;
    let port = gw.addr.port();
    for path in ["/", "/api/models", "/healthz", "/ws"] {
        let answer = raw(
            gw.addr,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: rebind.evil.example:{port}\r\nOrigin: http://rebind.evil.example:{port}\r\n\
                 Connection: close\r\n\r\n"
            ),
        )
        .await;
        assert_eq!(status(&answer), 403, "{path}: {answer}");
        assert!(answer.contains("does not answer to the name rebind.evil.example"), "{answer}");
    }
    let own = raw(
        gw.addr,
        &format!("GET /api/models HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert_eq!(status(&own), 200, "{own}");
}

#[tokio::test]
async fn api_calls_from_another_site_are_refused() {
    let gw = start().await;
    let host = gw.addr;
    let share = |origin: &str| {
        let body = r#"{"link":"v1.eyJwIjoiaGkifQ"}"#;
        format!(
            "POST /api/share HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let answer = raw(gw.addr, &share("https://evil.example")).await;
    assert_eq!(status(&answer), 403, "another site may not fill the link store: {answer}");
    let cross = raw(
        gw.addr,
        &format!("GET /api/models HTTP/1.1\r\nHost: {host}\r\nSec-Fetch-Site: cross-site\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert_eq!(status(&cross), 403, "{cross}");
    let probe = |origin: &str| {
        format!(
            "POST /api/access HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
    };
    assert_eq!(status(&raw(gw.addr, &probe(&format!("http://{host}"))).await), 204);
    let foreign = raw(gw.addr, &probe("http://127.0.0.1:8080")).await;
    assert_eq!(status(&foreign), 403);
    assert!(foreign.contains("server.allowed_origins"), "the probe tells the app what to change: {foreign}");
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let dist = std::env::temp_dir().join(format!("flint-access-dist-{}", std::process::id()));
    std::fs::create_dir_all(&dist).expect("dist");
    let loader = "import init from '/flint-app.js'; await init();";
    std::fs::write(
        dist.join("index.html"),
        format!("<!DOCTYPE html><script type=\"module\">{loader}</script>"),
    )
    .expect("index");
    std::fs::write(dist.join("preview.html"), "<!DOCTYPE html><p>preview").expect("preview");
    std::fs::write(dist.join("app.js"), "1").expect("js");
    let gw = start_with(|c| c.server.dist = dist.clone()).await;
    let host = gw.addr;
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    for path in ["/", "/index.html", "/some/client/route"] {
        let answer = raw(gw.addr, &get(path)).await;
        let csp =
            header(&answer, "content-security-policy").unwrap_or_else(|| panic!("{path}: no CSP: {answer}"));
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: another site could frame Flint: {csp}");
        assert!(csp.contains("'sha256-"), "{path}: the inline loader must be allowed by its hash: {csp}");
        assert!(!csp.contains("'unsafe-inline' 'wasm") && !csp.contains("script-src *"), "{csp}");
        assert_eq!(header(&answer, "x-frame-options"), Some("DENY"), "{path}");
    }
    for path in ["/app.js", "/api/models", "/healthz", "/missing.js"] {
        let answer = raw(gw.addr, &get(path)).await;
        assert_eq!(header(&answer, "x-content-type-options"), Some("nosniff"), "{path}: {answer}");
        assert_eq!(header(&answer, "referrer-policy"), Some("no-referrer"), "{path}");
        assert!(header(&answer, "content-security-policy").is_some(), "{path}");
    }
    let preview = raw(gw.addr, &get("/preview.html")).await;
    let csp = header(&preview, "content-security-policy").expect("preview CSP");
    assert!(csp.contains("sandbox allow-scripts") && csp.contains("frame-ancestors 'self'"), "{csp}");
    let _ = std::fs::remove_dir_all(&dist);
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let gw = start_with(|c| c.server.header_read_timeout_ms = 500).await;
    let mut slow = Vec::new();
    for _ in 0..50 {
        let mut tcp = TcpStream::connect(gw.addr).await.expect("connect");
        tcp.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await.expect("write");
        slow.push(tcp);
    }
    let started = Instant::now();
    for tcp in &mut slow {
        let mut buf = [0u8; 512];
        // The server answers 408 or just closes; either way the read ends, it does not hang.
        let read = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                match tcp.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(read.is_ok(), "a half-sent request was still held after {:?}", started.elapsed());
    }
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    // Everyone else is still served.
    let mut own = Client::connect(gw.addr).await;
    assert!(!own.run(1, "counter@20000").await.text.is_empty());
}
