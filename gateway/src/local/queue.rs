//! How much may wait for the embedded model: requests and prompt bytes, per tab and in total.
//!
//! A request waits from the moment it is submitted until a sequence takes it (or it is refused,
//! or its tab cancels it). The model drains the queue at its own pace, a few streams at a time,
//! so a longer queue only holds memory (a prompt is up to `server.max_frame_bytes`) and promises
//! it cannot keep soon. Beyond a bound a request is refused at once, on the caller's thread, with
//! `rate_limited` and a time to retry: the person learns now, not after a wait.
//!
//! Per tab, so one tab cannot fill the queue; in total, so many tabs together cannot either.
//! Counts are taken when a request enters ([`Queue::enter`]) and given back when its [`Place`] is
//! dropped, whichever way it leaves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::provider::{ClientId, ProviderError};

/// A hint, not a promise: streams of the embedded model usually end within seconds, and each one
/// that ends lets a waiting request start.
pub const RETRY_AFTER: Duration = Duration::from_secs(5);

/// The bounds on waiting requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitingLimits {
    /// Requests, all tabs together.
    pub requests: usize,
    /// Requests of one tab.
    pub requests_per_connection: usize,
    /// Prompt bytes, all tabs together.
    pub bytes: usize,
    /// Prompt bytes of one tab.
    pub bytes_per_connection: usize,
}

/// Why a request may not wait. Messages name the setting, for the person who runs the gateway.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueFull {
    /// The tab already has its share of waiting requests.
    #[error(
        "this tab already has {waiting} requests waiting for the local model, the most one tab may \
         (max_waiting_per_connection in flint.toml); wait for one to start or cancel one"
    )]
    ConnectionRequests {
        /// The tab's waiting requests.
        waiting: usize,
    },
    /// The tab's waiting prompts are already large.
    #[error(
        "this tab's waiting requests hold {waiting} bytes of prompt; with this one's {bytes} that is \
         over the {limit} bytes one tab may queue for the local model \
         (max_waiting_bytes_per_connection in flint.toml); wait for them to start or cancel some"
    )]
    ConnectionBytes {
        /// Bytes the tab has waiting.
        waiting: usize,
        /// This request's bytes.
        bytes: usize,
        /// The bound.
        limit: usize,
    },
    /// The queue is full.
    #[error(
        "the local model already has {waiting} requests waiting, the most it queues \
         (max_waiting in flint.toml); try again in a few seconds"
    )]
    Requests {
        /// Requests waiting, all tabs together.
        waiting: usize,
    },
    /// The waiting prompts are already large.
    #[error(
        "the local model's waiting requests hold {waiting} bytes of prompt; with this one's {bytes} \
         that is over the {limit} bytes it queues (max_waiting_bytes in flint.toml); try again in a \
         few seconds"
    )]
    Bytes {
        /// Bytes waiting, all tabs together.
        waiting: usize,
        /// This request's bytes.
        bytes: usize,
        /// The bound.
        limit: usize,
    },
    /// The prompt alone is over a byte bound, so it could never wait, even in an empty queue.
    #[error(
        "the prompt is {bytes} bytes; the local model queues at most {limit} bytes \
         (max_waiting_bytes_per_connection and max_waiting_bytes in flint.toml); shorten the prompt"
    )]
    Never {
        /// This request's bytes.
        bytes: usize,
        /// The smaller byte bound.
        limit: usize,
    },
}

impl From<QueueFull> for ProviderError {
    fn from(full: QueueFull) -> Self {
        match full {
            // Retrying the same prompt cannot help.
            QueueFull::Never { .. } => ProviderError::PromptTooLarge(full.to_string()),
            // The rest clear as streams start: a rate limit, with a time to retry. No other
            // variant fits: `Unavailable` says the model failed, and carries no retry time.
            _ => ProviderError::RateLimited { message: full.to_string(), retry_after: Some(RETRY_AFTER) },
        }
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    requests: usize,
    bytes: usize,
}

/// What waits, counted per tab and in total. Plain data; [`Queue`] shares it between threads.
#[derive(Debug)]
pub struct Waiting {
    limits: WaitingLimits,
    total: Counts,
    /// Only tabs with something waiting, so the map stays as small as the queue.
    per_client: HashMap<ClientId, Counts>,
}

impl Waiting {
    /// An empty queue.
    pub fn new(limits: WaitingLimits) -> Self {
        Self { limits, total: Counts::default(), per_client: HashMap::new() }
    }

    /// Counts a request of `bytes` from `client` in, or says which bound it would cross.
    pub fn enter(&mut self, client: ClientId, bytes: usize) -> Result<(), QueueFull> {
        let limits = self.limits;
        let byte_limit = limits.bytes.min(limits.bytes_per_connection);
        if bytes > byte_limit {
            return Err(QueueFull::Never { bytes, limit: byte_limit });
        }
        let mine = self.per_client.get(&client).copied().unwrap_or_default();
        if mine.requests >= limits.requests_per_connection {
            return Err(QueueFull::ConnectionRequests { waiting: mine.requests });
        }
        if mine.bytes + bytes > limits.bytes_per_connection {
            return Err(QueueFull::ConnectionBytes {
                waiting: mine.bytes,
                bytes,
                limit: limits.bytes_per_connection,
            });
        }
        if self.total.requests >= limits.requests {
            return Err(QueueFull::Requests { waiting: self.total.requests });
        }
        if self.total.bytes + bytes > limits.bytes {
            return Err(QueueFull::Bytes { waiting: self.total.bytes, bytes, limit: limits.bytes });
        }
        let mine = self.per_client.entry(client).or_default();
        mine.requests += 1;
        mine.bytes += bytes;
        self.total.requests += 1;
        self.total.bytes += bytes;
        Ok(())
    }

    /// Counts a request that [`Waiting::enter`] let in back out.
    pub fn leave(&mut self, client: ClientId, bytes: usize) {
        if let Some(mine) = self.per_client.get_mut(&client) {
            mine.requests = mine.requests.saturating_sub(1);
            mine.bytes = mine.bytes.saturating_sub(bytes);
            if mine.requests == 0 {
                self.per_client.remove(&client);
            }
        }
        self.total.requests = self.total.requests.saturating_sub(1);
        self.total.bytes = self.total.bytes.saturating_sub(bytes);
    }

    /// Requests and bytes waiting, all tabs together.
    pub fn total(&self) -> (usize, usize) {
        (self.total.requests, self.total.bytes)
    }
}

/// [`Waiting`], shared by the callers that submit and the threads that take requests out.
#[derive(Debug, Clone)]
pub struct Queue(Arc<Mutex<Waiting>>);

impl Queue {
    /// An empty queue with these bounds.
    pub fn new(limits: WaitingLimits) -> Self {
        Self(Arc::new(Mutex::new(Waiting::new(limits))))
    }

    /// A place for a request of `bytes` from `client`, or why there is none.
    pub fn enter(&self, client: ClientId, bytes: usize) -> Result<Place, QueueFull> {
        self.lock().enter(client, bytes)?;
        Ok(Place { queue: self.clone(), client, bytes })
    }

    /// Requests and bytes waiting, all tabs together.
    pub fn total(&self) -> (usize, usize) {
        self.lock().total()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        // The counts are updated by a few additions that cannot panic half-way; a poisoned lock
        // still holds consistent counts.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A waiting request's place: its counts leave the queue when it is dropped, whether the request
/// started, was refused, was cancelled, or the engine went away.
#[derive(Debug)]
pub struct Place {
    queue: Queue,
    client: ClientId,
    bytes: usize,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.queue.lock().leave(self.client, self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::{Queue, QueueFull, Waiting, WaitingLimits};
    use crate::provider::ProviderError;

    const LIMITS: WaitingLimits =
        WaitingLimits { requests: 4, requests_per_connection: 2, bytes: 100, bytes_per_connection: 60 };

    #[test]
    fn a_tab_may_queue_its_share_of_requests_and_no_more() {
        let mut waiting = Waiting::new(LIMITS);
        assert_eq!(waiting.enter(1, 1), Ok(()));
        assert_eq!(waiting.enter(1, 1), Ok(()));
        assert_eq!(waiting.enter(1, 1), Err(QueueFull::ConnectionRequests { waiting: 2 }));
        assert_eq!(waiting.enter(2, 1), Ok(()), "another tab is not held back by the first");
    }

    #[test]
    fn a_tab_may_queue_its_share_of_bytes_and_no_more() {
        let mut waiting = Waiting::new(LIMITS);
        assert_eq!(waiting.enter(1, 40), Ok(()));
        assert_eq!(
            waiting.enter(1, 30),
            Err(QueueFull::ConnectionBytes { waiting: 40, bytes: 30, limit: 60 })
        );
        assert_eq!(waiting.enter(1, 20), Ok(()), "exactly at the bound is allowed");
    }

    #[test]
    fn all_tabs_together_are_bounded_in_requests_and_bytes() {
        let mut waiting = Waiting::new(LIMITS);
        for client in 1..=3 {
            assert_eq!(waiting.enter(client, 30), Ok(()));
        }
        assert_eq!(waiting.enter(4, 20), Err(QueueFull::Bytes { waiting: 90, bytes: 20, limit: 100 }));
        assert_eq!(waiting.enter(4, 10), Ok(()));
        assert_eq!(waiting.enter(5, 0), Err(QueueFull::Requests { waiting: 4 }));
        assert_eq!(waiting.total(), (4, 100));
    }

    #[test]
    fn a_prompt_over_a_byte_bound_alone_is_never_queued() {
        let mut waiting = Waiting::new(LIMITS);
        assert_eq!(waiting.enter(1, 61), Err(QueueFull::Never { bytes: 61, limit: 60 }));
        assert!(matches!(
            ProviderError::from(QueueFull::Never { bytes: 61, limit: 60 }),
            ProviderError::PromptTooLarge(_)
        ));
    }

    #[test]
    fn leaving_gives_the_counts_back() {
        let mut waiting = Waiting::new(LIMITS);
        waiting.enter(1, 50).expect("fits");
        waiting.enter(1, 10).expect("fits");
        waiting.leave(1, 50);
        assert_eq!(waiting.enter(1, 50), Ok(()));
        waiting.leave(1, 50);
        waiting.leave(1, 10);
        assert_eq!(waiting.total(), (0, 0));
        assert!(waiting.per_client.is_empty(), "tabs with nothing waiting are forgotten");
    }

    #[test]
    fn a_place_leaves_the_queue_when_dropped() {
        let queue = Queue::new(LIMITS);
        let first = queue.enter(1, 30).expect("fits");
        let second = queue.enter(1, 30).expect("fits");
        assert!(queue.enter(1, 1).is_err());
        drop(first);
        assert_eq!(queue.total(), (1, 30));
        let third = queue.enter(1, 30).expect("the dropped place is free again");
        drop((second, third));
        assert_eq!(queue.total(), (0, 0));
    }

    #[test]
    fn refusals_are_rate_limits_naming_the_setting() {
        let full = QueueFull::ConnectionRequests { waiting: 16 };
        match ProviderError::from(full) {
            ProviderError::RateLimited { message, retry_after } => {
                assert!(message.contains("max_waiting_per_connection"), "{message}");
                assert!(retry_after.is_some());
            }
            other => panic!("expected a rate limit, got {other:?}"),
        }
    }
}
