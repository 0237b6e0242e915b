//! Resume on any gateway (issue 30): two gateways on one PostgreSQL store, and a proxy that cuts
//! the page's socket and reconnects it to the other gateway, as a load balancer would. The answer
//! arrives whole, also while the gateway holding it drains; the peer route admits nobody without
//! the shared secret.

mod common;
mod pg;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Client, Outcome, scripted_provider};
use flint_gateway::config::{Config, ProviderConfig};
use flint_gateway::{AppState, app, peer_app, serve};
use flint_protocol::{ClientMessage, ResumeRequest, ResumeStream, Secret, ServerMessage};
use flint_scripted_upstream::{Options, ScriptedUpstream, fixtures_dir};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_util::sync::CancellationToken;

const SECRET: &str = "peer-secret-for-tests-0123456789";
/// About 600 tokens at 300 a second: two seconds, time enough to cut the socket midway.
const MODEL: &str = "counter@300";

/// One gateway: its public listener (closed by a drain) and its peer listener (not).
struct Node {
    addr: SocketAddr,
    peer: SocketAddr,
    state: AppState,
    /// Cancel to drain, as SIGTERM does: the public listener closes, open sockets go on.
    stop_accepting: CancellationToken,
    _servers: Vec<JoinHandle<std::io::Result<()>>>,
    _upstream: ScriptedUpstream,
}

impl Drop for Node {
    fn drop(&mut self) {
        self.state.shutdown().cancel();
    }
}

async fn node(url: &str) -> Node {
    node_with(url, |_| {}).await
}

async fn node_with(url: &str, configure: impl FnOnce(&mut Config)) -> Node {
    let upstream = ScriptedUpstream::start(Options::new(fixtures_dir())).await.expect("upstream starts");
    let mut provider = scripted_provider(upstream.base_url());
    if let ProviderConfig::Openai(openai) = &mut provider {
        let mut slow = openai.models[0].clone();
        slow.id = MODEL.into();
        openai.models.push(slow);
    }
    let public = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let peers = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let (addr, peer) = (public.local_addr().expect("addr"), peers.local_addr().expect("addr"));
    let mut config = Config { providers: vec![provider], ..Config::default() };
    config.store.url = Some(url.to_owned());
    config.server.listen = addr;
    config.server.peer_address = Some(format!("ws://{peer}"));
    config.server.peer_listen = Some(peer);
    config.server.peer_secret = Some(SECRET.into());
    configure(&mut config);
    let state = AppState::from_config(&config, &common::env);
    let stop_accepting = CancellationToken::new();
    let timeout = Duration::from_secs(10);
    let shutdown = state.shutdown().clone();
    let servers = vec![
        tokio::spawn(serve::serve_draining(
            public,
            app(state.clone()),
            timeout,
            stop_accepting.clone(),
            shutdown.clone(),
        )),
        tokio::spawn(serve::serve(peers, peer_app(state.clone()), timeout, shutdown)),
    ];
    Node { addr, peer, state, stop_accepting, _servers: servers, _upstream: upstream }
}

/// A load balancer in miniature: forwards each connection to the current target; [`Self::cut`]
/// breaks every open one (no WebSocket goodbye: a dropped network) and sends the next elsewhere.
struct CutProxy {
    addr: SocketAddr,
    target: Arc<Mutex<SocketAddr>>,
    open: Arc<Mutex<Vec<JoinHandle<()>>>>,
    _accept: JoinHandle<()>,
}

impl CutProxy {
    async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let addr = listener.local_addr().expect("addr");
        let target = Arc::new(Mutex::new(target));
        let open = Arc::new(Mutex::new(Vec::new()));
        let (to, conns) = (Arc::clone(&target), Arc::clone(&open));
        let accept = tokio::spawn(async move {
            while let Ok((mut page, _)) = listener.accept().await {
                let to = *to.lock().expect("lock");
                let pipe = tokio::spawn(async move {
                    if let Ok(mut gateway) = TcpStream::connect(to).await {
                        let _ = tokio::io::copy_bidirectional(&mut page, &mut gateway).await;
                    }
                });
                conns.lock().expect("lock").push(pipe);
            }
        });
        Self { addr, target, open, _accept: accept }
    }

    fn cut(&self, next: SocketAddr) {
        *self.target.lock().expect("lock") = next;
        for pipe in self.open.lock().expect("lock").drain(..) {
            pipe.abort();
        }
    }
}

fn token_of(hello: &str) -> Secret {
    match serde_json::from_str(hello).expect("Hello parses") {
        ServerMessage::Hello { resume: Some(token), .. } => token,
        other => panic!("expected a Hello with a resume token: {other:?}"),
    }
}

/// Starts `MODEL` through the proxy (to the first gateway), reads part of the answer, cuts the
/// socket and sends the rest to `second`; `between` runs after the cut. The text read before the
/// cut, the last seq and the outcome after the resume, and the frames that were no stream's.
async fn cut_midway(
    proxy: &CutProxy,
    second: SocketAddr,
    between: impl AsyncFnOnce(),
) -> (String, u32, Outcome, Vec<ServerMessage>) {
    let mut page = Client::connect(proxy.addr).await;
    let token = token_of(&page.raw[0]);
    page.start(1, MODEL).await;
    let (mut before, mut last) = (String::new(), None);
    while last.is_none_or(|seq| seq < 40) {
        match page.next().await {
            ServerMessage::Delta { text, seq, .. } => {
                before.push_str(&text);
                last = Some(seq);
            }
            ServerMessage::Started { .. } => {}
            other => panic!("the answer ended before the cut: {other:?}"),
        }
    }
    let last = last.expect("a delta");
    proxy.cut(second);
    drop(page);
    between().await;
    let mut page = Client::connect(proxy.addr).await;
    let asked = ResumeStream { stream: 1, last_seq: Some(last) };
    page.send(&ClientMessage::Resume(ResumeRequest { token, streams: vec![asked] })).await;
    let (mut done, others) = page.collect(&[1]).await;
    (before, last, done.remove(0).1, others)
}

/// The whole answer, straight from a gateway.
async fn whole(addr: SocketAddr) -> String {
    let mut page = Client::connect(addr).await;
    page.run(7, MODEL).await.text
}

fn assert_whole(before: &str, last: u32, after: &Outcome, expected: &str) {
    assert!(matches!(after.end, ServerMessage::Done { .. }), "the answer did not finish: {:?}", after.end);
    let first = after.seqs.first().copied().expect("frames after the resume");
    assert_eq!(first, last + 1, "a frame was missed or repeated at the resume");
    assert!(after.seqs.windows(2).all(|w| w[1] == w[0] + 1), "a gap or repeat after the resume");
    assert_eq!(format!("{before}{}", after.text), expected, "the answer is not whole");
}

#[tokio::test]
async fn a_cut_socket_resumes_on_the_other_gateway_with_the_answer_whole() {
    let cluster = pg::Cluster::shared();
    let url = cluster.fresh_database();
    let (a, b) = (node(&url).await, node(&url).await);
    let expected = whole(a.addr).await;
    let proxy = CutProxy::start(a.addr).await;
    let (before, last, after, others) = cut_midway(&proxy, b.addr, async || {}).await;
    assert_whole(&before, last, &after, &expected);
    // The owner greeted the relayed socket: the page now holds a token the owner keeps.
    assert!(others.iter().any(|m| matches!(m, ServerMessage::Hello { .. })), "no relayed Hello: {others:?}");
    assert_eq!(b.state.metrics().streams_running(), 0, "the other gateway ran nothing itself");
}

/// Two gateways on one machine sharing the SQLite file instead of PostgreSQL.
#[tokio::test]
async fn gateways_sharing_a_sqlite_file_resume_each_others_tabs() {
    let dir = std::env::temp_dir().join(format!("flint-resume-any-{}", std::process::id()));
    let file = dir.join("shares.sqlite3");
    let on_file = |c: &mut Config| {
        c.store.url = None;
        c.share.database = file.clone();
        c.auth.database = dir.join("auth.sqlite3");
    };
    let (a, b) = (node_with("", on_file).await, node_with("", on_file).await);
    let expected = whole(a.addr).await;
    let proxy = CutProxy::start(a.addr).await;
    let (before, last, after, _) = cut_midway(&proxy, b.addr, async || {}).await;
    assert_whole(&before, last, &after, &expected);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_answer_completes_while_its_gateway_drains() {
    let cluster = pg::Cluster::shared();
    let url = cluster.fresh_database();
    let (a, b) = (node(&url).await, node(&url).await);
    let expected = whole(b.addr).await;
    let proxy = CutProxy::start(a.addr).await;
    let drain = async || {
        a.stop_accepting.cancel();
        // Draining: the public listener is closed, so only the peer route can reach the answer.
        for _ in 0..50 {
            if TcpStream::connect(a.addr).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the draining gateway still accepts on its public address");
    };
    let (before, last, after, _) = cut_midway(&proxy, b.addr, drain).await;
    assert_whole(&before, last, &after, &expected);
}

#[tokio::test]
async fn the_peer_route_refuses_a_socket_without_the_secret() {
    let cluster = pg::Cluster::shared();
    let a = node(&cluster.fresh_database()).await;
    let open = |secret: Option<&str>| {
        let mut request =
            format!("ws://{}/peer/ws?protocol=1", a.peer).into_client_request().expect("request");
        request.headers_mut().insert("x-flint-peer-person", "address:127.0.0.1".parse().expect("header"));
        if let Some(secret) = secret {
            request.headers_mut().insert("x-flint-peer-secret", secret.parse().expect("header"));
        }
        tokio_tungstenite::connect_async(request)
    };
    for secret in [None, Some("wrong"), Some("")] {
        let refused = open(secret).await.expect_err("a socket without the secret was accepted");
        assert!(refused.to_string().contains("403"), "{refused}");
    }
    // The public listener serves the route too, behind the same secret.
    let mut request = format!("ws://{}/peer/ws?protocol=1", a.addr).into_client_request().expect("request");
    request.headers_mut().insert("x-flint-peer-person", "address:127.0.0.1".parse().expect("header"));
    assert!(tokio_tungstenite::connect_async(request).await.is_err(), "the public address let a peer in");
    // Checked against the right secret, so the refusals above are the secret's doing.
    assert!(open(Some(SECRET)).await.is_ok(), "the right secret was refused");
}

/// A relayed `Resume` is checked at the owner against the person the relaying gateway named: a
/// token that leaked to someone else resumes nothing there either.
#[tokio::test]
async fn a_relayed_token_resumes_nothing_for_another_person() {
    let cluster = pg::Cluster::shared();
    let a = node(&cluster.fresh_database()).await;
    let mut page = Client::connect(a.addr).await;
    let token = token_of(&page.raw[0]);
    page.start(1, MODEL).await;
    let _ = page.next().await;
    let mut request = format!("ws://{}/peer/ws?protocol=1", a.peer).into_client_request().expect("request");
    request.headers_mut().insert("x-flint-peer-person", "address:127.0.0.9".parse().expect("header"));
    request.headers_mut().insert("x-flint-peer-secret", SECRET.parse().expect("header"));
    let (ws, _) = tokio_tungstenite::connect_async(request).await.expect("the secret admits");
    let mut other = Client::from_socket(ws);
    let _hello = other.next().await;
    let asked = ResumeStream { stream: 1, last_seq: None };
    other.send(&ClientMessage::Resume(ResumeRequest { token, streams: vec![asked] })).await;
    match other.next().await {
        ServerMessage::Error { code: flint_protocol::ErrorCode::ResumeExpired, .. } => {}
        frame => panic!("another person resumed the tab: {frame:?}"),
    }
    // The owner's page still has its answer.
    let (done, _) = page.collect(&[1]).await;
    assert!(matches!(done[0].1.end, ServerMessage::Done { .. }));
}

/// The store names the gateway holding a tab only while the tab can be resumed: once the grace
/// period is over, nothing points anywhere.
#[tokio::test]
async fn the_store_forgets_a_tab_when_its_grace_period_ends() {
    use sha2::{Digest, Sha256};
    let cluster = pg::Cluster::shared();
    let url = cluster.fresh_database();
    let a = node_with(&url, |c| c.server.resume_grace_secs = 1).await;
    let page = Client::connect(a.addr).await;
    let token = token_of(&page.raw[0]);
    let hash: String = Sha256::digest(token.expose().as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs();
    let owner = || async { a.state.store().resume_owner(&hash, i64::try_from(now()).expect("time")).await };
    let mut found = None;
    for _ in 0..50 {
        found = owner().await.expect("store answers");
        if found.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(found, Some(format!("ws://{}", a.peer)), "the tab was not recorded");
    drop(page);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(owner().await.expect("store answers"), None, "the entry outlived the grace period");
}

/// The process's CPU time so far (user + system), from `/proc/self/stat` (Linux only).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("proc stat");
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let after = &stat[stat.rfind(')').expect("stat shape") + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    ticks / 100.0
}

/// What a relayed resume costs per token against a resume on the gateway that holds the tab:
/// `cargo test -p flint-gateway --no-default-features --test resume_any -- --ignored --nocapture`.
/// The same cut-and-resume each time (the whole answer after the resume), back to the owner or
/// to the other gateway; both gateways run in this process, so the difference is the relay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run by hand"]
async fn relay_cost_per_token() {
    const FAST: &str = "large@100000";
    const RUNS: usize = 20;
    let cluster = pg::Cluster::shared();
    let url = cluster.fresh_database();
    let fast = |c: &mut Config| {
        if let ProviderConfig::Openai(openai) = &mut c.providers[0] {
            let mut model = openai.models[0].clone();
            model.id = FAST.into();
            openai.models.push(model);
        }
        c.limits.anonymous = flint_gateway::config::PersonLimits {
            sockets: 1000,
            streams: 1000,
            starts_per_minute: 10_000,
            tokens_per_day: 0,
        };
    };
    let (a, b) = (node_with(&url, fast).await, node_with(&url, fast).await);
    let mut bytes = 0;
    let rounds = [("same gateway", a.addr), ("relayed", b.addr)].repeat(3);
    for (label, to) in rounds {
        let started = cpu_seconds();
        let clock = std::time::Instant::now();
        for _ in 0..RUNS {
            let mut page = Client::connect(a.addr).await;
            let token = token_of(&page.raw[0]);
            page.start(1, FAST).await;
            // The answer runs before the cut, so both resumes replay and relay the same frames.
            while !matches!(page.next().await, ServerMessage::Started { .. }) {}
            drop(page);
            let mut page = Client::connect(to).await;
            let asked = ResumeStream { stream: 1, last_seq: None };
            page.send(&ClientMessage::Resume(ResumeRequest { token, streams: vec![asked] })).await;
            let (done, _) = page.collect(&[1]).await;
            assert!(matches!(done[0].1.end, ServerMessage::Done { .. }), "{:?}", done[0].1.end);
            bytes = done[0].1.text.len();
            // A goodbye: the tab is let go at once instead of waiting out its grace period.
            page.leave().await;
        }
        let cpu = cpu_seconds() - started;
        // About four bytes a token in this English-and-HTML fixture.
        let tokens = (bytes * RUNS) as f64 / 4.0;
        println!(
            "{label}: {RUNS} answers of {bytes} bytes, {cpu:.2} CPU s ({:.2} CPU s per million tokens), {:.2} s",
            cpu / tokens * 1e6,
            clock.elapsed().as_secs_f64()
        );
    }
}

/// A store entry naming a gateway that is gone (it died without removing it) sends nobody into a
/// dead end: the page is told its answer cannot be resumed, as on a single gateway.
#[tokio::test]
async fn an_owner_that_cannot_be_reached_answers_resume_expired() {
    use sha2::{Digest, Sha256};
    let cluster = pg::Cluster::shared();
    let b = node(&cluster.fresh_database()).await;
    let token = Secret::new("a-token-of-a-gateway-that-died-0123456789ab".to_owned());
    let hash: String = Sha256::digest(token.expose().as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let dead = TcpListener::bind("127.0.0.1:0").await.expect("binds").local_addr().expect("addr");
    b.state.store().put_resume_owner(&hash, &format!("ws://{dead}"), 0, i64::MAX).await.expect("stored");
    let mut page = Client::connect(b.addr).await;
    let asked = ResumeStream { stream: 1, last_seq: Some(3) };
    page.send(&ClientMessage::Resume(ResumeRequest { token, streams: vec![asked] })).await;
    match page.next().await {
        ServerMessage::Error { stream: Some(1), code: flint_protocol::ErrorCode::ResumeExpired, .. } => {}
        frame => panic!("expected resume_expired: {frame:?}"),
    }
}
