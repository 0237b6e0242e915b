//! Who is asking: the identity limits and quotas are kept for.
//!
//! Set on every request by the sign-in layer (`auth`): a signed-in person by their account, anyone
//! else by their address. Limits are per person, not per socket, so opening more tabs buys nothing.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

/// The network an address stands for when counting what one visitor holds: an IPv4 address itself
/// (an IPv4-mapped IPv6 peer of a dual-stack socket as that IPv4 address), an IPv6 address by its
/// /64, because one subscriber is handed a whole /64 and can pick a fresh address in it for every
/// connection.
pub fn network_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !(u128::MAX >> 64);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
    }
}

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
        text.parse().expect("address")
    }

    #[test]
    fn an_ipv6_visitor_is_counted_by_its_64_and_a_mapped_ipv4_as_ipv4() {
        assert_eq!(network_of(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(network_of(ip("2001:db8:1:2:ffff:1:2:3")), network_of(ip("2001:db8:1:2::9")));
        assert_ne!(network_of(ip("2001:db8:1:3::1")), network_of(ip("2001:db8:1:2::1")));
        assert_eq!(network_of(ip("::ffff:203.0.113.9")), ip("203.0.113.9"));
        assert_eq!(network_of(ip("203.0.113.9")), ip("203.0.113.9"));
        assert_eq!(network_of(ip("::1")), ip("::"));
    }
}
