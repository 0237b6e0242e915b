//! A page back on a new socket: `Resume` takes over the session its dropped socket left waiting,
//! sends each open stream exactly the frames the page missed, and lets the rest go.

use std::collections::HashSet;
use std::fmt::Display;

use axum::extract::ws::Message;
use flint_protocol::{ClientMessage, ErrorCode, ResumeRequest, StreamId};
use futures::{Sink, SinkExt, Stream, StreamExt};

use super::connection::{Closed, Connection};
use super::frames;
use super::replay::EXPIRED;
use super::resume::Unclaimed;

impl<S> Connection<S>
where
    S: Sink<Message> + Unpin,
    S::Error: Display,
{
    /// A page over its open-tabs limit: resumed only if its first frame, within a moment, takes
    /// over a waiting session of the same person (whose place among the tabs this socket takes).
    pub(super) async fn resume_at_limit<R, E>(&mut self, incoming: &mut R) -> bool
    where
        R: Stream<Item = Result<Message, E>> + Unpin,
    {
        let first = tokio::time::timeout(super::connection::RESUME_AT_LIMIT_WAIT, incoming.next()).await;
        let Ok(Some(Ok(Message::Text(text)))) = first else { return false };
        let Ok(ClientMessage::Resume(request)) = serde_json::from_str(&text) else { return false };
        self.fresh = false;
        matches!(self.resume(request).await, Ok(true)) && self.session.tab.is_some()
    }

    /// Takes over the session waiting under the request's token, if it is this person's, and
    /// brings each stream the page lists up to date; `Ok(true)` when a session was taken over.
    /// Streams it cannot bring back get `resume_expired` with the reason.
    pub(super) async fn resume(&mut self, request: ResumeRequest) -> Result<bool, Closed> {
        let claimed = self.state.resumes().claim(&request.token, &self.session.person).await;
        let adopted = match claimed {
            Ok(mut waiting) => {
                // The new socket's place among the person's tabs was only a stand-in for the
                // waiting one's: the tab counts once.
                if waiting.tab.is_none() {
                    waiting.tab = self.session.tab.take();
                }
                // The tab now lives under this socket's sign-in, checked when it opened.
                waiting.signin = self.session.signin.take();
                let stand_in = std::mem::replace(&mut self.session, waiting);
                drop(stand_in);
                tracing::Span::current().record("conn", self.session.conn);
                tracing::info!(conn = self.session.conn, streams = self.session.running.len(), "resumed");
                true
            }
            Err(Unclaimed::NotYours) => {
                // Answered as an unknown token would be: whether a token is live is not told.
                tracing::warn!(
                    person = %self.session.person.describe(),
                    "refused a resume with a token of another person's connection"
                );
                false
            }
            Err(Unclaimed::Unknown) => false,
        };
        let mut listed = HashSet::new();
        for asked in &request.streams {
            listed.insert(asked.stream);
            let missed =
                if adopted { self.session.replay.missed(asked.stream, asked.last_seq) } else { Err(EXPIRED) };
            match missed {
                Ok(frames) => {
                    for frame in frames {
                        self.sink.feed(Message::Text(frame)).await.map_err(|_| Closed::Dropped)?;
                    }
                }
                Err(why) => {
                    if adopted {
                        self.session.abandon(asked.stream, why);
                    }
                    let frame = frames::error(Some(asked.stream), ErrorCode::ResumeExpired, why);
                    self.sink.feed(Message::Text(frame)).await.map_err(|_| Closed::Dropped)?;
                }
            }
        }
        self.sink.flush().await.map_err(|_| Closed::Dropped)?;
        if adopted {
            // What the page no longer waits for (it saw the end, or gave up) runs and is kept
            // for nobody.
            let unlisted: Vec<StreamId> = self
                .session
                .running
                .keys()
                .copied()
                .chain(self.session.replay.known())
                .filter(|id| !listed.contains(id))
                .collect();
            for id in unlisted {
                if self.session.running.contains_key(&id) {
                    self.session.abandon(id, EXPIRED);
                } else {
                    self.session.replay.forget(id);
                }
            }
        }
        Ok(adopted)
    }
}
