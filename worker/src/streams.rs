//! Bookkeeping for the generations multiplexed on the gateway socket: stream ids, who listens to
//! each stream, frames waiting for the socket to open, and routing of incoming frames. Plain Rust,
//! tested natively; the worker's socket glue owns one and feeds it socket events.
//!
//! A lost socket does not fail the streams the gateway runs when it gave a resume token: the next
//! socket's first frame is a `Resume` with each open stream's last delta `seq`, the gateway sends
//! what was missed, and a frame that arrives twice is dropped. Only a stream the gateway no longer
//! has (its `resume_expired` error) or one the page gives up on fails.

use std::collections::{BTreeMap, VecDeque};

use flint_protocol::worker::{LaneEvent, frame_is_final, frame_stream};
use flint_protocol::{
    ClientMessage, ResumeRequest, ResumeStream, Secret, ServerMessage, StartRequest, StreamId,
};

/// Where an incoming frame goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed<H> {
    /// Text of a stream, in order, to parse.
    Text {
        /// The stream's listener.
        handler: H,
        /// The text.
        text: String,
        /// A delta's sequence number was not the expected one (a gateway bug worth logging).
        gap: bool,
    },
    /// Any other frame of a live stream, for the page (a final one ended the stream here).
    Frame {
        /// The stream's listener.
        handler: H,
        /// The frame.
        frame: ServerMessage,
    },
    /// A frame about the connection, for the page; a greeting's resume token is kept here.
    Connection(ServerMessage),
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
    /// The request's `stream` is its id when not 0 (the page chooses ids); else one is assigned.
    pub fn open(&mut self, mut request: StartRequest, handler: H) -> StreamId {
        let id = if request.stream != 0 { request.stream } else { self.next_id };
        self.next_id = id.wrapping_add(1).max(1);
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
    pub fn cancel(&mut self, stream: StreamId) -> Option<(H, LaneEvent)> {
        let live = self.live.get(&stream)?;
        if live.sent {
            self.queue(Some(stream), &ClientMessage::Cancel { stream });
            return None;
        }
        self.outbox.retain(|q| q.stream != Some(stream));
        let live = self.live.remove(&stream)?;
        Some((live.handler, LaneEvent::Cancelled))
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
    pub fn give_up_resuming(&mut self, message: &str) -> Vec<(H, LaneEvent)> {
        if self.resuming.take().is_none() {
            return Vec::new();
        }
        self.fail_sent(message)
    }

    fn fail_sent(&mut self, message: &str) -> Vec<(H, LaneEvent)> {
        let lost: Vec<StreamId> = self.live.iter().filter(|(_, l)| l.sent).map(|(&id, _)| id).collect();
        lost.into_iter()
            .filter_map(|id| self.live.remove(&id))
            .map(|l| (l.handler, LaneEvent::Lost(message.to_owned())))
            .collect()
    }

    /// The socket closed. With a resume token, streams the gateway had heard of wait for the next
    /// socket's `Resume` and nothing fails now; without one they are lost (the gateway dropped them
    /// with the connection). Streams still waiting to be sent stay queued either way.
    pub fn connection_lost(&mut self, message: &str) -> Vec<(H, LaneEvent)> {
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

    /// Routes one frame from the gateway. Only text, greetings and pongs are looked into: any
    /// other frame goes to the page whole, to its stream's listener when it names a live one.
    pub fn route(&mut self, message: ServerMessage) -> Routed<H> {
        match message {
            ServerMessage::Hello { protocol, gateway, resume, history } => {
                self.token = resume;
                Routed::Connection(ServerMessage::Hello { protocol, gateway, resume: None, history })
            }
            ServerMessage::Pong { .. } => Routed::Nothing,
            ServerMessage::Delta { stream, seq, text } => {
                let Some(live) = self.live.get_mut(&stream) else { return Routed::Nothing };
                // Already received (a resume repeats nothing the page asked right, but a late
                // frame of the old socket may still arrive): the text is not appended twice.
                if live.got_text && seq < live.next_seq {
                    return Routed::Nothing;
                }
                let gap = seq != live.next_seq;
                live.next_seq = seq.wrapping_add(1);
                live.got_text = true;
                Routed::Text { handler: live.handler.clone(), text, gap }
            }
            frame => {
                let Some(stream) = frame_stream(&frame) else { return Routed::Connection(frame) };
                let Some(live) = self.live.get(&stream) else { return Routed::Nothing };
                let handler = live.handler.clone();
                if frame_is_final(&frame) {
                    self.live.remove(&stream);
                }
                Routed::Frame { handler, frame }
            }
        }
    }
}

#[cfg(test)]
#[path = "streams_tests.rs"]
mod tests;
