//! The plain HTTP routes: health, the model list, and the built app with its set-up page.

use std::io::ErrorKind;

use axum::Json;
use axum::extract::State;
use axum::http::header::CONTENT_SECURITY_POLICY;
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use flint_protocol::ModelList;

use crate::AppState;
use crate::error::AppError;
use crate::headers::{app_csp, inline_script_hashes};

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
pub async fn app_fallback(State(state): State<AppState>, uri: Uri) -> Result<Response, AppError> {
    let is_file = uri.path().rsplit('/').next().is_some_and(|last| last.contains('.'));
    if is_file {
        return Ok((StatusCode::NOT_FOUND, "not found").into_response());
    }
    index_page(&state, uri.path() == "/").await
}

/// `GET /` and `GET /index.html`: the app.
pub async fn index(State(state): State<AppState>) -> Result<Response, AppError> {
    index_page(&state, true).await
}

/// The built app's `index.html`, with a policy that allows exactly its inline scripts (Trunk's
/// loader), read each time so that a rebuilt app is served with its new hashes.
async fn index_page(state: &AppState, root: bool) -> Result<Response, AppError> {
    match tokio::fs::read_to_string(state.dist().join("index.html")).await {
        Ok(index) => {
            let csp = app_csp(&inline_script_hashes(&index));
            let mut response = Html(index).into_response();
            if let Ok(value) = HeaderValue::from_str(&csp) {
                response.headers_mut().insert(CONTENT_SECURITY_POLICY, value);
            }
            Ok(response)
        }
        Err(err) if err.kind() == ErrorKind::NotFound => {
            let status = if root { StatusCode::OK } else { StatusCode::NOT_FOUND };
            Ok((status, Html(NOT_BUILT_PAGE)).into_response())
        }
        Err(err) => Err(err.into()),
    }
}
