//! Who may use a gateway served to others (`[auth]`): a refused start on a public address, access
//! tokens exchanged for a session cookie, and an authenticating proxy's identity header. Each
//! attack is listed in SECURITY.md.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use common::tokens::{database, http, now, with_tokens};
use common::{Client, env, handshake, handshake_with_cookie};
use flint_gateway::auth::SESSION_COOKIE;
use flint_gateway::auth::store::hash;
use flint_gateway::config::{AuthConfig, AuthMode, Config};
use flint_gateway::{AppState, app};
use tokio_tungstenite::tungstenite::Error as WsError;
use tower::ServiceExt as _;

/// A fresh folder under the system temp dir.
fn temp_dir(tag: &str) -> PathBuf {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("flint-auth-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Posts the sign-in form as the gateway's own page would (`origin` its scheme and address).
async fn sign_in_from(
    addr: SocketAddr,
    token: &str,
    origin: &str,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = http()
        .post(format!("http://{addr}/api/signin"))
        .header("origin", origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"));
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    request.send().await.expect("request succeeds")
}

async fn sign_in(addr: SocketAddr, token: &str) -> reqwest::Response {
    sign_in_from(addr, token, &format!("http://{addr}"), &[]).await
}

fn set_cookie(response: &reqwest::Response) -> String {
    response.headers().get("set-cookie").and_then(|v| v.to_str().ok()).expect("a Set-Cookie").to_owned()
}

/// `flint_session=…`, as the browser sends it back.
fn cookie_of(set_cookie: &str) -> String {
    set_cookie.split(';').next().expect("name=value").to_owned()
}

async fn get(addr: SocketAddr, path: &str, cookie: Option<&str>) -> (u16, Option<String>, String) {
    let mut request = http().get(format!("http://{addr}{path}"));
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    let response = request.send().await.expect("request succeeds");
    let status = response.status().as_u16();
    let location = response.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
    (status, location, response.text().await.expect("body"))
}

/// The refusal of a WebSocket handshake: its status and body.
fn refusal(result: Result<impl Sized, WsError>) -> (u16, String) {
    match result {
        Ok(_) => panic!("the gateway upgraded the socket"),
        Err(WsError::Http(response)) => {
            let body = response.body().as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
            (response.status().as_u16(), body.unwrap_or_default())
        }
        Err(other) => panic!("expected an HTTP refusal, got {other}"),
    }
}

/// A temporary `flint.toml` with no providers and no stored links, plus `extra`.
fn config_file(tag: &str, extra: &str) -> PathBuf {
    let path = temp_dir(tag).join("flint.toml");
    std::fs::write(&path, format!("[share]\nenabled = false\n{extra}")).expect("config file");
    path
}

/// Runs the real gateway binary until it exits or says it is serving (then stops it); answers
/// its exit status (`None`: it started) and what it logged.
fn start_binary(config: &std::path::Path, listen: &str) -> (Option<std::process::ExitStatus>, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flint-gateway"))
        .args(["--config", &config.display().to_string(), "--listen", listen])
        .env_remove("FLINT_OPENAI_BASE_URL")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the gateway binary runs");
    let stdout = child.stdout.take().expect("stdout");
    let (lines, logged) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut printed = String::new();
    loop {
        match logged.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                printed.push_str(&line);
                printed.push('\n');
                if line.contains("Flint is serving") {
                    let _ = child.kill();
                    let _ = child.wait();
                    return (None, printed);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return (Some(child.wait().expect("exit status")), printed);
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!("the gateway neither started nor exited within 20 s:\n{printed}");
            }
        }
    }
}

#[test]
fn a_public_address_without_sign_in_refuses_to_start() {
    let refused = AuthConfig::default().check("0.0.0.0:8787".parse().expect("address"));
    let sentence = refused.expect_err("nobody signs in on a public address").to_string();
    assert!(sentence.contains("auth.mode") && sentence.contains("auth.allow_anonymous"), "{sentence}");
    // The binary applies it after --listen, which overrides the file's loopback address.
    let config = config_file("refuse", "[server]\nlisten = \"127.0.0.1:0\"\n");
    let (exited, printed) = start_binary(&config, "0.0.0.0:0");
    let status = exited.unwrap_or_else(|| panic!("it started on a public address:\n{printed}"));
    assert!(!status.success(), "{printed}");
    assert!(printed.contains("auth.allow_anonymous"), "it says which settings to change:\n{printed}");
}

#[test]
fn allow_anonymous_starts_on_a_public_address() {
    let config = config_file("anonymous", "[auth]\nallow_anonymous = true\n");
    let (exited, printed) = start_binary(&config, "0.0.0.0:0");
    assert_eq!(exited, None, "it starts:\n{printed}");
}

#[tokio::test]
async fn a_token_signs_in_and_its_cookie_opens_the_socket_and_the_api() {
    let (gw, _store, token) = with_tokens("signin", |_| {}).await;
    let response = sign_in(gw.addr, &token).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()["location"], "/");
    let cookie = cookie_of(&set_cookie(&response));
    assert!(cookie.starts_with(&format!("{SESSION_COOKIE}=")), "{cookie}");
    let (status, _, body) = get(gw.addr, "/api/models", Some(&cookie)).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, _) = get(gw.addr, "/", Some(&cookie)).await;
    assert_eq!(status, 200, "a signed-in person gets the app");
    let mut client = Client::connect_with_cookie(gw.addr, &cookie).await;
    let outcome = client.run(1, "counter@20000").await;
    assert!(!outcome.text.is_empty(), "the stream ran: {outcome:?}");
}

#[tokio::test]
async fn a_bad_token_is_refused_with_a_sentence() {
    let (gw, _store, token) = with_tokens("bad", |_| {}).await;
    let forged = format!("{}x", &token[..token.len() - 1]);
    let response = sign_in(gw.addr, &forged).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers().get("set-cookie").is_none(), "no session for a bad token");
    let body = response.text().await.expect("body");
    assert!(body.contains("this access token is not valid here"), "{body}");
    assert!(body.contains("action=\"/api/signin\""), "the form is shown again");
}

#[tokio::test]
async fn without_a_session_the_socket_and_api_refuse_and_the_page_sends_to_signin() {
    let (gw, _store, _token) = with_tokens("nosession", |_| {}).await;
    let (status, body) = refusal(handshake(gw.addr, Some(&format!("http://{}", gw.addr))).await);
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("/signin"), "the refusal says where to sign in: {body}");
    let (status, _, body) = get(gw.addr, "/api/models", None).await;
    assert_eq!((status, body.contains("sign in")), (401, true), "{body}");
    let access = http().post(format!("http://{}/api/access", gw.addr)).send().await.expect("access");
    assert_eq!(access.status(), StatusCode::UNAUTHORIZED, "the app's probe reports it");
    assert!(access.text().await.expect("body").contains("/signin"));
    assert_eq!(get(gw.addr, "/", None).await.1.as_deref(), Some("/signin"));
    assert_eq!(get(gw.addr, "/", None).await.0, 302);
    let (status, _, page) = get(gw.addr, "/signin", None).await;
    assert_eq!(status, 200);
    assert!(page.contains("<form method=\"post\" action=\"/api/signin\">") && !page.contains("<script"));
    let made_up = format!("{SESSION_COOKIE}={}", "A".repeat(43));
    let (status, body) = refusal(handshake_with_cookie(gw.addr, &made_up).await);
    assert_eq!(status, 401, "a made-up session: {body}");
}

#[tokio::test]
async fn an_expired_session_is_refused() {
    let (gw, store, token) = with_tokens("expired", |_| {}).await;
    // Signed in eight days ago, for seven.
    let week = Duration::from_secs(7 * 86_400);
    let old = store.sign_in(&token, now() - 8 * 86_400, week).await.expect("sign in").expect("a valid token");
    let cookie = format!("{SESSION_COOKIE}={}", old.secret);
    let (status, _, body) = get(gw.addr, "/api/models", Some(&cookie)).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("expired"), "{body}");
    assert_eq!(refusal(handshake_with_cookie(gw.addr, &cookie).await).0, 401);
    let fresh = store.sign_in(&token, now(), week).await.expect("sign in").expect("a valid token");
    let cookie = format!("{SESSION_COOKIE}={}", fresh.secret);
    assert_eq!(get(gw.addr, "/api/models", Some(&cookie)).await.0, 200, "a session of today still works");
}

#[tokio::test]
async fn a_revoked_tokens_sessions_are_refused() {
    let (gw, store, token) = with_tokens("revoked", |_| {}).await;
    let cookie = cookie_of(&set_cookie(&sign_in(gw.addr, &token).await));
    assert_eq!(get(gw.addr, "/api/models", Some(&cookie)).await.0, 200);
    assert_eq!(store.revoke_token("ada").await.expect("revoke"), 1, "one session ended");
    assert_eq!(get(gw.addr, "/api/models", Some(&cookie)).await.0, 401);
    assert_eq!(refusal(handshake_with_cookie(gw.addr, &cookie).await).0, 401);
    assert_eq!(
        sign_in(gw.addr, &token).await.status(),
        StatusCode::UNAUTHORIZED,
        "nor does it sign in again"
    );
}

#[tokio::test]
async fn signing_out_ends_the_session() {
    let (gw, _store, token) = with_tokens("signout", |_| {}).await;
    let cookie = cookie_of(&set_cookie(&sign_in(gw.addr, &token).await));
    let out = http()
        .post(format!("http://{}/api/signout", gw.addr))
        .header("origin", format!("http://{}", gw.addr))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("sign out");
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert!(set_cookie(&out).contains("Max-Age=0"), "the browser drops the cookie");
    assert_eq!(get(gw.addr, "/api/models", Some(&cookie)).await.0, 401, "and the gateway forgets it");
}

#[tokio::test]
async fn the_cookie_is_http_only_strict_and_secure_under_https() {
    let (gw, _store, token) = with_tokens("cookie", |_| {}).await;
    let own = format!("http://{}", gw.addr);
    let plain = set_cookie(&sign_in(gw.addr, &token).await);
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=604800"] {
        assert!(plain.split("; ").any(|a| a == attribute), "{attribute} missing: {plain}");
    }
    assert!(!plain.contains("Secure"), "a browser on plain HTTP would drop a Secure cookie: {plain}");
    let page_over_tls =
        set_cookie(&sign_in_from(gw.addr, &token, &format!("https://{}", gw.addr), &[]).await);
    assert!(page_over_tls.ends_with("; Secure"), "the page was served over https: {page_over_tls}");
    let https = [("x-forwarded-proto", "https")];
    let stranger_says = set_cookie(&sign_in_from(gw.addr, &token, &own, &https).await);
    assert!(!stranger_says.contains("Secure"), "X-Forwarded-Proto from an untrusted peer: {stranger_says}");

    let (proxied, _store, token) = with_tokens("cookie-proxy", |c| {
        c.auth.trusted_proxies = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await;
    let own = format!("http://{}", proxied.addr);
    let forwarded = set_cookie(&sign_in_from(proxied.addr, &token, &own, &https).await);
    assert!(forwarded.ends_with("; Secure"), "a trusted proxy's TLS: {forwarded}");

    let (public, _store, token) = with_tokens("cookie-public", |c| {
        c.auth.public_url = Some("https://flint.example".into());
    })
    .await;
    let configured = set_cookie(&sign_in(public.addr, &token).await);
    assert!(configured.ends_with("; Secure"), "public_url is https: {configured}");
}

/// A request to `path` from `peer` (none: no `ConnectInfo`, as in-process tests have), with
/// `headers`, through the whole router.
async fn from_peer(
    state: &AppState,
    path: &str,
    peer: Option<&str>,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let mut request = Request::builder().uri(path).header("host", "127.0.0.1:8787");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(peer) = peer {
        request = request.extension(ConnectInfo(SocketAddr::new(peer.parse().expect("peer"), 40000)));
    }
    let response =
        app(state.clone()).oneshot(request.body(Body::empty()).expect("request")).await.expect("answer");
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn a_proxys_identity_header_is_believed_only_from_a_trusted_address() {
    let mut config = Config::default();
    // Never the person's own data folder.
    config.share.database = temp_dir("proxy").join("shares.sqlite3");
    // Proxy mode keeps synced history in the auth file.
    config.auth.database = temp_dir("proxy").join("auth.sqlite3");
    config.auth.mode = AuthMode::Proxy;
    config.auth.header = "Remote-User".into();
    config.auth.trusted_proxies = vec!["10.0.0.0/8".parse().expect("range")];
    let state = AppState::from_config(&config, &env);
    let named = [("remote-user", "ada@example.org")];
    assert_eq!(from_peer(&state, "/api/models", Some("10.1.2.3"), &named).await.0, 200, "from the proxy");
    assert_eq!(from_peer(&state, "/api/models", Some("::ffff:10.1.2.3"), &named).await.0, 200, "dual stack");
    let (status, body) = from_peer(&state, "/api/models", Some("203.0.113.7"), &named).await;
    assert_eq!(status, 401, "a forged header from a stranger is ignored: {body}");
    assert!(body.contains("sign-in proxy"), "{body}");
    assert_eq!(from_peer(&state, "/api/models", None, &named).await.0, 401, "no peer known: not trusted");
    assert_eq!(
        from_peer(&state, "/api/models", Some("10.1.2.3"), &[]).await.0,
        401,
        "the proxy named nobody"
    );
    let other_header = [("x-forwarded-user", "ada@example.org")];
    assert_eq!(
        from_peer(&state, "/api/models", Some("10.1.2.3"), &other_header).await.0,
        401,
        "another header"
    );
}

#[tokio::test]
async fn the_token_and_the_session_are_never_stored_in_clear() {
    let (gw, store, token) = with_tokens("clear", |_| {}).await;
    let cookie = cookie_of(&set_cookie(&sign_in(gw.addr, &token).await));
    let secret = cookie.split_once('=').expect("name=value").1.to_owned();
    drop((gw, store));
    let file = std::fs::read(database("clear")).expect("the database file");
    let contains = |needle: &str| file.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(contains(&hash(&token)) && contains(&hash(&secret)), "this is the file the gateway wrote");
    let random_part = token.trim_start_matches("flint_");
    for (what, clear) in [("the token", random_part), ("the session", secret.as_str())] {
        assert!(!contains(clear), "{what} is stored in clear");
        assert!(!contains(&clear[..20]), "part of {what} is stored in clear");
    }
}
