//! The Responses provider over HTTP streaming vs its WebSocket mode, side by side in one run.
//!
//! `cargo run --release -p flint-gateway --no-default-features --example responses_bench -- --out bench/responses.md [--rounds 10] [--setup-delay-ms 40]`
//!
//! Starts the scripted upstream (its `/v1/responses` waits `--setup-delay-ms` before each HTTP
//! request and each WebSocket handshake, as a TLS and auth round trip to a remote API would) and
//! a gateway with two Responses providers on it, one per transport. Each round runs a 5-turn
//! thread (each turn carries the conversation so far and the previous answer) on each transport,
//! in alternating order, each thread from a new tab (so the WebSocket mode pays its handshake in
//! turn 1). Writes per-turn time to first token, thread time, medians and the WS/HTTP ratio.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use flint_gateway::config::{Config, ModelConfig, ProviderConfig, ResponsesConfig, ResponsesTransport};
use flint_gateway::{AppState, app, serve};
use flint_protocol::{ChatMessage, ClientMessage, GenParams, Role, ServerMessage, StartRequest};
use flint_scripted_upstream::{Options, ScriptedUpstream, fixtures_dir};
use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const COMMAND: &str = "cargo xtask bench responses";
/// The answer every turn gets: the `counter` fixture (about 560 tokens), fast enough that the
/// thread's time is mostly the round trips being compared.
const MODEL: &str = "counter@20000";
const TURNS: usize = 5;
const TRANSPORTS: [(&str, ResponsesTransport); 2] =
    [("http", ResponsesTransport::Http), ("ws", ResponsesTransport::Websocket)];

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

struct Args {
    out: Option<PathBuf>,
    rounds: usize,
    setup_delay_ms: u64,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args { out: None, rounds: 10, setup_delay_ms: 40 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--out" => args.out = Some(value()?.into()),
            "--rounds" => args.rounds = value()?.parse()?,
            "--setup-delay-ms" => args.setup_delay_ms = value()?.parse()?,
            other => bail!(
                "unknown argument {other}; usage: responses_bench [--out FILE] [--rounds N] [--setup-delay-ms MS]"
            ),
        }
    }
    Ok(args)
}

/// One turn as the tab saw it.
#[derive(Debug, Clone, Copy)]
struct Turn {
    ttft: Duration,
    total: Duration,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let options = Options::new(fixtures_dir()).setup_delay(Duration::from_millis(args.setup_delay_ms));
    let upstream = ScriptedUpstream::start(options).await?;
    let providers = TRANSPORTS.iter().map(|(name, transport)| {
        ProviderConfig::Responses(ResponsesConfig {
            name: (*name).into(),
            base_url: upstream.base_url(),
            api_key_env: None,
            // A key, so the gateway scrubs every delta for it as it does for a real provider.
            api_key: Some("sk-bench-0123456789abcdefghijklmnopqrstuv".into()),
            models: vec![ModelConfig {
                id: MODEL.into(),
                label: None,
                context_window: Some(128_000),
                tokenizer: None,
                reasoning: Some(false),
                vision: None,
                price: None,
            }],
            transport: *transport,
            max_concurrent: None,
            allow_user_keys: false,
            stall_timeout_secs: None,
            reasoning_summary: None,
            websocket_max_age: None,
        })
    });
    let config = Config { providers: providers.collect(), ..Config::default() };
    let state = AppState::from_config(&config, &|_| None);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let shutdown = state.shutdown().clone();
    let server =
        tokio::spawn(serve::serve(listener, app(state), serve::DEFAULT_HEADER_READ_TIMEOUT, shutdown));

    // One warm-up thread each: the first connections and the fixture's cache.
    for (name, _) in TRANSPORTS {
        thread(addr, name).await?;
    }
    upstream.reset();
    let mut results: [Vec<Vec<Turn>>; 2] = [Vec::new(), Vec::new()];
    for round in 0..args.rounds {
        eprintln!("round {} of {}…", round + 1, args.rounds);
        // Alternate which goes first, so drift in the machine's load falls on both.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for at in order {
            results[at].push(thread(addr, TRANSPORTS[at].0).await?);
        }
    }
    let items = input_items(&upstream);
    upstream.stop().await.ok();
    server.abort();

    let report = report(&args, &results, &items);
    print!("{report}");
    if let Some(out) = &args.out {
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(out, &report).with_context(|| format!("writing {}", out.display()))?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}

/// A 5-turn thread from a new tab, on provider `provider`.
async fn thread(addr: std::net::SocketAddr, provider: &str) -> anyhow::Result<Vec<Turn>> {
    let mut request = format!("ws://{addr}/ws").into_client_request()?;
    request.headers_mut().insert("origin", format!("http://{addr}").parse()?);
    // No Nagle, as a browser's WebSocket: a large frame would otherwise wait on a delayed ACK.
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(request, None, true).await?;
    next_frame(&mut ws).await?; // Hello
    let mut messages = vec![
        ChatMessage::new(Role::System, flint_protocol::prompt::SYSTEM_PROMPT),
        ChatMessage::new(Role::User, "Make a counter page."),
    ];
    let mut turns = Vec::with_capacity(TURNS);
    for stream in 1..=TURNS as u32 {
        let (turn, answer) = ask(&mut ws, stream, provider, &messages).await?;
        turns.push(turn);
        messages.push(ChatMessage::new(Role::Assistant, answer));
        messages
            .push(ChatMessage::new(Role::User, format!("Change number {stream}: make it a little bolder.")));
    }
    let _ = ws.close(None).await;
    Ok(turns)
}

async fn next_frame(ws: &mut Ws) -> anyhow::Result<ServerMessage> {
    loop {
        match ws.next().await.context("the gateway closed the socket")?? {
            Message::Text(text) => return Ok(serde_json::from_str(text.as_str())?),
            Message::Close(_) => bail!("the gateway closed the socket"),
            _ => {}
        }
    }
}

/// One turn: time to the first text and to `Done`, and the answer.
async fn ask(
    ws: &mut Ws,
    stream: u32,
    provider: &str,
    messages: &[ChatMessage],
) -> anyhow::Result<(Turn, String)> {
    let start = StartRequest {
        stream,
        model: format!("{provider}/{MODEL}"),
        messages: messages.to_vec(),
        params: GenParams::default(),
    };
    let json = serde_json::to_string(&ClientMessage::Start(start))?;
    let t0 = Instant::now();
    ws.send(Message::text(json)).await?;
    let (mut ttft, mut answer) = (None, String::new());
    loop {
        match next_frame(ws).await? {
            ServerMessage::Delta { text, .. } => {
                ttft.get_or_insert_with(|| t0.elapsed());
                answer.push_str(&text);
            }
            ServerMessage::Done { .. } => {
                let ttft = ttft.context("an answer without text")?;
                return Ok((Turn { ttft, total: t0.elapsed() }, answer));
            }
            ServerMessage::Error { message, .. } => bail!("{provider}: {message}"),
            _ => {}
        }
    }
}

/// Mean input items sent per turn, by transport: what each request carried upstream. Every
/// thread makes exactly one request per turn, in order, so a request's turn is its place.
fn input_items(upstream: &ScriptedUpstream) -> [[f64; TURNS]; 2] {
    let mut sums = [[0usize; TURNS]; 2];
    let mut seen = [0usize; 2];
    for record in upstream.requests() {
        let Some(r) = &record.responses else { continue };
        let at = usize::from(r.transport == "websocket");
        sums[at][seen[at] % TURNS] += r.input_items;
        seen[at] += 1;
    }
    let mut means = [[0.0; TURNS]; 2];
    for (at, turns) in sums.iter().enumerate() {
        let threads = (seen[at] / TURNS).max(1) as f64;
        means[at] = turns.map(|sum| sum as f64 / threads);
    }
    means
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    // The machines are shared: the load at the end of the run says how noisy the numbers may be.
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    format!("{cores} cores (nproc); load average {load} at the end of the run")
}

fn report(args: &Args, results: &[Vec<Vec<Turn>>; 2], items: &[[f64; TURNS]; 2]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Responses API: HTTP streaming vs WebSocket mode\n");
    let _ = writeln!(out, "- Machine: {}", machine());
    let _ = writeln!(out, "- Date: {}", httpdate::fmt_http_date(SystemTime::now()));
    let _ = writeln!(
        out,
        "- Command: `{COMMAND}` (`cargo run --release -p flint-gateway --no-default-features --example responses_bench -- --out bench/responses.md`)"
    );
    let _ = writeln!(
        out,
        "- Setup: the scripted Responses upstream (`tests/upstream`, `/v1/responses`) waiting {} ms before each \
         HTTP request and each WebSocket handshake (a TLS and auth round trip to a remote API; no cost per \
         input token), the gateway with one Responses provider per transport, and the tabs, all in one process \
         on loopback. {} rounds; each runs a {TURNS}-turn thread per transport, in alternating order, each \
         thread from a new tab. Every answer is the `counter` fixture (~560 tokens at 20,000 tok/s).\n",
        args.setup_delay_ms, args.rounds
    );
    let _ = writeln!(out, "## Time to first token per turn (ms, median)\n");
    let _ = writeln!(out, "| turn | HTTP | WebSocket | WS/HTTP | input items sent (HTTP / WS) |");
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|");
    for turn in 0..TURNS {
        let mut per =
            results.iter().map(|threads| threads.iter().map(|t| ms(t[turn].ttft)).collect::<Vec<_>>());
        let (mut http, mut ws) = (per.next().unwrap_or_default(), per.next().unwrap_or_default());
        let (http, ws) = (median(&mut http), median(&mut ws));
        let _ = writeln!(
            out,
            "| {} | {http:.1} | {ws:.1} | {:.2} | {:.0} / {:.0} |",
            turn + 1,
            ws / http,
            items[0][turn],
            items[1][turn]
        );
    }
    let _ = writeln!(out, "\n## Whole thread ({TURNS} turns, ms)\n");
    let _ = writeln!(out, "| transport | median | min | max |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    let mut medians = [0.0; 2];
    for (at, (name, _)) in TRANSPORTS.iter().enumerate() {
        let mut totals: Vec<f64> =
            results[at].iter().map(|t| t.iter().map(|turn| ms(turn.total)).sum::<f64>()).collect();
        let med = median(&mut totals);
        medians[at] = med;
        let label = if *name == "ws" { "WebSocket" } else { "HTTP" };
        let (min, max) =
            (totals.first().copied().unwrap_or(f64::NAN), totals.last().copied().unwrap_or(f64::NAN));
        let _ = writeln!(out, "| {label} | {med:.1} | {min:.1} | {max:.1} |");
    }
    let _ = writeln!(out, "\nWS/HTTP, whole thread: **{:.2}**\n", medians[1] / medians[0]);
    let _ = writeln!(
        out,
        "Turn 1 pays the setup on both transports (the WebSocket's handshake, the HTTP request's own); later \
         turns pay it again over HTTP only, and send the whole conversation, where the WebSocket mode sends \
         `previous_response_id` and the one new message. With a real API the per-request cost also grows with \
         the context resent over HTTP, which this setup leaves out."
    );
    out
}
