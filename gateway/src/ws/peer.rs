//! Resume on any gateway: a tab whose socket reconnects to a gateway that does not hold its
//! session is relayed to the one that does.
//!
//! The gateway holding a resumable session records, in the shared store, the SHA-256 of its resume
//! token against its own `server.peer_address` ([`announce`]); never the token itself. A gateway
//! that gets a `Resume` for a token it does not hold looks the hash up, opens `/peer/ws` on the
//! owner with `server.peer_secret` and the person as it identified them, replays the `Resume`
//! there and relays frames both ways until either side closes ([`relay`]). The owner serves that
//! socket like the person's own, so the token-and-person check of [`super::resume`] still decides.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use flint_protocol::Secret;
use futures::{Sink, SinkExt, Stream, StreamExt};
use sha2::{Digest, Sha256};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::AppState;
use crate::config::ServerConfig;
use crate::person::Person;
use crate::store::hex;

/// The header that carries `server.peer_secret` on a gateway-to-gateway socket.
pub const SECRET_HEADER: &str = "x-flint-peer-secret";
/// The header that names the person, as the relaying gateway identified them.
pub const PERSON_HEADER: &str = "x-flint-peer-person";
/// How long an entry of a connected tab stays valid: a gateway that dies without removing it
/// leaves nothing resumable behind it longer than this (a resume reaching its dead address is
/// told its answers are gone, as before).
const CONNECTED_FOR: Duration = Duration::from_secs(24 * 60 * 60);
/// How long a new socket's `Hello` waits for the store to record its tab: a store that is down
/// must not hold every page up.
const STORE_PATIENCE: Duration = Duration::from_secs(2);
/// How long a relaying gateway waits for the owner's socket to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// This gateway's place among its peers: where they reach it and the secret they share.
#[derive(Clone, Default)]
pub struct Peers {
    address: Option<String>,
    secret: Option<Secret>,
}

impl Peers {
    /// From `[server]`; `env` reads `peer_secret_env`. Off unless both an address and a secret
    /// are set.
    pub fn new(server: &ServerConfig, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let secret = server
            .peer_secret_env
            .as_deref()
            .and_then(env)
            .or_else(|| server.peer_secret.clone())
            .filter(|s| !s.is_empty())
            .map(Secret::new);
        if server.peer_address.is_some() && secret.is_none() {
            tracing::warn!(
                "server.peer_address is set without server.peer_secret (or its peer_secret_env): tabs \
                 resume only on the gateway they first used"
            );
        }
        Self { address: server.peer_address.clone().filter(|_| secret.is_some()), secret }
    }

    fn on(&self) -> bool {
        self.address.is_some() && self.secret.is_some()
    }

    /// Whether `offered` is this deployment's secret. Both sides are hashed first, so the
    /// comparison's time says nothing about how much of the secret was right.
    pub fn admits(&self, offered: Option<&str>) -> bool {
        match (&self.secret, offered) {
            (Some(secret), Some(offered)) => {
                Sha256::digest(secret.expose().as_bytes()) == Sha256::digest(offered.as_bytes())
            }
            _ => false,
        }
    }
}

/// The person as a header value: the account name is encoded, so any name fits in a header.
pub fn person_header(person: &Person) -> String {
    match person {
        Person::User(name) => format!("user:{}", URL_SAFE_NO_PAD.encode(name.as_bytes())),
        Person::Anonymous(ip) => format!("address:{ip}"),
    }
}

/// The person a peer named; `None` for a value no gateway sends.
pub fn person_from_header(value: &str) -> Option<Person> {
    if let Some(name) = value.strip_prefix("user:") {
        let bytes = URL_SAFE_NO_PAD.decode(name).ok()?;
        return String::from_utf8(bytes).ok().map(Person::User);
    }
    value.strip_prefix("address:")?.parse().ok().map(Person::Anonymous)
}

fn token_hash(token: &Secret) -> String {
    hex(&Sha256::digest(token.expose().as_bytes()))
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Records that this gateway holds the session under `token`: for [`CONNECTED_FOR`] while its
/// socket is up, for the grace period once it dropped. Awaited before the page is given the token
/// (a resume elsewhere must find it), so it costs each new socket one store write.
pub(crate) async fn announce(state: &AppState, token: &Secret, socket_up: bool) {
    let Some(address) = state.peers().address.as_deref() else { return };
    let valid_for =
        if socket_up { CONNECTED_FOR } else { Duration::from_secs(state.limits().resume_grace_secs) };
    let now = now();
    let until = now.saturating_add(i64::try_from(valid_for.as_secs()).unwrap_or(i64::MAX));
    let hash = token_hash(token);
    let put = state.store().put_resume_owner(&hash, address, now, until);
    match tokio::time::timeout(STORE_PATIENCE, put).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "could not record this tab in the store; it resumes only here");
        }
        Err(_) => tracing::warn!(
            "the store did not record this tab within {} s; it resumes only here",
            STORE_PATIENCE.as_secs()
        ),
    }
}

/// The session under `token` is over or moved on: no gateway is sent here for it any more.
pub(crate) fn withdraw(state: &AppState, token: &Secret) {
    if !state.peers().on() {
        return;
    }
    let store = std::sync::Arc::clone(state.store());
    let hash = token_hash(token);
    tokio::spawn(async move {
        if let Err(err) = store.drop_resume_owner(&hash).await {
            tracing::warn!(error = %err, "could not remove an ended tab from the store; it expires there");
        }
    });
}

/// The peer address of the other gateway holding the session under `token`, if one does.
pub(crate) async fn owner(state: &AppState, token: &Secret) -> Option<String> {
    let own = state.peers().address.as_deref()?;
    match state.store().resume_owner(&token_hash(token), now()).await {
        Ok(Some(peer)) if peer != own => Some(peer),
        Ok(_) => None,
        Err(err) => {
            tracing::warn!(error = %err, "could not look a resume up in the store");
            None
        }
    }
}

/// A socket open to the gateway holding a tab, for [`relay`].
pub(crate) type Owner = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Opens the peer route of the gateway at `peer` for `person`; `None` (logged) when it cannot be
/// reached, and the page is then answered as for a tab nobody holds.
pub(crate) async fn connect(state: &AppState, peer: &str, person: &Person) -> Option<Owner> {
    let secret = state.peers().secret.clone()?;
    let url = format!("{}/peer/ws?protocol={}", peer.trim_end_matches('/'), flint_protocol::PROTOCOL_VERSION);
    let Ok(mut request) = url.as_str().into_client_request() else {
        tracing::warn!(peer, "a peer address in the store is not a WebSocket URL");
        return None;
    };
    let (Ok(secret), Ok(person)) = (secret.expose().parse(), person_header(person).parse()) else {
        return None;
    };
    request.headers_mut().insert(SECRET_HEADER, secret);
    request.headers_mut().insert(PERSON_HEADER, person);
    match tokio::time::timeout(CONNECT_TIMEOUT, tokio_tungstenite::connect_async(request)).await {
        Ok(Ok((owner, _))) => Some(owner),
        Ok(Err(err)) => {
            tracing::warn!(peer, error = %err, "the gateway holding this tab could not be reached");
            None
        }
        Err(_) => {
            tracing::warn!(peer, "the gateway holding this tab did not answer in time");
            None
        }
    }
}

/// Relays the page's socket to the `owner`'s, starting with `first` (the page's `Resume`), until
/// either side closes.
pub(crate) async fn relay<S, R, E>(
    state: &AppState,
    owner: Owner,
    first: Utf8Bytes,
    sink: &mut S,
    incoming: &mut R,
) where
    S: Sink<Message> + Unpin,
    R: Stream<Item = Result<Message, E>> + Unpin,
{
    tracing::info!("relaying a resumed tab to the gateway that holds it");
    let (mut to_owner, mut from_owner) = owner.split();
    if to_owner.send(tungstenite::Message::text(first.as_str())).await.is_err() {
        return;
    }
    let shutdown = state.shutdown().clone();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            frame = from_owner.next() => {
                let Some(Ok(frame)) = frame else { break };
                let Some(frame) = to_page(frame) else { continue };
                let closing = matches!(frame, Message::Close(_));
                if sink.send(frame).await.is_err() || closing {
                    break;
                }
            }
            frame = incoming.next() => {
                let Some(Ok(frame)) = frame else { break };
                let frame = to_owner_frame(frame);
                let closing = matches!(frame, tungstenite::Message::Close(_));
                if to_owner.send(frame).await.is_err() || closing {
                    break;
                }
            }
        }
    }
    // A relay cut without a goodbye leaves the owner's session waiting for the page, as a dropped
    // socket does; a page that left on purpose passed its own close frame on.
    let _ = to_owner.close().await;
}

fn to_page(frame: tungstenite::Message) -> Option<Message> {
    Some(match frame {
        tungstenite::Message::Text(text) => Message::Text(Utf8Bytes::from(text.as_str())),
        tungstenite::Message::Binary(bytes) => Message::Binary(bytes),
        // The owner's pings carry the receipt mark: the page's pong goes back to it.
        tungstenite::Message::Ping(payload) => Message::Ping(payload),
        tungstenite::Message::Pong(payload) => Message::Pong(payload),
        tungstenite::Message::Close(close) => Message::Close(
            close.map(|c| CloseFrame { code: c.code.into(), reason: Utf8Bytes::from(c.reason.as_str()) }),
        ),
        tungstenite::Message::Frame(_) => return None,
    })
}

fn to_owner_frame(frame: Message) -> tungstenite::Message {
    match frame {
        Message::Text(text) => tungstenite::Message::text(text.as_str()),
        Message::Binary(bytes) => tungstenite::Message::Binary(bytes),
        Message::Ping(payload) => tungstenite::Message::Ping(payload),
        Message::Pong(payload) => tungstenite::Message::Pong(payload),
        Message::Close(close) => tungstenite::Message::Close(close.map(|c| {
            tungstenite::protocol::CloseFrame { code: c.code.into(), reason: c.reason.as_str().into() }
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_crosses_to_the_owner_as_they_were_and_nothing_else_passes_for_one() {
        for person in [
            Person::User("ana: \"x\"\r\nset-cookie: y ü".into()),
            Person::Anonymous([10, 0, 0, 7].into()),
            Person::Anonymous("2001:db8::1".parse().expect("address")),
        ] {
            let header = person_header(&person);
            assert!(header.bytes().all(|b| b.is_ascii_graphic() || b == b' '), "{header}");
            assert_eq!(person_from_header(&header), Some(person));
        }
        for forged in ["", "user", "user:%%%", "address:nobody", "admin:root", "User:YW5h"] {
            assert_eq!(person_from_header(forged), None, "{forged}");
        }
    }

    #[test]
    fn only_the_configured_secret_is_admitted_and_none_without_one() {
        let server = |secret: Option<&str>| ServerConfig {
            peer_address: Some("ws://10.0.0.2:8788".into()),
            peer_secret: secret.map(str::to_owned),
            ..ServerConfig::default()
        };
        let peers = Peers::new(&server(Some("s3cret")), &|_| None);
        assert!(peers.admits(Some("s3cret")));
        for wrong in [None, Some(""), Some("s3cre"), Some("s3cret ")] {
            assert!(!peers.admits(wrong), "{wrong:?}");
        }
        let off = Peers::new(&server(None), &|_| None);
        assert!(!off.on() && !off.admits(Some("")) && !off.admits(None));
        let from_env =
            Peers::new(&ServerConfig { peer_secret_env: Some("PEER".into()), ..server(None) }, &|name| {
                (name == "PEER").then(|| "from-env".to_owned())
            });
        assert!(from_env.on() && from_env.admits(Some("from-env")));
    }
}
