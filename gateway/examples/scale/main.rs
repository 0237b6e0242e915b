//! The gateway at scale: thousands of tabs and streams against the real binary, memory and CPU
//! read from `/proc/<gateway pid>`.
//!
//! `cargo xtask bench scale` builds the gateway once per allocator and runs this with each; by hand:
//! `cargo run --release -p flint-gateway --no-default-features --example scale -- \
//!    --gateway system=target/release/flint-gateway [--gateway mimalloc=PATH …] [--out bench/scale.md]`
//!
//! The scripted upstream runs in this process (loopback) and streams an answer of four-byte tokens
//! at 1k tok/s per stream; the gateway is a separate process so its numbers are its own. The first
//! `--gateway` runs every point; the others run the comparison points (`--compare`), each right
//! after the first gateway's run of the same point, so each pair shares the machine's load.

mod client;
mod gateway;
mod proc;
mod report;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use flint_scripted_upstream::{Options, ScriptedUpstream, fixtures_dir};
use futures::StreamExt;

use gateway::Gateway;
use report::{IdleRow, StreamRow};

/// What to run and where to write it.
pub(crate) struct Args {
    pub(crate) gateways: Vec<(String, PathBuf)>,
    pub(crate) out: Option<PathBuf>,
    pub(crate) idle: Vec<usize>,
    pub(crate) streams: Vec<usize>,
    pub(crate) compare: Vec<usize>,
    pub(crate) tokens: u32,
    pub(crate) rate: u32,
    pub(crate) settle: Duration,
    pub(crate) command: String,
}

fn list(value: &str) -> anyhow::Result<Vec<usize>> {
    value.split(',').filter(|v| !v.is_empty()).map(|v| v.trim().parse().context("a number list")).collect()
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args {
        gateways: Vec::new(),
        out: None,
        idle: vec![1_000, 10_000],
        streams: vec![100, 1_000, 2_000],
        compare: vec![2_000],
        tokens: 3_000,
        rate: 1_000,
        settle: Duration::from_secs(60),
        command: std::env::var("FLINT_SCALE_COMMAND").unwrap_or_else(|_| "cargo xtask bench scale".into()),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--gateway" => {
                let v = value()?;
                let (label, path) = v.split_once('=').context("--gateway wants LABEL=PATH")?;
                args.gateways.push((label.into(), path.into()));
            }
            "--out" => args.out = Some(value()?.into()),
            "--idle" => args.idle = list(&value()?)?,
            "--streams" => args.streams = list(&value()?)?,
            "--compare" => args.compare = list(&value()?)?,
            "--tokens" => args.tokens = value()?.parse()?,
            "--rate" => args.rate = value()?.parse()?,
            "--settle-secs" => args.settle = Duration::from_secs(value()?.parse()?),
            other => bail!(
                "unknown argument {other}; usage: scale --gateway LABEL=PATH… [--out FILE] [--idle N,N] \
                 [--streams N,N] [--compare N,N] [--tokens N] [--rate TOK_PER_S] [--settle-secs S]"
            ),
        }
    }
    if args.gateways.is_empty() {
        bail!("name at least one gateway binary: --gateway system=target/release/flint-gateway");
    }
    Ok(args)
}

/// Opens `n` tabs, a few hundred handshakes at a time (as many tabs reconnecting would).
async fn open_many(addr: std::net::SocketAddr, n: usize) -> anyhow::Result<Vec<client::Ws>> {
    let opened: Vec<_> =
        futures::stream::iter(0..n).map(|_| client::open(addr)).buffer_unordered(256).collect().await;
    let total = opened.len();
    let sockets: Vec<_> = opened.into_iter().filter_map(Result::ok).collect();
    if sockets.len() < total {
        eprintln!("  only {} of {total} sockets opened", sockets.len());
    }
    Ok(sockets)
}

async fn idle_point(bin: &Path, upstream: &str, model: &str, n: usize) -> anyhow::Result<IdleRow> {
    let gw = Gateway::start(bin, upstream, model).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (fresh, _) = proc::memory(gw.pid());
    let sockets = open_many(gw.addr, n).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (open, peak) = proc::memory(gw.pid());
    let opened = sockets.len();
    client::close_all(sockets.into_iter().map(client::keep_reading).collect()).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (closed, _) = proc::memory(gw.pid());
    Ok(IdleRow { sockets: n, opened, fresh, open, peak, closed })
}

async fn stream_point(
    args: &Args,
    bin: &Path,
    upstream: &str,
    model: &str,
    n: usize,
) -> anyhow::Result<StreamRow> {
    let gw = Gateway::start(bin, upstream, model).await?;
    let pid = gw.pid();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (fresh, _) = proc::memory(pid);
    let fresh_split = proc::resident(pid);
    let mut sockets = open_many(gw.addr, n).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (idle, _) = proc::memory(pid);
    // Bounded: twice the answer's own duration plus 30 s, then the stragglers count as not completed.
    let answer = Duration::from_secs_f64(f64::from(args.tokens) / f64::from(args.rate));
    let deadline = Instant::now() + answer * 2 + Duration::from_secs(30);
    let (cpu0, started) = (proc::cpu(pid), Instant::now());
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let peak = Arc::clone(&peak);
        tokio::spawn(async move {
            loop {
                peak.fetch_max(proc::memory(pid).0, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let (tokens, rate) = (args.tokens, args.rate);
    let tasks: Vec<_> = sockets
        .drain(..)
        .map(|mut ws| {
            let model = model.to_owned();
            tokio::spawn(async move {
                let outcome = client::stream(&mut ws, &model, tokens, rate, deadline).await;
                (client::keep_reading(ws), outcome)
            })
        })
        .collect();
    let (mut tabs, mut outcomes) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for task in tasks {
        let (tab, outcome) = task.await?;
        tabs.push(tab);
        outcomes.push(outcome);
    }
    let elapsed = started.elapsed();
    let cpu = proc::cpu(pid) - cpu0;
    sampler.abort();
    let (_, hwm) = proc::memory(pid);
    let sampled = peak.load(Ordering::Relaxed).max(proc::memory(pid).0);
    eprintln!("  load done in {:.1} s; tabs stay open {} s…", elapsed.as_secs_f64(), args.settle.as_secs());
    tokio::time::sleep(args.settle).await;
    let (settled, _) = proc::memory(pid);
    client::close_all(tabs).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (closed, _) = proc::memory(pid);
    tokio::time::sleep(args.settle.saturating_sub(Duration::from_secs(5))).await;
    let (left, _) = proc::memory(pid);
    let left_split = proc::resident(pid);
    let memory =
        report::Memory { fresh, fresh_split, idle, peak: sampled, hwm, settled, closed, left, left_split };
    Ok(StreamRow::new(n, outcomes, memory, cpu, elapsed))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let model = format!("scale@{}", args.rate);
    let text = client::answer_text(args.tokens);
    let upstream = ScriptedUpstream::start(Options::new(fixtures_dir()).inline("scale", text)).await?;
    let base = upstream.base_url();
    let load_before = proc::load();
    let (mut idle_rows, mut stream_rows) = (Vec::new(), Vec::new());
    if let Some((label, bin)) = args.gateways.first() {
        for &n in &args.idle {
            eprintln!("{label}: {n} idle sockets…");
            idle_rows.push((label.clone(), idle_point(bin, &base, &model, n).await?));
        }
    }
    let mut points = args.streams.clone();
    points.extend(args.compare.iter().filter(|n| !args.streams.contains(n)));
    for n in points {
        for (i, (label, bin)) in args.gateways.iter().enumerate() {
            let runs = if i == 0 { args.streams.contains(&n) } else { args.compare.contains(&n) };
            if !runs {
                continue;
            }
            eprintln!("{label}: {n} concurrent streams of {} tokens at {} tok/s…", args.tokens, args.rate);
            stream_rows.push((label.clone(), stream_point(&args, bin, &base, &model, n).await?));
        }
    }
    upstream.stop().await.ok();
    let text = report::render(&args, &load_before, &idle_rows, &stream_rows);
    print!("{text}");
    if let Some(out) = &args.out {
        std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}
