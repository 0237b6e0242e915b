//! What the gateway process uses, read from `/proc/<pid>`: resident memory and CPU time.

use std::time::Duration;

/// `VmRSS` and `VmHWM` of `pid`, in bytes (0 when the process is gone).
pub fn memory(pid: u32) -> (u64, u64) {
    let status = status(pid);
    (field(&status, "VmRSS:"), field(&status, "VmHWM:"))
}

/// `RssAnon` and `RssFile` of `pid`, in bytes: what the process holds itself (its heap, stacks),
/// and the pages of files it maps (its own code most of all: clean, shared, and dropped by the
/// kernel under pressure). `VmRSS` counts both, so after a load only the split says which grew.
pub fn resident(pid: u32) -> (u64, u64) {
    let status = status(pid);
    (field(&status, "RssAnon:"), field(&status, "RssFile:"))
}

fn status(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default()
}

/// A `kB` field of a `/proc/<pid>/status` text, in bytes (0 when absent).
fn field(status: &str, name: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// User plus system CPU time of `pid` so far (`/proc/<pid>/stat` fields 14 and 15).
pub fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name (field 2) may hold spaces; the fields after it start past its `)`.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum();
    // USER_HZ is 100 on every Linux this runs on (getconf CLK_TCK); no libc call needed for it.
    Duration::from_millis(ticks * 10)
}

/// The `p`-quantile (nearest rank) of `values`; NaN when empty.
pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

/// The machine, and how busy it was: the machines are shared, so the load says how noisy a run was.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("model name"))?;
            Some(line.split_once(':')?.1.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().next()?.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024 / 1024);
    format!("{cores} cores (nproc), {cpu}, {mem} GiB memory")
}

/// The 1-minute load average now.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}
