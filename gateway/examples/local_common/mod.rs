//! Shared by the local model examples: argument parsing, the model path, timing one stream or many.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use flint_gateway::config::LocalConfig;
use flint_gateway::local::model_file;
use flint_gateway::providers::{GenRequest, Provider, ProviderEvent};
use flint_protocol::{ChatMessage, GenParams, Role};
use futures::StreamExt;

/// `--out PATH`, else `default`.
pub fn out_path(default: &str) -> anyhow::Result<PathBuf> {
    let mut args = std::env::args().skip(1);
    let mut out = PathBuf::from(default);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = args.next().context("--out needs a path")?.into(),
            other => bail!("unknown argument {other}; usage: --out PATH"),
        }
    }
    Ok(out)
}

/// The model the examples run: `FLINT_MODEL_PATH`, else the set-up's cached SmolLM2.
pub fn model_path() -> anyhow::Result<PathBuf> {
    let path = model_file::default_model_path();
    if !path.is_file() {
        bail!("no model at {}; run `cargo xtask setup` (or set FLINT_MODEL_PATH)", path.display());
    }
    Ok(path)
}

/// A one-message request for the configured local model, all from one client, as from one tab.
pub fn request(config: &LocalConfig, prompt: &str, params: GenParams) -> GenRequest {
    GenRequest {
        client: 0,
        person: 0,
        key: None,
        model: config.model.clone(),
        messages: vec![ChatMessage::new(Role::User, prompt)],
        params,
    }
}

/// Timing of one stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunStats {
    /// Request to first token.
    pub ttft_ms: f64,
    /// Tokens per second after the first.
    pub decode_tps: f64,
    /// Generated tokens.
    pub tokens: u32,
    /// Prompt tokens.
    pub prompt_tokens: usize,
    /// The answer was interrupted (the embedded model stops a loop that way).
    pub interrupted: bool,
}

impl RunStats {
    /// From the request time, the first and last token's time and the counts.
    pub fn from_times(
        start: Instant,
        first: Instant,
        last: Instant,
        tokens: u32,
        prompt_tokens: usize,
    ) -> Self {
        let decode = last.duration_since(first).as_secs_f64();
        Self {
            ttft_ms: first.duration_since(start).as_secs_f64() * 1e3,
            decode_tps: if decode > 0.0 { f64::from(tokens.saturating_sub(1)) / decode } else { 0.0 },
            tokens,
            prompt_tokens,
            interrupted: false,
        }
    }

    /// Field-wise median.
    pub fn median(runs: &[Self]) -> Self {
        let med = |f: fn(&Self) -> f64| {
            let mut v: Vec<f64> = runs.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(0.0)
        };
        Self {
            ttft_ms: med(|r| r.ttft_ms),
            decode_tps: med(|r| r.decode_tps),
            tokens: med(|r| f64::from(r.tokens)) as u32,
            prompt_tokens: runs.first().map_or(0, |r| r.prompt_tokens),
            interrupted: runs.iter().any(|r| r.interrupted),
        }
    }
}

/// Runs one stream to its end; returns its timing and text.
pub async fn run_stream_text(
    provider: &dyn Provider,
    request: GenRequest,
) -> anyhow::Result<(RunStats, String)> {
    let start = Instant::now();
    let mut stream = provider.stream(request);
    let (mut first, mut last, mut tokens, mut prompt_tokens) = (None, start, 0u32, 0usize);
    let mut text = String::new();
    let mut interrupted = false;
    while let Some(event) = stream.next().await {
        let event = match event {
            Err(flint_gateway::providers::ProviderError::Interrupted(_)) => {
                interrupted = true;
                break;
            }
            other => other?,
        };
        match event {
            ProviderEvent::Delta(delta) => {
                last = Instant::now();
                first.get_or_insert(last);
                tokens += 1;
                text.push_str(&delta);
            }
            ProviderEvent::Usage { prompt_tokens: p, completion_tokens } => {
                prompt_tokens = p.unwrap_or(0) as usize;
                tokens = completion_tokens;
            }
            ProviderEvent::Started { .. }
            | ProviderEvent::Queued { .. }
            | ProviderEvent::Reasoning(_)
            | ProviderEvent::ReasoningTokens(_)
            | ProviderEvent::Silence { .. }
            | ProviderEvent::Finished(_) => {}
        }
    }
    let first = first.context("the stream produced no text")?;
    let stats = RunStats { interrupted, ..RunStats::from_times(start, first, last, tokens, prompt_tokens) };
    Ok((stats, text))
}

/// Runs one stream to its end.
pub async fn run_stream(provider: &dyn Provider, request: GenRequest) -> anyhow::Result<RunStats> {
    Ok(run_stream_text(provider, request).await?.0)
}

/// Runs `n` streams at once (temperature 0.7, distinct seeds); returns all tokens and the wall time.
pub async fn run_concurrent(
    provider: &dyn Provider,
    config: &LocalConfig,
    n: usize,
    max_tokens: u32,
) -> anyhow::Result<(u32, Duration)> {
    let start = Instant::now();
    let runs = (0..n).map(|i| {
        let params = GenParams {
            max_tokens: Some(max_tokens),
            temperature: Some(0.7),
            top_p: None,
            seed: Some(1000 + i as u64),
            ..GenParams::default()
        };
        run_stream(provider, request(config, "a todo list with add and delete buttons", params))
    });
    let results = futures::future::join_all(runs).await;
    let wall = start.elapsed();
    let mut tokens = 0;
    for r in results {
        tokens += r?.tokens;
    }
    Ok((tokens, wall))
}

/// Machine, date, command and build flags, as the first lines of a results file.
pub fn machine_header(md: &mut String, command: &str, threads: usize) -> anyhow::Result<()> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    writeln!(md, "- Date: {date}")?;
    writeln!(md, "- Machine: {cores} cores (nproc), {cpu}")?;
    writeln!(md, "- Threads: {threads}")?;
    // Measured 2026-11-21: llama-cpp-sys-2 leaves GGML_NATIVE off, and ggml then enables these by
    // default; `target-cpu=native` adds AVX-512 but also AMX, whose kernels die with SIGILL on these VMs.
    writeln!(
        md,
        "- ggml CPU build: SSE4.2, AVX, AVX2, FMA, F16C, BMI2 (ggml's default without GGML_NATIVE)"
    )?;
    writeln!(md, "- Command: `{command}`\n")?;
    Ok(())
}

/// Writes `text` to `path`, creating its folder.
pub fn write_out(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
