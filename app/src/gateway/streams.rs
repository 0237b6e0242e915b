//! Bookkeeping for the generations multiplexed on the gateway socket: stream ids, who listens to
//! each stream, frames waiting for the socket to open, and routing of incoming frames. Plain Rust,
//! tested natively; the hook in [`super::hook`] owns one and feeds it socket events.
//!
//! A lost socket does not fail the streams the gateway runs when it gave a resume token: the next
//! socket's first frame is a `Resume` with each open stream's last delta `seq`, the gateway sends
//! what was missed, and a frame that arrives twice is dropped. Only a stream the gateway no longer
//! has (its `resume_expired` error) or one the page gives up on fails.

use std::collections::{BTreeMap, VecDeque};

use flint_protocol::{
    ClientMessage, ErrorCode, FinishReason, ResumeRequest, ResumeStream, Secret, ServerMessage, StartRequest,
    StreamId, StreamMetrics, Usage,
};

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
    /// More text.
    Delta {
        /// Text to append.
        text: String,
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
    /// The stream ended normally; no more events follow.
    Done {
        /// Why it ended.
        finish: FinishReason,
        /// Token counts.
        usage: Usage,
        /// Gateway-side timing.
        metrics: StreamMetrics,
    },
    /// The stream failed; text received so far stays valid; no more events follow.
    Failed {
        /// The gateway's error kind; `None` when the connection itself was lost.
        code: Option<ErrorCode>,
        /// A sentence a person can act on.
        message: String,
    },
}

impl StreamEvent {
    /// Whether this event ends its stream.
    pub fn is_final(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Failed { .. })
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

/// Where an incoming frame goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed<H> {
    /// To a stream's listener.
    Stream {
        /// The listener.
        handler: H,
        /// The event.
        event: StreamEvent,
        /// A delta's sequence number was not the expected one (a gateway bug worth logging).
        gap: bool,
    },
    /// The gateway's greeting.
    Hello {
        /// Its protocol version.
        protocol: u32,
        /// Its build version.
        gateway: String,
        /// Whether the person may sync their history there.
        history: bool,
    },
    /// An error about a frame the client sent, not tied to a stream.
    ConnectionError {
        /// Kind.
        code: ErrorCode,
        /// Explanation.
        message: String,
    },
    /// The person's daily quota.
    Quota(Quota),
    /// Nothing to do (a pong, or a frame for a stream that already ended).
    Nothing,
}

/// A frame waiting for the socket.
#[derive(Debug)]
struct Queued {
    /// The stream it belongs to, if any.
    stream: Option<StreamId>,
    /// Whether it is that stream's `Start` (only those survive a reconnect).
    start: bool,
    json: String,
}

#[derive(Debug)]
struct Live<H> {
    handler: H,
    next_seq: u32,
    /// A delta arrived, so `next_seq - 1` is the last one received.
    got_text: bool,
    sent: bool,
}

/// Live streams and the frames waiting for the socket.
#[derive(Debug)]
pub struct Streams<H> {
    next_id: StreamId,
    live: BTreeMap<StreamId, Live<H>>,
    outbox: VecDeque<Queued>,
    /// The person's own keys, by provider: told to every connection before anything else, since
    /// the gateway keeps them per connection.
    keys: BTreeMap<String, Secret>,
    /// The current connection's resume token, from its `Hello`.
    token: Option<Secret>,
    /// The token to resume with once a socket opens again; sent streams wait for it.
    resuming: Option<Secret>,
}

impl<H> Default for Streams<H> {
    fn default() -> Self {
        Self {
            next_id: 1,
            live: BTreeMap::new(),
            outbox: VecDeque::new(),
            keys: BTreeMap::new(),
            token: None,
            resuming: None,
        }
    }
}

impl<H: Clone> Streams<H> {
    /// Registers a new stream; its `Start` frame waits in the outbox until [`Self::take_outbox`].
    pub fn open(&mut self, mut request: StartRequest, handler: H) -> StreamId {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        request.stream = id;
        self.live.insert(id, Live { handler, next_seq: 0, got_text: false, sent: false });
        self.queue(Some(id), &ClientMessage::Start(request));
        if let Some(last) = self.outbox.back_mut() {
            last.start = true;
        }
        id
    }

    /// Uses the person's own key for `provider` from now on (`None`: the gateway's again), on this
    /// connection and every later one.
    pub fn use_key(&mut self, provider: &str, key: Option<Secret>) {
        match &key {
            Some(key) => self.keys.insert(provider.to_owned(), key.clone()),
            None => self.keys.remove(provider),
        };
        self.queue(None, &ClientMessage::UseKey { provider: provider.to_owned(), key });
    }

    /// Queues a frame that belongs to no stream (a ping).
    pub fn queue_control(&mut self, message: &ClientMessage) {
        self.queue(None, message);
    }

    fn queue(&mut self, stream: Option<StreamId>, message: &ClientMessage) {
        match serde_json::to_string(message) {
            Ok(json) => self.outbox.push_back(Queued { stream, start: false, json }),
            // Our own types always serialise; nothing sensible to send otherwise.
            Err(_) => debug_assert!(false, "client frame failed to serialise"),
        }
    }

    /// Asks to stop `stream`. A stream whose `Start` was never sent ends here and now: its listener
    /// is returned with the final event to deliver.
    pub fn cancel(&mut self, stream: StreamId) -> Option<(H, StreamEvent)> {
        let live = self.live.get(&stream)?;
        if live.sent {
            self.queue(Some(stream), &ClientMessage::Cancel { stream });
            return None;
        }
        self.outbox.retain(|q| q.stream != Some(stream));
        let live = self.live.remove(&stream)?;
        let done = StreamEvent::Done {
            finish: FinishReason::Cancelled,
            usage: Usage::default(),
            metrics: StreamMetrics::default(),
        };
        Some((live.handler, done))
    }

    /// Frames to send now that the socket is open; their streams count as sent. After a lost
    /// connection the first is the `Resume` of the streams that wait for it.
    pub fn take_outbox(&mut self) -> Vec<String> {
        let resume = self.resuming.take().and_then(|token| {
            let streams = self
                .live
                .iter()
                .filter(|(_, l)| l.sent)
                .map(|(&stream, l)| ResumeStream {
                    stream,
                    last_seq: l.got_text.then(|| l.next_seq.wrapping_sub(1)),
                })
                .collect();
            serde_json::to_string(&ClientMessage::Resume(ResumeRequest { token, streams })).ok()
        });
        let frames: Vec<Queued> = self.outbox.drain(..).collect();
        resume
            .into_iter()
            .chain(frames.into_iter().map(|q| {
                if let Some(live) = q.stream.and_then(|s| self.live.get_mut(&s)) {
                    live.sent = true;
                }
                q.json
            }))
            .collect()
    }

    /// Whether frames are waiting.
    pub fn has_outbox(&self) -> bool {
        !self.outbox.is_empty() || self.resuming.is_some()
    }

    /// The page stops waiting for a resume (the gateway stayed away too long): the streams that
    /// waited fail with `message`.
    pub fn give_up_resuming(&mut self, message: &str) -> Vec<(H, StreamEvent)> {
        if self.resuming.take().is_none() {
            return Vec::new();
        }
        self.fail_sent(message)
    }

    fn fail_sent(&mut self, message: &str) -> Vec<(H, StreamEvent)> {
        let lost: Vec<StreamId> = self.live.iter().filter(|(_, l)| l.sent).map(|(&id, _)| id).collect();
        lost.into_iter()
            .filter_map(|id| self.live.remove(&id))
            .map(|l| (l.handler, StreamEvent::Failed { code: None, message: message.to_owned() }))
            .collect()
    }

    /// The socket closed. With a resume token, streams the gateway had heard of wait for the next
    /// socket's `Resume` and nothing fails now; without one they are lost (the gateway dropped them
    /// with the connection). Streams still waiting to be sent stay queued either way.
    pub fn connection_lost(&mut self, message: &str) -> Vec<(H, StreamEvent)> {
        // Cancels and pings for the old connection mean nothing on the next one; the keys go
        // first on it (after the resume), before the starts that may need them.
        self.outbox.retain(|q| q.start);
        for (provider, key) in self.keys.iter().rev() {
            let frame = ClientMessage::UseKey { provider: provider.clone(), key: Some(key.clone()) };
            if let Ok(json) = serde_json::to_string(&frame) {
                self.outbox.push_front(Queued { stream: None, start: false, json });
            }
        }
        // A socket that opened and closed again before resuming keeps the older token: the
        // streams wait under it.
        if let Some(token) = self.token.take() {
            self.resuming = Some(token);
        }
        if self.resuming.is_some() {
            return Vec::new();
        }
        self.fail_sent(message)
    }

    /// Number of streams still running or waiting to start.
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// Routes one frame from the gateway.
    pub fn route(&mut self, message: ServerMessage) -> Routed<H> {
        let (stream, event, seq) = match message {
            ServerMessage::Hello { protocol, gateway, resume, history } => {
                self.token = resume;
                return Routed::Hello { protocol, gateway, history };
            }
            ServerMessage::Pong { .. } => return Routed::Nothing,
            ServerMessage::Quota { used, limit, resets_in_ms } => {
                return Routed::Quota(Quota { used, limit, resets_in_ms });
            }
            ServerMessage::Error { stream: None, code, message, .. } => {
                return Routed::ConnectionError { code, message };
            }
            ServerMessage::Error { stream: Some(stream), code, message, retry_after_ms } => {
                let message = match retry_after_ms {
                    Some(ms) if !message.contains("retry") && !message.contains("Retry") => {
                        format!("{message} (retry in {:.0} s)", (ms as f64 / 1000.0).ceil())
                    }
                    _ => message,
                };
                (stream, StreamEvent::Failed { code: Some(code), message }, None)
            }
            ServerMessage::Queued { stream, ahead } => (stream, StreamEvent::Queued { ahead }, None),
            ServerMessage::Started { stream, provider, model } => {
                (stream, StreamEvent::Started { provider, model }, None)
            }
            ServerMessage::Delta { stream, seq, text } => (stream, StreamEvent::Delta { text }, Some(seq)),
            ServerMessage::Thinking { stream, tokens, from, text } => {
                (stream, StreamEvent::Thinking { tokens, from, text }, None)
            }
            ServerMessage::Stalled { stream, silent_secs, provider } => {
                (stream, StreamEvent::Stalled { silent_secs, provider }, None)
            }
            ServerMessage::Done { stream, finish, usage, metrics } => {
                (stream, StreamEvent::Done { finish, usage, metrics }, None)
            }
        };
        let Some(live) = self.live.get_mut(&stream) else { return Routed::Nothing };
        let mut gap = false;
        if let Some(seq) = seq {
            // Already received (a resume repeats nothing the page asked right, but a late frame
            // of the old socket may still arrive): the text is not appended twice.
            if live.got_text && seq < live.next_seq {
                return Routed::Nothing;
            }
            gap = seq != live.next_seq;
            live.next_seq = seq.wrapping_add(1);
            live.got_text = true;
        }
        let handler = live.handler.clone();
        if event.is_final() {
            self.live.remove(&stream);
        }
        Routed::Stream { handler, event, gap }
    }
}

#[cfg(test)]
#[path = "streams_tests.rs"]
mod tests;
