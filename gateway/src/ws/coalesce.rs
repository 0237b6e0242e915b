//! Turns a stream's tokens into at most one delta frame per display frame.
//!
//! The browser pays per message, not per byte (about 13k messages/s on the main thread), so at
//! 1,000+ tokens/s one frame per token would drown it. The first text goes out at once (time to
//! first token must not wait for a tick); after that, text is buffered and sent when an interval
//! has passed since the last send: straight away if the upstream is slow, on a timer if it is fast.

use std::time::Duration;

use tokio::time::Instant;

/// One display frame at 60 Hz.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);

/// Pending text and when it may go out.
#[derive(Debug)]
pub(crate) struct Coalescer {
    pending: String,
    interval: Duration,
    last_flush: Option<Instant>,
}

impl Coalescer {
    /// A coalescer that sends at most once per `interval`.
    pub(crate) fn new(interval: Duration) -> Self {
        Self { pending: String::with_capacity(1024), interval, last_flush: None }
    }

    /// Adds text; returns whether it should be sent now (the stream's first text, or an interval
    /// has passed since the last send).
    pub(crate) fn push(&mut self, text: &str, now: Instant) -> bool {
        self.pending.push_str(text);
        match self.last_flush {
            None => true,
            Some(last) => now >= last + self.interval,
        }
    }

    /// Whether text is waiting to be sent.
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// When the pending text is due, if there is any.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        if self.pending.is_empty() {
            return None;
        }
        Some(self.last_flush.map_or_else(Instant::now, |last| last + self.interval))
    }

    /// Hands the pending text to `send` (if there is any) and empties the buffer, keeping its capacity.
    pub(crate) fn flush<R>(&mut self, now: Instant, send: impl FnOnce(&str) -> R) -> Option<R> {
        if self.pending.is_empty() {
            return None;
        }
        let sent = send(&self.pending);
        self.pending.clear();
        // Keep the cadence: a flush up to one interval after it was due counts as on time, so
        // the timer's late ticks do not stretch every frame (16 ms would become 17–19 ms).
        let due = self.last_flush.map(|last| last + self.interval);
        self.last_flush = Some(match due {
            Some(due) if now >= due && now - due < self.interval => due,
            _ => now,
        });
        Some(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(c: &mut Coalescer, now: Instant) -> Option<String> {
        c.flush(now, str::to_owned)
    }

    #[test]
    fn the_first_text_goes_out_at_once() {
        let mut c = Coalescer::new(FRAME_INTERVAL);
        let t0 = Instant::now();
        assert!(c.push("Hel", t0), "first token must not wait for a tick");
        assert_eq!(take(&mut c, t0).as_deref(), Some("Hel"));
        assert_eq!(c.deadline(), None);
    }

    #[test]
    fn fast_tokens_are_merged_until_the_interval_has_passed() {
        let mut c = Coalescer::new(FRAME_INTERVAL);
        let t0 = Instant::now();
        c.push("a", t0);
        take(&mut c, t0);
        let ms = Duration::from_millis;
        assert!(!c.push("b", t0 + ms(1)));
        assert!(!c.push("c", t0 + ms(9)));
        assert_eq!(c.deadline(), Some(t0 + FRAME_INTERVAL));
        assert!(c.push("d", t0 + ms(16)), "due once the interval has passed");
        assert_eq!(take(&mut c, t0 + ms(16)).as_deref(), Some("bcd"));
        assert!(!c.push("e", t0 + ms(20)));
        assert_eq!(c.deadline(), Some(t0 + ms(32)));
    }

    #[test]
    fn late_timer_ticks_do_not_stretch_the_cadence() {
        let mut c = Coalescer::new(FRAME_INTERVAL);
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        c.push("a", t0);
        take(&mut c, t0);
        c.push("b", t0 + ms(1));
        take(&mut c, t0 + ms(18));
        c.push("c", t0 + ms(20));
        assert_eq!(c.deadline(), Some(t0 + ms(32)), "the next frame stays on the 16 ms grid");
    }

    #[test]
    fn slow_tokens_go_out_as_they_come() {
        let mut c = Coalescer::new(FRAME_INTERVAL);
        let t0 = Instant::now();
        for i in 0..5u64 {
            let now = t0 + Duration::from_millis(50 * i);
            assert!(c.push("x", now), "token {i} should not be held back");
            assert_eq!(take(&mut c, now).as_deref(), Some("x"));
        }
    }

    #[test]
    fn flushing_nothing_sends_nothing() {
        let mut c = Coalescer::new(FRAME_INTERVAL);
        assert_eq!(take(&mut c, Instant::now()), None);
    }
}
