//! The tables of `bench/scale.md`.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use crate::Args;
use crate::client::{Outcome, TOKEN_BYTES};
use crate::proc::{self, percentile};

const MB: f64 = 1024.0 * 1024.0;

/// Resident memory of the gateway around one stream point, in bytes.
pub struct Memory {
    /// Before any tab was opened.
    pub fresh: u64,
    /// Of `fresh`: anonymous and file-backed (`proc::resident`).
    pub fresh_split: (u64, u64),
    /// With every tab open, before any stream.
    pub idle: u64,
    /// The most sampled (every 100 ms) while the streams ran.
    pub peak: u64,
    /// `VmHWM` at the end of the streams (the socket-opening burst included).
    pub hwm: u64,
    /// After the tabs stayed open, idle, for `--settle-secs`.
    pub settled: u64,
    /// 5 s after the tabs closed.
    pub closed: u64,
    /// `--settle-secs` after the tabs closed: the load over and its tabs gone.
    pub left: u64,
    /// Of `left`: anonymous and file-backed.
    pub left_split: (u64, u64),
}

pub struct IdleRow {
    pub sockets: usize,
    pub opened: usize,
    pub fresh: u64,
    pub open: u64,
    pub peak: u64,
    pub closed: u64,
}

pub struct StreamRow {
    streams: usize,
    completed: usize,
    first_error: Option<String>,
    ttft: (f64, f64),
    relay: (f64, f64, f64),
    tokens: u64,
    cpu: Duration,
    elapsed: Duration,
    memory: Memory,
}

impl StreamRow {
    pub fn new(
        streams: usize,
        outcomes: Vec<Outcome>,
        memory: Memory,
        cpu: Duration,
        elapsed: Duration,
    ) -> Self {
        let completed = outcomes.iter().filter(|o| o.completed).count();
        let first_error = outcomes.iter().find_map(|o| o.error.clone());
        let mut ttft: Vec<f64> = outcomes.iter().filter_map(|o| o.ttft_ms).collect();
        let tokens = outcomes.iter().map(|o| o.tokens).sum();
        let mut relay: Vec<f64> = outcomes.into_iter().flat_map(|o| o.relay_ms).collect();
        let max = relay.iter().copied().fold(f64::NAN, f64::max);
        Self {
            streams,
            completed,
            first_error,
            ttft: (percentile(&mut ttft, 0.5), percentile(&mut ttft, 0.99)),
            relay: (percentile(&mut relay, 0.5), percentile(&mut relay, 0.99), max),
            tokens,
            cpu,
            elapsed,
            memory,
        }
    }

    /// Resident bytes per stream beyond the open tabs, less the answer text each stream holds.
    fn per_stream_beyond_text(&self, tokens_each: u32) -> f64 {
        let added = self.memory.peak.saturating_sub(self.memory.idle) as f64 / self.streams.max(1) as f64;
        added - f64::from(tokens_each) * TOKEN_BYTES as f64
    }
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / MB
}

pub fn render(
    args: &Args,
    load_before: &str,
    idle: &[(String, IdleRow)],
    streams: &[(String, StreamRow)],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Gateway at scale: sockets, concurrent streams, memory\n");
    let _ = writeln!(out, "- Machine: {}", proc::machine());
    let _ = writeln!(out, "- Date: {}", httpdate::fmt_http_date(SystemTime::now()));
    let _ = writeln!(out, "- Command: `{}`", args.command);
    let _ = writeln!(
        out,
        "- Load average (1 min): {load_before} before the run, {} after it (the machine is shared; the load \
         generator and the upstream share its cores with the gateway)",
        proc::load()
    );
    let answer_kb = f64::from(args.tokens) * TOKEN_BYTES as f64 / 1024.0;
    let _ = writeln!(
        out,
        "- Method: the real gateway binary (release, `--no-default-features`, person limits off in its config \
         file) as its own process; the scripted upstream and the load generator (Rust, tokio-tungstenite, \
         `gateway/examples/scale/`) in another, all on loopback. One tab (socket) per stream, as a page running \
         one generation; every stream {} tokens of 4 bytes ({answer_kb:.1} KB of answer) at {} tok/s, all \
         started at once, each bounded to twice its duration + 30 s. Memory from `/proc/<gateway>/status` \
         (VmRSS, sampled every 100 ms; VmHWM; a minute after, also `RssAnon` and `RssFile`), CPU from `/proc/<gateway>/stat` (user + system).\n",
        args.tokens, args.rate
    );
    let _ = writeln!(out, "## Idle sockets\n");
    let _ = writeln!(
        out,
        "| build | sockets | opened | RSS fresh (MB) | RSS open (MB) | per socket (KB) | peak (MB) | 5 s after closing (MB) | target 10,000 ≤ 500 MB |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|:---:|");
    for (label, r) in idle {
        let per = r.open.saturating_sub(r.fresh) as f64 / r.opened.max(1) as f64 / 1024.0;
        let verdict = if r.sockets < 10_000 {
            "—"
        } else if r.peak as f64 <= 500.0 * MB && r.opened == r.sockets {
            "met"
        } else {
            "missed"
        };
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {:.1} | {:.1} | {per:.1} | {:.1} | {:.1} | {verdict} |",
            r.sockets,
            r.opened,
            mb(r.fresh),
            mb(r.open),
            mb(r.peak),
            mb(r.closed)
        );
    }
    let _ = writeln!(out, "\n## Concurrent streams at {} tok/s each\n", args.rate);
    let _ = writeln!(
        out,
        "| build | streams | completed | TTFT p50 / p99 (ms) | relay p50 / p99 / max (ms) | tokens relayed | wall (s) | gateway CPU s per M tokens | RSS tabs open (MB) | peak / VmHWM (MB) | per stream beyond the text (KB) | after {0} s (MB, × idle) | 5 s after closing (MB) | fresh (MB) | {0} s after closing (MB, × fresh) | {0} s after closing: anonymous / file-backed (MB, × fresh) |",
        args.settle.as_secs()
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, r) in streams {
        let m = &r.memory;
        let cpu_per_m = r.cpu.as_secs_f64() / (r.tokens.max(1) as f64 / 1e6);
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {:.1} / {:.1} | {:.1} / {:.1} / {:.1} | {} | {:.1} | {cpu_per_m:.1} | {:.1} | {:.1} / {:.1} | {:.1} | {:.1} ({:.2}×) | {:.1} | {:.1} | {:.1} ({:.2}×) | {:.1} ({:.2}×) / {:.1} ({:.2}×) |",
            r.streams,
            r.completed,
            r.ttft.0,
            r.ttft.1,
            r.relay.0,
            r.relay.1,
            r.relay.2,
            r.tokens,
            r.elapsed.as_secs_f64(),
            mb(m.idle),
            mb(m.peak),
            mb(m.hwm),
            r.per_stream_beyond_text(args.tokens) / 1024.0,
            mb(m.settled),
            m.settled as f64 / m.idle.max(1) as f64,
            mb(m.closed),
            mb(m.fresh),
            mb(m.left),
            m.left as f64 / m.fresh.max(1) as f64,
            mb(m.left_split.0),
            m.left_split.0 as f64 / m.fresh_split.0.max(1) as f64,
            mb(m.left_split.1),
            m.left_split.1 as f64 / m.fresh_split.1.max(1) as f64
        );
    }
    for (label, r) in streams.iter().filter(|(_, r)| r.first_error.is_some()) {
        let _ = writeln!(
            out,
            "\n{label}, {} streams: first failure: {}",
            r.streams,
            r.first_error.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(
        out,
        "\nTTFT: from sending `Start` to the first `Delta`. Relay: per `Delta` frame, its arrival minus the \
         upstream's schedule for the newest token in it (token n due at anchor + (n − 1)/rate, the anchor \
         chosen so the stream's least-late frame is on time): it includes the gateway's coalescing (≤ 16 ms \
         a frame), queueing and CPU backlog in the gateway, the upstream and the client alike, so it bounds the \
         gateway's share from above; a lag the whole stream shares is in TTFT. Per stream beyond the text: \
         (peak − RSS with the tabs open) / streams − the answer's {answer_kb:.1} KB. Target (issue 13): 2,000 \
         streams all complete with p99 relay ≤ 50 ms; ≤ 100 KB per stream beyond the text; within 1.2× of the \
         idle baseline a minute after (measured both ways: the tabs still open, against the RSS with them \
         open before the load; and the tabs closed, against the fresh gateway's RSS)."
    );
    out
}
