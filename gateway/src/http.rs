//! The plain HTTP routes: health, the model list, and the built app with its set-up page.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use axum::Json;
use axum::extract::{ConnectInfo, State};
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG,
    IF_NONE_MATCH,
};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use flint_protocol::ModelList;
use sha2::{Digest as _, Sha256};

use crate::AppState;
use crate::error::AppError;
use crate::headers::{app_csp, inline_script_hashes};
use crate::metrics::Listener;
use crate::static_files;

/// `GET /metrics` on `server.listen`: the gateway's figures for a scraper in `metrics.allow`,
/// unless they have an address of their own or the request came through a proxy; anyone else gets
/// the same 404 as an unknown path, so the route does not even say it exists.
pub async fn metrics(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
) -> Response {
    scrape(&state, Listener::App, peer, &headers)
}

/// `GET /metrics` on `metrics.listen`.
pub async fn metrics_own_listener(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
) -> Response {
    scrape(&state, Listener::Own, peer, &headers)
}

fn scrape(state: &AppState, listener: Listener, peer: std::net::SocketAddr, headers: &HeaderMap) -> Response {
    if !state.scrape_policy().allows(listener, peer.ip(), headers) {
        return StatusCode::NOT_FOUND.into_response();
    }
    ([(CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], state.metrics().render()).into_response()
}

/// `GET /healthz`.
pub async fn healthz() -> &'static str {
    "ok"
}

/// `GET /api/models`.
pub async fn models(State(state): State<AppState>) -> Json<ModelList> {
    Json(state.model_list())
}

/// Shown at `/` while the app has not been built.
pub const NOT_BUILT_PAGE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Flint: app not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>Flint's gateway is running</h1>
<p>The web app has not been built yet, so there is nothing to show here.
Build and serve everything with <code>cargo xtask serve</code>.</p>
<p>The gateway itself answers at <a href="/api/models">/api/models</a> and <code>/ws</code>.</p>
</body>
</html>
"#;

/// Requests that match no route and no file of the built app: client-side routes get the app's
/// `index.html`; missing files get 404; without a built app, `/` explains how to build it.
pub async fn app_fallback(
    State(state): State<AppState>,
    uri: Uri,
    request: HeaderMap,
) -> Result<Response, AppError> {
    let is_file = uri.path().rsplit('/').next().is_some_and(|last| last.contains('.'));
    if is_file {
        return Ok((StatusCode::NOT_FOUND, "not found").into_response());
    }
    index_page(&state, &request, uri.path() == "/").await
}

/// `GET /` and `GET /index.html`: the app.
pub async fn index(State(state): State<AppState>, request: HeaderMap) -> Result<Response, AppError> {
    index_page(&state, &request, true).await
}

/// The built app's `index.html`, with a policy that allows exactly its inline scripts (the app's
/// loader), read each time so that a rebuilt app is served with its new hashes. It names the
/// hashed files, so it is revalidated on every load (`no-cache` and an `ETag`: a 304 when the app
/// has not changed), and sent as its precompressed copy where the browser accepts one.
async fn index_page(state: &AppState, request: &HeaderMap, root: bool) -> Result<Response, AppError> {
    let path = state.dist().join("index.html");
    let index = match tokio::fs::read_to_string(&path).await {
        Ok(index) => index,
        Err(err) if err.kind() == ErrorKind::NotFound => {
            let status = if root { StatusCode::OK } else { StatusCode::NOT_FOUND };
            let mut response = (status, Html(NOT_BUILT_PAGE)).into_response();
            response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static(static_files::REVALIDATE));
            return Ok(response);
        }
        Err(err) => return Err(err.into()),
    };
    let csp = app_csp(&inline_script_hashes(&index));
    if static_files::plain() {
        let mut response = Html(index).into_response();
        set_header(response.headers_mut(), CONTENT_SECURITY_POLICY, &csp);
        return Ok(response);
    }
    let digest = Sha256::digest(index.as_bytes());
    let etag = format!("W/\"{}\"", digest[..8].iter().map(|b| format!("{b:02x}")).collect::<String>());
    let unchanged = request
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag || tag.trim() == "*"));
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let accept = request.get(ACCEPT_ENCODING).and_then(|v| v.to_str().ok()).unwrap_or_default();
        match precompressed(&path, accept).await {
            Some((encoding, body)) => {
                let mut response = Html(body).into_response();
                response.headers_mut().insert(CONTENT_ENCODING, HeaderValue::from_static(encoding));
                response
            }
            None => Html(index).into_response(),
        }
    };
    let headers = response.headers_mut();
    // Also on a 304: its headers replace the cached ones, and the policy must keep allowing the
    // cached page's inline loader.
    set_header(headers, CONTENT_SECURITY_POLICY, &csp);
    set_header(headers, ETAG, &etag);
    static_files::set_cache_headers(headers, static_files::Caching::Revalidate);
    Ok(response)
}

/// The copy of `index` (a path) in the best encoding `accept` allows, if one exists that is not
/// older than the file itself (a stale copy would not match the policy's script hashes).
async fn precompressed(index: &Path, accept: &str) -> Option<(&'static str, Vec<u8>)> {
    let modified = tokio::fs::metadata(index).await.and_then(|m| m.modified()).ok()?;
    for (encoding, ext) in static_files::ENCODINGS {
        if !static_files::accepts(accept, encoding) {
            continue;
        }
        let mut copy = index.as_os_str().to_owned();
        copy.push(format!(".{ext}"));
        let copy = PathBuf::from(copy);
        let fresh =
            tokio::fs::metadata(&copy).await.and_then(|m| m.modified()).is_ok_and(|at| at >= modified);
        if fresh && let Ok(body) = tokio::fs::read(&copy).await {
            return Some((encoding, body));
        }
    }
    None
}

fn set_header(headers: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(name, value);
    }
}
