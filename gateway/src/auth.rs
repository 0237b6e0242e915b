//! Who may use the gateway, and who each request comes from (`[auth]` in `flint.toml`).
//!
//! [`check`] runs on every request after [`crate::access::guard`] and adds a [`Person`]:
//! - `mode = "none"`: everyone, known by address ([`Person::Anonymous`]). Off loopback only with
//!   `allow_anonymous = true` ([`crate::config::AuthConfig::check`] refuses to start otherwise).
//! - `mode = "tokens"`: the session cookie set by `POST /api/signin` ([`signin`]) names the token
//!   it was signed in with ([`Person::User`]); tokens and sessions live hashed in SQLite ([`store`]),
//!   made and revoked with `flint-gateway token …` ([`cli`]).
//! - `mode = "proxy"`: the configured header names the person, believed only from
//!   `trusted_proxies` (from anyone else it is ignored, as if absent); sent twice, or with names
//!   joined by a comma, it is refused ([`forwarded`]).
//!
//! Behind a trusted proxy the client's address is read from `X-Forwarded-For` as proxies write it;
//! a client hop that is hidden (`unknown`) or unreadable is refused with a sentence rather than
//! taken for the proxy's own address. A sign-in's sockets close when it ends ([`sessions`]), and
//! `POST /api/signin` is limited per address ([`throttle`]).
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
pub mod forwarded;
pub mod sessions;
mod signin;
pub mod store;
mod throttle;

pub use forwarded::Forwarding;
pub use sessions::{SessionWatch, SignedIn};
pub use signin::{SECURE_SESSION_COOKIE, SESSION_COOKIE, sign_in, sign_out, signin_page};
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
    /// The sign-ins with sockets open on this gateway.
    open: sessions::OpenSessions,
    /// Sign-in tries per address.
    throttle: throttle::SignInThrottle,
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
    /// Proxy: the identity header sent twice, or with several names.
    SeveralIdentities,
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
            Self::SeveralIdentities => (
                StatusCode::BAD_REQUEST,
                "this Flint's sign-in proxy named more than one person for this request (its identity header \
                 twice, or names joined by a comma), so nobody is signed in; ask its operator to have the proxy \
                 replace the header rather than add to it",
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
            open: sessions::OpenSessions::new(Duration::from_secs(config.session_check_secs)),
            throttle: throttle::SignInThrottle::new(config.signin_per_minute),
        }
    }

    /// How people sign in.
    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    fn trusts(&self, ip: Option<IpAddr>) -> bool {
        ip.is_some_and(|ip| self.trusted_proxies.iter().any(|range| range.contains(ip)))
    }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the last hop in
    /// `X-Forwarded-For` that is not one of the trusted proxies (the entries to its left are the
    /// client's own claims), read as proxies write it (`ip:port`, `[v6]:port`, quoted). A hidden
    /// or unreadable client hop is an error, never the proxy's own address (everyone behind it
    /// would be one person). Without a peer (in-process tests): 0.0.0.0.
    pub fn client_ip(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Result<IpAddr, Forwarding> {
        let peer = peer.map(|ip| ip.to_canonical());
        let client = peer.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        if !self.trusts(peer) {
            return Ok(client);
        }
        forwarded::client_behind(client, headers, |ip| self.trusts(Some(ip)))
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

    /// Who sent a request from `client` (its [`Self::client_ip`]), or why nobody is known.
    pub async fn identify(
        &self,
        peer: Option<IpAddr>,
        client: IpAddr,
        headers: &HeaderMap,
    ) -> Result<Person, Unknown> {
        match self.mode {
            AuthMode::None => Ok(Person::Anonymous(client)),
            AuthMode::Tokens => {
                let Some(secret) = self.session_secret(peer, headers) else {
                    return Err(Unknown::NotSignedIn);
                };
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
            AuthMode::Proxy if !self.trusts(peer) => {
                if headers.contains_key(&self.header) {
                    // Anyone can send the header; only a trusted proxy's is believed.
                    tracing::debug!(?peer, header = %self.header, "identity header from an untrusted address ignored");
                }
                Err(Unknown::NotThroughProxy)
            }
            AuthMode::Proxy => match forwarded::identity(headers, &self.header) {
                Ok(Some(name)) => Ok(Person::User(name.to_owned())),
                Ok(None) => Err(Unknown::NotThroughProxy),
                Err(forwarded::SeveralIdentities) => Err(Unknown::SeveralIdentities),
            },
        }
    }

    /// The session cookie's secret. Over TLS only `__Host-flint_session` is read: the browser
    /// lets only a secure page of this very host set it, so a cookie planted by a plain-HTTP hop or
    /// a sibling subdomain (`flint_session`) cannot sign the person in as someone else.
    fn session_secret<'h>(&self, peer: Option<IpAddr>, headers: &'h HeaderMap) -> Option<&'h str> {
        signin::session_secret(headers, self.https(peer, headers))
    }

    /// The request's sign-in, when a session cookie names one (whether or not it is valid).
    pub fn signed_in(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<SignedIn> {
        if self.mode != AuthMode::Tokens {
            return None;
        }
        self.session_secret(peer, headers).map(SignedIn::of_secret)
    }

    /// A socket opened under `signed_in`: its watch ends when the sign-in does.
    pub fn watch(&self, signed_in: &SignedIn) -> SessionWatch {
        self.open.watch(signed_in, self.store())
    }

    /// Asks the store again whether `signed_in` still holds (before a socket starts a stream);
    /// when it has ended, its sockets on this gateway close.
    pub async fn recheck(&self, signed_in: &SignedIn) -> Result<(), Unknown> {
        let Some(store) = self.store() else { return Err(Unknown::StoreUnavailable) };
        match store.session_of_hash(signed_in.hash(), unix_now()).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => {
                self.open.end(signed_in);
                Err(Unknown::SessionEnded)
            }
            Err(err) => {
                tracing::error!(error = %err, "re-checking a session failed");
                Err(Unknown::StoreUnavailable)
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

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Paths that need a person: the socket and the API, except signing in and out.
fn needs_person(path: &str) -> bool {
    Route::of(path) != Route::Open && !matches!(path, "/api/signin" | "/api/signout")
}

/// The `check` middleware: adds the request's [`Person`] (and, signed in with a session, its
/// [`SignedIn`]), or refuses what needs one. A request whose proxy hid or garbled the client's
/// address, or named several people, is refused everywhere (400).
pub async fn check(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let auth = state.auth();
    let peer = peer(request.extensions());
    let client = match auth.client_ip(peer, request.headers()) {
        Ok(client) => client,
        Err(problem) => {
            tracing::warn!(?peer, %problem, "request through a proxy without a usable client address refused");
            return (StatusCode::BAD_REQUEST, problem.to_string()).into_response();
        }
    };
    let person = match auth.identify(peer, client, request.headers()).await {
        Ok(person) => person,
        Err(Unknown::SeveralIdentities) => {
            tracing::warn!(?peer, header = %auth.header, "a proxy named several people for one request");
            let (status, sentence) = Unknown::SeveralIdentities.answer();
            return (status, sentence).into_response();
        }
        Err(_) if auth.allow_anonymous => Person::Anonymous(client),
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
            Person::Anonymous(client)
        }
    };
    if person.signed_in()
        && let Some(signed_in) = auth.signed_in(peer, request.headers())
    {
        request.extensions_mut().insert(signed_in);
    }
    request.extensions_mut().insert(person);
    next.run(request).await
}

#[cfg(test)]
mod tests;
