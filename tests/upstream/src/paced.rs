//! The paced SSE body: one `data:` event per token, sent on a deadline clock.
//!
//! Token `i` is due at `start + i / rate`. Each wake-up writes every token that is due in one write
//! (each still its own event), so the average rate stays exact even when the timer wakes late
//! (tokio's timer has millisecond granularity: at 50k tok/s about fifty tokens go per write).

use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::log::RequestLog;

/// Everything one streamed answer needs.
pub(crate) struct Answer {
    /// Request id in the log.
    pub id: u64,
    /// Echoed in every chunk's `model`.
    pub model: String,
    /// The tokens, each already a JSON string literal (escaped once, when the fixture was loaded).
    pub tokens: Arc<[String]>,
    /// How many of them to send (`max_tokens`).
    pub count: usize,
    /// Time between tokens.
    pub interval: Duration,
    /// `Some("stop" | "length")` to finish normally; `None` to end without finishing (drop-midway).
    pub finish: Option<&'static str>,
    /// Without `finish`: a `data:` payload (an error object) to end with instead of just closing.
    pub fail_with: Option<String>,
    /// Without `finish`: end with `[DONE]` anyway, as a server that lost track of its answer does.
    pub done_unfinished: bool,
    /// Whether to send a usage chunk (`stream_options.include_usage`).
    pub include_usage: bool,
    /// Prompt size reported in the usage chunk.
    pub prompt_tokens: u32,
    /// On a single-slot server: cancelled when the next request arrives, which ends this answer
    /// with a bare `[DONE]`.
    pub interrupt: Option<CancellationToken>,
}

/// Marks the request in the log when the response body is dropped: if the client closed the
/// connection before the script ended, that is a cancel seen at the upstream.
struct CloseGuard {
    log: Arc<RequestLog>,
    id: u64,
    sent: u32,
    ended: bool,
    interrupted: bool,
}

impl Drop for CloseGuard {
    fn drop(&mut self) {
        self.log.answer_ended();
        self.log.update(self.id, |record| {
            record.tokens_sent = self.sent;
            record.finished = self.ended && !self.interrupted;
            record.closed_early = !self.ended;
            record.interrupted = self.interrupted;
        });
    }
}

struct Pacer {
    answer: Answer,
    prefix: String,
    start: Instant,
    next: usize,
    guard: CloseGuard,
    buf: String,
}

/// The response body for `answer`, streamed from now.
pub(crate) fn body(answer: Answer, log: Arc<RequestLog>) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let model = serde_json::to_string(&answer.model).unwrap_or_else(|_| "\"scripted\"".into());
    let prefix = format!(
        r#"data: {{"id":"chatcmpl-scripted-{}","object":"chat.completion.chunk","created":1700000000,"model":{model},"choices":"#,
        answer.id
    );
    log.answer_began();
    let guard = CloseGuard { log, id: answer.id, sent: 0, ended: false, interrupted: false };
    let pacer =
        Pacer { answer, prefix, start: Instant::now(), next: 0, guard, buf: String::with_capacity(4096) };
    futures::stream::unfold(Some(pacer), |state| async move {
        let mut pacer = state?;
        if pacer.next < pacer.answer.count {
            match pacer.tokens_due().await {
                Some(chunk) => Some((Ok(chunk), Some(pacer))),
                None => {
                    // Interrupted, as llama-cpp-python ends an answer when the next request takes
                    // its only slot: `[DONE]` with no `finish_reason` ever sent.
                    pacer.guard.ended = true;
                    pacer.guard.interrupted = true;
                    drop(pacer);
                    Some((Ok(Bytes::from_static(b"data: [DONE]\n\n")), None))
                }
            }
        } else {
            let tail = pacer.tail();
            pacer.guard.ended = true;
            // Dropping the pacer here records the request as finished before the last bytes leave.
            drop(pacer);
            tail.map(|bytes| (Ok(bytes), None))
        }
    })
}

impl Pacer {
    fn due_at(&self, index: usize) -> Instant {
        self.start + self.answer.interval.mul_f64(index as f64)
    }

    /// Waits for the next token's deadline, then returns every token due by now; `None` when the
    /// answer was interrupted first.
    async fn tokens_due(&mut self) -> Option<Bytes> {
        let due = self.due_at(self.next);
        let interrupt = self.answer.interrupt.clone().unwrap_or_default();
        if interrupt.is_cancelled() {
            return None;
        }
        // Only sleep when the token is not due yet: the timer has millisecond ticks, and an
        // already-due token (the first one) must not wait for the next tick.
        if Instant::now() < due {
            tokio::select! {
                () = tokio::time::sleep_until(due) => {}
                () = interrupt.cancelled() => return None,
            }
        }
        let now = Instant::now();
        let total = self.answer.count;
        let elapsed = now.saturating_duration_since(self.start).as_secs_f64();
        let interval = self.answer.interval.as_secs_f64();
        let due = if interval > 0.0 { (elapsed / interval) as usize + 1 } else { total };
        let end = due.clamp(self.next + 1, total);
        self.buf.clear();
        for index in self.next..end {
            let role = if index == 0 { r#""role":"assistant","# } else { "" };
            let content = &self.answer.tokens[index];
            let _ = write!(
                self.buf,
                "{}[{{\"index\":0,\"delta\":{{{role}\"content\":{content}}},\"finish_reason\":null}}]}}\n\n",
                self.prefix
            );
        }
        self.next = end;
        self.guard.sent = end as u32;
        Some(Bytes::copy_from_slice(self.buf.as_bytes()))
    }

    /// The finishing chunk, the usage chunk and `[DONE]`; the error event of a script that fails
    /// mid-way; nothing for a script that drops mid-way.
    fn tail(&self) -> Option<Bytes> {
        let Some(finish) = self.answer.finish else {
            if self.answer.done_unfinished {
                return Some(Bytes::from_static(b"data: [DONE]\n\n"));
            }
            return self.answer.fail_with.as_ref().map(|payload| Bytes::from(format!("data: {payload}\n\n")));
        };
        let mut out =
            format!("{}[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{finish}\"}}]}}\n\n", self.prefix);
        if self.answer.include_usage {
            let prompt = self.answer.prompt_tokens;
            let completion = u32::try_from(self.answer.count).unwrap_or(u32::MAX);
            let _ = write!(
                out,
                "{}[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":{completion},\"total_tokens\":{}}}}}\n\n",
                self.prefix,
                prompt + completion
            );
        }
        out.push_str("data: [DONE]\n\n");
        Some(Bytes::from(out))
    }
}
