//! What a trusted proxy says about a request, read as proxies write it: the client's address in
//! `X-Forwarded-For`, and the person in the identity header.
//!
//! Proxies write a hop as `ip`, `ip:port` or `[v6]:port`, sometimes quoted as RFC 7239 does, and
//! `unknown` (or an RFC 7239 obfuscated `_name`) when they hide the address. A hop that could not
//! be read used to make the gateway take the proxy's own address for the client, so everyone
//! behind that proxy shared one person's limits; now such a request is refused with a sentence.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use axum::http::{HeaderMap, HeaderName};

/// One `X-Forwarded-For` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hop {
    /// An address (the port, if any, dropped).
    Address(IpAddr),
    /// `unknown` or an obfuscated identifier: the proxy chose not to say.
    Hidden,
    /// Not an address in any form a proxy writes.
    Unreadable,
}

/// Reads one hop: `ip`, `ip:port`, `[v6]`, `[v6]:port`, bare `v6`, each optionally in double
/// quotes; `unknown` and `_obfuscated` (with or without a port) are [`Hop::Hidden`].
pub(super) fn parse_hop(text: &str) -> Hop {
    let text = text.trim();
    let text = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text).trim();
    let node = match text.strip_prefix('[') {
        Some(bracketed) => {
            let Some((inside, rest)) = bracketed.split_once(']') else { return Hop::Unreadable };
            if !(rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port)) {
                return Hop::Unreadable;
            }
            return inside.parse::<Ipv6Addr>().map_or(Hop::Unreadable, |ip| Hop::Address(IpAddr::V6(ip)));
        }
        None => text,
    };
    if let Ok(ip) = node.parse::<IpAddr>() {
        return Hop::Address(ip);
    }
    // One colon: an IPv4 address or a hidden name with its port (IPv6 has several, and no port
    // without brackets).
    let (name, port) = node.split_once(':').filter(|(_, p)| !p.contains(':')).unwrap_or((node, ""));
    if !(port.is_empty() || is_port(port)) {
        return Hop::Unreadable;
    }
    if name.eq_ignore_ascii_case("unknown") || is_obfuscated(name) {
        return Hop::Hidden;
    }
    match name.parse::<Ipv4Addr>() {
        Ok(ip) if !port.is_empty() => Hop::Address(IpAddr::V4(ip)),
        _ => Hop::Unreadable,
    }
}

/// A port as RFC 7239 allows it: up to five digits, or an obfuscated one (`_abc`).
fn is_port(text: &str) -> bool {
    ((1..=5).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())) || is_obfuscated(text)
}

/// RFC 7239's `obfnode`/`obfport`: `_` and then letters, digits, `.`, `_` or `-`.
fn is_obfuscated(text: &str) -> bool {
    text.strip_prefix('_').is_some_and(|rest| {
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    })
}

/// Why the client of a request through a trusted proxy has no address the gateway can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Forwarding {
    /// The proxy hid the client's address (`unknown`, `_hidden`).
    #[error(
        "this Flint's proxy did not say which address you connect from (X-Forwarded-For: {0}), and people \
         are told apart by address here; ask its operator to have the proxy forward the client's address"
    )]
    Hidden(String),
    /// The proxy wrote something that is not an address.
    #[error(
        "this Flint's proxy wrote {0:?} as your address in X-Forwarded-For, which is not an address; ask its \
         operator to check the proxy's forwarding settings"
    )]
    Unreadable(String),
}

impl Forwarding {
    fn of(hop: Hop, text: &str) -> Option<Self> {
        let shown: String = text.trim().chars().take(64).collect();
        match hop {
            Hop::Address(_) => None,
            Hop::Hidden => Some(Self::Hidden(shown)),
            Hop::Unreadable => Some(Self::Unreadable(shown)),
        }
    }
}

/// The client's address behind `peer` (a trusted proxy): walking `X-Forwarded-For` from the
/// right, the first hop that is not one of the proxies (`trusted`); entries to its left are the
/// client's own claims and are never read. Without the header (or with only proxies in it), the
/// leftmost proxy. A hop that must be read and cannot be is an error.
pub(super) fn client_behind(
    peer: IpAddr,
    headers: &HeaderMap,
    trusted: impl Fn(IpAddr) -> bool,
) -> Result<IpAddr, Forwarding> {
    let forwarded = headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok());
    let hops: Vec<&str> = forwarded.flat_map(|v| v.split(',')).filter(|hop| !hop.trim().is_empty()).collect();
    let mut client = peer;
    for text in hops.iter().rev() {
        let hop = parse_hop(text);
        if let Some(problem) = Forwarding::of(hop, text) {
            return Err(problem);
        }
        if let Hop::Address(ip) = hop {
            client = ip.to_canonical();
            if !trusted(client) {
                break;
            }
        }
    }
    Ok(client)
}

/// The identity header sent more than once, or holding several names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SeveralIdentities;

/// The name in the identity header `name`: `None` when absent or not a usable name. Two headers,
/// or names joined by a comma, are refused: a proxy that adds its header to the client's instead
/// of replacing it would otherwise let the client's own (the first) win.
pub(super) fn identity<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
) -> Result<Option<&'h str>, SeveralIdentities> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(SeveralIdentities);
    }
    let Ok(named) = first.to_str().map(str::trim) else { return Ok(None) };
    if named.contains(',') {
        return Err(SeveralIdentities);
    }
    Ok(Some(named).filter(|n| valid_identity(n)))
}

/// An identity from a proxy becomes a name in logs and limits: printable and short.
fn valid_identity(name: &str) -> bool {
    !name.is_empty() && name.len() <= 256 && !name.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect(text)
    }

    #[test]
    fn hops_are_read_as_proxies_write_them() {
        for (text, address) in [
            ("203.0.113.9", "203.0.113.9"),
            (" 203.0.113.9:51234 ", "203.0.113.9"),
            ("2001:db8::7", "2001:db8::7"),
            ("[2001:db8::7]", "2001:db8::7"),
            ("[2001:db8::7]:443", "2001:db8::7"),
            ("\"[2001:db8::7]:443\"", "2001:db8::7"),
            ("\"203.0.113.9:80\"", "203.0.113.9"),
            ("[::ffff:203.0.113.9]:80", "::ffff:203.0.113.9"),
            ("203.0.113.9:_port", "203.0.113.9"),
        ] {
            assert_eq!(parse_hop(text), Hop::Address(ip(address)), "{text}");
        }
        for hidden in ["unknown", "UNKNOWN", "\"unknown\"", "unknown:80", "_hidden", "_a.b-c_d", "_x:_y"] {
            assert_eq!(parse_hop(hidden), Hop::Hidden, "{hidden}");
        }
        for junk in [
            "junk",
            "",
            "_",
            "203.0.113",
            "203.0.113.9:",
            "203.0.113.9:123456",
            "[2001:db8::7",
            "[203.0.113.9]",
        ] {
            assert_eq!(parse_hop(junk), Hop::Unreadable, "{junk:?}");
        }
        assert_eq!(parse_hop("[2001:db8::7]x"), Hop::Unreadable);
        assert_eq!(
            parse_hop("2001:db8::7:443"),
            Hop::Address(ip("2001:db8::7:443")),
            "bare IPv6 has no port"
        );
    }

    fn forwarded(value: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.append("x-forwarded-for", HeaderValue::from_str(value).expect("value"));
        map
    }

    fn proxy(ip: IpAddr) -> bool {
        matches!(ip, IpAddr::V4(v4) if v4.octets()[0] == 10)
    }

    #[test]
    fn the_client_is_the_first_hop_from_the_right_that_is_not_a_proxy() {
        let peer = ip("10.0.0.1");
        let behind = |value: &str| client_behind(peer, &forwarded(value), proxy);
        assert_eq!(behind("6.6.6.6, 203.0.113.9:5000, 10.0.0.7:80"), Ok(ip("203.0.113.9")));
        assert_eq!(behind("[2001:db8::1]:443"), Ok(ip("2001:db8::1")));
        assert_eq!(
            behind("unknown, 203.0.113.9"),
            Ok(ip("203.0.113.9")),
            "the client's own claims are not read"
        );
        assert_eq!(behind("10.0.0.9, 10.0.0.7"), Ok(ip("10.0.0.9")), "only proxies: the leftmost");
        assert_eq!(client_behind(peer, &HeaderMap::new(), proxy), Ok(peer), "no header: the proxy");
        assert!(matches!(behind("unknown"), Err(Forwarding::Hidden(_))));
        assert!(matches!(behind("203.0.113.9, _hidden, 10.0.0.7"), Err(Forwarding::Hidden(_))));
        let unreadable = behind("203.0.113.9, junk").expect_err("unreadable");
        assert!(unreadable.to_string().contains("\"junk\""), "{unreadable}");
        assert_eq!(behind("203.0.113.9, "), Ok(ip("203.0.113.9")), "an empty entry is skipped");
    }

    #[test]
    fn one_identity_header_with_one_name() {
        let name = HeaderName::from_static("x-forwarded-user");
        let mut one = HeaderMap::new();
        one.append(&name, HeaderValue::from_static(" ada@example.org "));
        assert_eq!(identity(&one, &name), Ok(Some("ada@example.org")));
        assert_eq!(identity(&HeaderMap::new(), &name), Ok(None));
        let mut two = one.clone();
        two.append(&name, HeaderValue::from_static("eve@example.org"));
        assert_eq!(identity(&two, &name), Err(SeveralIdentities));
        let mut joined = HeaderMap::new();
        joined.append(&name, HeaderValue::from_static("admin, eve@example.org"));
        assert_eq!(identity(&joined, &name), Err(SeveralIdentities));
        let mut long = HeaderMap::new();
        long.append(&name, HeaderValue::from_str(&"x".repeat(300)).expect("value"));
        assert_eq!(identity(&long, &name), Ok(None));
    }
}
