//! The gateway's cost, measured against reading the same upstream directly, in one run.
//!
//! `cargo run --release -p flint-gateway --example bench -- --out bench/gateway.md [--runs 30]`
//!
//! Starts the scripted upstream and the gateway in this process (port 0), then for 1k, 10k and 50k
//! tokens/s: time to first token reading the upstream's SSE directly (reqwest) vs through the
//! gateway's WebSocket, interleaved run by run; and for a 5,000-token stream the per-token overhead
//! `(gateway duration − direct duration) / tokens` and the delta frames per second the client got.
//! Writes a markdown table (machine, date, command) to `--out`, and prints it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use flint_gateway::config::{Config, ModelConfig, OpenAiConfig, ProviderConfig};
use flint_gateway::providers::sse::SseParser;
use flint_gateway::{AppState, app, serve};
use flint_protocol::{ChatMessage, ClientMessage, GenParams, Role, ServerMessage, StartRequest};
use flint_scripted_upstream::{Options, ScriptedUpstream, fixtures_dir};
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

mod report;

use report::{Row, report};

const RATES: [u32; 3] = [1_000, 10_000, 50_000];
/// How this report was produced (the embedded model plays no part, so it may be left out).
const COMMAND: &str = if cfg!(feature = "local") {
    "cargo run --release -p flint-gateway --example bench -- --out bench/gateway.md"
} else {
    "cargo run --release -p flint-gateway --no-default-features --example bench -- --out bench/gateway.md"
};
/// Tokens per time-to-first-token run: enough to finish the stream and keep connections reusable.
const TTFT_TOKENS: u32 = 16;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One measured stream.
#[derive(Debug, Clone, Copy)]
struct Run {
    ttft: Duration,
    total: Duration,
    tokens: u32,
    frames: u32,
    /// CPU time the whole process (upstream, gateway, client) spent during the run.
    cpu: Duration,
}

/// CPU time of all this process's threads so far, in nanoseconds precision (`/proc/self/task/*/schedstat`).
fn process_cpu() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Duration::ZERO };
    let nanos: u64 = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(nanos)
}

struct Args {
    out: Option<PathBuf>,
    runs: usize,
    tokens: u32,
    long_runs: usize,
    /// A daily token quota for the bench's person (`--quota N`): each stream then reserves and
    /// settles its share in the store, the cost a hosted gateway pays. `None`: no quota.
    quota: Option<u64>,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args { out: None, runs: 30, tokens: 5_000, long_runs: 5, quota: None };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--out" => args.out = Some(value()?.into()),
            "--runs" => args.runs = value()?.parse()?,
            "--tokens" => args.tokens = value()?.parse()?,
            "--long-runs" => args.long_runs = value()?.parse()?,
            "--quota" => args.quota = Some(value()?.parse()?),
            other => bail!(
                "unknown argument {other}; usage: bench [--out FILE] [--runs N] [--tokens N] [--long-runs N] \
                 [--quota TOKENS]"
            ),
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let upstream = ScriptedUpstream::start(Options::new(fixtures_dir())).await?;
    let base = upstream.base_url();
    let models = RATES.iter().map(|r| ModelConfig {
        id: format!("large@{r}"),
        label: None,
        context_window: Some(128_000),
        tokenizer: None,
        reasoning: None,
        vision: None,
        price: None,
    });
    let mut config = Config {
        providers: vec![ProviderConfig::Openai(OpenAiConfig {
            name: "scripted".into(),
            base_url: base.clone(),
            api_key_env: None,
            // A key, so the gateway scrubs every delta for it as it does for a real provider.
            api_key: Some("sk-bench-0123456789abcdefghijklmnopqrstuv".into()),
            api_key_optional: false,
            models: models.collect(),
            max_tokens_field: Default::default(),
            max_concurrent: None,
            allow_user_keys: false,
            stall_timeout_secs: None,
        })],
        ..Config::default()
    };
    // On loopback the bench's person gets the signed-in limits: none but the quota, if asked.
    config.limits.signed_in = flint_gateway::config::PersonLimits {
        sockets: 0,
        streams: 0,
        starts_per_minute: 0,
        tokens_per_day: args.quota.unwrap_or(0),
    };
    let state = AppState::from_config(&config, &|_| None);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let shutdown = state.shutdown().clone();
    let router = app(state);
    let server = tokio::spawn(serve::serve(listener, router, serve::DEFAULT_HEADER_READ_TIMEOUT, shutdown));

    let http = reqwest::Client::builder().tcp_nodelay(true).build()?;
    // As the app's own page: the gateway refuses a socket without its origin.
    let mut request = format!("ws://{addr}/ws").into_client_request()?;
    request.headers_mut().insert("origin", format!("http://{addr}").parse()?);
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await?;
    next_frame(&mut ws).await?; // Hello
    let mut stream_id = 0u32;
    let mut rows = Vec::new();
    for rate in RATES {
        let model = format!("large@{rate}");
        eprintln!("{rate} tok/s: {} interleaved time-to-first-token runs…", args.runs);
        let (mut direct_ttft, mut gateway_ttft, mut added) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..args.runs + 3 {
            let d = direct(&http, &base, &model, TTFT_TOKENS).await?;
            stream_id += 1;
            let g = via_gateway(&mut ws, stream_id, &model, TTFT_TOKENS).await?;
            if i >= 3 {
                // The first runs warm up connections and caches.
                direct_ttft.push(ms(d.ttft));
                gateway_ttft.push(ms(g.ttft));
                added.push(ms(g.ttft) - ms(d.ttft));
            }
        }
        eprintln!("{rate} tok/s: {} × {}-token streams…", args.long_runs, args.tokens);
        let (mut direct_long, mut gateway_long) = (Vec::new(), Vec::new());
        for _ in 0..args.long_runs {
            direct_long.push(direct(&http, &base, &model, args.tokens).await?);
            stream_id += 1;
            gateway_long.push(via_gateway(&mut ws, stream_id, &model, args.tokens).await?);
        }
        rows.push(Row::new(rate, &direct_ttft, &gateway_ttft, &added, &direct_long, &gateway_long));
    }
    let _ = ws.close(None).await;
    upstream.stop().await.ok();
    server.abort();

    let report = report(&args, &rows);
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn body(model: &str, max_tokens: u32) -> serde_json::Value {
    serde_json::json!({
        "model": model,
        "messages": [{"role": "user", "content": "Make a palette page."}],
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": max_tokens,
    })
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    choices: Vec<Choice<'a>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
}

/// Reads the upstream's SSE directly, as a client without the gateway would.
async fn direct(http: &reqwest::Client, base: &str, model: &str, max_tokens: u32) -> anyhow::Result<Run> {
    let cpu = process_cpu();
    let start = Instant::now();
    let mut response = http
        .post(format!("{base}/chat/completions"))
        .json(&body(model, max_tokens))
        .send()
        .await?
        .error_for_status()?;
    let mut parser = SseParser::new();
    let (mut first, mut tokens, mut events, mut done) = (None, 0u32, 0u32, false);
    while let Some(bytes) = response.chunk().await? {
        parser.feed(&bytes, |event| {
            events += 1;
            if event.data == "[DONE]" {
                done = true;
            } else if let Ok(chunk) = serde_json::from_str::<Chunk<'_>>(event.data)
                && chunk
                    .choices
                    .first()
                    .and_then(|c| c.delta.as_ref()?.content.as_ref())
                    .is_some_and(|c| !c.is_empty())
            {
                tokens += 1;
                first.get_or_insert_with(Instant::now);
            }
        })?;
        if done {
            break;
        }
    }
    let first = first.context("the direct stream had no text")?;
    Ok(Run { ttft: first - start, total: start.elapsed(), tokens, frames: events, cpu: process_cpu() - cpu })
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

/// Streams through the gateway's WebSocket, as the app does.
async fn via_gateway(ws: &mut Ws, stream: u32, model: &str, max_tokens: u32) -> anyhow::Result<Run> {
    let start = StartRequest {
        stream,
        model: format!("scripted/{model}"),
        messages: vec![ChatMessage::new(Role::User, "Make a palette page.")],
        params: GenParams { max_tokens: Some(max_tokens), ..GenParams::default() },
    };
    let json = serde_json::to_string(&ClientMessage::Start(start))?;
    let cpu = process_cpu();
    let t0 = Instant::now();
    ws.send(Message::Text(json.into())).await?;
    let (mut first, mut frames) = (None, 0u32);
    loop {
        match next_frame(ws).await? {
            ServerMessage::Delta { .. } => {
                frames += 1;
                first.get_or_insert_with(Instant::now);
            }
            ServerMessage::Done { usage, .. } => {
                let first = first.context("the gateway stream had no text")?;
                let (total, cpu) = (t0.elapsed(), process_cpu() - cpu);
                return Ok(Run { ttft: first - t0, total, tokens: usage.completion_tokens, frames, cpu });
            }
            ServerMessage::Error { message, .. } => bail!("gateway error: {message}"),
            _ => {}
        }
    }
}
