//! Handing freed memory back to the system once a load has passed.
//!
//! With the system's allocator (glibc), memory a burst of streams freed stays resident: glibc gives
//! back only the top of each arena by itself, and a tokio worker's arena keeps the pages of every
//! buffer it ever grew (`bench/scale-jemalloc.md`: 284 MB a minute after 2,000 streams, against a
//! fresh gateway's 12). `malloc_trim(0)` returns every whole free page of every arena. It walks and
//! locks the arenas, so it runs only when the load has fallen ([`Trim`]), on a blocking thread.
//! jemalloc's build (the former default, still `alloc-jemalloc`) was 70 CPU seconds of a first run
//! bound by the processor (`bench/setup.md`).
//!
//! The trim cannot return a page that a thread's own cache (tcache) still holds a freed chunk on,
//! so the gateway also re-starts itself once with those caches off ([`restart_tuned`]).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

/// How often the load is looked at.
pub const TRIM_EVERY: Duration = Duration::from_secs(2);

/// When to trim: the load (open sockets, running streams) has fallen to half or less of its
/// highest since the last trim, in either figure. A steady load never trims; the end of a burst
/// trims once; a load that keeps falling trims at each halving.
#[derive(Debug, Default, Clone)]
pub struct Trim {
    high: [i64; 2],
}

impl Trim {
    /// Takes the load now; whether to trim now.
    pub fn observe(&mut self, load: [i64; 2]) -> bool {
        let fell = self.high.iter().zip(load).any(|(&high, now)| high > 0 && now <= high / 2);
        if fell {
            self.high = load;
        } else {
            for (high, now) in self.high.iter_mut().zip(load) {
                *high = (*high).max(now);
            }
        }
        fell
    }
}

/// Asks glibc's allocator to return its free pages; whether it returned any. Under jemalloc or
/// mimalloc glibc still holds what the C libraries allocate (llama.cpp, SQLite). Elsewhere than
/// glibc there is no such call and nothing is done.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release() -> bool {
    // SAFETY: malloc_trim takes no pointers and touches only glibc's own free lists, each under
    // its arena's lock; it may be called from any thread at any time.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Asks the allocator to return its free pages: only glibc has the call.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release() -> bool {
    false
}

/// Looks at the load every [`TRIM_EVERY`] until `shutdown`, trimming when [`Trim`] says so.
pub async fn trim_after_loads(metrics: Arc<Metrics>, shutdown: CancellationToken) {
    let mut trim = Trim::default();
    let mut tick = tokio::time::interval(TRIM_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        if trim.observe(metrics.load()) {
            let released = tokio::task::spawn_blocking(release).await.unwrap_or(false);
            tracing::debug!(released, "returned freed memory to the system");
        }
    }
}

/// glibc's tunable for how many freed chunks of each size a thread keeps for itself.
const TCACHE_COUNT: &str = "glibc.malloc.tcache_count";

/// Set in the environment of the process it re-started, so that it never re-starts twice (glibc
/// erases some tunables in a set-user-ID process, which would otherwise loop).
pub const RESTARTED: &str = "FLINT_GATEWAY_TUNED";

/// The `GLIBC_TUNABLES` the gateway should run with, given the one it was started with: the
/// operator's own with the per-thread caches turned off; `None` when it runs as it should already
/// (a tcache count is set, by the operator or by an earlier start). Why: a minute after a burst,
/// each tokio worker's cache still holds a few hundred freed chunks, each pinning a page of the
/// burst that `malloc_trim` cannot return, about 4 MB in all at 1,000 streams (`bench/scale.md`).
/// glibc reads tunables only from the environment when a process starts.
pub fn tunables(started_with: Option<&str>) -> Option<String> {
    let off = format!("{TCACHE_COUNT}=0");
    match started_with.map(str::trim) {
        None | Some("") => Some(off),
        Some(own) if own.split(':').any(|entry| entry.split('=').next() == Some(TCACHE_COUNT)) => None,
        Some(own) => Some(format!("{own}:{off}")),
    }
}

/// Re-starts this process in place (same pid, arguments and descriptors) with the tunables of
/// [`tunables`], before any thread is made; returns only when it does not: `Some` with the reason
/// the re-start failed, `None` when none was needed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn restart_tuned() -> Option<std::io::Error> {
    use std::os::unix::process::CommandExt as _;
    if std::env::var_os(RESTARTED).is_some() {
        return None;
    }
    // An operator's value that is not text is theirs to keep as it is.
    let started_with = match std::env::var_os("GLIBC_TUNABLES") {
        Some(value) => Some(value.into_string().ok()?),
        None => None,
    };
    let value = tunables(started_with.as_deref())?;
    let mut args = std::env::args_os();
    let name = args.next().unwrap_or_default();
    let error = std::process::Command::new(own_image())
        .arg0(name)
        .args(args)
        .env("GLIBC_TUNABLES", value)
        .env(RESTARTED, "1")
        .exec();
    Some(error)
}

/// The file to re-start from. The path this process's image was loaded from, while that path
/// still holds it: the kernel names a process after the file it runs, and `ps`, `top`, `pgrep
/// flint-gateway` and `pkill` go by that name (re-started from `/proc/self/exe` it was `exe`). Else
/// `/proc/self/exe` itself: a deploy has replaced the file since (should that happen between this
/// look and the re-start, the new build starts, marked as re-started, with the same arguments).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn own_image() -> std::path::PathBuf {
    use std::os::unix::fs::MetadataExt as _;
    let running = std::path::Path::new("/proc/self/exe");
    let holds_it = |path: &std::path::Path| match (std::fs::metadata(path), std::fs::metadata(running)) {
        (Ok(file), Ok(image)) => file.dev() == image.dev() && file.ino() == image.ino(),
        _ => false,
    };
    match std::fs::read_link(running) {
        Ok(path) if holds_it(&path) => path,
        _ => running.to_path_buf(),
    }
}

/// Only glibc has the tunables.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn restart_tuned() -> Option<std::io::Error> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caches_are_turned_off_beside_the_operators_tunables_unless_they_chose_a_count() {
        let off = "glibc.malloc.tcache_count=0";
        assert_eq!(tunables(None).as_deref(), Some(off));
        assert_eq!(tunables(Some(" ")).as_deref(), Some(off));
        assert_eq!(
            tunables(Some("glibc.malloc.arena_max=2")).as_deref(),
            Some("glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0")
        );
        assert_eq!(tunables(Some("glibc.malloc.tcache_count=7")), None, "the operator's count is kept");
        assert_eq!(tunables(Some("glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0")), None);
        assert_eq!(
            tunables(Some("glibc.malloc.tcache_count_x=1")).as_deref(),
            Some("glibc.malloc.tcache_count_x=1:glibc.malloc.tcache_count=0"),
            "only the whole name counts"
        );
    }

    #[test]
    fn a_steady_load_does_not_trim_and_its_end_trims_once() {
        let mut trim = Trim::default();
        assert!(!trim.observe([0, 0]), "an idle gateway that never had a load");
        for _ in 0..5 {
            assert!(!trim.observe([100, 90]));
        }
        assert!(!trim.observe([100, 60]), "streams down by a third: not yet");
        assert!(trim.observe([100, 45]), "streams at half their high");
        assert!(!trim.observe([100, 45]), "trimmed once for that fall");
        assert!(trim.observe([100, 0]), "the rest ended");
        assert!(!trim.observe([100, 0]));
        assert!(trim.observe([0, 0]), "the tabs closed");
        assert!(!trim.observe([0, 0]));
    }

    #[test]
    fn a_rise_moves_the_mark_so_a_small_dip_under_a_new_high_does_not_trim() {
        let mut trim = Trim::default();
        assert!(!trim.observe([10, 10]));
        assert!(!trim.observe([1000, 1000]));
        assert!(!trim.observe([900, 800]), "down a fifth from the new high");
        assert!(trim.observe([900, 400]));
    }

    /// Pages freed below a live allocation stay resident until trimmed: the case the trim is for.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn release_returns_pages_freed_below_a_live_allocation() {
        // 20 MB in blocks under glibc's mmap threshold (128 KiB), so they come from an arena.
        let blocks: Vec<Vec<u8>> = (0..320).map(|i| vec![i as u8; 64 * 1024]).collect();
        let above = vec![1u8; 1024];
        drop(blocks);
        assert!(release(), "glibc returned none of the 20 MB freed below a live allocation");
        assert_eq!(above[0], 1);
    }
}
