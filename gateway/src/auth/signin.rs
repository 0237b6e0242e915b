//! The sign-in page (`GET /signin`) and its form's endpoints (`POST /api/signin`,
//! `POST /api/signout`).
//!
//! The page is static HTML with no script at all: a form that posts the token. Its policy allows
//! its one inline style by hash and form posts to the gateway only. A good token answers a
//! session cookie (`HttpOnly`: no script reads it; `SameSite=Strict`: no other site's page, link
//! or form sends it; `Path=/`; `Secure` over TLS, see [`super::Auth::https`]) and sends the browser
//! to `/`; a bad one answers 401 with the page again, saying so.

use std::sync::LazyLock;

use axum::Form;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, COOKIE, LOCATION, SET_COOKIE};
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use base64::Engine as _;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{peer, unix_now};
use crate::AppState;
use crate::config::AuthMode;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "flint_session";

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:28rem;margin:5rem auto;padding:0 1rem;\
line-height:1.5;color:#1f2328;background:#fff}h1{font-size:1.4rem}label{display:block;font-weight:600;\
margin-top:1rem}input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;margin:.25rem 0 1rem}\
button{padding:.5rem 1.25rem;font:inherit;cursor:pointer}.problem{color:#a40e26;font-weight:600}\
@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}.problem{color:#ff7b72}}";

/// The page's policy: nothing but its own style and a form posting to the gateway.
static PAGE_CSP: LazyLock<String> = LazyLock::new(|| {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; form-action 'self'; base-uri 'none'; \
         frame-ancestors 'none'"
    )
});

/// The page around `body` (trusted HTML: constants and escaped text only).
///
/// The page's own referrer policy is `same-origin`, not the gateway's `no-referrer`: under
/// `no-referrer` a browser sends a form's POST with `Origin: null`, which the access check must
/// refuse (sandboxed frames send the same), so no one could sign in. Found by the e2e test.
fn page(status: StatusCode, body: &str) -> Response {
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"same-origin\">\
         <title>Sign in to Flint</title><style>{STYLE}</style></head>\n<body><main>\n\
         <h1>Sign in to Flint</h1>\n{body}\n</main></body>\n</html>\n"
    );
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    if let Ok(csp) = HeaderValue::from_str(&PAGE_CSP) {
        headers.insert(CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The token form, with `problem` above it when the last try failed.
fn form(status: StatusCode, problem: Option<&str>) -> Response {
    let problem = problem.map(|p| format!("<p class=\"problem\" role=\"alert\">{}</p>\n", escape(p)));
    page(
        status,
        &format!(
            "{}<p>Enter the access token this Flint's operator gave you. You stay signed in on this browser \
             until you sign out or the sign-in expires.</p>\n\
             <form method=\"post\" action=\"/api/signin\">\n\
             <label for=\"token\">Access token</label>\n\
             <input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"current-password\" required autofocus>\n\
             <button type=\"submit\">Sign in</button>\n</form>",
            problem.unwrap_or_default()
        ),
    )
}

/// `GET /signin`: the token form; with a proxy, where to sign in instead; without sign-in, the app.
pub async fn signin_page(State(state): State<AppState>) -> Response {
    let auth = state.auth();
    match auth.mode() {
        AuthMode::Tokens => form(StatusCode::OK, None),
        AuthMode::Proxy => {
            let at = auth.public_url.as_deref().map_or_else(
                || "at the address its operator gave you".to_owned(),
                |url| format!("at <a href=\"{0}\">{0}</a>", escape(url)),
            );
            page(
                StatusCode::OK,
                &format!("<p>This Flint signs people in through its sign-in proxy: open it {at}.</p>"),
            )
        }
        AuthMode::None => (StatusCode::FOUND, [(LOCATION, "/")]).into_response(),
    }
}

/// `POST /api/signin` form.
#[derive(Debug, Deserialize)]
pub struct SignInForm {
    /// The access token.
    pub token: String,
}

/// `POST /api/signin`: exchanges a token for a session cookie and sends the browser to `/`.
pub async fn sign_in(
    State(state): State<AppState>,
    extensions: Extensions,
    headers: HeaderMap,
    Form(form_data): Form<SignInForm>,
) -> Response {
    let auth = state.auth();
    if auth.mode() != AuthMode::Tokens {
        return (
            StatusCode::NOT_FOUND,
            "this Flint does not sign in with access tokens (auth.mode is not \"tokens\")",
        )
            .into_response();
    }
    let Some(store) = auth.store().cloned() else {
        return form(StatusCode::SERVICE_UNAVAILABLE, Some(UNAVAILABLE));
    };
    let lifetime = auth.session_lifetime;
    let token = form_data.token;
    let session = match store.sign_in(&token, unix_now(), lifetime).await {
        Ok(Some(session)) => session,
        Ok(None) => return form(StatusCode::UNAUTHORIZED, Some(BAD_TOKEN)),
        Err(err) => {
            tracing::error!(error = %err, "signing in failed");
            return form(StatusCode::SERVICE_UNAVAILABLE, Some(UNAVAILABLE));
        }
    };
    tracing::info!(person = %session.name, "signed in");
    let secure = auth.https(peer(&extensions), &headers);
    let cookie = session_cookie(&session.secret, lifetime.as_secs(), secure);
    redirect_with_cookie("/", &cookie)
}

/// What a bad token is answered.
pub const BAD_TOKEN: &str = "this access token is not valid here: check that it was copied whole, or ask for a new \
                             one (it may have been revoked)";
const UNAVAILABLE: &str =
    "this Flint cannot sign anyone in right now (details are in its log); try again later";

/// `POST /api/signout`: ends this browser's session and sends it to the sign-in page.
pub async fn sign_out(State(state): State<AppState>, extensions: Extensions, headers: HeaderMap) -> Response {
    let auth = state.auth();
    if let (Some(secret), Some(store)) = (session_secret(&headers), auth.store().cloned())
        && let Err(err) = store.sign_out(secret).await
    {
        tracing::error!(error = %err, "signing out failed");
    }
    let secure = auth.https(peer(&extensions), &headers);
    redirect_with_cookie("/signin", &session_cookie("", 0, secure))
}

/// `Set-Cookie` for a session `secret` kept `max_age` seconds (0 and an empty secret: removed).
pub fn session_cookie(secret: &str, max_age: u64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={secret}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict{secure}")
}

fn redirect_with_cookie(to: &'static str, cookie: &str) -> Response {
    let mut response = (StatusCode::SEE_OTHER, [(LOCATION, to)]).into_response();
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(SET_COOKIE, value);
    }
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The session secret in the request's cookies, if one is there and could be a secret (43
/// base64url characters): anything else is never looked up.
pub fn session_secret(headers: &HeaderMap) -> Option<&str> {
    let value = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(SESSION_COOKIE)?.strip_prefix('='))?;
    let shaped =
        value.len() == 43 && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    // A cookie that cannot be a secret still means "signed in once": it is reported as ended.
    Some(if shaped { value } else { INVALID })
}

/// Stands for a session cookie that cannot be one; never matches a stored session's hash.
const INVALID: &str = "-";

/// Text for HTML: `&`, `<`, `>` and quotes escaped.
fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookies(value: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(COOKIE, HeaderValue::from_str(value).expect("cookie"));
        map
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let secret = "a".repeat(43);
        assert_eq!(
            session_secret(&cookies(&format!("x=1; {SESSION_COOKIE}={secret}; y=2"))),
            Some(secret.as_str())
        );
        assert_eq!(session_secret(&cookies("x=1")), None);
        assert_eq!(session_secret(&cookies(&format!("{SESSION_COOKIE}=short"))), Some(INVALID));
        assert_eq!(session_secret(&cookies("flint_session_other=1")), None);
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_only_over_tls() {
        let plain = session_cookie("s", 60, false);
        assert!(plain.contains("HttpOnly") && plain.contains("SameSite=Strict") && plain.contains("Path=/"));
        assert!(!plain.contains("Secure"));
        assert!(session_cookie("s", 60, true).ends_with("; Secure"));
    }

    #[test]
    fn the_page_policy_allows_its_style_and_nothing_else() {
        assert!(PAGE_CSP.starts_with("default-src 'none'; style-src 'sha256-"), "{}", *PAGE_CSP);
        assert!(!PAGE_CSP.contains("script-src") && PAGE_CSP.contains("form-action 'self'"));
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
