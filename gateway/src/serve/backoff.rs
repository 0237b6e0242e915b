//! Waiting after a failed `accept`, and saying so without flooding the log.
//!
//! Out of descriptors, `accept` fails at once every time it is asked: a fixed 50 ms pause logged
//! `accept failed … Too many open files` twenty times a second while the gateway could do nothing
//! about it. The pause now doubles while the failures last and the log says it once a second, with
//! how many failures it did not print.

use std::time::{Duration, Instant};

/// The first pause after a failed accept.
pub const FIRST_PAUSE: Duration = Duration::from_millis(10);
/// The longest pause: short enough that the gateway notices descriptors freed within half a second.
pub const LONGEST_PAUSE: Duration = Duration::from_millis(500);
/// At most one log line per this long.
pub const LOG_EVERY: Duration = Duration::from_secs(1);

/// The accept loop's pause and log throttle.
#[derive(Debug, Default)]
pub struct AcceptBackoff {
    pause: Option<Duration>,
    logged_at: Option<Instant>,
    unlogged: u64,
}

/// What to do about one failed accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// How long to wait before accepting again.
    pub pause: Duration,
    /// `Some(n)`: log this failure, saying `n` earlier ones were not logged; `None`: stay quiet.
    pub log: Option<u64>,
}

impl AcceptBackoff {
    /// An accept failed at `now`.
    pub fn failed(&mut self, now: Instant) -> Failure {
        let pause = self.pause.map_or(FIRST_PAUSE, |p| (p * 2).min(LONGEST_PAUSE));
        self.pause = Some(pause);
        let log = match self.logged_at {
            Some(at) if now.duration_since(at) < LOG_EVERY => {
                self.unlogged += 1;
                None
            }
            _ => {
                self.logged_at = Some(now);
                Some(std::mem::take(&mut self.unlogged))
            }
        };
        Failure { pause, log }
    }

    /// An accept succeeded: the next failure starts from the first pause again.
    pub fn succeeded(&mut self) {
        self.pause = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_to_half_a_second_and_the_log_speaks_once_a_second() {
        let mut backoff = AcceptBackoff::default();
        let start = Instant::now();
        let mut now = start;
        let mut pauses = Vec::new();
        let mut logged = Vec::new();
        for _ in 0..12 {
            let failure = backoff.failed(now);
            pauses.push(failure.pause.as_millis());
            if let Some(skipped) = failure.log {
                logged.push((now.duration_since(start).as_millis(), skipped));
            }
            now += failure.pause;
        }
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 500, 500, 500, 500, 500, 500]);
        // 3.63 s of failures: logged at 0, then the first failure at least a second after each.
        assert_eq!(logged, [(0, 0), (1130, 6), (2130, 1), (3130, 1)]);
        backoff.succeeded();
        assert_eq!(backoff.failed(now).pause, FIRST_PAUSE);
    }
}
