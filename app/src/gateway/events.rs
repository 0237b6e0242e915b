//! What the worker tells the page about the connection and each stream, turned into what the page
//! shows: [`StreamEvent`]s for a generation, the greeting's and the quota's figures. Plain Rust,
//! tested natively.

use flint_protocol::worker::{LaneEvent, LaneUpdate, ParsedUpdate, frame_is_final};
use flint_protocol::{ErrorCode, FinishReason, PROTOCOL_VERSION, ServerMessage, StreamMetrics, Usage};

use super::ConnectionProblem;

/// What happened to one stream, as its listener sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The stream waits for its provider to free a slot; `Started` follows when it runs.
    Queued {
        /// Generations that start before it.
        ahead: u32,
    },
    /// The upstream accepted the request.
    Started {
        /// The provider serving it.
        provider: String,
        /// The model actually serving it.
        model: String,
    },
    /// More text arrived; the worker parses it, the page only counts it (speed figures).
    Text {
        /// Its size in bytes.
        bytes: usize,
    },
    /// The model's reasoning so far (never code).
    Thinking {
        /// Reasoning tokens so far.
        tokens: u32,
        /// Bytes of summary text before `text`.
        from: u32,
        /// Summary text going on from `from`.
        text: String,
    },
    /// The provider has sent nothing for `silent_secs` seconds (0: it sends again).
    Stalled {
        /// Seconds of silence.
        silent_secs: u32,
        /// The provider.
        provider: String,
    },
    /// The stream ended normally; no more events follow but its last parse.
    Done {
        /// Why it ended.
        finish: FinishReason,
        /// Token counts.
        usage: Usage,
        /// Gateway-side timing.
        metrics: StreamMetrics,
    },
    /// The stream failed; text received so far stays valid; no more events follow but its last
    /// parse.
    Failed {
        /// The gateway's error kind; `None` when the connection itself was lost.
        code: Option<ErrorCode>,
        /// A sentence a person can act on.
        message: String,
    },
    /// The worker's parse of the stream since the previous one.
    Parsed(Box<ParsedUpdate>),
}

impl StreamEvent {
    /// The event a gateway frame about a stream means; `None` for a kind the page does not show.
    pub fn from_frame(frame: ServerMessage) -> Option<Self> {
        Some(match frame {
            ServerMessage::Queued { ahead, .. } => Self::Queued { ahead },
            ServerMessage::Started { provider, model, .. } => Self::Started { provider, model },
            ServerMessage::Thinking { tokens, from, text, .. } => Self::Thinking { tokens, from, text },
            ServerMessage::Stalled { silent_secs, provider, .. } => Self::Stalled { silent_secs, provider },
            ServerMessage::Done { finish, usage, metrics, .. } => Self::Done { finish, usage, metrics },
            ServerMessage::Error { code, message, retry_after_ms, .. } => {
                let message = match retry_after_ms {
                    Some(ms) if !message.contains("retry") && !message.contains("Retry") => {
                        format!("{message} (retry in {:.0} s)", (ms as f64 / 1000.0).ceil())
                    }
                    _ => message,
                };
                Self::Failed { code: Some(code), message }
            }
            // Text goes to the worker's parser, and any other kind is not a stream's to show.
            _ => return None,
        })
    }

    /// The events of a stream's update, in order: its text count, its frames, its parse; and
    /// whether it ended (its listener is no longer needed).
    pub fn of_update(update: LaneUpdate) -> (Vec<Self>, bool) {
        let mut events = Vec::with_capacity(update.events.len() + 2);
        let mut ended = false;
        if update.text_bytes > 0 {
            events.push(Self::Text { bytes: update.text_bytes as usize });
        }
        for event in update.events {
            let event = match event {
                LaneEvent::Frame(frame) => {
                    ended |= frame_is_final(&frame);
                    Self::from_frame(frame)
                }
                LaneEvent::Lost(message) => {
                    ended = true;
                    Some(Self::Failed { code: None, message })
                }
                LaneEvent::Cancelled => {
                    ended = true;
                    Some(Self::Done {
                        finish: FinishReason::Cancelled,
                        usage: Usage::default(),
                        metrics: StreamMetrics::default(),
                    })
                }
            };
            events.extend(event);
        }
        events.extend(update.parsed.map(|p| Self::Parsed(Box::new(p))));
        (events, ended)
    }
}

/// A daily token quota as the gateway reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Tokens generated today.
    pub used: u64,
    /// The day's quota.
    pub limit: u64,
    /// Until it renews, in milliseconds (from when it was sent).
    pub resets_in_ms: u64,
}

/// What a frame about the connection changes on the page.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectionNews {
    /// The gateway's greeting: its version, whether history syncs, and a problem when the
    /// protocols differ (`None` clears an earlier one).
    Hello {
        /// Its build version.
        gateway: String,
        /// Whether the person may sync their history there.
        history: bool,
        /// A mismatch to show.
        problem: Option<ConnectionProblem>,
    },
    /// The gateway rejected a frame.
    Problem(ConnectionProblem),
    /// The person's quota.
    Quota(Quota),
    /// Nothing to show.
    Nothing,
}

impl ConnectionNews {
    /// What `frame` means for the page.
    pub fn of(frame: ServerMessage) -> Self {
        match frame {
            ServerMessage::Hello { protocol, gateway, history, .. } => Self::Hello {
                gateway,
                history,
                problem: (protocol != PROTOCOL_VERSION).then(|| {
                    ConnectionProblem::said(format!(
                        "The gateway speaks protocol {protocol} and this page protocol {PROTOCOL_VERSION}: \
                         reload the page."
                    ))
                }),
            },
            ServerMessage::Error { stream: None, message, .. } => {
                Self::Problem(ConnectionProblem::said(message))
            }
            ServerMessage::Quota { used, limit, resets_in_ms } => {
                Self::Quota(Quota { used, limit, resets_in_ms })
            }
            _ => Self::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_says_when_to_retry() {
        let err = ServerMessage::Error {
            stream: Some(1),
            code: ErrorCode::RateLimited,
            message: "Slow down.".into(),
            retry_after_ms: Some(1500),
        };
        assert_eq!(
            StreamEvent::from_frame(err),
            Some(StreamEvent::Failed {
                code: Some(ErrorCode::RateLimited),
                message: "Slow down. (retry in 2 s)".into()
            })
        );
    }

    #[test]
    fn an_update_gives_text_then_frames_then_the_parse() {
        let update = LaneUpdate {
            stream: 2,
            text_bytes: 10,
            events: vec![
                LaneEvent::Frame(ServerMessage::Queued { stream: 2, ahead: 1 }),
                LaneEvent::Frame(ServerMessage::Done {
                    stream: 2,
                    finish: FinishReason::Stop,
                    usage: Usage::default(),
                    metrics: StreamMetrics::default(),
                }),
            ],
            parsed: Some(ParsedUpdate { stream: 2, done: true, ..ParsedUpdate::default() }),
        };
        let (events, ended) = StreamEvent::of_update(update);
        assert!(ended);
        assert_eq!(events.len(), 4);
        assert_eq!(events[0], StreamEvent::Text { bytes: 10 });
        assert_eq!(events[1], StreamEvent::Queued { ahead: 1 });
        assert!(matches!(events[2], StreamEvent::Done { finish: FinishReason::Stop, .. }));
        assert!(matches!(&events[3], StreamEvent::Parsed(p) if p.done));
    }

    #[test]
    fn lost_and_cancelled_end_the_stream() {
        let lost =
            LaneUpdate { stream: 1, events: vec![LaneEvent::Lost("gone".into())], ..LaneUpdate::default() };
        let (events, ended) = StreamEvent::of_update(lost);
        assert!(ended);
        assert_eq!(events, [StreamEvent::Failed { code: None, message: "gone".into() }]);
        let stopped = LaneUpdate { stream: 1, events: vec![LaneEvent::Cancelled], ..LaneUpdate::default() };
        let (events, ended) = StreamEvent::of_update(stopped);
        assert!(ended && matches!(events[0], StreamEvent::Done { finish: FinishReason::Cancelled, .. }));
        let quiet = LaneUpdate { stream: 1, ..LaneUpdate::default() };
        assert_eq!(StreamEvent::of_update(quiet), (Vec::new(), false));
    }

    #[test]
    fn a_greeting_from_another_protocol_is_a_problem() {
        let hello =
            |protocol| ServerMessage::Hello { protocol, gateway: "g".into(), resume: None, history: true };
        let ConnectionNews::Hello { problem, history, .. } = ConnectionNews::of(hello(PROTOCOL_VERSION))
        else {
            panic!("a greeting")
        };
        assert!(problem.is_none() && history);
        let ConnectionNews::Hello { problem: Some(p), .. } = ConnectionNews::of(hello(PROTOCOL_VERSION + 1))
        else {
            panic!("a mismatch")
        };
        assert!(p.text.contains("reload"), "{}", p.text);
        let quota = ServerMessage::Quota { used: 1, limit: 2, resets_in_ms: 3 };
        assert_eq!(
            ConnectionNews::of(quota),
            ConnectionNews::Quota(Quota { used: 1, limit: 2, resets_in_ms: 3 })
        );
    }
}
