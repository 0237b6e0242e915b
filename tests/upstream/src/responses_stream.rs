//! One scripted Responses API answer: what the request's `model` asks for ([`decide`]), and the
//! answer as the API's streaming events ([`Responder`]), paced on the same deadline clock as the
//! chat answers. The events are JSON objects: SSE `data:` over HTTP, text frames over a socket.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::Shared;
use crate::handlers::{NO_KEY, escaped_tokens, load};
use crate::script::{
    self, CONTEXT_MIDSTREAM, CONTEXT_REFUSAL, CONTEXT_UNSTREAMED, CONTINUATION_FAILURE, DROP_MIDWAY_TEXT,
    GARBAGE_BODY, LEAK_PREFIX, LEAK_SUFFIX, Leak, NO_FINISH_TEXT, Script, WANTS_KEY_TEXT, WHOLE_ONLY_TEXT,
};

/// How a streamed answer ends.
#[derive(Debug, Clone)]
pub(crate) enum End {
    /// `response.completed` (or `response.incomplete` when `max_output_tokens` cut it).
    Completed,
    /// `response.failed` with this error.
    Failed {
        /// The error's `code`.
        code: &'static str,
        /// Its `message`.
        message: String,
    },
    /// Nothing: the body ends or the socket closes mid-answer.
    Drop,
}

/// An answer to stream.
pub(crate) struct Plan {
    /// The `model` the events name.
    pub model: String,
    /// Tokens, each a JSON string literal.
    pub tokens: Arc<[String]>,
    pub interval: Duration,
    pub end: End,
}

/// What to do with a request.
pub(crate) enum Decision {
    Stream(Plan),
    /// An error before any event: an HTTP status with a JSON body, or an `error` frame.
    Refuse {
        status: u16,
        code: &'static str,
        message: String,
    },
    /// Bytes that are not events at all (a proxy's error page; a proxy echoing the key).
    Garbage(String),
}

/// The answer the request's `model` asks for (see [`Script`]); `key` is the bearer token;
/// `continued`: the request continues an earlier response.
pub(crate) fn decide(shared: &Shared, model: &str, key: &str, continued: bool) -> Decision {
    let refuse = |status, code, message: &str| Decision::Refuse { status, code, message: message.to_owned() };
    let stream = |text: &str, rate: Option<f64>, end: End| {
        let interval = script::interval(rate.unwrap_or(shared.options.rate));
        Decision::Stream(Plan { model: model.to_owned(), tokens: escaped_tokens(text), interval, end })
    };
    match Script::parse(model) {
        Script::Fixture { name, rate } => match load(shared, &name, None) {
            Some(tokens) => {
                let interval = script::interval(rate.unwrap_or(shared.options.rate));
                Decision::Stream(Plan { model: model.to_owned(), tokens, interval, end: End::Completed })
            }
            None => refuse(
                404,
                "model_not_found",
                &format!("The model `{model}` does not exist or you do not have access to it."),
            ),
        },
        Script::Fail429 => refuse(429, "rate_limit_exceeded", "Rate limit reached for requests"),
        Script::Fail401 => refuse(401, "invalid_api_key", "Incorrect API key provided: sk-sc****cret"),
        Script::FailContext => refuse(
            400,
            "context_length_exceeded",
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
        ),
        Script::ContextRefusal | Script::ContextSizeRefusal => {
            refuse(400, "invalid_request_error", CONTEXT_REFUSAL)
        }
        Script::Fail500 => stream(
            "",
            None,
            End::Failed {
                code: "server_error",
                message: "The server had an error while processing your request".into(),
            },
        ),
        Script::ContextMidstream => stream(
            NO_FINISH_TEXT,
            None,
            End::Failed { code: "context_length_exceeded", message: CONTEXT_MIDSTREAM.into() },
        ),
        Script::DropMidway { rate } => stream(DROP_MIDWAY_TEXT, rate, End::Drop),
        Script::NoFinish => stream(NO_FINISH_TEXT, None, End::Drop),
        Script::EmptyAnswer => stream("", None, End::Completed),
        Script::EmptyStream => Decision::Garbage(String::new()),
        Script::WantsKey if key == NO_KEY => refuse(401, "invalid_api_key", "Invalid API Key"),
        Script::WantsKey => stream(WANTS_KEY_TEXT, None, End::Completed),
        Script::WholeOnly if continued => {
            stream("", None, End::Failed { code: "server_error", message: CONTINUATION_FAILURE.into() })
        }
        Script::WholeOnly => stream(WHOLE_ONLY_TEXT, None, End::Completed),
        Script::ContextEmptyStream => refuse(400, "context_length_exceeded", CONTEXT_UNSTREAMED),
        Script::Garbage => Decision::Garbage(GARBAGE_BODY.to_owned()),
        Script::Leak(Leak::NotSse) => Decision::Garbage(format!("Authorization: Bearer {key}\n\n")),
        Script::Leak(leak @ (Leak::Masked | Leak::Upper | Leak::Spaced | Leak::Piece)) => refuse(
            400,
            "invalid_request_error",
            &format!("Invalid request made with {}; see the docs", leak.disguise(key)),
        ),
        Script::Leak(leak @ Leak::MidStream) => {
            let message = format!("the upstream failed while serving {}", leak.disguise(key));
            stream(LEAK_PREFIX, None, End::Failed { code: "server_error", message })
        }
        Script::Leak(Leak::Content { rate }) => {
            stream(&format!("{LEAK_PREFIX}{key}{LEAK_SUFFIX}"), rate, End::Completed)
        }
        Script::Leak(Leak::Chars) => match stream("", None, End::Completed) {
            Decision::Stream(plan) => {
                let text = format!("{LEAK_PREFIX}{key}{LEAK_SUFFIX}");
                let tokens = text.chars().map(|c| serde_json::to_string(&c).unwrap_or_default()).collect();
                Decision::Stream(Plan { tokens, ..plan })
            }
            other => other,
        },
        // Their misbehaviour is HTTP's, the same on both APIs: tested on chat completions.
        Script::Thinking(_) => refuse(400, "invalid_request_error", "not scripted for the Responses API"),
        // Answered in `responses::prepare`, which has the request's images.
        Script::SeeImages => refuse(400, "invalid_request_error", "see-images needs the request"),
        Script::Hostile(_) => refuse(400, "invalid_request_error", "not scripted for the Responses API"),
        Script::Leak(Leak::Model) => match stream("<p>A page.</p>", None, End::Completed) {
            Decision::Stream(plan) => Decision::Stream(Plan { model: key.to_owned(), ..plan }),
            other => other,
        },
    }
}

/// One event: its type (for SSE's `event:` line) and its JSON.
pub(crate) struct Event {
    pub kind: &'static str,
    pub json: String,
}

/// Where a [`Responder`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Tokens,
    Tail,
    Over,
}

/// One answer's events, handed out as they fall due.
pub(crate) struct Responder {
    plan: Plan,
    id: String,
    /// Tokens to send (`max_output_tokens`).
    count: usize,
    reasoning: bool,
    input_tokens: u32,
    /// Waited once before the first token: the cost of reading the input.
    prefill: Duration,
    phase: Phase,
    start: Instant,
    next: usize,
    seq: u64,
}

impl Responder {
    /// `plan` as response `id`, cut at `limit` tokens; `reasoning`: emit a reasoning summary
    /// first, as reasoning models do.
    pub(crate) fn new(
        plan: Plan,
        id: String,
        limit: Option<usize>,
        reasoning: bool,
        input_tokens: u32,
        prefill: Duration,
    ) -> Self {
        let count = plan.tokens.len().min(limit.unwrap_or(usize::MAX));
        let (phase, start, next, seq) = (Phase::Head, Instant::now(), 0, 0);
        Self { plan, id, count, reasoning, input_tokens, prefill, phase, start, next, seq }
    }

    /// Tokens sent so far.
    pub(crate) fn sent(&self) -> usize {
        self.next
    }

    /// The answer ended with `response.completed` or `response.incomplete`.
    pub(crate) fn completed(&self) -> bool {
        self.phase == Phase::Over && matches!(self.plan.end, End::Completed)
    }

    /// The script drops the answer here, with no last event.
    pub(crate) fn dropped(&self) -> bool {
        self.phase == Phase::Tail && matches!(self.plan.end, End::Drop)
    }

    /// The answer is over: its last event was handed out, or it drops here.
    pub(crate) fn over(&self) -> bool {
        self.phase == Phase::Over || (self.phase == Phase::Tail && matches!(self.plan.end, End::Drop))
    }

    /// The events due next (waiting for them); `None` when there are no more.
    pub(crate) async fn next_events(&mut self) -> Option<Vec<Event>> {
        if self.phase == Phase::Tokens && self.next >= self.count {
            self.phase = Phase::Tail;
        }
        match self.phase {
            Phase::Head => {
                self.phase = Phase::Tokens;
                Some(self.head())
            }
            Phase::Tokens => {
                if self.next == 0 {
                    tokio::time::sleep(self.prefill).await;
                    self.start = Instant::now();
                }
                let due = self.start + self.plan.interval.mul_f64(self.next as f64);
                if Instant::now() < due {
                    tokio::time::sleep_until(due).await;
                }
                let elapsed = self.start.elapsed().as_secs_f64();
                let interval = self.plan.interval.as_secs_f64();
                let due = if interval > 0.0 { (elapsed / interval) as usize + 1 } else { self.count };
                let end = due.clamp(self.next + 1, self.count);
                let events = (self.next..end).map(|i| self.delta(i)).collect();
                self.next = end;
                Some(events)
            }
            Phase::Tail => {
                let tail = self.tail();
                if tail.is_some() {
                    self.phase = Phase::Over;
                }
                tail
            }
            Phase::Over => None,
        }
    }

    fn event(&mut self, kind: &'static str, mut event: Value) -> Event {
        event["type"] = kind.into();
        event["sequence_number"] = self.seq.into();
        self.seq += 1;
        Event { kind, json: event.to_string() }
    }

    fn response(&self, status: &str) -> Value {
        json!({
            "id": self.id, "object": "response", "created_at": 1_700_000_000, "status": status,
            "model": self.plan.model, "output": [], "usage": null,
        })
    }

    fn item_id(&self) -> String {
        format!("msg_{}", self.id.trim_start_matches("resp_"))
    }

    fn head(&mut self) -> Vec<Event> {
        let mut events = vec![
            self.event("response.created", json!({ "response": self.response("in_progress") })),
            self.event("response.in_progress", json!({ "response": self.response("in_progress") })),
        ];
        let mut index = 0;
        if self.reasoning {
            let item = json!({ "type": "reasoning", "id": "rs_scripted", "summary": [] });
            events.push(self.event("response.output_item.added", json!({ "output_index": 0, "item": item })));
            let summary = json!({ "item_id": "rs_scripted", "output_index": 0, "summary_index": 0,
                "delta": "**Planning the page**" });
            events.push(self.event("response.reasoning_summary_text.delta", summary));
            events.push(self.event("response.output_item.done", json!({ "output_index": 0, "item": item })));
            index = 1;
        }
        let item = json!({ "type": "message", "id": self.item_id(), "status": "in_progress", "role": "assistant", "content": [] });
        events.push(self.event("response.output_item.added", json!({ "output_index": index, "item": item })));
        let part = json!({ "type": "output_text", "text": "", "annotations": [] });
        events.push(self.event(
            "response.content_part.added",
            json!({ "item_id": self.item_id(),
            "output_index": index, "content_index": 0, "part": part }),
        ));
        events
    }

    fn delta(&mut self, index: usize) -> Event {
        // Written out rather than built as a `Value`: the token is already a JSON literal.
        let text = format!(
            r#"{{"type":"response.output_text.delta","item_id":"{}","output_index":{},"content_index":0,"delta":{},"logprobs":[],"sequence_number":{}}}"#,
            self.item_id(),
            usize::from(self.reasoning),
            self.plan.tokens[index],
            self.seq
        );
        self.seq += 1;
        Event { kind: "response.output_text.delta", json: text }
    }

    fn tail(&mut self) -> Option<Vec<Event>> {
        let index = usize::from(self.reasoning);
        match self.plan.end.clone() {
            End::Drop => None,
            End::Failed { code, message } => {
                let mut response = self.response("failed");
                response["error"] = json!({ "code": code, "message": message });
                Some(vec![self.event("response.failed", json!({ "response": response }))])
            }
            End::Completed => {
                let text: String = self.plan.tokens[..self.count]
                    .iter()
                    .filter_map(|t| serde_json::from_str::<String>(t).ok())
                    .collect();
                let part = json!({ "type": "output_text", "text": text, "annotations": [] });
                let item = json!({ "type": "message", "id": self.item_id(), "status": "completed",
                    "role": "assistant", "content": [part] });
                let incomplete = self.count < self.plan.tokens.len();
                let (kind, status) = if incomplete {
                    ("response.incomplete", "incomplete")
                } else {
                    ("response.completed", "completed")
                };
                let mut response = self.response(status);
                response["output"] = json!([item]);
                let output = u32::try_from(self.count).unwrap_or(u32::MAX);
                response["usage"] = json!({
                    "input_tokens": self.input_tokens, "input_tokens_details": { "cached_tokens": 0 },
                    "output_tokens": output, "output_tokens_details": { "reasoning_tokens": 0 },
                    "total_tokens": self.input_tokens.saturating_add(output),
                });
                if incomplete {
                    response["incomplete_details"] = json!({ "reason": "max_output_tokens" });
                }
                let item_id = self.item_id();
                Some(vec![
                    self.event(
                        "response.output_text.done",
                        json!({ "item_id": item_id,
                        "output_index": index, "content_index": 0, "text": text }),
                    ),
                    self.event(
                        "response.content_part.done",
                        json!({ "item_id": item_id,
                        "output_index": index, "content_index": 0, "part": part }),
                    ),
                    self.event("response.output_item.done", json!({ "output_index": index, "item": item })),
                    self.event(kind, json!({ "response": response })),
                ])
            }
        }
    }
}

#[cfg(test)]
#[path = "responses_stream_tests.rs"]
mod tests;
