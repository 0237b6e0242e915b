//! `[auth]`: who may use the gateway. See [`crate::auth`] for how each mode is enforced.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;

use serde::Deserialize;

/// How people are known to the gateway.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Nobody signs in; everyone is known by address. Allowed only on loopback unless
    /// `allow_anonymous` is set.
    #[default]
    None,
    /// Access tokens issued by the operator (`flint-gateway token create NAME`), exchanged for a
    /// session cookie at `/signin`.
    Tokens,
    /// An authenticating proxy in front of the gateway names the person in a header.
    Proxy,
}

/// `[auth]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// How people sign in.
    pub mode: AuthMode,
    /// Serve people who are not signed in (known by address) on a non-loopback address, or next to
    /// the signed-in ones in the `tokens` and `proxy` modes.
    pub allow_anonymous: bool,
    /// The SQLite file of access tokens and sessions; default `$XDG_DATA_HOME/flint/auth.sqlite3`
    /// (next to the share links' database).
    pub database: PathBuf,
    /// How long a sign-in lasts, in days.
    pub session_days: u32,
    /// The address people open Flint at, when a TLS proxy serves it (`https://…`): session cookies
    /// are then always marked `Secure`.
    pub public_url: Option<String>,
    /// `proxy` mode: the header naming the signed-in person.
    pub header: String,
    /// Addresses (`10.0.0.5`) or ranges (`10.0.0.0/8`) of the proxies whose `header`,
    /// `X-Forwarded-For` and `X-Forwarded-Proto` are believed. Nobody else's are.
    pub trusted_proxies: Vec<IpRange>,
    /// `tokens` mode: sign-in tries each address may make a minute (an IPv6 /64 counts as one
    /// address); 0 for no limit.
    pub signin_per_minute: u32,
    /// How often, in seconds, an open socket's sign-in is checked again in the store, to close it
    /// when the sign-in ended where this gateway cannot see it (`token revoke`, another gateway).
    pub session_check_secs: u64,
}

impl Default for AuthConfig {
    fn default() -> Self {
        let data = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(|| PathBuf::from("."));
        Self {
            mode: AuthMode::None,
            allow_anonymous: false,
            database: data.join("flint/auth.sqlite3"),
            session_days: 7,
            public_url: None,
            header: "X-Forwarded-User".to_owned(),
            trusted_proxies: Vec::new(),
            signin_per_minute: 10,
            session_check_secs: 30,
        }
    }
}

/// Why `[auth]` cannot be used as written, or not on this address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthConfigError {
    /// Off loopback with nobody signing in and no explicit consent.
    #[error(
        "Flint would listen on {0}, where anyone who reaches it could spend its provider keys, so it does not \
         start: set auth.mode = \"tokens\" or \"proxy\" in flint.toml, or auth.allow_anonymous = true to serve \
         everyone anyway"
    )]
    OpenToEveryone(SocketAddr),
    /// `proxy` mode without a proxy to believe.
    #[error(
        "auth.mode = \"proxy\" needs auth.trusted_proxies: the addresses of the proxies whose {0} header is believed"
    )]
    NoTrustedProxy(String),
    /// The identity header is not a header name.
    #[error("auth.header: {0:?} is not a header name")]
    BadHeader(String),
    /// Sessions that expire at once.
    #[error("auth.session_days must be at least 1")]
    NoSessionDays,
    /// Sign-ins that would be checked again without pause.
    #[error("auth.session_check_secs must be at least 1")]
    NoSessionCheck,
    /// `public_url` is not an http(s) address.
    #[error("auth.public_url: {0:?} is not an address; write it as https://host[:port]")]
    BadPublicUrl(String),
}

impl AuthConfig {
    /// Checks the section for a gateway listening on `listen` (after `--listen` is applied).
    pub fn check(&self, listen: SocketAddr) -> Result<(), AuthConfigError> {
        if self.mode == AuthMode::None && !self.allow_anonymous && !listen.ip().is_loopback() {
            return Err(AuthConfigError::OpenToEveryone(listen));
        }
        if self.mode == AuthMode::Proxy && self.trusted_proxies.is_empty() {
            return Err(AuthConfigError::NoTrustedProxy(self.header.clone()));
        }
        if axum::http::HeaderName::from_bytes(self.header.trim().as_bytes()).is_err() {
            return Err(AuthConfigError::BadHeader(self.header.clone()));
        }
        if self.session_days == 0 {
            return Err(AuthConfigError::NoSessionDays);
        }
        if self.session_check_secs == 0 {
            return Err(AuthConfigError::NoSessionCheck);
        }
        if let Some(url) = &self.public_url
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(AuthConfigError::BadPublicUrl(url.clone()));
        }
        Ok(())
    }

    /// Whether `ip` is one of `trusted_proxies`.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.iter().any(|range| range.contains(ip))
    }
}

/// An address or a CIDR range (`10.0.0.0/8`, `fd00::/8`), from `auth.trusted_proxies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct IpRange {
    network: IpAddr,
    prefix: u8,
}

impl IpRange {
    /// Whether `ip` lies in the range. IPv4 peers of a dual-stack socket (`::ffff:a.b.c.d`) count
    /// as their IPv4 address.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => same_prefix(&net.octets(), &ip.octets(), self.prefix),
            (IpAddr::V6(net), IpAddr::V6(ip)) => same_prefix(&net.octets(), &ip.octets(), self.prefix),
            _ => false,
        }
    }
}

fn same_prefix(a: &[u8], b: &[u8], prefix: u8) -> bool {
    let (whole, rest) = (usize::from(prefix / 8), prefix % 8);
    if a[..whole] != b[..whole] {
        return false;
    }
    rest == 0 || {
        let mask = 0xffu8 << (8 - rest);
        a[whole] & mask == b[whole] & mask
    }
}

impl FromStr for IpRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad =
            || format!("auth.trusted_proxies: {text:?} is not an address or a range such as 10.0.0.0/8");
        let (addr, prefix) = text.trim().split_once('/').map_or((text.trim(), None), |(a, p)| (a, Some(p)));
        let network = addr.parse::<IpAddr>().map_err(|_| bad())?.to_canonical();
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= bits).ok_or_else(bad)?,
        };
        Ok(Self { network, prefix })
    }
}

impl TryFrom<String> for IpRange {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;

    fn range(text: &str) -> IpRange {
        text.parse().expect(text)
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect(text)
    }

    #[test]
    fn ranges_contain_what_they_should() {
        assert!(range("10.0.0.0/8").contains(ip("10.200.3.4")));
        assert!(!range("10.0.0.0/8").contains(ip("11.0.0.1")));
        assert!(range("192.168.1.0/25").contains(ip("192.168.1.127")));
        assert!(!range("192.168.1.0/25").contains(ip("192.168.1.128")));
        assert!(range("127.0.0.1").contains(ip("127.0.0.1")));
        assert!(!range("127.0.0.1").contains(ip("127.0.0.2")));
        assert!(range("127.0.0.1/32").contains(ip("::ffff:127.0.0.1")), "a dual-stack socket's IPv4 peer");
        assert!(range("fd00::/8").contains(ip("fd12::1")));
        assert!(!range("fd00::/8").contains(ip("10.0.0.1")));
        assert!(range("0.0.0.0/0").contains(ip("8.8.8.8")));
        for bad in ["10.0.0.0/33", "10.0.0/8", "example.com", "::/129", "10.0.0.0/"] {
            assert!(bad.parse::<IpRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_public_address_needs_a_mode_or_consent() {
        let public: SocketAddr = "0.0.0.0:8787".parse().expect("address");
        let local: SocketAddr = "127.0.0.1:8787".parse().expect("address");
        let open = AuthConfig::default();
        assert_eq!(open.check(local), Ok(()));
        let err = open.check(public).expect_err("must refuse");
        let text = err.to_string();
        assert!(text.contains("auth.mode") && text.contains("auth.allow_anonymous"), "{text}");
        let consent = AuthConfig { allow_anonymous: true, ..AuthConfig::default() };
        assert_eq!(consent.check(public), Ok(()));
        let tokens = AuthConfig { mode: AuthMode::Tokens, ..AuthConfig::default() };
        assert_eq!(tokens.check(public), Ok(()));
        let proxy = AuthConfig { mode: AuthMode::Proxy, ..AuthConfig::default() };
        assert!(matches!(proxy.check(public), Err(AuthConfigError::NoTrustedProxy(_))));
    }

    #[test]
    fn the_example_auth_section_parses() {
        let text = include_str!("../../../flint.example.toml");
        let section: String = text
            .lines()
            .skip_while(|line| !line.starts_with("# [auth]"))
            .take_while(|line| line.starts_with('#'))
            .map(|line| {
                line.strip_prefix("# ").filter(|l| l.starts_with('[') || l.contains(" = ")).unwrap_or("")
            })
            .flat_map(|line| [line, "\n"])
            .collect();
        assert!(section.contains("[auth]"), "flint.example.toml documents [auth]");
        let config = Config::parse(&section, Path::new("flint.example.toml")).expect("[auth] parses");
        assert_eq!(config.auth.mode, AuthMode::Tokens);
        assert_eq!(config.auth.session_days, 7);
        assert!(config.auth.trusts(ip("10.1.2.3")));
    }
}
