//! A stream's reasoning, as `Thinking` frames: at most one per display frame, like the text.
//!
//! Reasoning chunks come as fast as tokens, and most carry no readable text (only the pace shows),
//! so the count and the summary text since the last frame are gathered and sent together on the
//! same cadence as [`super::coalesce`]: the first at once (the page leaves "waiting" as soon as
//! the model thinks), then at most once per interval. Nothing of it is logged: reasoning is the
//! model's working, which may quote the prompt.

use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use flint_protocol::{ServerMessage, StreamId};
use tokio::time::Instant;

use super::frames;

/// The reasoning of one stream.
#[derive(Debug)]
pub(crate) struct Thinking {
    interval: Duration,
    /// Summary text not yet sent.
    pending: String,
    /// Bytes of summary text sent so far.
    sent: u32,
    /// Something changed since the last frame.
    dirty: bool,
    /// Reasoning chunks received (the count until the provider reports its own).
    chunks: u32,
    /// The provider's count of reasoning tokens, summed over a continuation's parts.
    reported: Option<u32>,
    last_flush: Option<Instant>,
    /// When the first reasoning arrived.
    pub(crate) first_at: Option<Instant>,
}

impl Thinking {
    /// Reasoning sent at most once per `interval`.
    pub(crate) fn new(interval: Duration) -> Self {
        Self {
            interval,
            pending: String::new(),
            sent: 0,
            dirty: false,
            chunks: 0,
            reported: None,
            last_flush: None,
            first_at: None,
        }
    }

    /// One reasoning chunk at `now`, with its text (often none); whether a frame is due now.
    pub(crate) fn push(&mut self, text: &str, now: Instant) -> bool {
        self.first_at.get_or_insert(now);
        self.chunks = self.chunks.saturating_add(1);
        self.pending.push_str(text);
        self.dirty = true;
        self.last_flush.is_none_or(|last| now >= last + self.interval)
    }

    /// The provider counted `tokens` reasoning tokens (for one part of the answer).
    pub(crate) fn reported(&mut self, tokens: u32) {
        self.reported = Some(self.reported.unwrap_or(0).saturating_add(tokens));
    }

    /// When the gathered reasoning is due, if any waits.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.dirty.then(|| self.last_flush.map_or_else(Instant::now, |last| last + self.interval))
    }

    /// Reasoning tokens so far: the provider's count, else the chunks; `None` if it never reasoned.
    pub(crate) fn tokens(&self) -> Option<u32> {
        self.reported.or((self.chunks > 0).then_some(self.chunks))
    }

    /// The frame for what gathered since the last one, if anything did.
    pub(crate) fn flush(&mut self, stream: StreamId, now: Instant) -> Option<Utf8Bytes> {
        if !std::mem::take(&mut self.dirty) {
            return None;
        }
        self.last_flush = Some(now);
        let text = std::mem::take(&mut self.pending);
        let from = self.sent;
        self.sent = self.sent.saturating_add(u32::try_from(text.len()).unwrap_or(u32::MAX));
        let tokens = self.tokens().unwrap_or(0);
        Some(frames::encode(&ServerMessage::Thinking { stream, tokens, from, text }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::coalesce::FRAME_INTERVAL;

    fn frame(t: &mut Thinking, now: Instant) -> Option<ServerMessage> {
        t.flush(1, now).map(|f| serde_json::from_str(f.as_str()).expect("a frame"))
    }

    #[test]
    fn the_first_reasoning_goes_at_once_then_once_per_frame_with_the_text_gathered() {
        let mut t = Thinking::new(FRAME_INTERVAL);
        let t0 = Instant::now();
        assert!(t.push("", t0), "the page hears at once that the model thinks");
        assert_eq!(
            frame(&mut t, t0),
            Some(ServerMessage::Thinking { stream: 1, tokens: 1, from: 0, text: "".into() })
        );
        let ms = Duration::from_millis;
        assert!(!t.push("Plan", t0 + ms(2)));
        assert!(!t.push(": grid", t0 + ms(5)));
        assert_eq!(t.deadline(), Some(t0 + FRAME_INTERVAL));
        let sent = frame(&mut t, t0 + FRAME_INTERVAL);
        assert_eq!(
            sent,
            Some(ServerMessage::Thinking { stream: 1, tokens: 3, from: 0, text: "Plan: grid".into() })
        );
        assert_eq!(frame(&mut t, t0 + ms(40)), None, "nothing new, no frame");
        t.push("!", t0 + ms(50));
        t.reported(120);
        let sent = frame(&mut t, t0 + ms(50));
        assert_eq!(
            sent,
            Some(ServerMessage::Thinking { stream: 1, tokens: 120, from: 10, text: "!".into() })
        );
        assert_eq!(t.tokens(), Some(120), "the provider's count wins");
    }

    #[test]
    fn a_stream_that_never_reasoned_has_no_reasoning_tokens() {
        let t = Thinking::new(FRAME_INTERVAL);
        assert_eq!((t.tokens(), t.deadline(), t.first_at), (None, None, None));
    }
}
