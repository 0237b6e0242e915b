//! Handing freed memory back to the system once a load has passed.
//!
//! With the system's allocator (glibc), memory a burst of streams freed stays resident: glibc gives
//! back only the top of each arena by itself, and a tokio worker's arena keeps the pages of every
//! buffer it ever grew (`bench/scale-jemalloc.md`: 284 MB a minute after 2,000 streams, against a
//! fresh gateway's 12). `malloc_trim(0)` returns every whole free page of every arena. It walks and
//! locks the arenas, so it runs only when the load has fallen ([`Trim`]), on a blocking thread.
//! jemalloc's build (the former default, still `alloc-jemalloc`) was 70 CPU seconds of a first run
//! bound by the processor (`bench/setup.md`).

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

#[cfg(test)]
mod tests {
    use super::*;

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
