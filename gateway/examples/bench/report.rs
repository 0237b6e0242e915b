//! The benchmark's table: percentiles per rate, the machine it ran on, and the markdown written to
//! `--out`.

use std::fmt::Write as _;
use std::time::SystemTime;

use super::{Args, COMMAND, Run, TTFT_TOKENS, ms};

pub fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or(f64::NAN)
}

pub struct Row {
    rate: u32,
    direct: (f64, f64),
    gateway: (f64, f64),
    added_p50: f64,
    direct_long_ms: f64,
    gateway_long_ms: f64,
    tokens: u32,
    overhead_us: f64,
    cpu_us: f64,
    frames_per_s: f64,
}

impl Row {
    pub fn new(rate: u32, d: &[f64], g: &[f64], added: &[f64], dl: &[Run], gl: &[Run]) -> Self {
        let total = |runs: &[Run]| percentile(&runs.iter().map(|r| ms(r.total)).collect::<Vec<_>>(), 0.5);
        let (direct_long_ms, gateway_long_ms) = (total(dl), total(gl));
        let tokens = gl.first().map_or(0, |r| r.tokens);
        let fps: Vec<f64> = gl.iter().map(|r| f64::from(r.frames) / r.total.as_secs_f64()).collect();
        let overhead: Vec<f64> = dl
            .iter()
            .zip(gl)
            .map(|(d, g)| (ms(g.total) - ms(d.total)) * 1000.0 / f64::from(g.tokens.max(1)))
            .collect();
        let cpu: Vec<f64> = dl
            .iter()
            .zip(gl)
            .map(|(d, g)| (g.cpu.as_secs_f64() - d.cpu.as_secs_f64()) * 1e6 / f64::from(g.tokens.max(1)))
            .collect();
        Self {
            cpu_us: percentile(&cpu, 0.5),
            rate,
            direct: (percentile(d, 0.5), percentile(d, 0.95)),
            gateway: (percentile(g, 0.5), percentile(g, 0.95)),
            added_p50: percentile(added, 0.5),
            direct_long_ms,
            gateway_long_ms,
            tokens,
            overhead_us: percentile(&overhead, 0.5),
            frames_per_s: percentile(&fps, 0.5),
        }
    }
}

pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    // The machines are shared: the load at the end of the run says how noisy the numbers may be.
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    format!("{cores} cores (nproc), {cpu}; load average {load} at the end of the run")
}

pub fn report(args: &Args, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Gateway benchmark\n");
    let _ = writeln!(out, "- Machine: {}", machine());
    let _ = writeln!(out, "- Date: {}", httpdate::fmt_http_date(SystemTime::now()));
    let _ = writeln!(out, "- Command: `{COMMAND}`");
    let _ = writeln!(
        out,
        "- Upstream: the scripted OpenAI-compatible server (`tests/upstream`, fixture `large`), gateway and \
         clients all in one process on loopback. Time to first token: {} interleaved runs per rate \
         (direct, gateway, direct, …) after 3 warm-up pairs, {TTFT_TOKENS}-token answers; long streams: \
         median of {} pairs.\n",
        args.runs, args.long_runs
    );
    if let Some(quota) = args.quota {
        let _ = writeln!(
            out,
            "- With a daily quota of {quota} tokens (`--quota`): each stream reserves and settles its share.\n"
        );
    }
    let _ = writeln!(out, "## Time to first token (ms)\n");
    let _ = writeln!(
        out,
        "| upstream rate | direct p50 | direct p95 | gateway p50 | gateway p95 | added p50 | target ≤ 5 ms |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|:---:|");
    for r in rows {
        let verdict = if r.added_p50 <= 5.0 { "met" } else { "missed" };
        let _ = writeln!(
            out,
            "| {} tok/s | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {verdict} |",
            r.rate, r.direct.0, r.direct.1, r.gateway.0, r.gateway.1, r.added_p50
        );
    }
    let _ = writeln!(out, "\n## {}-token stream\n", args.tokens);
    let _ = writeln!(
        out,
        "| upstream rate | direct (ms) | gateway (ms) | overhead per token (µs) | extra CPU per token (µs) | delta frames/s at the client |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let _ = writeln!(
            out,
            "| {} tok/s | {:.1} | {:.1} | {:.2} | {:.2} | {:.1} |",
            r.rate, r.direct_long_ms, r.gateway_long_ms, r.overhead_us, r.cpu_us, r.frames_per_s
        );
    }
    let _ = writeln!(
        out,
        "\n`added p50` is the median of the paired differences (gateway − direct). Overhead per token is \
         (gateway duration − direct duration) / tokens ({} tokens), median of the pairs; both durations \
         run from sending the request to the end of the stream, so they show latency added at the end, not \
         work. Extra CPU per token is the process's CPU time (all threads, from `/proc/self/task/*/schedstat`) \
         during the gateway run minus during the direct run, per token: the gateway's parse, coalesce and \
         WebSocket work plus the WebSocket client's, less the direct client's SSE parsing. The gateway coalesces text into at most \
         one frame per 16 ms per stream, so frames/s stays near 60 whatever the upstream's rate.",
        rows.first().map_or(0, |r| r.tokens)
    );
    out
}
