//! One generation: reads a provider's events, coalesces the text, sends frames to the connection.

use std::sync::Arc;

use flint_protocol::{FinishReason, ServerMessage, StreamId, Usage};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::instrument;

use super::coalesce::{Coalescer, FRAME_INTERVAL};
use super::frames::{self, Outgoing};
use super::stream_frames::{Frames, Gone, empty_answer};
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

/// Runs the stream to its end; returns its id.
#[instrument(level = "debug", skip_all, fields(conn = job.conn, stream = job.id))]
pub(crate) async fn run(job: StreamJob) -> StreamId {
    let StreamJob { conn, id, provider, request, received_at, cancel, out, permit, metrics, caps, .. } = job;
    let _running = Running::new(&metrics);
    let mut frames = Frames {
        conn,
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
