//! An upstream that goes quiet mid-answer: told live, and given up on after a while.
//!
//! A server that sent its headers and a token and then nothing would leave the person looking at
//! "streaming" until the HTTP client's read timeout (300 s). So every read of a stream's body is
//! watched: after [`NOTICE_AFTER`] without a byte the page hears "no data for N s" (a
//! [`ProviderEvent::Silence`], then one a second), and after the provider's `stall_timeout_secs`
//! the stream fails as interrupted, the text received kept. Any byte counts, an SSE comment
//! (`: OPENROUTER PROCESSING`) or a keep-alive chunk included: a server saying it is still
//! working is not stalled.
//!
//! The timeout defaults to 120 s (`config::DEFAULT_STALL_TIMEOUT_SECS` says why).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use super::{ProviderError, ProviderEvent};

/// Silence after which the person is told, live.
pub const NOTICE_AFTER: Duration = Duration::from_secs(10);

/// What a watched read came to.
#[derive(Debug)]
pub(crate) enum Watched<T> {
    /// The read finished (bytes, the end, or an error).
    Ready(T),
    /// Nothing yet: tell the page (the read is to be tried again).
    Quiet(ProviderEvent),
    /// Nothing for the whole timeout: the stream is over.
    Stalled(ProviderError),
}

/// The silence of one stream's body.
#[derive(Debug)]
pub(crate) struct StallWatch {
    provider: String,
    timeout: Duration,
    last_byte: Instant,
    /// The silence last told to the page, in whole seconds; 0: none told since the last byte.
    told: u32,
    /// One timer for the whole stream, made at the first read. A timer per read cost two visits
    /// to tokio's timer wheel per token (most reads carry one); this one is moved only when it
    /// fires before the silence is due, at most once per notice interval.
    timer: Option<Pin<Box<Sleep>>>,
}

impl StallWatch {
    /// Watches provider `provider`'s stream, which fails after `timeout` without a byte.
    pub(crate) fn new(provider: &str, timeout: Duration) -> Self {
        Self { provider: provider.to_owned(), timeout, last_byte: Instant::now(), told: 0, timer: None }
    }

    /// Bytes arrived at `now`: if the page was told of a silence, it hears that it ended.
    pub(crate) fn bytes(&mut self, now: Instant) -> Option<ProviderEvent> {
        self.last_byte = now;
        (std::mem::take(&mut self.told) > 0).then_some(ProviderEvent::Silence { secs: 0 })
    }

    /// When the next notice (or the end) is due. A timeout shorter than half a minute is warned
    /// of sooner, at a third of it, so its notice is seen before the end.
    pub(crate) fn deadline(&self) -> Instant {
        let first = NOTICE_AFTER.min(self.timeout / 3).max(Duration::from_secs(1));
        let next = if self.told == 0 { first } else { Duration::from_secs(u64::from(self.told) + 1) };
        self.last_byte + next.min(self.timeout)
    }

    /// The deadline passed at `now`: a notice, or the stream's end.
    pub(crate) fn wake<T>(&mut self, now: Instant) -> Watched<T> {
        let silent = now.saturating_duration_since(self.last_byte);
        if silent >= self.timeout {
            let secs = self.timeout.as_secs();
            return Watched::Stalled(ProviderError::Interrupted(format!(
                "no data from {} for {secs} s, so Flint stopped waiting (its stall_timeout_secs is {secs}); \
                 the text received so far is kept; try again, or raise stall_timeout_secs for this provider",
                self.provider
            )));
        }
        self.told = u32::try_from(silent.as_secs()).unwrap_or(u32::MAX).max(1);
        Watched::Quiet(ProviderEvent::Silence { secs: self.told })
    }

    /// Waits for `read`, or for the next notice; a read that is cut off by a notice is dropped,
    /// so it must be one that loses nothing when dropped (`reqwest::Response::chunk`, a socket's
    /// `next`).
    pub(crate) async fn watch<T>(&mut self, read: impl Future<Output = T>) -> Watched<T> {
        let mut read = std::pin::pin!(read);
        let deadline = self.deadline();
        let mut timer = self.timer.take().unwrap_or_else(|| Box::pin(tokio::time::sleep_until(deadline)));
        loop {
            let done = std::future::poll_fn(|cx| {
                if let Poll::Ready(done) = read.as_mut().poll(cx) {
                    return Poll::Ready(Some(done));
                }
                timer.as_mut().poll(cx).map(|()| None)
            })
            .await;
            if let Some(done) = done {
                self.timer = Some(timer);
                return Watched::Ready(done);
            }
            // The timer was set for an older last byte: the silence is not due yet.
            let now = Instant::now();
            if now < self.deadline() {
                timer.as_mut().reset(self.deadline());
                continue;
            }
            let woke = self.wake(now);
            timer.as_mut().reset(self.deadline());
            self.timer = Some(timer);
            return woke;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[tokio::test(start_paused = true)]
    async fn silence_is_told_after_ten_seconds_then_each_second_until_bytes_come() {
        let mut watch = StallWatch::new("groq", secs(120));
        let t0 = Instant::now();
        assert_eq!(watch.deadline(), t0 + NOTICE_AFTER);
        let Watched::<()>::Quiet(event) = watch.wake(t0 + secs(10)) else { panic!("a notice") };
        assert_eq!(event, ProviderEvent::Silence { secs: 10 });
        assert_eq!(watch.deadline(), t0 + secs(11), "then once a second");
        let Watched::<()>::Quiet(event) = watch.wake(t0 + secs(11)) else { panic!("a notice") };
        assert_eq!(event, ProviderEvent::Silence { secs: 11 });
        assert_eq!(watch.bytes(t0 + secs(12)), Some(ProviderEvent::Silence { secs: 0 }), "data again");
        assert_eq!(watch.bytes(t0 + secs(13)), None, "told once");
        assert_eq!(watch.deadline(), t0 + secs(23));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_silent_for_its_timeout_fails_naming_the_setting() {
        let mut watch = StallWatch::new("groq", secs(5));
        let t0 = Instant::now();
        assert_eq!(watch.deadline(), t0 + secs(5) / 3, "a short timeout is warned of early, at a third");
        let Watched::<()>::Stalled(ProviderError::Interrupted(message)) = watch.wake(t0 + secs(5)) else {
            panic!("the stream ends")
        };
        assert!(message.contains("no data from groq for 5 s"), "{message}");
        assert!(message.contains("stall_timeout_secs") && message.contains("kept"), "{message}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_watched_read_yields_notices_while_it_waits() {
        let mut watch = StallWatch::new("p", secs(30));
        let read = tokio::time::sleep(secs(12));
        tokio::pin!(read);
        let Watched::Quiet(event) = watch.watch(&mut read).await else { panic!("a notice at 10 s") };
        assert_eq!(event, ProviderEvent::Silence { secs: 10 });
        let Watched::Quiet(event) = watch.watch(&mut read).await else { panic!("a notice at 11 s") };
        assert_eq!(event, ProviderEvent::Silence { secs: 11 });
        assert!(matches!(watch.watch(&mut read).await, Watched::Ready(())), "the read ends at 12 s");
    }
}
