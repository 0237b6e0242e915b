//! The accept loop: [`axum::serve`] with the limits it does not expose.
//!
//! `axum::serve` gives hyper no timer, so a client that sends half a request line and then waits
//! holds its connection (and a task) for as long as it likes: 1,500 such connections were measured
//! held open. Here each connection gets hyper's header-read timeout, and WebSocket upgrades still
//! work. On shutdown the listener stops, HTTP connections finish their request and close, and the
//! WebSockets close themselves (they watch the same token).

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt as _;

/// How long a client may take to send a request's headers.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` until `shutdown` is cancelled, then waits for open HTTP
/// requests to finish. Handlers may read the peer address as `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    header_read_timeout: Duration,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve_draining(listener, router, header_read_timeout, shutdown.clone(), shutdown).await
}

/// Like [`serve`], draining: stops accepting once `stop_accepting` is cancelled (the listener is
/// closed then, so a load balancer's checks fail over) and waits for open connections, which are
/// asked to close once `shutdown` is cancelled.
pub async fn serve_draining(
    listener: TcpListener,
    router: Router,
    header_read_timeout: Duration,
    stop_accepting: CancellationToken,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let connections = TaskTracker::new();
    loop {
        let (tcp, peer) = tokio::select! {
            () = stop_accepting.cancelled() => break,
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors and the like: wait a little instead of spinning.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let service = router.clone().map_request(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            request
        });
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let mut builder = Builder::new(TokioExecutor::new());
            builder.http1().timer(TokioTimer::new()).header_read_timeout(header_read_timeout);
            let connection =
                builder.serve_connection_with_upgrades(TokioIo::new(tcp), TowerToHyperService::new(service));
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
