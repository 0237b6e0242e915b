//! Unit tests of [`super::Auth`]: addresses, TLS, proxy identities, which paths need a person.

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
    assert_eq!(a.client_ip(Some(ip("10.0.0.1")), &h), Ok(ip("203.0.113.9")), "the last address not a proxy");
    assert_eq!(a.client_ip(Some(ip("198.51.100.1")), &h), Ok(ip("198.51.100.1")), "a stranger's claim");
    assert_eq!(a.client_ip(Some(ip("::ffff:10.0.0.1")), &headers(&[])), Ok(ip("10.0.0.1")));
    assert_eq!(a.client_ip(None, &h), Ok(ip("0.0.0.0")));
    let garbage = headers(&[("x-forwarded-for", "junk, 203.0.113.9")]);
    assert_eq!(a.client_ip(Some(ip("10.0.0.1")), &garbage), Ok(ip("203.0.113.9")), "claims are not read");
    let hidden = headers(&[("x-forwarded-for", "unknown")]);
    assert!(a.client_ip(Some(ip("10.0.0.1")), &hidden).is_err(), "never the proxy's own address");
    assert_eq!(a.client_ip(Some(ip("198.51.100.1")), &hidden), Ok(ip("198.51.100.1")), "nor a stranger's");
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
    assert_eq!(
        a.identify(trusted, ip("203.0.113.9"), &named).await,
        Ok(Person::User("ada@example.org".into()))
    );
    let empty = headers(&[("x-forwarded-user", "  ")]);
    assert_eq!(a.identify(trusted, ip("203.0.113.9"), &empty).await, Err(Unknown::NotThroughProxy));
    let long = "x".repeat(300);
    let long = headers(&[("x-forwarded-user", &long)]);
    assert_eq!(a.identify(trusted, ip("203.0.113.9"), &long).await, Err(Unknown::NotThroughProxy));
    let twice = headers(&[("x-forwarded-user", "admin"), ("x-forwarded-user", "ada@example.org")]);
    assert_eq!(a.identify(trusted, ip("203.0.113.9"), &twice).await, Err(Unknown::SeveralIdentities));
    let stranger = a.identify(Some(ip("198.51.100.1")), ip("198.51.100.1"), &twice).await;
    assert_eq!(stranger, Err(Unknown::NotThroughProxy), "a stranger's headers are not read at all");
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
