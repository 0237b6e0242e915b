//! Streamed answers from plain-HTTP upstreams (model servers on loopback or a LAN: llama.cpp,
//! vLLM, Ollama, LM Studio…): the HTTP/1 connection is driven by the task that reads the answer.
//!
//! Why: hyper's pooled client runs each connection in a task of its own, which hands the body to
//! the reader one piece at a time: every token cost two tasks a turn each, and on a loaded gateway
//! each turn waits in the run queue behind thousands of others. Here reading the body polls the
//! connection first, in the same task: no hand-off between tasks. At 1,000 streams this cut the relay's
//! p99 to a sixth (`bench/scale.md`). TLS upstreams stay on hyper's client: they mostly speak
//! HTTP/2, whose streams share one connection (and its task) by design.
//!
//! The pool is as bounded as hyper's: [`super::upstream_http::IDLE_PER_HOST`] idle connections a
//! host, each closed after the client's idle timeout. An idle connection waits in a small task
//! that watches it close and hands it back when a request takes it. As hyper's client does, a
//! request its kept connection never sent (the server closed it as it was taken) goes once more
//! on a new one; one that was sent is not sent again, since the server may have begun on it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::{Builder, Connection, SendRequest};
use hyper_util::rt::TokioIo;
use sync_wrapper::SyncWrapper;
use tokio::net::TcpStream;
use tokio::sync::oneshot;

type Conn = Connection<TokioIo<TcpStream>, Full<Bytes>>;

/// Why a request on a connection of our own failed.
#[derive(Debug)]
pub(super) enum Failed {
    /// No connection within `connect_timeout`.
    ConnectTimedOut,
    /// No connection could be made.
    Connect(std::io::Error),
    /// The request failed on its connection.
    Request(hyper::Error),
}

/// Idle connections by `host:port`.
pub(super) struct Pool {
    idle: Mutex<HashMap<String, Vec<Idle>>>,
    idle_for: Duration,
    per_host: usize,
    read_buffer: usize,
}

/// A connection between answers: its request half, and the way to ask its task for it back.
struct Idle {
    send: SendRequest<Full<Bytes>>,
    reclaim: oneshot::Sender<oneshot::Sender<Conn>>,
}

impl Pool {
    pub(super) fn new(idle_for: Duration, per_host: usize, read_buffer: usize) -> Arc<Self> {
        Arc::new(Self { idle: Mutex::new(HashMap::new()), idle_for, per_host, read_buffer })
    }

    /// Sends the request `request()` makes to `host:port` (its URI in origin form, its `Host`
    /// header set) on an idle connection or a new one, and returns the answer once its head
    /// arrived. Its body drives the connection; read to its end, it goes back to the pool.
    pub(super) async fn send(
        self: &Arc<Self>,
        host: &str,
        port: u16,
        connect_timeout: Duration,
        request: impl Fn() -> http::Request<Full<Bytes>>,
    ) -> Result<http::Response<InTaskBody>, Failed> {
        let key = format!("{host}:{port}");
        if let Some((send, conn)) = self.take(&key).await {
            match self.exchange(key.clone(), send, conn, request()).await {
                Err(Failed::Request(err)) if err.is_canceled() => {
                    tracing::debug!(upstream = %key, error = %err, "a kept connection closed as it was taken; on a new one");
                }
                answered => return answered,
            }
        }
        let (send, conn) = self.connect(host, port, connect_timeout).await?;
        self.exchange(key, send, conn, request()).await
    }

    /// `request` on `conn`, driven here until the answer's head arrives.
    async fn exchange(
        self: &Arc<Self>,
        key: String,
        mut send: SendRequest<Full<Bytes>>,
        conn: Conn,
        request: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<InTaskBody>, Failed> {
        let answer = send.send_request(request);
        tokio::pin!(answer);
        // The head arrives only while the connection is driven. One that ends first is dropped at
        // once: a request it still held is answered (cancelled) only when it goes.
        let mut conn = Some(conn);
        let head = std::future::poll_fn(|cx| {
            if let Some(open) = conn.as_mut()
                && Pin::new(open).poll(cx).is_ready()
            {
                conn = None;
            }
            answer.as_mut().poll(cx)
        })
        .await
        .map_err(Failed::Request)?;
        let driven =
            conn.map(|conn| Driven { conn: SyncWrapper::new(conn), send, pool: Arc::clone(self), key });
        Ok(head.map(|body| InTaskBody { body, driven }))
    }

    async fn connect(
        &self,
        host: &str,
        port: u16,
        timeout: Duration,
    ) -> Result<(SendRequest<Full<Bytes>>, Conn), Failed> {
        // An IPv6 literal comes bracketed from the URI.
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let deadline = tokio::time::Instant::now() + timeout;
        let addresses = match tokio::time::timeout_at(deadline, tokio::net::lookup_host((bare, port))).await {
            Ok(Ok(found)) => found.collect::<Vec<_>>(),
            Ok(Err(err)) => return Err(Failed::Connect(err)),
            Err(_) => return Err(Failed::ConnectTimedOut),
        };
        let tcp = connect_any(&addresses, deadline).await?;
        // Tokens are small writes the upstream wants gone at once; so is the request.
        let _ = tcp.set_nodelay(true);
        Builder::new()
            .max_buf_size(self.read_buffer)
            .handshake(TokioIo::new(tcp))
            .await
            .map_err(Failed::Request)
    }

    /// The most recently parked connection to `key` still open and ready for a request.
    async fn take(&self, key: &str) -> Option<(SendRequest<Full<Bytes>>, Conn)> {
        loop {
            let idle = self.idle.lock().ok()?.get_mut(key)?.pop()?;
            let (back, returned) = oneshot::channel();
            if idle.reclaim.send(back).is_err() {
                continue;
            }
            // Its task ended meanwhile (closed, or idle too long): the next one.
            let Ok(mut conn) = returned.await else { continue };
            let send = idle.send;
            // One turn of the connection lets it take in a close that arrived while it waited.
            let open =
                std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut conn).poll(cx).is_pending())).await;
            if open && send.is_ready() {
                return Some((send, conn));
            }
        }
    }

    /// Keeps a connection whose answer was read to its end for the next request to `key`.
    fn park(self: Arc<Self>, key: String, send: SendRequest<Full<Bytes>>, mut conn: Conn) {
        let (reclaim, asked) = oneshot::channel::<oneshot::Sender<Conn>>();
        {
            let Ok(mut idle) = self.idle.lock() else { return };
            let waiting = idle.entry(key).or_default();
            waiting.retain(|idle| !idle.reclaim.is_closed());
            if waiting.len() >= self.per_host {
                return;
            }
            waiting.push(Idle { send, reclaim });
        }
        let idle_for = self.idle_for;
        tokio::spawn(async move {
            let wanted = tokio::select! {
                // The server closed it, or it failed: dropped.
                _ = &mut conn => None,
                () = tokio::time::sleep(idle_for) => None,
                asked = asked => asked.ok(),
            };
            if let Some(back) = wanted {
                let _ = back.send(conn);
            }
        });
    }
}

/// Longest wait for one of a host's addresses while others remain to try.
const NEXT_ADDRESS_AFTER: Duration = Duration::from_secs(1);

/// A connection to the first of `addresses` that answers by `deadline`, in their order. A host
/// can have an address that never answers (an IPv6 route that goes nowhere, a stale record): each
/// address but the last gets at most [`NEXT_ADDRESS_AFTER`], so the next is still tried in time.
pub(super) async fn connect_any(
    addresses: &[std::net::SocketAddr],
    deadline: tokio::time::Instant,
) -> Result<TcpStream, Failed> {
    let mut failed =
        Failed::Connect(std::io::Error::new(std::io::ErrorKind::NotFound, "the name has no address"));
    for (i, address) in addresses.iter().enumerate() {
        let until = if i + 1 < addresses.len() {
            deadline.min(tokio::time::Instant::now() + NEXT_ADDRESS_AFTER)
        } else {
            deadline
        };
        failed = match tokio::time::timeout_at(until, TcpStream::connect(address)).await {
            Ok(Ok(tcp)) => return Ok(tcp),
            Ok(Err(err)) => Failed::Connect(err),
            Err(_) => Failed::ConnectTimedOut,
        };
        if tokio::time::Instant::now() >= deadline {
            break;
        }
    }
    Err(failed)
}

/// The connection behind a body, and where it goes once the body is read.
struct Driven {
    conn: SyncWrapper<Conn>,
    send: SendRequest<Full<Bytes>>,
    pool: Arc<Pool>,
    key: String,
}

/// An answer's body that drives its own connection. Dropped before its end, it closes the
/// connection: that is how a cancelled answer stops the upstream.
pub(crate) struct InTaskBody {
    body: Incoming,
    driven: Option<Driven>,
}

impl Body for InTaskBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        // What the connection already handed over first; then one turn of the connection (a read
        // of the socket, or the next piece of what it read), and what that brought.
        let mut polled = Pin::new(&mut this.body).poll_frame(cx);
        if polled.is_pending()
            && let Some(driven) = this.driven.as_mut()
        {
            if Pin::new(driven.conn.get_mut()).poll(cx).is_ready() {
                this.driven = None;
            }
            polled = Pin::new(&mut this.body).poll_frame(cx);
        }
        if let Poll::Ready(None) = polled
            && let Some(Driven { conn, send, pool, key }) = this.driven.take()
        {
            pool.park(key, send, conn.into_inner());
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;

    use super::{Failed, connect_any};

    /// A loopback address whose SYNs go unanswered: a listener never accepting, its queue full.
    async fn unanswering() -> (tokio::net::TcpListener, Vec<tokio::net::TcpStream>, std::net::SocketAddr) {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.bind("127.0.0.1:0".parse().expect("an address")).expect("a port");
        let listener = socket.listen(0).expect("listening");
        let address = listener.local_addr().expect("its address");
        let mut queued = Vec::new();
        // Fill the accept queue; from then on the kernel drops new SYNs.
        while let Ok(Ok(stream)) =
            tokio::time::timeout(Duration::from_millis(200), tokio::net::TcpStream::connect(address)).await
        {
            queued.push(stream);
        }
        (listener, queued, address)
    }

    #[tokio::test]
    async fn an_address_that_never_answers_gives_way_to_the_next_in_time() {
        let (_listener, _queued, dead) = unanswering().await;
        let live = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let started = Instant::now();
        let connected =
            connect_any(&[dead, live.local_addr().expect("its address")], started + Duration::from_secs(10))
                .await
                .expect("the second address answers");
        assert_eq!(connected.peer_addr().expect("a peer"), live.local_addr().expect("its address"));
        let took = started.elapsed();
        assert!(took < Duration::from_secs(3), "{took:?}: the dead address held the whole connect timeout");
        // Alone, the dead address is waited for until the deadline, and the error says it timed out.
        let alone = connect_any(&[dead], Instant::now() + Duration::from_millis(300)).await;
        assert!(matches!(alone, Err(Failed::ConnectTimedOut)), "{alone:?}");
    }
}
