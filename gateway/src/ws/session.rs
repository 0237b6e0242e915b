//! What a connection holds apart from its socket: its streams, the person's own keys, their place
//! among the person's tabs and the frames kept for a resume. A dropped socket's session waits for
//! the page to come back ([`super::resume`]) and moves, whole, to the page's new socket.

use std::collections::HashMap;

use flint_protocol::{Secret, StreamId};
use tokio::sync::mpsc;
use tokio::task::{self, JoinSet};
use tokio_util::sync::CancellationToken;

use super::frames::Outgoing;
use super::replay::Replay;
use crate::AppState;
use crate::auth::SessionWatch;
use crate::limits::SocketGuard;
use crate::person::Person;

/// Frames waiting between the stream tasks and the socket; tasks wait when it is full.
const OUTGOING_CAPACITY: usize = 256;

/// A running stream as the connection sees it.
pub(crate) struct Running {
    pub cancel: CancellationToken,
    pub task: task::Id,
}

/// One tab's connection state, which outlives a socket that drops.
pub(crate) struct Session {
    /// The id providers know this tab by (the Responses provider keeps its sockets under it), kept
    /// across resumes so those survive too.
    pub conn: u64,
    pub person: Person,
    /// A hash of `person`, the key providers take turns by.
    pub person_key: u64,
    /// The person's own keys, by provider, for this connection only (never logged: `Secret`).
    pub keys: HashMap<String, Secret>,
    pub running: HashMap<StreamId, Running>,
    pub tasks: JoinSet<StreamId>,
    pub out: mpsc::Sender<Outgoing>,
    pub from_streams: mpsc::Receiver<Outgoing>,
    /// The person's place among their open tabs: a session waiting for its page still counts.
    pub tab: Option<SocketGuard>,
    pub replay: Replay,
    /// The sign-in the socket was opened under (tokens mode): when it ends, so does the tab.
    pub signin: Option<SessionWatch>,
}

impl Session {
    /// A fresh session for connection `conn`.
    pub(crate) fn new(conn: u64, person: Person, person_key: u64, replay_cap: usize) -> Self {
        let (out, from_streams) = mpsc::channel(OUTGOING_CAPACITY);
        Self {
            conn,
            person,
            person_key,
            keys: HashMap::new(),
            running: HashMap::new(),
            tasks: JoinSet::new(),
            out,
            from_streams,
            tab: None,
            replay: Replay::new(replay_cap),
            signin: None,
        }
    }

    /// A stream frame arrived: the stream is over if it was its last. Returns whether the frame is
    /// for the page (a stream given up on sends nothing more).
    pub(crate) fn arrived(&mut self, out: &Outgoing) -> bool {
        if out.last {
            self.running.remove(&out.stream);
        }
        !self.replay.is_lost(out.stream)
    }

    /// Stops `id` and drops whatever it still sends.
    pub(crate) fn abandon(&mut self, id: StreamId, why: &'static str) {
        if let Some(running) = self.running.get(&id) {
            running.cancel.cancel();
        }
        self.replay.give_up_one(id, why);
    }

    /// The end of the tab: every stream is stopped and what providers keep for it is let go.
    pub(crate) async fn end(mut self, state: &AppState) {
        for running in self.running.values() {
            running.cancel.cancel();
        }
        // Aborting drops every provider stream, which closes the upstream requests.
        self.tasks.shutdown().await;
        // Only now, with none of its streams left to hand a socket back: what providers keep open
        // for this tab (the Responses provider's sockets) closes.
        for provider in state.providers() {
            provider.client_closed(self.conn);
        }
    }
}
