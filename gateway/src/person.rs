//! Who is asking: the identity limits and quotas are kept for.
//!
//! Set on every request by the sign-in layer (`auth`): a signed-in person by their account, anyone
//! else by their address. Limits are per person, not per socket, so opening more tabs buys nothing.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

/// The person behind a request, as a request extension.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Person {
    /// Signed in with an access token (its name), or named by a trusted authenticating proxy.
    User(String),
    /// Not signed in: known only by address. IPv6 addresses are kept whole; a /64 per person is a
    /// later refinement.
    Anonymous(IpAddr),
}

impl Person {
    /// For logs and error messages: the account name, or "this address".
    pub fn describe(&self) -> String {
        match self {
            Self::User(name) => name.clone(),
            Self::Anonymous(ip) => format!("anonymous ({ip})"),
        }
    }

    /// Whether the person signed in.
    pub fn signed_in(&self) -> bool {
        matches!(self, Self::User(_))
    }
}

/// The network an address counts as, for limits kept per address: an IPv4 address (an IPv4 peer
/// of a dual-stack socket, `::ffff:a.b.c.d`, included) is itself; an IPv6 address is its /64,
/// because one subscriber is routinely given a whole /64 and could otherwise take a fresh address
/// for every try.
pub fn network_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => {
            let [a, b, c, d, ..] = v6.segments();
            IpAddr::V6(Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0))
        }
    }
}

/// The person a handler serves: as the sign-in layer named them, else by the peer's address (a
/// router built without that layer, as in some tests).
#[derive(Debug, Clone)]
pub struct Who(pub Person);

impl<S: Send + Sync> FromRequestParts<S> for Who {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        if let Some(person) = parts.extensions.get::<Person>() {
            return Ok(Self(person.clone()));
        }
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::from([127, 0, 0, 1]), |ConnectInfo(peer)| peer.ip());
        Ok(Self(Person::Anonymous(ip)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect(text)
    }

    #[test]
    fn ipv4_is_itself_and_ipv6_is_its_64() {
        assert_eq!(network_of(ip("203.0.113.9")), ip("203.0.113.9"));
        assert_eq!(
            network_of(ip("::ffff:203.0.113.9")),
            ip("203.0.113.9"),
            "a dual-stack socket's IPv4 peer"
        );
        assert_eq!(network_of(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), ip("2001:db8:1:2::"));
        assert_eq!(network_of(ip("2001:db8:1:2::1")), network_of(ip("2001:db8:1:2:ffff::9")));
        assert_ne!(network_of(ip("2001:db8:1:2::1")), network_of(ip("2001:db8:1:3::1")), "another /64");
        assert_eq!(network_of(ip("::1")), ip("::"));
    }
}
