//! The end of a sign-in reaches the sockets opened under it (a sign-out at once; `token revoke`
//! before the next `Start` and within `auth.session_check_secs`), the cookie over TLS is a
//! `__Host-` one and a planted plain one is not read there, and sign-in tries are limited per
//! address. Each attack is listed in SECURITY.md.

mod common;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::http::StatusCode;
use common::Client;
use common::tokens::{http, with_tokens};
use flint_gateway::auth::{SECURE_SESSION_COOKIE, SESSION_COOKIE};
use flint_protocol::{ClientMessage, ErrorCode, ServerMessage};

/// Posts the sign-in form as the gateway's own page would, through `client`, with `extra` headers.
async fn sign_in_with(
    client: &reqwest::Client,
    addr: SocketAddr,
    token: &str,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = client
        .post(format!("http://{addr}/api/signin"))
        .header("origin", format!("http://{addr}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"));
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    request.send().await.expect("request succeeds")
}

/// The `name=value` a browser sends back for a sign-in's `Set-Cookie`.
async fn cookie(addr: SocketAddr, token: &str) -> String {
    let response = sign_in_with(&http(), addr, token, &[]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "signed in");
    set_cookie(&response).split(';').next().expect("name=value").to_owned()
}

fn set_cookie(response: &reqwest::Response) -> String {
    response.headers().get("set-cookie").and_then(|v| v.to_str().ok()).expect("a Set-Cookie").to_owned()
}

/// Reads until the socket closes, within `within`; answers the error it was closed with, or why
/// not (still open, or closed without a word).
async fn closed_with(client: &mut Client, within: Duration) -> Result<(ErrorCode, String), String> {
    let mut error = None;
    let read = tokio::time::timeout(within, async {
        while let Some(frame) = client.next_or_closed().await {
            if let ServerMessage::Error { code, message, stream: None, .. } = frame {
                error = Some((code, message));
            }
        }
    })
    .await;
    match (read, error) {
        (Err(_), _) => Err(format!("the socket is still open after {within:?}")),
        (Ok(()), Some(error)) => Ok(error),
        (Ok(()), None) => Err("closed without saying why".to_owned()),
    }
}

/// Whether the socket still answers a ping.
async fn answers(client: &mut Client) -> bool {
    client.send(&ClientMessage::Ping { nonce: 7 }).await;
    loop {
        match tokio::time::timeout(Duration::from_secs(5), client.next_or_closed()).await {
            Ok(Some(ServerMessage::Pong { nonce: 7 })) => return true,
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return false,
        }
    }
}

async fn sign_out(addr: SocketAddr, cookie: &str) {
    let out = http()
        .post(format!("http://{addr}/api/signout"))
        .header("origin", format!("http://{addr}"))
        .header("cookie", cookie)
        .send()
        .await
        .expect("sign out");
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn signing_out_closes_that_sign_ins_sockets_at_once_and_no_others() {
    let (gw, _store, token) = with_tokens("closes", |_| {}).await;
    let here = cookie(gw.addr, &token).await;
    let elsewhere = cookie(gw.addr, &token).await;
    let mut streaming = Client::connect_with_cookie(gw.addr, &here).await;
    let mut idle = Client::connect_with_cookie(gw.addr, &here).await;
    let mut other_browser = Client::connect_with_cookie(gw.addr, &elsewhere).await;
    streaming.start(1, "large@200").await;
    loop {
        match streaming.next().await {
            ServerMessage::Started { .. } => break,
            ServerMessage::Queued { .. } | ServerMessage::Quota { .. } => {}
            other => panic!("the stream should run: {other:?}"),
        }
    }
    sign_out(gw.addr, &here).await;
    for (what, client) in [("the streaming tab", &mut streaming), ("the idle tab", &mut idle)] {
        let (code, message) =
            closed_with(client, Duration::from_secs(2)).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(code, ErrorCode::Unauthorized, "{what}: {message}");
        assert!(message.contains("sign in again at /signin"), "{what}: {message}");
    }
    assert!(answers(&mut other_browser).await, "another sign-in of the same person stays open");
}

#[tokio::test]
async fn a_revoked_token_closes_its_open_sockets_within_the_check_interval() {
    let (gw, store, token) = with_tokens("revoke-idle", |c| c.auth.session_check_secs = 1).await;
    let mut client = Client::connect_with_cookie(gw.addr, &cookie(gw.addr, &token).await).await;
    assert!(answers(&mut client).await);
    // As `flint-gateway token revoke ada` does, from another process.
    assert_eq!(store.revoke_token("ada").await.expect("revoke"), 1);
    let (code, message) = closed_with(&mut client, Duration::from_secs(4)).await.expect("closed");
    assert_eq!(code, ErrorCode::Unauthorized, "{message}");
}

#[tokio::test]
async fn a_start_after_a_revoke_is_refused_and_the_socket_closed() {
    // The periodic check is far off: only the check before the Start can catch it.
    let (gw, store, token) = with_tokens("revoke-start", |c| c.auth.session_check_secs = 3600).await;
    let mut client = Client::connect_with_cookie(gw.addr, &cookie(gw.addr, &token).await).await;
    assert_eq!(store.revoke_token("ada").await.expect("revoke"), 1);
    client.start(1, "counter@20000").await;
    let frame = client.next().await;
    let ServerMessage::Error { code: ErrorCode::Unauthorized, message, .. } = frame else {
        panic!("a revoked sign-in started a stream: {frame:?}");
    };
    assert!(message.contains("/signin"), "{message}");
    assert_eq!(client.next_or_closed().await, None, "and the socket is closed");
}

#[tokio::test]
async fn over_tls_the_cookie_is_host_only_and_a_planted_plain_cookie_is_not_read() {
    let (gw, _store, token) = with_tokens("host-cookie", |c| {
        c.auth.trusted_proxies = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await;
    let tls = [("x-forwarded-proto", "https")];
    let set = set_cookie(&sign_in_with(&http(), gw.addr, &token, &tls).await);
    let prefix = format!("{SECURE_SESSION_COOKIE}=");
    assert!(set.starts_with(&prefix), "over TLS the cookie is __Host-: {set}");
    for attribute in ["Secure", "Path=/", "HttpOnly", "SameSite=Strict"] {
        assert!(set.split("; ").any(|a| a == attribute), "{attribute} missing: {set}");
    }
    assert!(!set.contains("Domain"), "{set}");
    let secret = set.split(';').next().and_then(|p| p.strip_prefix(&prefix)).expect("secret").to_owned();
    let models = |cookie: String| async move {
        http()
            .get(format!("http://{}/api/models", gw.addr))
            .header("x-forwarded-proto", "https")
            .header("cookie", cookie)
            .send()
            .await
            .expect("request")
            .status()
    };
    assert_eq!(models(format!("{SECURE_SESSION_COOKIE}={secret}")).await, StatusCode::OK);
    // A plain-HTTP hop or a sibling subdomain can set `flint_session` (here: a valid session of
    // the attacker's, so the person would work, and sync, as them). Over TLS it is not read.
    assert_eq!(models(format!("{SESSION_COOKIE}={secret}")).await, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn signin_tries_are_limited_per_address() {
    let (gw, _store, token) = with_tokens("throttle", |_| {}).await;
    let wrong = format!("{}x", &token[..token.len() - 1]);
    let client = http();
    for attempt in 1..=10 {
        let answer = sign_in_with(&client, gw.addr, &wrong, &[]).await.status();
        assert_eq!(answer, StatusCode::UNAUTHORIZED, "try {attempt} is within auth.signin_per_minute = 10");
    }
    let refused = sign_in_with(&client, gw.addr, &token, &[]).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS, "the 11th try in a minute, even a good one");
    let wait: u64 = refused.headers()["retry-after"].to_str().expect("ascii").parse().expect("seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    let page = refused.text().await.expect("body");
    assert!(page.contains("auth.signin_per_minute") && page.contains("action=\"/api/signin\""), "{page}");
    let elsewhere = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(IpAddr::from([127, 0, 0, 2]))
        .build()
        .expect("client");
    let answer = sign_in_with(&elsewhere, gw.addr, &token, &[]).await.status();
    assert_eq!(answer, StatusCode::SEE_OTHER, "another address signs in");
}
