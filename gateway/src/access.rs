//! Who may talk to the gateway: its own pages, the origins the operator allows, and nobody else.
//!
//! A browser lets any website open a WebSocket to any address, loopback included, and sends the
//! page's `Origin` with it; it also lets a website whose name resolves to 127.0.0.1 (DNS rebinding)
//! send requests with its own name in `Host`. So, before any route runs:
//! - `Host` must be a name this gateway serves: while it listens on loopback, a loopback name or
//!   address (`localhost`, `*.localhost`, `127.x.x.x`, `[::1]`) or one of `server.hosts`; on any
//!   other address, one of `server.hosts` when that is set.
//! - `/ws` and `/api/*` must come from the gateway's own origin (the `Origin`'s host equals `Host`)
//!   or one of `server.allowed_origins`; never from `Origin: null` (sandboxed frames, such as
//!   Flint's own previews, and `data:` pages), and a WebSocket never without an `Origin` (browsers
//!   always send one, so a missing one is a hand-made client that must say where it comes from).
//!   A plain `GET /api/…` of the page's own carries no `Origin`, so there `Sec-Fetch-Site` decides.
//!
//! A refusal is a 403 whose body is one sentence saying what to change; the app fetches
//! `POST /api/access` when its socket cannot open, to show that sentence.

use axum::extract::{Request, State};
use axum::http::header::{HOST, ORIGIN};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::config::{ServerConfig, normalise_origin};

/// The gateway's access policy, built once from `[server]`.
#[derive(Debug, Clone)]
pub struct Access {
    /// Origins allowed besides the gateway's own, as `scheme://host[:port]`, lower case.
    allowed_origins: Vec<String>,
    /// Host names (no port) accepted in `Host` besides loopback ones, lower case.
    hosts: Vec<String>,
    /// Listening on loopback: `Host` must be a loopback name or one of `hosts`.
    loopback: bool,
}

/// Why a request was refused: the sentence sent to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (StatusCode::FORBIDDEN, self.0).into_response()
    }
}

/// Which routes need their origin checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `/ws`: an `Origin` is required.
    Socket,
    /// `/api/*`: an `Origin`, when sent, must be allowed; without one, `Sec-Fetch-Site` must be
    /// `same-origin` or `none` when sent.
    Api,
    /// Everything else (the app's files, `/s/<id>`, `/healthz`): only `Host` is checked.
    Open,
}

impl Route {
    /// The route kind of a request path.
    pub fn of(path: &str) -> Self {
        if path == "/ws" {
            Self::Socket
        } else if path == "/api" || path.starts_with("/api/") {
            Self::Api
        } else {
            Self::Open
        }
    }
}

impl Access {
    /// The policy for `server`.
    pub fn new(server: &ServerConfig) -> Self {
        Self {
            allowed_origins: server.allowed_origins.iter().filter_map(|o| normalise_origin(o)).collect(),
            hosts: server.hosts.iter().map(|h| h.trim().trim_end_matches('.').to_ascii_lowercase()).collect(),
            loopback: server.listen.ip().is_loopback(),
        }
    }

    /// Checks a request's `Host`, `Origin` and `Sec-Fetch-Site` for `route`.
    pub fn check(&self, route: Route, headers: &HeaderMap) -> Result<(), Refusal> {
        let text = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
        let host = text(HOST.as_str());
        self.check_host(host)?;
        if route == Route::Open {
            return Ok(());
        }
        match (text(ORIGIN.as_str()), route) {
            (Some(origin), _) => self.check_origin(origin, host),
            (None, Route::Socket) => Err(Refusal(
                "this Flint accepts WebSocket connections only from its own pages, and this one named no \
                 Origin; a client that is not a browser must send Origin: http://<the gateway's address>"
                    .to_owned(),
            )),
            (None, _) => match text("sec-fetch-site") {
                Some("same-origin" | "none") | None => Ok(()),
                Some(_) => Err(Refusal(
                    "this Flint answers its API only to its own pages; another site asked".to_owned(),
                )),
            },
        }
    }

    fn check_host(&self, host: Option<&str>) -> Result<(), Refusal> {
        if !self.loopback && self.hosts.is_empty() {
            return Ok(());
        }
        let name = host.map(host_name).unwrap_or_default();
        if (self.loopback && is_loopback_name(&name)) || self.hosts.contains(&name) {
            return Ok(());
        }
        let shown = host.map_or_else(|| "no Host".to_owned(), |h| format!("the name {}", printable(h)));
        let expected = if self.loopback {
            "open it as http://127.0.0.1 or http://localhost, or add the name to server.hosts in flint.toml"
        } else {
            "use one of server.hosts in flint.toml, or add this one there"
        };
        Err(Refusal(format!("this Flint does not answer to {shown}; {expected}")))
    }

    fn check_origin(&self, origin: &str, host: Option<&str>) -> Result<(), Refusal> {
        let refuse = |why: &str| {
            Err(Refusal(format!(
                "this Flint accepts requests only from its own pages, and {why}; to allow another page, add its \
                 origin to server.allowed_origins in flint.toml (or pass --allow-origin)"
            )))
        };
        if origin.trim() == "null" {
            return refuse("this one came from a sandboxed frame or a local file (Origin: null)");
        }
        let Some(origin) = normalise_origin(origin) else {
            return refuse(&format!("{} is not an origin", printable(origin)));
        };
        let authority = origin.split_once("://").map_or("", |(_, rest)| rest);
        let same = host.is_some_and(|h| same_authority(authority, h, origin.starts_with("https://")));
        if same || self.allowed_origins.contains(&origin) {
            return Ok(());
        }
        refuse(&format!("{origin} is not one of them"))
    }
}

/// The `guard` middleware: refuses what [`Access::check`] refuses, before any route runs.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = Route::of(request.uri().path());
    if let Err(refusal) = state.access().check(route, request.headers()) {
        tracing::warn!(path = request.uri().path(), reason = %refusal.0, "request refused");
        return refusal.into_response();
    }
    next.run(request).await
}

/// `POST /api/access`: answers 204 when the page may use this gateway; the guard answers the
/// sentence that says why not.
pub async fn probe() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// Whether an origin's `authority` names the same host and port as a `Host` header.
fn same_authority(authority: &str, host: &str, https: bool) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let default_port = if https { ":443" } else { ":80" };
    authority == host.strip_suffix(default_port).unwrap_or(&host)
}

/// The host name of a `Host` header: no port, no brackets' contents changed, lower case.
fn host_name(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    let name = if host.starts_with('[') {
        host.split_once(']').map_or(host.as_str(), |(name, _)| name).trim_start_matches('[')
    } else {
        host.rsplit_once(':').map_or(host.as_str(), |(name, _)| name)
    };
    name.trim_end_matches('.').to_owned()
}

/// `localhost`, a `*.localhost` name (browsers resolve these to loopback themselves, never through
/// DNS), or a loopback address.
fn is_loopback_name(name: &str) -> bool {
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Header text safe to echo in a message: no control characters, at most 100 characters.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(100).collect()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn access(listen: &str, allowed: &[&str], hosts: &[&str]) -> Access {
        let server = ServerConfig {
            listen: listen.parse().expect("address"),
            allowed_origins: allowed.iter().map(|s| (*s).to_owned()).collect(),
            hosts: hosts.iter().map(|s| (*s).to_owned()).collect(),
            ..ServerConfig::default()
        };
        Access::new(&server)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).expect("header value"));
        }
        map
    }

    const LOCAL: &str = "127.0.0.1:8787";

    #[test]
    fn the_own_origin_is_allowed_on_every_loopback_name() {
        let a = access(LOCAL, &[], &[]);
        for (host, origin) in [
            ("127.0.0.1:8787", "http://127.0.0.1:8787"),
            ("localhost:8787", "http://localhost:8787"),
            ("[::1]:8787", "http://[::1]:8787"),
            ("flint.localhost:8787", "http://flint.localhost:8787"),
            ("LOCALHOST:8787", "http://localhost:8787"),
        ] {
            let h = headers(&[("host", host), ("origin", origin)]);
            assert_eq!(a.check(Route::Socket, &h), Ok(()), "{host} {origin}");
        }
    }

    #[test]
    fn another_site_or_port_or_null_is_refused() {
        let a = access(LOCAL, &[], &[]);
        // (https with the same host and port is the same page behind a TLS proxy: allowed.)
        for origin in ["http://evil.example", "http://127.0.0.1:8080", "null", "http://127.0.0.1", "x"] {
            let h = headers(&[("host", LOCAL), ("origin", origin)]);
            let err = a.check(Route::Socket, &h).expect_err(origin);
            assert!(err.0.contains("allowed_origins"), "{origin}: {}", err.0);
            assert!(a.check(Route::Api, &h).is_err(), "{origin} on /api");
        }
    }

    #[test]
    fn a_socket_without_origin_is_refused_but_a_same_origin_get_is_not() {
        let a = access(LOCAL, &[], &[]);
        assert!(a.check(Route::Socket, &headers(&[("host", LOCAL)])).is_err());
        assert_eq!(a.check(Route::Api, &headers(&[("host", LOCAL)])), Ok(()));
        let same = headers(&[("host", LOCAL), ("sec-fetch-site", "same-origin")]);
        assert_eq!(a.check(Route::Api, &same), Ok(()));
        let cross = headers(&[("host", LOCAL), ("sec-fetch-site", "cross-site")]);
        assert!(a.check(Route::Api, &cross).is_err());
        assert_eq!(a.check(Route::Open, &cross), Ok(()), "the app's files and /s/ links open from anywhere");
    }

    #[test]
    fn rebinding_names_are_refused_on_loopback() {
        let a = access(LOCAL, &[], &[]);
        for host in
            ["evil.example:8787", "127.0.0.1.evil.example:8787", "localhost.evil.example", "10.0.0.2:8787"]
        {
            let h = headers(&[("host", host), ("origin", &format!("http://{host}"))]);
            let err = a.check(Route::Open, &h).expect_err(host);
            assert!(err.0.contains("server.hosts"), "{}", err.0);
        }
        assert!(a.check(Route::Open, &HeaderMap::new()).is_err(), "no Host at all");
        let named = access(LOCAL, &[], &["flint.lan"]);
        let h = headers(&[("host", "flint.lan:8787"), ("origin", "http://flint.lan:8787")]);
        assert_eq!(named.check(Route::Socket, &h), Ok(()));
    }

    #[test]
    fn allowed_origins_are_compared_normalised() {
        let dev = headers(&[("host", LOCAL), ("origin", "http://127.0.0.1:8080")]);
        let a = access(LOCAL, &["HTTP://127.0.0.1:8080", "https://flint.example:443"], &[]);
        assert_eq!(a.check(Route::Socket, &dev), Ok(()));
        let hosted = headers(&[("host", LOCAL), ("origin", "https://flint.example")]);
        assert_eq!(a.check(Route::Socket, &hosted), Ok(()));
    }

    #[test]
    fn off_loopback_any_host_is_served_unless_hosts_are_named() {
        let open = access("0.0.0.0:8787", &[], &[]);
        let h = headers(&[("host", "flint.example"), ("origin", "http://flint.example")]);
        assert_eq!(open.check(Route::Socket, &h), Ok(()));
        let cross = headers(&[("host", "flint.example"), ("origin", "http://evil.example")]);
        assert!(open.check(Route::Socket, &cross).is_err(), "the origin is still checked");
        let named = access("0.0.0.0:8787", &[], &["flint.example"]);
        let rebound = headers(&[("host", "evil.example"), ("origin", "http://evil.example")]);
        assert!(named.check(Route::Socket, &rebound).is_err());
        assert_eq!(named.check(Route::Socket, &h), Ok(()));
    }

    #[test]
    fn echoed_header_text_is_printable() {
        let a = access(LOCAL, &[], &[]);
        let h = headers(&[("host", LOCAL), ("origin", "http://evil.example")]);
        let long = "x".repeat(500);
        assert!(printable(&long).len() == 100);
        assert!(!a.check(Route::Socket, &h).expect_err("refused").0.contains('\n'));
    }
}
