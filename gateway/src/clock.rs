//! The time stored links are dated and expired by: the system's, or a hand-moved one in tests, so
//! an expiry of 90 days can be checked without waiting 90 days.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, from the system or from a test.
#[derive(Clone, Default)]
pub struct Clock(Option<Arc<AtomicI64>>);

impl Clock {
    /// The system's time.
    pub fn system() -> Self {
        Self(None)
    }

    /// A clock that stands at `start` until [`Clock::advance`] moves it; clones share the time.
    pub fn manual(start: i64) -> Self {
        Self(Some(Arc::new(AtomicI64::new(start))))
    }

    /// Moves a manual clock on by `seconds`; the system's clock cannot be moved.
    pub fn advance(&self, seconds: i64) {
        if let Some(time) = &self.0 {
            time.fetch_add(seconds, Ordering::Relaxed);
        }
    }

    /// Seconds since the Unix epoch.
    pub fn now(&self) -> i64 {
        match &self.0 {
            Some(time) => time.load(Ordering::Relaxed),
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)),
        }
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => f.write_str("Clock::system()"),
            Some(time) => write!(f, "Clock::manual({})", time.load(Ordering::Relaxed)),
        }
    }
}
