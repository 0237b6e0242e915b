//! What one stream sends: its text and reasoning coalesced into frames, and how it ends (the
//! usage, the metrics, the day's quota charged).

use std::sync::Arc;

use flint_protocol::{ErrorCode, FinishReason, ServerMessage, StreamId, StreamMetrics, Usage};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::coalesce::Coalescer;
use super::frames::{self, Outgoing};
use super::thinking::Thinking;
use crate::limits::StreamPermit;
use crate::metrics::Metrics;
use crate::providers::ProviderError;

/// The frames of one stream and what they report at the end.
pub(super) struct Frames {
    /// The connection it runs on, named in its log lines.
    pub(super) conn: u64,
    pub(super) id: StreamId,
    pub(super) provider: String,
    pub(super) requested_model: String,
    pub(super) out: mpsc::Sender<Outgoing>,
    pub(super) coalescer: Coalescer,
    /// The reasoning, shown apart from the text.
    pub(super) thinking: Thinking,
    pub(super) seq: u32,
    pub(super) started: bool,
    pub(super) usage: Option<Usage>,
    pub(super) received_at: Instant,
    pub(super) first_text_at: Option<Instant>,
    /// The person's place among their streams; counts the text events (the tokens charged when
    /// the provider reports none) and holds the stream to what its start reserved.
    pub(super) permit: StreamPermit,
    pub(super) metrics: Arc<Metrics>,
    /// When the oldest text waiting in the coalescer arrived: a frame's relay latency is how long
    /// its oldest text waited.
    pub(super) pending_since: Option<Instant>,
    /// The provider has answered (any event): its latency is counted once.
    pub(super) upstream_answered: bool,
}

/// The connection loop went away; the stream has no one to report to.
pub(super) struct Gone;

/// An answer that finished without a character: a `Done` would show an empty page as if that
/// were the answer. Such a stream ends as an error instead (see [`ProviderError::Empty`]).
pub(super) fn empty_answer(model: &str, reason: FinishReason) -> ProviderError {
    let why = match reason {
        FinishReason::Length => " (it reached the length limit before writing any text)",
        _ => "; try again, or try another model",
    };
    ProviderError::Empty(format!("{model} answered with nothing{why}"))
}

impl Frames {
    /// The provider yielded something (`any`): the first time, its latency is counted.
    pub(super) fn answered(&mut self, any: bool) {
        if any && !self.upstream_answered {
            self.upstream_answered = true;
            self.metrics.upstream_first_event(&self.provider, self.received_at.elapsed());
        }
    }

    pub(super) async fn send(&self, frame: axum::extract::ws::Utf8Bytes, last: bool) -> Result<(), Gone> {
        self.send_at(frame, None, last).await
    }

    async fn send_at(
        &self,
        frame: axum::extract::ws::Utf8Bytes,
        seq: Option<u32>,
        last: bool,
    ) -> Result<(), Gone> {
        self.out.send(Outgoing { stream: self.id, frame, seq, last }).await.map_err(|_| Gone)
    }

    pub(super) async fn start(&mut self) -> Result<(), Gone> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let frame = frames::encode(&ServerMessage::Started {
            stream: self.id,
            provider: self.provider.clone(),
            model: self.requested_model.clone(),
        });
        self.send(frame, false).await
    }

    /// Sends the reasoning gathered since the last frame, if any.
    pub(super) async fn flush_thinking(&mut self, now: Instant) -> Result<(), Gone> {
        if self.thinking.deadline().is_none() {
            return Ok(());
        }
        self.start().await?;
        match self.thinking.flush(self.id, now) {
            Some(frame) => self.send(frame, false).await,
            None => Ok(()),
        }
    }

    /// Sends the pending text, if any, as one delta frame (after the reasoning before it).
    pub(super) async fn flush(&mut self, now: Instant) -> Result<(), Gone> {
        self.flush_thinking(now).await?;
        if !self.coalescer.has_pending() {
            return Ok(());
        }
        if !self.started {
            self.start().await?;
        }
        let (id, seq) = (self.id, self.seq);
        let Some(frame) = self.coalescer.flush(now, |text| frames::delta(id, seq, text)) else {
            return Ok(());
        };
        if self.first_text_at.is_none() {
            self.first_text_at = Some(now);
            self.metrics.first_token(now - self.received_at);
        }
        let held = self.pending_since.take().map_or_else(Default::default, |since| now - since);
        self.metrics.relayed(held);
        self.seq += 1;
        self.send_at(frame, Some(seq), false).await
    }

    pub(super) async fn done(&mut self, finish: FinishReason) -> Result<(), Gone> {
        self.flush(Instant::now()).await?;
        let now = Instant::now();
        let mut usage = self.usage.unwrap_or(Usage {
            prompt_tokens: None,
            completion_tokens: self.permit.generated_count(),
            reasoning_tokens: None,
        });
        usage.reasoning_tokens = self.thinking.tokens();
        let metrics = self.metrics(now, usage.completion_tokens);
        tracing::info!(
            conn = self.conn,
            stream = self.id,
            finish = ?finish,
            tokens = usage.completion_tokens,
            ttft_ms = metrics.ttft_ms,
            total_ms = metrics.total_ms,
            "stream done"
        );
        self.charge(usage.completion_tokens).await?;
        let frame = frames::encode(&ServerMessage::Done { stream: self.id, finish, usage, metrics });
        self.send(frame, true).await
    }

    /// Reports `err` after the text received before it.
    pub(super) async fn fail(&mut self, err: ProviderError) -> Result<(), Gone> {
        self.flush(Instant::now()).await?;
        self.charge(self.tokens()).await?;
        let code: ErrorCode = err.code();
        self.metrics.error(code);
        tracing::info!(conn = self.conn, stream = self.id, ?code, message = %err, "stream failed");
        let retry_after_ms = err.retry_after().map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let frame = frames::encode(&ServerMessage::Error {
            stream: Some(self.id),
            code,
            message: err.to_string(),
            retry_after_ms,
        });
        self.send(frame, true).await
    }

    /// The tokens generated: the provider's count, else the text events.
    pub(super) fn tokens(&self) -> u32 {
        self.usage.map_or_else(|| self.permit.generated_count(), |u| u.completion_tokens)
    }

    /// Counts the stream's tokens against the person's day, and tells the page what is left
    /// before the stream's last frame, so its meter is current when the stream ends.
    async fn charge(&mut self, tokens: u32) -> Result<(), Gone> {
        self.permit.charge(tokens).await;
        self.metrics.tokens(tokens);
        let Some(quota) = self.permit.quota().await else { return Ok(()) };
        let resets_in_ms = u64::try_from(quota.resets_in.as_millis()).unwrap_or(u64::MAX);
        let frame =
            frames::encode(&ServerMessage::Quota { used: quota.used, limit: quota.limit, resets_in_ms });
        self.send(frame, false).await
    }

    fn metrics(&self, now: Instant, tokens: u32) -> StreamMetrics {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        let total_ms = ms(now - self.received_at);
        let ttfr_ms = self.thinking.first_at.map(|first| ms(first - self.received_at));
        let Some(first) = self.first_text_at else {
            return StreamMetrics { ttft_ms: 0.0, ttfr_ms, total_ms, tokens_per_s: 0.0 };
        };
        // The pace is the answer's, after its first text: reasoning before it is not counted.
        let text_tokens = tokens.saturating_sub(self.thinking.tokens().unwrap_or(0));
        let generating = (now - first).as_secs_f64();
        let tokens_per_s = if generating > 0.0 { f64::from(text_tokens) / generating } else { 0.0 };
        StreamMetrics { ttft_ms: ms(first - self.received_at), ttfr_ms, total_ms, tokens_per_s }
    }
}
