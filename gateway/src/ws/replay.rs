//! What a connection keeps of each stream's frames, so a page that lost its socket can be sent
//! exactly the frames it missed.
//!
//! The gateway cannot know which frames reached the page before a socket broke (some sit in
//! buffers on the way), so it keeps every frame of a stream, `Done` and `Error` included, until the
//! page has moved on. Frames are shared buffers (`Utf8Bytes`), so keeping them copies nothing. The
//! total is capped per connection (`server.resume_buffer_bytes`): while the socket is up the oldest
//! frames go first (the page has most likely read them), while it is away nothing may go, so going
//! over the cap gives up on resuming (the caller stops the streams) and says why.
//!
//! A stream that ended needs nothing kept once the page has all of it. The connection learns that
//! from a WebSocket ping that carries [`Replay::mark`]: the browser answers a ping by itself, after
//! every frame sent before it arrived, so its pong with the mark (see [`Replay::delivered`]) frees
//! the streams that had ended by then. Without it a tab held its finished answers' frames until
//! the 8 MiB cap, a resume or its end (~30 KB a stream: `bench/scale-issue13.md`).

use std::collections::{HashMap, VecDeque};

use axum::extract::ws::Utf8Bytes;
use flint_protocol::StreamId;

use super::frames::Outgoing;

/// What a resuming page is told for a stream the gateway has no frames for.
pub(crate) const EXPIRED: &str = "The gateway no longer has this answer: the connection was away longer \
    than it waits (server.resume_grace_secs), or the gateway was restarted. The text received so far \
    is kept; run again.";
/// … for streams stopped because the frames kept for the page outgrew the cap.
pub(crate) const OVERFLOWED: &str = "While the connection was away, this tab's answers grew past what \
    the gateway keeps for it (server.resume_buffer_bytes), so they were stopped. The text received so \
    far is kept; run again.";
/// … for a stream whose missed frames were let go while the socket was still up.
const TRIMMED: &str = "The part of this answer the page missed is no longer kept (it outgrew \
    server.resume_buffer_bytes). The text received so far is kept; run again.";

/// One stream's frames still kept.
#[derive(Debug, Default)]
struct Log {
    frames: VecDeque<(Option<u32>, Utf8Bytes)>,
    /// Frames were let go from the front.
    trimmed: bool,
    /// The last delta `seq` let go, if any.
    trimmed_through: Option<u32>,
    /// Its `Done` or `Error` is among the frames: when, in the order streams ended (see
    /// [`Replay::mark`]).
    ended: Option<u64>,
}

/// Every kept frame of one connection, and why streams can no longer be resumed.
#[derive(Debug)]
pub(crate) struct Replay {
    cap: usize,
    bytes: usize,
    logs: HashMap<StreamId, Log>,
    /// Streams that ended, oldest first, with when they ended: the first to let go.
    ended: VecDeque<(u64, StreamId)>,
    /// Streams that ended so far.
    ended_total: u64,
    /// Streams given up on, with the sentence a resuming page gets.
    lost: HashMap<StreamId, &'static str>,
}

impl Replay {
    /// Keeps at most `cap` bytes of frames.
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            bytes: 0,
            logs: HashMap::new(),
            ended: VecDeque::new(),
            ended_total: 0,
            lost: HashMap::new(),
        }
    }

    /// How many streams have ended: a ping carrying this asks the page to confirm it has them.
    pub(crate) fn mark(&self) -> u64 {
        self.ended_total
    }

    /// The page answered the ping that carried `mark`, so it has every frame sent before it: the
    /// streams that had ended by then are let go. They are not "lost": the page has them whole
    /// and never asks for them again.
    pub(crate) fn delivered(&mut self, mark: u64) {
        while let Some(&(at, id)) = self.ended.front() {
            if at >= mark {
                break;
            }
            self.ended.pop_front();
            if self.logs.get(&id).is_some_and(|l| l.ended == Some(at)) {
                self.forget(id);
            }
        }
    }

    /// Bytes kept now.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// A new stream `id`: whatever was kept under that id before is forgotten.
    pub(crate) fn open(&mut self, id: StreamId) {
        self.forget(id);
        self.logs.insert(id, Log::default());
    }

    /// Whether frames of `id` are to be dropped (it was given up on).
    pub(crate) fn is_lost(&self, id: StreamId) -> bool {
        self.lost.contains_key(&id)
    }

    /// Keeps a frame being sent on a live socket, letting the oldest go past the cap.
    pub(crate) fn keep(&mut self, out: &Outgoing) {
        self.push(out);
        while self.bytes > self.cap && self.let_go_oldest() {}
    }

    /// Keeps a frame produced while the socket is away. `false`: the cap is reached, nothing more
    /// can be kept, and every stream must be stopped (see [`Self::give_up`]).
    pub(crate) fn keep_away(&mut self, out: &Outgoing) -> bool {
        self.push(out);
        self.bytes <= self.cap
    }

    fn push(&mut self, out: &Outgoing) {
        if self.is_lost(out.stream) {
            return;
        }
        let log = self.logs.entry(out.stream).or_default();
        log.frames.push_back((out.seq, out.frame.clone()));
        self.bytes += out.frame.len();
        if out.last && log.ended.is_none() {
            log.ended = Some(self.ended_total);
            self.ended.push_back((self.ended_total, out.stream));
            self.ended_total += 1;
        }
    }

    /// Lets go of one stream's frames that most likely reached the page: a whole ended stream
    /// first, else the front frame of the longest running one. `false` when nothing is left.
    fn let_go_oldest(&mut self) -> bool {
        while let Some((at, id)) = self.ended.pop_front() {
            if let Some(log) = self.logs.get(&id).filter(|l| l.ended == Some(at)) {
                let freed: usize = log.frames.iter().map(|(_, f)| f.len()).sum();
                self.bytes -= freed;
                self.logs.remove(&id);
                self.lost.insert(id, TRIMMED);
                return true;
            }
        }
        let Some(log) =
            self.logs.values_mut().filter(|l| !l.frames.is_empty()).max_by_key(|l| l.frames.len())
        else {
            return false;
        };
        let Some((seq, frame)) = log.frames.pop_front() else { return false };
        self.bytes -= frame.len();
        log.trimmed = true;
        if seq.is_some() {
            log.trimmed_through = seq;
        }
        true
    }

    /// Gives up on every stream kept, with `why` for the page.
    pub(crate) fn give_up(&mut self, ids: impl IntoIterator<Item = StreamId>, why: &'static str) {
        let kept: Vec<StreamId> = self.logs.keys().copied().collect();
        for id in kept.into_iter().chain(ids) {
            self.give_up_one(id, why);
        }
    }

    /// Gives up on one stream, with `why` for the page.
    pub(crate) fn give_up_one(&mut self, id: StreamId, why: &'static str) {
        self.forget(id);
        self.lost.insert(id, why);
    }

    /// Forgets `id` entirely.
    pub(crate) fn forget(&mut self, id: StreamId) {
        if let Some(log) = self.logs.remove(&id) {
            self.bytes -= log.frames.iter().map(|(_, f)| f.len()).sum::<usize>();
        }
        self.lost.remove(&id);
    }

    /// Streams kept or given up on.
    pub(crate) fn known(&self) -> Vec<StreamId> {
        self.logs.keys().chain(self.lost.keys()).copied().collect()
    }

    /// The frames of `id` after delta `last_seq` (all of them for `None`), or why they are gone.
    pub(crate) fn missed(&self, id: StreamId, last_seq: Option<u32>) -> Result<Vec<Utf8Bytes>, &'static str> {
        if let Some(why) = self.lost.get(&id) {
            return Err(why);
        }
        let log = self.logs.get(&id).ok_or(EXPIRED)?;
        let from = match (last_seq, log.trimmed) {
            (None, false) => 0,
            // Frames the page never saw were let go.
            (None, true) => return Err(TRIMMED),
            (Some(last), _) if log.trimmed && log.trimmed_through.is_none_or(|t| last < t) => {
                return Err(TRIMMED);
            }
            (Some(last), _) if log.trimmed_through == Some(last) => 0,
            (Some(last), _) => {
                // A seq this gateway never sent is not a place to go on from.
                let at = log.frames.iter().position(|(seq, _)| *seq == Some(last)).ok_or(EXPIRED)?;
                at + 1
            }
        };
        Ok(log.frames.iter().skip(from).map(|(_, frame)| frame.clone()).collect())
    }
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
