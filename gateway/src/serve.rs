//! The accept loop: [`axum::serve`] with the limits it does not expose.
//!
//! - HTTP/1.1 only. Browsers speak HTTP/2 only over TLS, which the proxy in front terminates, and
//!   the WebSocket needs HTTP/1.1; hyper's automatic version sniff read the first bytes with no
//!   timeout, so a socket that sent nothing (or the HTTP/2 preface) was held for ever: 1,100 of them
//!   took every descriptor of a gateway limited to 1,024.
//! - hyper's header-read timeout runs from the accept, and again while a kept-alive connection
//!   waits for its next request: a connection that does not send a whole request head within it is
//!   closed, whatever it sends (`axum::serve` gives hyper no timer at all).
//! - At most `server.max_connections_per_address` open connections (WebSockets included) per
//!   network ([`crate::person::network_of`]); the next gets a 429 with a sentence.
//! - A failed accept (out of descriptors) waits 10 ms, doubling to 500 ms, and is logged at most
//!   once a second.
//!
//! On shutdown the listener stops, HTTP connections finish their request and close, and the
//! WebSockets close themselves (they watch the same token).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::ConnectInfo;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt as _;

use crate::config::IpRange;

mod backoff;
pub mod open_files;
mod per_address;

pub use backoff::{AcceptBackoff, Failure};
pub use per_address::PerAddress;

/// How long a client may take to send a request's headers.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What the accept loop allows each connection.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// How long a connection may take to send a whole request head, from the accept (or from the
    /// end of its previous request).
    pub header_read_timeout: Duration,
    /// Open connections per network; 0: no cap.
    pub max_per_address: usize,
    /// Peers not counted: trusted proxies, which carry every visitor's connections.
    pub exempt: Vec<IpRange>,
}

impl From<Duration> for ConnectionLimits {
    /// Only a header-read timeout, no cap per address (benches and in-process tests).
    fn from(header_read_timeout: Duration) -> Self {
        Self { header_read_timeout, max_per_address: 0, exempt: Vec::new() }
    }
}

/// Serves `router` on `listener` until `shutdown` is cancelled, then waits for open HTTP
/// requests to finish. Handlers may read the peer address as `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: impl Into<ConnectionLimits>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve_draining(listener, router, limits, shutdown.clone(), shutdown).await
}

/// Like [`serve`], draining: stops accepting once `stop_accepting` is cancelled (the listener is
/// closed then, so a load balancer's checks fail over) and waits for open connections, which are
/// asked to close once `shutdown` is cancelled.
pub async fn serve_draining(
    listener: TcpListener,
    router: Router,
    limits: impl Into<ConnectionLimits>,
    stop_accepting: CancellationToken,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let limits = limits.into();
    let per_address = PerAddress::new(limits.max_per_address, &limits.exempt);
    let mut backoff = AcceptBackoff::default();
    let connections = TaskTracker::new();
    loop {
        let (tcp, peer) = tokio::select! {
            () = stop_accepting.cancelled() => break,
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => {
                    backoff.succeeded();
                    accepted
                }
                Err(err) => {
                    let Failure { pause, log } = backoff.failed(Instant::now());
                    if let Some(unlogged) = log {
                        tracing::warn!(
                            error = %err,
                            unlogged,
                            pause_ms = pause.as_millis(),
                            "accept failed; waiting before accepting again (too many open files: see the \
                             open-files limit at start)"
                        );
                    }
                    tokio::time::sleep(pause).await;
                    continue;
                }
            },
        };
        let Some(slot) = per_address.admit(peer.ip()) else {
            connections.spawn(per_address::refuse(tcp, per_address.max()));
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let tcp = per_address::Counted::new(tcp, slot);
        let service = router.clone().map_request(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            request
        });
        let shutdown = shutdown.clone();
        let header_read_timeout = limits.header_read_timeout;
        connections.spawn(async move {
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header_read_timeout);
            let connection = builder
                .serve_connection(TokioIo::new(tcp), TowerToHyperService::new(service))
                .with_upgrades();
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = result {
                tracing::debug!(%peer, error = %err, "connection ended with an error");
            }
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
    Ok(())
}
