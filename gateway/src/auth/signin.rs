//! The sign-in page (`GET /signin`) and its form's endpoints (`POST /api/signin`,
//! `POST /api/signout`).
//!
//! The page is static HTML with no script at all: a form that posts the token. Its policy allows
//! its one inline style by hash and form posts to the gateway only. A good token answers a
//! session cookie (`HttpOnly`: no script reads it; `SameSite=Strict`: no other site's page, link
//! or form sends it; `Path=/`; over TLS (see [`super::Auth::https`]) `Secure` and named
//! `__Host-flint_session`, which only a secure page of this very host can set) and sends the
//! browser to `/`; a bad one answers 401 with the page again, saying so. Tries are limited per
//! address (`auth.signin_per_minute`: 429 with the sentence and `Retry-After`). Signing out ends
//! the session and closes the sockets opened under it.

use std::sync::LazyLock;

use axum::Form;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, COOKIE, LOCATION, RETRY_AFTER, SET_COOKIE};
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use base64::Engine as _;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::sessions::SignedIn;
use super::{peer, unix_now};
use crate::AppState;
use crate::config::AuthMode;

/// The session cookie's name over plain HTTP.
pub const SESSION_COOKIE: &str = "flint_session";
/// The session cookie's name over TLS: the browser takes a `__Host-` cookie only from a secure
/// page of this host, with `Path=/` and no `Domain`, so no plain-HTTP hop or sibling subdomain
/// can plant one.
pub const SECURE_SESSION_COOKIE: &str = "__Host-flint_session";

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
    let client = match auth.client_ip(peer(&extensions), &headers) {
        Ok(client) => client,
        Err(problem) => return form(StatusCode::BAD_REQUEST, Some(&problem.to_string())),
    };
    if let Err(refused) = auth.throttle.count_try(client) {
        tracing::info!(%client, "sign-in tries over auth.signin_per_minute refused");
        let mut response = form(StatusCode::TOO_MANY_REQUESTS, Some(&refused.message));
        let seconds = refused.retry_after.as_secs_f64().ceil().to_string();
        if let Ok(value) = HeaderValue::from_str(&seconds) {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
        return response;
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

/// `POST /api/signout`: ends this browser's session, closes the sockets opened under it, and
/// sends the browser to the sign-in page.
pub async fn sign_out(State(state): State<AppState>, extensions: Extensions, headers: HeaderMap) -> Response {
    let auth = state.auth();
    let secure = auth.https(peer(&extensions), &headers);
    if let Some(secret) = session_secret(&headers, secure) {
        if let Some(store) = auth.store().cloned()
            && let Err(err) = store.sign_out(secret).await
        {
            tracing::error!(error = %err, "signing out failed");
        }
        auth.open.end(&SignedIn::of_secret(secret));
    }
    redirect_with_cookie("/signin", &session_cookie("", 0, secure))
}

/// `Set-Cookie` for a session `secret` kept `max_age` seconds (0 and an empty secret: removed);
/// over TLS (`secure`) the `__Host-` name, `Secure`.
pub fn session_cookie(secret: &str, max_age: u64, secure: bool) -> String {
    let (name, secure) = if secure { (SECURE_SESSION_COOKIE, "; Secure") } else { (SESSION_COOKIE, "") };
    format!("{name}={secret}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict{secure}")
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
/// base64url characters): anything else is never looked up. A `__Host-` cookie is read first
/// (the browser vouches that a secure page of this host set it); the plain name only when the
/// request is not known to come over TLS (`tls`), where anyone on the way could have planted it.
pub fn session_secret(headers: &HeaderMap, tls: bool) -> Option<&str> {
    let named = |name: &str| {
        headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .find_map(|pair| pair.trim().strip_prefix(name)?.strip_prefix('='))
    };
    let value = named(SECURE_SESSION_COOKIE).or_else(|| if tls { None } else { named(SESSION_COOKIE) })?;
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
            session_secret(&cookies(&format!("x=1; {SESSION_COOKIE}={secret}; y=2")), false),
            Some(secret.as_str())
        );
        assert_eq!(session_secret(&cookies("x=1"), false), None);
        assert_eq!(session_secret(&cookies(&format!("{SESSION_COOKIE}=short")), false), Some(INVALID));
        assert_eq!(session_secret(&cookies("flint_session_other=1"), false), None);
    }

    #[test]
    fn over_tls_only_the_host_cookie_is_read() {
        let (planted, own) = ("p".repeat(43), "o".repeat(43));
        let plain_only = cookies(&format!("{SESSION_COOKIE}={planted}"));
        assert_eq!(session_secret(&plain_only, true), None, "a planted plain cookie is not read over TLS");
        let both = cookies(&format!("{SESSION_COOKIE}={planted}; {SECURE_SESSION_COOKIE}={own}"));
        assert_eq!(session_secret(&both, true), Some(own.as_str()));
        assert_eq!(session_secret(&both, false), Some(own.as_str()), "the browser vouches for __Host-");
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_only_over_tls() {
        let plain = session_cookie("s", 60, false);
        assert!(plain.contains("HttpOnly") && plain.contains("SameSite=Strict") && plain.contains("Path=/"));
        assert!(!plain.contains("Secure"));
        let secure = session_cookie("s", 60, true);
        assert!(secure.starts_with(&format!("{SECURE_SESSION_COOKIE}=s;")) && secure.ends_with("; Secure"));
        assert!(!secure.contains("Domain"), "a __Host- cookie has no Domain");
    }

    #[test]
    fn the_page_policy_allows_its_style_and_nothing_else() {
        assert!(PAGE_CSP.starts_with("default-src 'none'; style-src 'sha256-"), "{}", *PAGE_CSP);
        assert!(!PAGE_CSP.contains("script-src") && PAGE_CSP.contains("form-action 'self'"));
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
