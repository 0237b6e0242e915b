//! Who may use the gateway, and who each request comes from (`[auth]` in `flint.toml`).
//!
//! [`check`] runs on every request after [`crate::access::guard`] and adds a [`Person`]:
//! - `mode = "none"`: everyone, known by address ([`Person::Anonymous`]). Off loopback only with
//!   `allow_anonymous = true` ([`crate::config::AuthConfig::check`] refuses to start otherwise).
//! - `mode = "tokens"`: the session cookie set by `POST /api/signin` ([`signin`]) names the token
//!   it was signed in with ([`Person::User`]); tokens and sessions live hashed in SQLite ([`store`]),
//!   made and revoked with `flint-gateway token …` ([`cli`]).
//! - `mode = "proxy"`: the configured header names the person, believed only from
//!   `trusted_proxies` (from anyone else it is ignored, as if absent).
//!
//! Without an identity, `/ws` and `/api/*` answer 401 with a sentence (`/api/access` too, so the
//! app can show it with a link to `/signin`), except `/api/signin` and `/api/signout`; with tokens,
//! `GET /` sends the browser to `/signin`; the app's files and `/s/<id>` stay public. With
//! `allow_anonymous = true` people without one are served as anonymous instead.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{LOCATION, ORIGIN};
use axum::http::{Extensions, HeaderMap, HeaderName, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::access::Route;
use crate::config::{AuthConfig, AuthMode, IpRange};
use crate::person::Person;
use crate::store::Store;

pub mod cli;
mod signin;
pub mod store;

pub use signin::{SESSION_COOKIE, sign_in, sign_out, signin_page};
use store::AuthStore;

/// The sign-in policy, built once from `[auth]`.
pub struct Auth {
    mode: AuthMode,
    allow_anonymous: bool,
    /// With `mode = "tokens"`: the store, or why it could not be opened.
    store: Option<Result<AuthStore, String>>,
    session_lifetime: Duration,
    /// `public_url` is https: every session cookie is `Secure`.
    public_https: bool,
    header: HeaderName,
    trusted_proxies: Vec<IpRange>,
    public_url: Option<String>,
}

/// Why a request that needs a person has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// Tokens: no session cookie.
    NotSignedIn,
    /// Tokens: a session cookie that is expired, signed out, revoked or made up.
    SessionEnded,
    /// Tokens: the store cannot be read.
    StoreUnavailable,
    /// Proxy: no identity header from a trusted proxy.
    NotThroughProxy,
}

impl Unknown {
    /// The status and the sentence to act on.
    pub fn answer(self) -> (StatusCode, &'static str) {
        match self {
            Self::NotSignedIn => (
                StatusCode::UNAUTHORIZED,
                "this Flint needs you to sign in: open /signin and enter the access token you were given",
            ),
            Self::SessionEnded => (
                StatusCode::UNAUTHORIZED,
                "your sign-in to this Flint has expired or was ended; sign in again at /signin",
            ),
            Self::StoreUnavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "this Flint cannot check sign-ins right now (details are in the gateway's log); try again later",
            ),
            Self::NotThroughProxy => (
                StatusCode::UNAUTHORIZED,
                "this Flint knows people only through its sign-in proxy, and this request did not come through \
                 it signed in; open Flint at the proxy's address (see /signin)",
            ),
        }
    }
}

impl Auth {
    /// The policy for `config`; with tokens, keeps them in `store` (logging why when it cannot).
    pub fn new(config: &AuthConfig, store: &Arc<dyn Store>) -> Self {
        let store = (config.mode == AuthMode::Tokens).then(|| match store.auth_problem() {
            Some(problem) => {
                tracing::error!("sign-in is unavailable: {problem}");
                Err(problem)
            }
            None => Ok(AuthStore::new(Arc::clone(store))),
        });
        let header = HeaderName::from_bytes(config.header.trim().as_bytes())
            .unwrap_or_else(|_| HeaderName::from_static("x-forwarded-user"));
        Self {
            mode: config.mode,
            allow_anonymous: config.allow_anonymous,
            store,
            session_lifetime: Duration::from_secs(u64::from(config.session_days.max(1)) * 86_400),
            public_https: config.public_url.as_deref().is_some_and(|u| u.starts_with("https://")),
            header,
            trusted_proxies: config.trusted_proxies.clone(),
            public_url: config.public_url.clone(),
        }
    }

    /// How people sign in.
    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    fn trusts(&self, ip: Option<IpAddr>) -> bool {
        ip.is_some_and(|ip| self.trusted_proxies.iter().any(|range| range.contains(ip)))
    }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the last address in
    /// `X-Forwarded-For` that is not one of the trusted proxies (the entries to its left are the
    /// client's own claims). Without a peer (in-process tests): 0.0.0.0.
    pub fn client_ip(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> IpAddr {
        let peer = peer.map(|ip| ip.to_canonical());
        let mut client = peer.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        if !self.trusts(peer) {
            return client;
        }
        let forwarded = headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
        let hops: Vec<&str> = forwarded.flat_map(|v| v.split(',')).collect();
        for hop in hops.iter().rev() {
            let Ok(ip) = hop.trim().parse::<IpAddr>() else { break };
            client = ip.to_canonical();
            if !self.trusts(Some(client)) {
                break;
            }
        }
        client
    }

    /// Whether the browser sees this gateway over TLS, for the cookie's `Secure`: `public_url` is
    /// https, a trusted proxy says `X-Forwarded-Proto: https`, or the page posting the form has an
    /// https `Origin` (browsers send it with every POST, and it is the page's own view).
    pub fn https(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> bool {
        let header = |name| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        let proto = header("x-forwarded-proto").and_then(|p| p.split(',').next()).map(str::trim);
        self.public_https
            || (self.trusts(peer) && proto.is_some_and(|p| p.eq_ignore_ascii_case("https")))
            || header(ORIGIN.as_str()).is_some_and(|o| o.to_ascii_lowercase().starts_with("https://"))
    }

    /// Who sent a request, or why nobody is known.
    pub async fn identify(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Result<Person, Unknown> {
        match self.mode {
            AuthMode::None => Ok(Person::Anonymous(self.client_ip(peer, headers))),
            AuthMode::Tokens => {
                let Some(secret) = signin::session_secret(headers) else { return Err(Unknown::NotSignedIn) };
                let Some(Ok(store)) = &self.store else { return Err(Unknown::StoreUnavailable) };
                match store.session(secret, unix_now()).await {
                    Ok(Some(name)) => Ok(Person::User(name)),
                    Ok(None) => Err(Unknown::SessionEnded),
                    Err(err) => {
                        tracing::error!(error = %err, "reading a session failed");
                        Err(Unknown::StoreUnavailable)
                    }
                }
            }
            AuthMode::Proxy => {
                let named = headers.get(&self.header).and_then(|v| v.to_str().ok()).map(str::trim);
                match named.filter(|n| valid_identity(n)) {
                    Some(name) if self.trusts(peer) => Ok(Person::User(name.to_owned())),
                    Some(_) => {
                        // Anyone can send the header; only a trusted proxy's is believed.
                        tracing::debug!(?peer, header = %self.header, "identity header from an untrusted address ignored");
                        Err(Unknown::NotThroughProxy)
                    }
                    None => Err(Unknown::NotThroughProxy),
                }
            }
        }
    }

    fn store(&self) -> Option<&AuthStore> {
        self.store.as_ref().and_then(|s| s.as_ref().ok())
    }
}

/// The peer's address as the accept loop recorded it (absent in in-process tests).
pub fn peer(extensions: &Extensions) -> Option<IpAddr> {
    extensions.get::<ConnectInfo<SocketAddr>>().map(|info| info.0.ip().to_canonical())
}

/// An identity from a proxy becomes a name in logs and limits: printable and short.
fn valid_identity(name: &str) -> bool {
    !name.is_empty() && name.len() <= 256 && !name.chars().any(char::is_control)
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Paths that need a person: the socket and the API, except signing in and out.
fn needs_person(path: &str) -> bool {
    Route::of(path) != Route::Open && !matches!(path, "/api/signin" | "/api/signout")
}

/// The `check` middleware: adds the request's [`Person`], or refuses what needs one.
pub async fn check(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let auth = state.auth();
    let peer = peer(request.extensions());
    let person = match auth.identify(peer, request.headers()).await {
        Ok(person) => person,
        Err(_) if auth.allow_anonymous => Person::Anonymous(auth.client_ip(peer, request.headers())),
        Err(unknown) => {
            let path = request.uri().path();
            if needs_person(path) {
                let (status, sentence) = unknown.answer();
                tracing::debug!(path, reason = sentence, "request without a sign-in refused");
                return (status, sentence).into_response();
            }
            if auth.mode == AuthMode::Tokens && matches!(path, "/" | "/index.html") {
                return (StatusCode::FOUND, [(LOCATION, "/signin")]).into_response();
            }
            // The app's files, `/s/<id>` and the sign-in page are public.
            Person::Anonymous(auth.client_ip(peer, request.headers()))
        }
    };
    request.extensions_mut().insert(person);
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn auth(configure: impl FnOnce(&mut AuthConfig)) -> Auth {
        let mut config = AuthConfig::default();
        configure(&mut config);
        let tokens = (config.mode == AuthMode::Tokens).then_some(config.database.as_path());
        let store: Arc<dyn Store> = Arc::new(crate::store::SqliteStore::open(None, tokens));
        Auth::new(&config, &store)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).expect("header value"));
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect(text)
    }

    fn proxied(configure: impl FnOnce(&mut AuthConfig)) -> Auth {
        auth(|c| {
            c.trusted_proxies = vec!["10.0.0.0/8".parse().expect("range")];
            configure(c);
        })
    }

    #[test]
    fn forwarded_addresses_are_believed_only_from_a_trusted_proxy() {
        let a = proxied(|_| {});
        let h = headers(&[("x-forwarded-for", "6.6.6.6, 203.0.113.9, 10.0.0.7")]);
        assert_eq!(a.client_ip(Some(ip("10.0.0.1")), &h), ip("203.0.113.9"), "the last address not a proxy");
        assert_eq!(a.client_ip(Some(ip("198.51.100.1")), &h), ip("198.51.100.1"), "a stranger's claim");
        assert_eq!(a.client_ip(Some(ip("::ffff:10.0.0.1")), &headers(&[])), ip("10.0.0.1"));
        assert_eq!(a.client_ip(None, &h), ip("0.0.0.0"));
        let garbage = headers(&[("x-forwarded-for", "junk, 203.0.113.9")]);
        assert_eq!(a.client_ip(Some(ip("10.0.0.1")), &garbage), ip("203.0.113.9"));
    }

    #[test]
    fn tls_is_known_from_the_configuration_a_trusted_proxy_or_the_pages_origin() {
        let a = proxied(|_| {});
        let forwarded = headers(&[("x-forwarded-proto", "https")]);
        assert!(a.https(Some(ip("10.0.0.1")), &forwarded));
        assert!(!a.https(Some(ip("198.51.100.1")), &forwarded), "only a trusted proxy says so");
        assert!(a.https(None, &headers(&[("origin", "https://flint.example")])));
        assert!(!a.https(None, &headers(&[("origin", "http://127.0.0.1:8787")])));
        let public = proxied(|c| c.public_url = Some("https://flint.example".into()));
        assert!(public.https(None, &headers(&[])));
    }

    #[tokio::test]
    async fn a_proxy_identity_is_printable() {
        let a = proxied(|c| c.mode = AuthMode::Proxy);
        let trusted = Some(ip("10.0.0.1"));
        let named = headers(&[("x-forwarded-user", " ada@example.org ")]);
        assert_eq!(a.identify(trusted, &named).await, Ok(Person::User("ada@example.org".into())));
        let empty = headers(&[("x-forwarded-user", "  ")]);
        assert_eq!(a.identify(trusted, &empty).await, Err(Unknown::NotThroughProxy));
        let long = "x".repeat(300);
        let long = headers(&[("x-forwarded-user", &long)]);
        assert_eq!(a.identify(trusted, &long).await, Err(Unknown::NotThroughProxy));
    }

    #[test]
    fn only_the_socket_and_the_api_need_a_person() {
        for path in ["/ws", "/api/models", "/api/access", "/api/share"] {
            assert!(needs_person(path), "{path}");
        }
        for path in ["/", "/signin", "/api/signin", "/api/signout", "/s/abc", "/flint-app.wasm", "/healthz"] {
            assert!(!needs_person(path), "{path}");
        }
    }
}
