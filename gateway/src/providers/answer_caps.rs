//! The limits every answer runs under, whatever its upstream does: at most
//! `server.max_answer_bytes` of text, and at most `server.max_stream_secs` from its start to its
//! end by the wall clock.
//!
//! The HTTP client's read timeout bounds neither: an upstream that sends an SSE comment every few
//! seconds never goes quiet long enough to time out, and one that streams fast can send any
//! amount, which the page would then hold whole (and so would the tab's resume buffer). The caps
//! wrap the whole answer, continuations included, so each part does not get a limit of its own.

use std::pin::Pin;
use std::time::Duration;

use futures::StreamExt;
use tokio::time::{Instant, Sleep};

use super::{EventStream, ProviderError, ProviderEvent};
use crate::config::ServerConfig;

/// How much and how long one answer may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerCaps {
    /// Bytes of text (`server.max_answer_bytes`).
    pub max_bytes: usize,
    /// From the stream's start to its end (`server.max_stream_secs`).
    pub max_time: Duration,
}

impl AnswerCaps {
    /// The caps `server` sets.
    pub fn new(server: &ServerConfig) -> Self {
        Self { max_bytes: server.max_answer_bytes, max_time: Duration::from_secs(server.max_stream_secs) }
    }

    /// `upstream`, ended with an error when it passes a cap (after the text that fits), and
    /// dropped then, which closes the upstream request. The clock starts now.
    pub fn wrap(self, upstream: EventStream) -> EventStream {
        let capped = Capped {
            caps: self,
            upstream: Some(upstream),
            deadline: Box::pin(tokio::time::sleep_until(Instant::now() + self.max_time)),
            left: self.max_bytes,
            then: None,
        };
        Box::pin(futures::stream::unfold(capped, |mut capped| async move {
            let item = capped.next().await?;
            Some((item, capped))
        }))
    }

    fn too_long(&self) -> ProviderError {
        ProviderError::Interrupted(format!(
            "the answer was stopped after {}, the longest this gateway lets one run \
             (server.max_stream_secs); the text so far is kept",
            duration(self.max_time)
        ))
    }

    fn too_big(&self) -> ProviderError {
        ProviderError::Interrupted(format!(
            "the answer was stopped at {} of text, the most this gateway passes on for one answer \
             (server.max_answer_bytes); ask for a shorter answer, or ask the operator to raise it",
            bytes(self.max_bytes)
        ))
    }
}

type Item = Result<ProviderEvent, ProviderError>;

struct Capped {
    caps: AnswerCaps,
    /// `None` once a cap ended the answer: dropping it closed the upstream request.
    upstream: Option<EventStream>,
    deadline: Pin<Box<Sleep>>,
    /// Bytes of text still allowed.
    left: usize,
    /// The error to report after the text that fitted.
    then: Option<ProviderError>,
}

impl Capped {
    async fn next(&mut self) -> Option<Item> {
        if let Some(err) = self.then.take() {
            return Some(Err(err));
        }
        let upstream = self.upstream.as_mut()?;
        // The clock first: an upstream that is always ready must not starve it.
        let item = tokio::select! {
            biased;
            () = &mut self.deadline => {
                self.upstream = None;
                return Some(Err(self.caps.too_long()));
            }
            item = upstream.next() => item,
        };
        match item {
            Some(Ok(ProviderEvent::Delta(mut text))) if text.len() > self.left => {
                let mut keep = self.left;
                while !text.is_char_boundary(keep) {
                    keep -= 1;
                }
                text.truncate(keep);
                self.left = 0;
                self.upstream = None;
                let err = self.caps.too_big();
                if text.is_empty() {
                    return Some(Err(err));
                }
                self.then = Some(err);
                Some(Ok(ProviderEvent::Delta(text)))
            }
            Some(Ok(ProviderEvent::Delta(text))) => {
                self.left -= text.len();
                Some(Ok(ProviderEvent::Delta(text)))
            }
            other => other,
        }
    }
}

/// `n` bytes as a person would write them: `4 MiB`, `256 KiB`, `1000 bytes`.
fn bytes(n: usize) -> String {
    const KIB: usize = 1024;
    match n {
        0 => "0 bytes".into(),
        n if n % (KIB * KIB) == 0 => format!("{} MiB", n / (KIB * KIB)),
        n if n % KIB == 0 => format!("{} KiB", n / KIB),
        n => format!("{n} bytes"),
    }
}

/// `d` in whole minutes when it is some, else in seconds.
fn duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        1 => "1 second".into(),
        60 => "1 minute".into(),
        s if s >= 60 && s % 60 == 0 => format!("{} minutes", s / 60),
        s => format!("{s} seconds"),
    }
}

#[cfg(test)]
mod tests {
    use futures::stream;

    use super::*;
    use ProviderEvent::{Delta, Finished};

    fn caps(max_bytes: usize, secs: u64) -> AnswerCaps {
        AnswerCaps { max_bytes, max_time: Duration::from_secs(secs) }
    }

    async fn collect(caps: AnswerCaps, events: Vec<Item>) -> Vec<Item> {
        caps.wrap(Box::pin(stream::iter(events))).collect().await
    }

    #[tokio::test]
    async fn an_answer_within_the_caps_passes_unchanged() {
        let events = vec![Ok(Delta("héllo".into())), Ok(Finished(flint_protocol::FinishReason::Stop))];
        assert_eq!(collect(caps(6, 60), events.clone()).await, events);
    }

    #[tokio::test]
    async fn text_past_the_byte_cap_is_cut_at_a_character_and_the_answer_ends_naming_the_setting() {
        let events = vec![Ok(Delta("abc".into())), Ok(Delta("déf".into())), Ok(Delta("never".into()))];
        let out = collect(caps(4, 60), events).await;
        assert_eq!(out[..2], [Ok(Delta("abc".into())), Ok(Delta("d".into()))], "é does not fit whole");
        let Some(Err(ProviderError::Interrupted(message))) = out.get(2) else { panic!("{out:?}") };
        assert!(message.contains("server.max_answer_bytes") && message.contains("4 bytes"), "{message}");
        assert_eq!(out.len(), 3, "nothing after the error");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_never_ends_is_stopped_by_the_wall_clock() {
        let endless: EventStream =
            Box::pin(stream::once(async { Ok(Delta("Thinking".into())) }).chain(stream::pending()));
        let out: Vec<Item> = caps(1024, 1800).wrap(endless).collect().await;
        assert_eq!(out[0], Ok(Delta("Thinking".into())));
        let Some(Err(ProviderError::Interrupted(message))) = out.get(1) else { panic!("{out:?}") };
        assert!(message.contains("30 minutes") && message.contains("server.max_stream_secs"), "{message}");
    }

    #[test]
    fn sizes_and_times_read_as_a_person_writes_them() {
        assert_eq!(bytes(4 * 1024 * 1024), "4 MiB");
        assert_eq!(bytes(256 * 1024), "256 KiB");
        assert_eq!(bytes(1000), "1000 bytes");
        assert_eq!(duration(Duration::from_secs(1800)), "30 minutes");
        assert_eq!(duration(Duration::from_secs(90)), "90 seconds");
    }
}
