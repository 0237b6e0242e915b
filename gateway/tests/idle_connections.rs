//! Connections that send nothing: closed after the header-read timeout whatever protocol they
//! claim, capped per address with a sentence, and never able to lock a new visitor out of a
//! gateway whose open-files limit is 1,024 (the real binary under `ulimit -n 1024`). Loopback only.
//! With them, the rest of what the binary sets up for itself: its open-files limit and glibc's
//! per-thread caches.

mod binary;
mod common;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use binary::Binary;
use common::{Client, start_with};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};

/// Reads until the server closes; what it sent, or `None` if it was still open after `patience`.
async fn until_closed(tcp: &mut TcpStream, patience: Duration) -> Option<String> {
    let mut got = Vec::new();
    let read = tokio::time::timeout(patience, async {
        let mut buf = [0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    read.ok().map(|()| String::from_utf8_lossy(&got).into_owned())
}

/// `GET path` from the local address `local` (another loopback address is another visitor).
async fn get_from(addr: SocketAddr, local: IpAddr, path: &str) -> String {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(local, 0)).expect("bind a loopback address");
    let mut tcp = socket.connect(addr).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.expect("write");
    until_closed(&mut tcp, Duration::from_secs(30)).await.unwrap_or_default()
}

#[tokio::test]
async fn a_socket_that_sends_nothing_or_the_http2_preface_is_closed_after_the_header_timeout() {
    let gw = start_with(|c| c.server.header_read_timeout_ms = 500).await;
    let mut silent = TcpStream::connect(gw.addr).await.expect("connect");
    let mut preface = TcpStream::connect(gw.addr).await.expect("connect");
    preface.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.expect("write the HTTP/2 preface");
    let mut kept_alive = TcpStream::connect(gw.addr).await.expect("connect");
    kept_alive.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.expect("write");
    let started = Instant::now();
    let patience = Duration::from_secs(5);
    assert!(until_closed(&mut silent, patience).await.is_some(), "a socket that sent nothing was held");
    assert!(until_closed(&mut preface, patience).await.is_some(), "an HTTP/2 preface was held");
    let answered = until_closed(&mut kept_alive, patience).await;
    let answered = answered.expect("a kept-alive connection idle after its request was held");
    assert!(answered.starts_with("HTTP/1.1 200"), "it was answered first: {answered}");
    assert!(started.elapsed() < Duration::from_secs(3), "closed after {:?}", started.elapsed());
    let mut own = Client::connect(gw.addr).await;
    assert!(!own.run(1, "counter@20000").await.text.is_empty(), "the WebSocket still upgrades");
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_sockets_past_the_descriptor_limit_do_not_lock_out_a_new_visitor() {
    // This process holds the 1,100 sockets, so it needs more than 1,024 descriptors itself.
    let room = rlimit::increase_nofile_limit(4096).expect("the test's own open-files limit");
    assert!(room >= 2048, "the test needs 2,048 descriptors of its own, it may have {room}");
    let gw =
        Binary::start("idle", "[server]\nheader_read_timeout_ms = 6000\n", "ulimit -n 1024", "info", &[]);
    let mut idle = Vec::new();
    for _ in 0..1100 {
        idle.push(TcpStream::connect(gw.addr).await.expect("connect"));
    }
    let started = Instant::now();
    // Well within the header-read timeout: the cap per address, not the timeout, lets them in.
    let visitor = tokio::time::timeout(
        Duration::from_secs(3),
        get_from(gw.addr, IpAddr::from([127, 0, 0, 2]), "/healthz"),
    )
    .await;
    let answer = visitor.unwrap_or_else(|_| panic!("a new visitor was not answered:\n{}", gw.output()));
    assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok"), "{answer}");

    // The sockets past the address's share were told why and closed at once.
    let last = until_closed(&mut idle[1099], Duration::from_secs(2)).await.expect("the 1,100th was closed");
    assert!(last.starts_with("HTTP/1.1 429"), "{last}");
    assert!(last.contains("server.max_connections_per_address"), "the sentence names the setting: {last}");
    // The ones within it are closed once the header-read timeout passes.
    for tcp in &mut idle[..256] {
        let closed = until_closed(tcp, Duration::from_secs(12).saturating_sub(started.elapsed())).await;
        assert!(closed.is_some(), "an idle socket was held past the timeout ({:?})", started.elapsed());
    }
    let accept_failures = gw.output().matches("accept failed").count();
    assert!(accept_failures <= 3, "{accept_failures} accept failures logged:\n{}", gw.output());
}

#[tokio::test(flavor = "multi_thread")]
async fn out_of_descriptors_accepts_back_off_and_say_so_once_a_second() {
    let room = rlimit::increase_nofile_limit(4096).expect("the test's own open-files limit");
    assert!(room >= 1024, "the test needs 1,024 descriptors of its own, it may have {room}");
    // No cap: the descriptors run out (256 of them), as they would with many addresses.
    let config = "[server]\nheader_read_timeout_ms = 3000\nmax_connections_per_address = 0\n";
    let gw = Binary::start("backoff", config, "ulimit -n 256", "info", &[]);
    let mut idle = Vec::new();
    for _ in 0..400 {
        idle.push(TcpStream::connect(gw.addr).await.expect("connect"));
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let logged = gw.output().matches("accept failed").count();
    assert!((1..=4).contains(&logged), "{logged} lines in 2.5 s out of descriptors:\n{}", gw.output());
    // Once the idle sockets time out, the gateway accepts again within its longest pause.
    let visitor = tokio::time::timeout(
        Duration::from_secs(6),
        get_from(gw.addr, IpAddr::from([127, 0, 0, 2]), "/healthz"),
    )
    .await;
    let answer = visitor.unwrap_or_else(|_| panic!("the visitor was never answered:\n{}", gw.output()));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[cfg(target_os = "linux")]
#[test]
fn the_soft_open_files_limit_is_raised_to_the_hard_one_and_a_low_one_is_warned() {
    let (_, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE).expect("limits");
    let hard = hard.min(8192);
    assert!(hard > 1024, "the test needs a hard open-files limit above 1,024, not {hard}");
    let raised = Binary::start("nofile", "", &format!("ulimit -Sn 1024 && ulimit -Hn {hard}"), "info", &[]);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", raised.pid())).expect("/proc limits");
    let line = limits.lines().find(|l| l.starts_with("Max open files")).expect("open files line");
    let soft: u64 = line.split_whitespace().nth(3).and_then(|s| s.parse().ok()).expect("soft limit");
    assert_eq!(soft, hard, "the soft limit was not raised to the hard one: {line}");
    let low = Binary::start("nofile-low", "", "ulimit -n 1024", "info", &[]);
    let output = low.output();
    assert!(output.contains("open-files limit is 1024") && output.contains("LimitNOFILE"), "{output}");
}

/// The `GLIBC_TUNABLES` the running gateway `pid` was started with (after its own re-start). glibc
/// (2.36) ends each tunable it reads with a NUL in place, so the entries after the variable's first
/// that name a glibc tunable are the rest of its value.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tunables_of(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("/proc environ");
    let environ = String::from_utf8_lossy(&environ).into_owned();
    let mut entries = environ.split('\0').skip_while(|var| !var.starts_with("GLIBC_TUNABLES="));
    let mut value = entries.next()?.strip_prefix("GLIBC_TUNABLES=")?.to_owned();
    for rest in entries.take_while(|entry| entry.starts_with("glibc.")) {
        value = format!("{value}:{rest}");
    }
    Some(value)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_binary_runs_with_glibcs_thread_caches_off_keeping_the_operators_tunables_and_count() {
    let plain = Binary::start("tcache", "", "unset GLIBC_TUNABLES", "info", &[]);
    assert_eq!(tunables_of(plain.pid()).as_deref(), Some("glibc.malloc.tcache_count=0"));
    let theirs =
        Binary::start("tcache-theirs", "", "", "info", &[("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")]);
    let expected = "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0";
    assert_eq!(tunables_of(theirs.pid()).as_deref(), Some(expected), "{}", theirs.output());
    let count =
        Binary::start("tcache-count", "", "", "info", &[("GLIBC_TUNABLES", "glibc.malloc.tcache_count=7")]);
    assert_eq!(
        tunables_of(count.pid()).as_deref(),
        Some("glibc.malloc.tcache_count=7"),
        "the operator's own"
    );
    assert!(!plain.output().contains("cannot re-start"), "{}", plain.output());
    // Re-started under its own name, which `ps`, `pgrep` and `pkill` go by (not `exe`).
    let name = std::fs::read_to_string(format!("/proc/{}/comm", plain.pid())).expect("its name");
    assert_eq!(name.trim_end(), "flint-gateway");
}
