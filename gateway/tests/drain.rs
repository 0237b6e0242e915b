//! Operations, on the real binary. Graceful drain: SIGTERM stops new connections at once, lets a
//! running stream finish within `server.drain_secs`, then exits; a stream longer than the drain is
//! cut when it ends, and the process still exits. Logs: `FLINT_LOG_FORMAT=json` makes them JSON
//! lines.

mod common;

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Client, KEY, fixture};
use flint_protocol::{FinishReason, ServerMessage};
use flint_scripted_upstream::{Options, ScriptedUpstream, fixtures_dir};

struct Running {
    child: Child,
    addr: SocketAddr,
    _upstream: ScriptedUpstream,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The gateway binary on a free port in front of a fresh scripted upstream, `drain_secs` set.
async fn start(drain_secs: u64, model: &str) -> Running {
    start_logging(drain_secs, model, &[]).await.0
}

/// Like [`start`], with `env` set, and the lines it logged until it served.
async fn start_logging(drain_secs: u64, model: &str, env: &[(&str, &str)]) -> (Running, Vec<String>) {
    let upstream = ScriptedUpstream::start(Options::new(fixtures_dir())).await.expect("upstream starts");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = std::env::temp_dir().join(format!("flint-drain-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("flint.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\ndrain_secs = {drain_secs}\ndist = \"{dist}\"\n\n\
             [share]\nenabled = false\n\n\
             [[providers]]\nkind = \"openai\"\nname = \"scripted\"\nbase_url = \"{base}\"\napi_key = \"{KEY}\"\n\
             models = [{{ id = \"{model}\", context_window = 8192 }}]\n",
            dist = dir.display(),
            base = upstream.base_url(),
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_flint-gateway"))
        .args(["--config", &config.display().to_string()])
        .env_remove("FLINT_OPENAI_BASE_URL")
        .env_remove("FLINT_LOG_FORMAT")
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the gateway binary runs");
    let (lines, logged) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        assert!(Instant::now() < deadline, "the gateway did not start listening");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The port may accept before the line saying so is read: wait for it.
    let mut printed = Vec::new();
    while let Ok(line) = logged.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let serving = line.contains("Flint is serving");
        printed.push(line);
        if serving {
            break;
        }
    }
    (Running { child, addr, _upstream: upstream }, printed)
}

fn terminate(child: &Child) {
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
}

/// Waits up to `limit` for the process to exit; its status.
async fn exit_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(Instant::now() < deadline, "the gateway did not exit within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads until the first text of stream 1.
async fn first_text(client: &mut Client) {
    loop {
        match client.next().await {
            ServerMessage::Delta { .. } => return,
            ServerMessage::Error { message, .. } => panic!("the stream failed: {message}"),
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_running_stream_finishes_while_new_connections_are_refused() {
    // counter at 300 tokens/s: about 2 s of answer, inside a 20 s drain.
    let mut gw = start(20, "counter@300").await;
    let mut client = Client::connect(gw.addr).await;
    client.patience = Duration::from_secs(20);
    client.start(1, "counter@300").await;
    first_text(&mut client).await;
    let signalled = Instant::now();
    terminate(&gw.child);

    // The listener closes at once: a load balancer sends the next tab elsewhere.
    let refused = async {
        while tokio::net::TcpStream::connect(gw.addr).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(2), refused).await.expect("new connections still accepted");

    // The stream that was running ends normally, with all its text.
    let (text, end) = rest_of(&mut client).await;
    assert!(matches!(end, Some(ServerMessage::Done { finish: FinishReason::Stop, .. })), "{end:?}");
    assert!(fixture("counter").ends_with(&text), "the rest of the answer differs");
    let status = exit_within(&mut gw.child, Duration::from_secs(5)).await;
    assert!(status.success(), "{status}");
    assert!(signalled.elapsed() < Duration::from_secs(15), "the drain waited past the last stream");
}

#[tokio::test]
async fn a_stream_longer_than_the_drain_is_cut_and_the_gateway_still_exits() {
    // counter at 40 tokens/s: about 17 s of answer, past a 1 s drain.
    let mut gw = start(1, "counter@40").await;
    let mut client = Client::connect(gw.addr).await;
    client.start(1, "counter@40").await;
    first_text(&mut client).await;
    terminate(&gw.child);
    let status = exit_within(&mut gw.child, Duration::from_secs(6)).await;
    assert!(status.success(), "{status}");
    let (_, end) = rest_of(&mut client).await;
    assert!(end.is_none(), "the stream should have been cut by the socket closing, got {end:?}");
}

/// The text after what was read, and the stream's last frame (`None`: the socket closed first).
async fn rest_of(client: &mut Client) -> (String, Option<ServerMessage>) {
    let mut text = String::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(20), client.next_or_closed()).await;
        match next.expect("the stream neither ended nor closed") {
            Some(ServerMessage::Delta { text: t, .. }) => text.push_str(&t),
            Some(end @ (ServerMessage::Done { .. } | ServerMessage::Error { .. })) => {
                return (text, Some(end));
            }
            Some(_) => {}
            None => return (text, None),
        }
    }
}

#[tokio::test]
async fn logs_are_json_lines_when_asked() {
    let (_gw, lines) = start_logging(1, "counter@300", &[("FLINT_LOG_FORMAT", "json")]).await;
    let serving = lines.iter().find(|l| l.contains("Flint is serving")).expect("the serving line is logged");
    let event: serde_json::Value = serde_json::from_str(serving).expect("a JSON object per line");
    assert_eq!(event["level"], "INFO");
    assert!(
        event["fields"]["message"].as_str().is_some_and(|m| m.starts_with("Flint is serving")),
        "{event}"
    );
    assert!(event["timestamp"].is_string(), "{event}");
}
