//! One generation: reads a provider's events, coalesces the text, sends frames to the connection.

use std::sync::Arc;

use flint_protocol::{ErrorCode, FinishReason, ServerMessage, StreamId, StreamMetrics, Usage};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::instrument;

use super::coalesce::{Coalescer, FRAME_INTERVAL};
use super::frames::{self, Outgoing};
use super::thinking::Thinking;
use crate::limits::StreamPermit;
use crate::metrics::Metrics;
use crate::providers::{GenRequest, Provider, ProviderError, ProviderEvent, continuation};

/// Everything a stream task needs.
pub(crate) struct StreamJob {
    /// Connection id, for logs.
    pub conn: u64,
    /// The client's stream id.
    pub id: StreamId,
    /// Who serves it.
    pub provider: Arc<dyn Provider>,
    /// What to generate.
    pub request: GenRequest,
    /// When the gateway received the `Start` frame.
    pub received_at: Instant,
    /// Cancelled by `Cancel` or when the socket closes.
    pub cancel: CancellationToken,
    /// Frames to the connection loop.
    pub out: mpsc::Sender<Outgoing>,
    /// The person's place among their running streams, charged the tokens generated.
    pub permit: StreamPermit,
    /// The gateway's figures (`/metrics`).
    pub metrics: Arc<Metrics>,
    /// How much text and how long the answer may run (`server.max_answer_bytes`, `max_stream_secs`).
    pub caps: crate::providers::AnswerCaps,
}

/// The frames of one stream and what they report at the end.
struct Frames {
    id: StreamId,
    provider: String,
    requested_model: String,
    out: mpsc::Sender<Outgoing>,
    coalescer: Coalescer,
    /// The reasoning, shown apart from the text.
    thinking: Thinking,
    seq: u32,
    started: bool,
    usage: Option<Usage>,
    received_at: Instant,
    first_text_at: Option<Instant>,
    /// The person's place among their streams; counts the text events (the tokens charged when
    /// the provider reports none) and holds the stream to what its start reserved.
    permit: StreamPermit,
    metrics: Arc<Metrics>,
    /// When the oldest text waiting in the coalescer arrived: a frame's relay latency is how long
    /// its oldest text waited.
    pending_since: Option<Instant>,
    /// The provider has answered (any event): its latency is counted once.
    upstream_answered: bool,
}

/// Counts a stream as running from its start until its task ends, however it ends (a task
/// aborted with its connection drops this too).
struct Running(Arc<Metrics>);

impl Running {
    fn new(metrics: &Arc<Metrics>) -> Self {
        metrics.stream_started();
        Self(Arc::clone(metrics))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.stream_ended();
    }
}

/// The connection loop went away; the stream has no one to report to.
struct Gone;

/// Runs the stream to its end; returns its id.
#[instrument(skip_all, fields(conn = job.conn, stream = job.id))]
pub(crate) async fn run(job: StreamJob) -> StreamId {
    let StreamJob { id, provider, request, received_at, cancel, out, permit, metrics, caps, .. } = job;
    let _running = Running::new(&metrics);
    let mut frames = Frames {
        id,
        provider: provider.name().to_owned(),
        requested_model: request.model.clone(),
        out,
        coalescer: Coalescer::new(FRAME_INTERVAL),
        thinking: Thinking::new(FRAME_INTERVAL),
        seq: 0,
        started: false,
        usage: None,
        received_at,
        first_text_at: None,
        permit,
        metrics,
        pending_since: None,
        upstream_answered: false,
    };
    // `auto_continue` arrives capped by `server.max_auto_continue` (see `connection.rs`).
    let mut upstream = caps.wrap(match request.params.auto_continue {
        Some(limit) if limit > 0 => continuation::continuing(provider, request, limit),
        _ => provider.stream(request),
    });
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    let timer = tokio::time::sleep_until(Instant::now());
    tokio::pin!(timer);
    let mut armed = false;
    let thinking_timer = tokio::time::sleep_until(Instant::now());
    tokio::pin!(thinking_timer);
    let mut thinking_armed = false;
    let result: Result<(), Gone> = loop {
        tokio::select! {
            biased;
            () = &mut cancelled => {
                // Dropping the provider stream closes the upstream request now, not after a flush.
                drop(upstream);
                break frames.done(FinishReason::Cancelled).await;
            }
            item = upstream.next() => {
                frames.answered(item.is_some());
                match item {
                Some(Ok(ProviderEvent::Delta(text))) => {
                    // All that its start reserved of the day's quota is written: an upstream
                    // that ignored its length limit is cut here, as if it had kept to it.
                    if !frames.permit.generated() {
                        drop(upstream);
                        break frames.done(FinishReason::Length).await;
                    }
                    let now = Instant::now();
                    frames.pending_since.get_or_insert(now);
                    if frames.coalescer.push(&text, now) {
                        armed = false;
                        if let Err(gone) = frames.flush(now).await {
                            break Err(gone);
                        }
                    } else if !armed && let Some(deadline) = frames.coalescer.deadline() {
                        timer.as_mut().reset(deadline);
                        armed = true;
                    }
                }
                // The frame names the model the person picked: what an upstream calls it is free
                // text that no browser needs (and a buggy proxy has put the key there).
                Some(Ok(ProviderEvent::Started { .. })) => {
                    if let Err(gone) = frames.start().await {
                        break Err(gone);
                    }
                }
                Some(Ok(ProviderEvent::Queued { ahead })) => {
                    let frame = frames::encode(&ServerMessage::Queued { stream: id, ahead });
                    if let Err(gone) = frames.send(frame, false).await {
                        break Err(gone);
                    }
                }
                Some(Ok(ProviderEvent::Reasoning(text))) => {
                    // Reasoning is billed as output: it counts against the day like text.
                    if !frames.permit.generated() {
                        drop(upstream);
                        break frames.done(FinishReason::Length).await;
                    }
                    let now = Instant::now();
                    if frames.thinking.push(&text, now) {
                        thinking_armed = false;
                        if let Err(gone) = frames.flush_thinking(now).await {
                            break Err(gone);
                        }
                    } else if !thinking_armed && let Some(deadline) = frames.thinking.deadline() {
                        thinking_timer.as_mut().reset(deadline);
                        thinking_armed = true;
                    }
                }
                Some(Ok(ProviderEvent::ReasoningTokens(tokens))) => frames.thinking.reported(tokens),
                Some(Ok(ProviderEvent::Silence { secs })) => {
                    let frame = frames::encode(&ServerMessage::Stalled {
                        stream: id,
                        silent_secs: secs,
                        provider: frames.provider.clone(),
                    });
                    if let Err(gone) = frames.send(frame, false).await {
                        break Err(gone);
                    }
                }
                Some(Ok(ProviderEvent::Usage { prompt_tokens, completion_tokens })) => {
                    frames.usage = Some(Usage { prompt_tokens, completion_tokens, reasoning_tokens: None });
                    frames.permit.reported(completion_tokens);
                }
                Some(Ok(ProviderEvent::Finished(reason))) => {
                    drop(upstream);
                    // Text came if some was sent or still waits to be: an answer that
                    // "finished" without any is reported as a failure.
                    if frames.first_text_at.is_none() && !frames.coalescer.has_pending() {
                        break frames.fail(empty_answer(&frames.requested_model, reason)).await;
                    }
                    break frames.done(reason).await;
                }
                Some(Err(err)) => break frames.fail(err).await,
                None => {
                    let message = format!("{} ended the stream without finishing", frames.provider);
                    break frames.fail(ProviderError::Interrupted(message)).await;
                }
            }
            },
            () = &mut thinking_timer, if thinking_armed => {
                thinking_armed = false;
                if let Err(gone) = frames.flush_thinking(Instant::now()).await {
                    break Err(gone);
                }
            }
            () = &mut timer, if armed => {
                armed = false;
                if let Err(gone) = frames.flush(Instant::now()).await {
                    break Err(gone);
                }
            }
        }
    };
    if result.is_err() {
        tracing::debug!("connection closed before the stream ended");
        // No Done was sent: charge what was generated anyway.
        let tokens = frames.tokens();
        frames.permit.charge(tokens).await;
        frames.metrics.tokens(tokens);
    }
    id
}

/// An answer that finished without a character: a `Done` would show an empty page as if that
/// were the answer. Such a stream ends as an error instead (see [`ProviderError::Empty`]).
fn empty_answer(model: &str, reason: FinishReason) -> ProviderError {
    let why = match reason {
        FinishReason::Length => " (it reached the length limit before writing any text)",
        _ => "; try again, or try another model",
    };
    ProviderError::Empty(format!("{model} answered with nothing{why}"))
}

impl Frames {
    /// The provider yielded something (`any`): the first time, its latency is counted.
    fn answered(&mut self, any: bool) {
        if any && !self.upstream_answered {
            self.upstream_answered = true;
            self.metrics.upstream_first_event(&self.provider, self.received_at.elapsed());
        }
    }

    async fn send(&self, frame: axum::extract::ws::Utf8Bytes, last: bool) -> Result<(), Gone> {
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

    async fn start(&mut self) -> Result<(), Gone> {
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
    async fn flush_thinking(&mut self, now: Instant) -> Result<(), Gone> {
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
    async fn flush(&mut self, now: Instant) -> Result<(), Gone> {
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

    async fn done(&mut self, finish: FinishReason) -> Result<(), Gone> {
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
    async fn fail(&mut self, err: ProviderError) -> Result<(), Gone> {
        self.flush(Instant::now()).await?;
        self.charge(self.tokens()).await?;
        let code: ErrorCode = err.code();
        self.metrics.error(code);
        tracing::info!(?code, message = %err, "stream failed");
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
    fn tokens(&self) -> u32 {
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
