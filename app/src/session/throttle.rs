//! How often the session is written: at once after a quiet spell, then at most once per interval, so
//! a fast stream costs a few writes per second rather than one per token.

/// The shortest time between two writes, in milliseconds.
pub const SAVE_INTERVAL_MS: f64 = 300.0;

/// Spaces writes at least `interval_ms` apart; the caller keeps one pending write at most.
#[derive(Debug, Clone)]
pub struct SaveThrottle {
    interval_ms: f64,
    last_write: Option<f64>,
}

impl SaveThrottle {
    /// A throttle that spaces writes `interval_ms` apart.
    pub fn new(interval_ms: f64) -> Self {
        Self { interval_ms, last_write: None }
    }

    /// How long a change made at `now_ms` waits before it is written: `0.0` for at once.
    pub fn delay(&self, now_ms: f64) -> f64 {
        self.last_write.map_or(0.0, |last| (last + self.interval_ms - now_ms).max(0.0))
    }

    /// A write went out at `now_ms`.
    pub fn wrote(&mut self, now_ms: f64) {
        self.last_write = Some(now_ms);
    }
}

impl Default for SaveThrottle {
    fn default() -> Self {
        Self::new(SAVE_INTERVAL_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_change_is_written_at_once() {
        assert_eq!(SaveThrottle::default().delay(1_000.0), 0.0);
    }

    #[test]
    fn changes_soon_after_a_write_wait_for_the_rest_of_the_interval() {
        let mut throttle = SaveThrottle::new(300.0);
        throttle.wrote(1_000.0);
        assert_eq!(throttle.delay(1_000.0), 300.0);
        assert_eq!(throttle.delay(1_100.0), 200.0);
        assert_eq!(throttle.delay(1_300.0), 0.0);
        assert_eq!(throttle.delay(5_000.0), 0.0);
    }

    #[test]
    fn a_stream_of_changes_is_written_about_once_per_interval() {
        // One change per 16 ms frame for 3 s; a pending write absorbs the changes behind it.
        let mut throttle = SaveThrottle::new(300.0);
        let (mut writes, mut due) = (0, None::<f64>);
        for frame in 0..188 {
            let now = f64::from(frame) * 16.0;
            if due.is_some_and(|at| now >= at) {
                throttle.wrote(now);
                writes += 1;
                due = None;
            }
            if due.is_none() {
                let wait = throttle.delay(now);
                if wait <= 0.0 {
                    throttle.wrote(now);
                    writes += 1;
                } else {
                    due = Some(now + wait);
                }
            }
        }
        assert!((9..=11).contains(&writes), "{writes} writes in 3 s");
    }
}
