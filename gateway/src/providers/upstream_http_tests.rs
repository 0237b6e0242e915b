//! The streamed answers' client reads ahead of the gateway by at most about [`READ_BUFFER_MAX`],
//! keeps a plain-HTTP upstream's connection for the next answer, and closes it when an answer is
//! dropped before its end.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{READ_BUFFER_MAX, UpstreamClient};

/// Reads a request's head; false when the connection ends first.
async fn read_head(socket: &mut tokio::net::TcpStream) -> bool {
    let mut head = Vec::new();
    let mut byte = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match socket.read(&mut byte).await.expect("the request") {
            0 => return false,
            n => head.extend_from_slice(&byte[..n]),
        }
    }
    true
}

/// A server that answers any request with `size` bytes at once, as an upstream does whose answer
/// got ahead of a busy gateway.
async fn flooding_server(size: usize) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("a connection");
        if !read_head(&mut socket).await {
            return;
        }
        let answer =
            format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {size}\r\n\r\n");
        let _ = socket.write_all(answer.as_bytes()).await;
        let _ = socket.write_all(&vec![b'x'; size]).await;
    });
    addr
}

#[tokio::test]
async fn an_answer_that_got_ahead_is_read_in_pieces_no_larger_than_the_bound() {
    let size = 4 * 1024 * 1024;
    let addr = flooding_server(size).await;
    let client = UpstreamClient::new();
    let mut response = client
        .post_json(&format!("http://{addr}/v1/chat/completions"), None, &serde_json::json!({}))
        .await
        .expect("an answer");
    let (mut read, mut largest) = (0, 0);
    while let Some(piece) = response.chunk().await.expect("the body") {
        read += piece.len();
        largest = largest.max(piece.len());
        // A gateway behind its upstreams: the kernel's socket buffer fills between reads.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(read, size, "the whole body arrives");
    // hyper asks the socket for at most the bound, but into whatever room its buffer has, and the
    // buffer grows by doubling: a piece can reach twice the bound (48 KiB seen), never hyper's own
    // default (~400 KiB; 496 KiB seen here without the bound).
    assert!(
        largest <= 2 * READ_BUFFER_MAX,
        "a read of {largest} bytes: the client buffered more than twice {READ_BUFFER_MAX} ahead of the gateway"
    );
}

#[tokio::test]
async fn a_failed_request_names_the_host_without_the_credentials_in_its_url() {
    // Port 1 on loopback refuses at once.
    let err = UpstreamClient::new()
        .post_json("http://flint:s3cret-pass@127.0.0.1:1/v1/chat/completions", None, &serde_json::json!({}))
        .await
        .expect_err("nothing listens on port 1");
    assert_eq!(err.host().as_deref(), Some("127.0.0.1:1"));
    assert!(err.is_connect(), "{err:?}");
}

/// A server that answers one request with a short body, keeps the connection open for the next
/// one, and sends how long after its answer the client closed the connection.
async fn keep_alive_server() -> (std::net::SocketAddr, tokio::sync::oneshot::Receiver<Duration>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let (closed, closed_after) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("a connection");
        if !read_head(&mut socket).await {
            return;
        }
        let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}").await;
        let answered = tokio::time::Instant::now();
        // The client's next move on this connection: nothing until it closes it (a read of 0).
        let mut byte = [0u8; 64];
        while socket.read(&mut byte).await.is_ok_and(|n| n > 0) {}
        let _ = closed.send(answered.elapsed());
    });
    (addr, closed_after)
}

#[tokio::test]
async fn a_pooled_connection_is_closed_once_idle_for_the_timeout() {
    let (addr, closed_after) = keep_alive_server().await;
    let client = UpstreamClient::idle_for(Duration::from_millis(200));
    let mut response = client
        .post_json(&format!("http://{addr}/v1/chat/completions"), None, &serde_json::json!({}))
        .await
        .expect("an answer");
    while response.chunk().await.expect("the body").is_some() {}
    drop(response);
    // The client is still alive: only the pool's idle timeout can close the connection.
    let after = tokio::time::timeout(Duration::from_secs(5), closed_after)
        .await
        .expect("the idle connection was still open 5 s after its answer")
        .expect("the server saw the connection end");
    assert!(after >= Duration::from_millis(150), "closed after {after:?}, before its idle timeout");
    drop(client);
}

/// A server that answers each request on a connection with `answer`, for as long as the client
/// keeps the connection (or once, closing `closes_after` later), and counts the connections it
/// accepted.
async fn answering_server(
    answer: &'static [u8],
    closes_after: Option<Duration>,
) -> (std::net::SocketAddr, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let accepted = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                while read_head(&mut socket).await {
                    if socket.write_all(answer).await.is_err() {
                        return;
                    }
                    // One answer, then the connection closes a while later (keep-alive as far
                    // as the headers say): a server whose idle timeout is shorter than the client's.
                    if let Some(after) = closes_after {
                        tokio::time::sleep(after).await;
                        return;
                    }
                }
            });
        }
    });
    (addr, accepted)
}

#[tokio::test]
async fn answers_read_to_their_end_leave_their_connection_for_the_next_request() {
    let sse = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n\
        c\r\ndata: [DONE]\r\n0\r\n\r\n";
    let (addr, accepted) = answering_server(sse, None).await;
    let client = UpstreamClient::new();
    let url = format!("http://{addr}/v1/chat/completions");
    for _ in 0..5 {
        let mut response = client.post_json(&url, None, &serde_json::json!({})).await.expect("an answer");
        let mut body = Vec::new();
        while let Some(piece) = response.chunk().await.expect("the body") {
            body.extend_from_slice(&piece);
        }
        assert_eq!(body, b"data: [DONE]");
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1, "five answers, one connection");
}

#[tokio::test]
async fn an_answer_dropped_before_its_end_closes_its_connection() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let (closed, seen) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("a connection");
        if !read_head(&mut socket).await {
            return;
        }
        let head =
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        let _ = socket.write_all(head).await;
        // An answer that never ends, a token every few ms, until the client goes.
        loop {
            if socket.write_all(b"7\r\ndata: x\r\n").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let _ = closed.send(());
    });
    let client = UpstreamClient::new();
    let mut response = client
        .post_json(&format!("http://{addr}/v1/chat/completions"), None, &serde_json::json!({}))
        .await
        .expect("an answer");
    assert!(response.chunk().await.expect("the body").is_some());
    drop(response);
    tokio::time::timeout(Duration::from_secs(5), seen)
        .await
        .expect("the upstream was still being read 5 s after the answer was dropped")
        .expect("the server saw the connection end");
    drop(client);
}

#[tokio::test]
async fn a_kept_connection_the_server_closed_is_not_used_again() {
    let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
    // Closed after the client has taken the answer and kept the connection.
    let (addr, accepted) = answering_server(answer, Some(Duration::from_millis(20))).await;
    let client = UpstreamClient::new();
    let url = format!("http://{addr}/v1/chat/completions");
    for _ in 0..3 {
        let mut response = client.post_json(&url, None, &serde_json::json!({})).await.expect("an answer");
        while response.chunk().await.expect("the body").is_some() {}
        // The server's close reaches the client while the connection waits in the pool.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "each request on a connection of its own"
    );
}
