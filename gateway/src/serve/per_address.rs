//! How many connections each visitor's network holds, and the answer to one over its share.
//!
//! Every open descriptor counts, WebSockets included: the count rides on the socket itself
//! ([`Counted`]), so it is given back when the socket closes, however long after the HTTP
//! exchange that upgraded it.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::TcpStream;

use crate::config::IpRange;
use crate::person::network_of;

/// Open connections by network.
type Counts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// Open connections per network ([`network_of`]), capped.
#[derive(Debug, Clone)]
pub struct PerAddress {
    counts: Counts,
    max: usize,
    exempt: Arc<[IpRange]>,
}

/// One counted connection; dropping it gives the place back.
#[derive(Debug)]
pub struct Slot {
    counts: Option<(Counts, IpAddr)>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some((counts, network)) = self.counts.take() {
            let mut counts = counts.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(count) = counts.get_mut(&network) {
                *count -= 1;
                if *count == 0 {
                    counts.remove(&network);
                }
            }
        }
    }
}

impl PerAddress {
    /// At most `max` connections per network (0: no cap); peers in `exempt` (trusted proxies,
    /// which carry everyone's connections) are not counted.
    pub fn new(max: usize, exempt: &[IpRange]) -> Self {
        Self { counts: Arc::default(), max, exempt: exempt.into() }
    }

    /// A place for a connection from `peer`, or `None` when its network already holds `max`.
    pub fn admit(&self, peer: IpAddr) -> Option<Slot> {
        if self.max == 0 || self.exempt.iter().any(|range| range.contains(peer)) {
            return Some(Slot { counts: None });
        }
        let network = network_of(peer);
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(network).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(Slot { counts: Some((Arc::clone(&self.counts), network)) })
    }

    /// The cap, for the refusal's sentence.
    pub fn max(&self) -> usize {
        self.max
    }
}

/// A socket that holds its [`Slot`] for as long as it is open.
#[derive(Debug)]
pub struct Counted {
    io: TcpStream,
    _slot: Slot,
}

impl Counted {
    /// `io`, counted by `slot`.
    pub fn new(io: TcpStream, slot: Slot) -> Self {
        Self { io, _slot: slot }
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// How long a refused connection may take to send its request before it is closed: long enough
/// for a client that sent it at once, short enough that refused sockets do not pile up.
const REFUSAL_LINGER: Duration = Duration::from_millis(250);

/// Answers a connection over its network's share with a 429 and a sentence, and closes it. The
/// answer goes out at once, without waiting for a request the client may never send; what it sent
/// is read (briefly) before closing, as closing with unread bytes resets the connection and could
/// lose the answer.
pub async fn refuse(mut tcp: TcpStream, max: usize) {
    let body = format!(
        "this Flint already holds {max} connections from your address \
         (server.max_connections_per_address); close some tabs or other clients and try again\n"
    );
    let answer = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nretry-after: 10\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(REFUSAL_LINGER, async {
        tcp.write_all(answer.as_bytes()).await?;
        tcp.shutdown().await?;
        let mut sink = [0u8; 4096];
        while tcp.read(&mut sink).await? > 0 {}
        io::Result::Ok(())
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("address")
    }

    #[test]
    fn a_network_gets_max_places_given_back_when_dropped_and_proxies_are_not_counted() {
        let limit = PerAddress::new(2, &["10.0.0.1".parse().expect("range")]);
        let a = limit.admit(ip("2001:db8::1")).expect("first");
        let _b = limit.admit(ip("2001:db8::2")).expect("second, same /64");
        assert!(limit.admit(ip("2001:db8::3")).is_none(), "a third from the same /64");
        assert!(limit.admit(ip("2001:db8:0:1::3")).is_some(), "another /64 is another visitor");
        drop(a);
        assert!(limit.admit(ip("2001:db8::3")).is_some(), "a closed connection gives its place back");
        let proxied: Vec<_> = (0..10).map(|_| limit.admit(ip("10.0.0.1"))).collect();
        assert!(proxied.iter().all(Option::is_some), "a trusted proxy carries everyone");
        let off = PerAddress::new(0, &[]);
        let many: Vec<_> = (0..1000).map(|_| off.admit(ip("127.0.0.1"))).collect();
        assert!(many.iter().all(Option::is_some), "0 turns the cap off");
    }
}
