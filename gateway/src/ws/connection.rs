//! The connection loop: one `select!` over client frames, stream frames, the keep-alive timer and
//! shutdown. What outlives a socket (streams, keys, the tab's place) is its [`Session`]; a socket
//! that drops without a goodbye leaves it waiting for the page to resume ([`resume`]).

use std::fmt::Display;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::ws::{Message, Utf8Bytes};
use flint_protocol::{ClientMessage, ErrorCode, PROTOCOL_VERSION, Secret, ServerMessage, StreamId};
use futures::{Sink, SinkExt, Stream, StreamExt};
use serde::Deserialize;
use tokio::task;
use tokio::time::Instant;
use tracing::instrument;

use super::frames::{self, Outgoing};
use super::session::Session;
use super::{peer, resume};
use crate::AppState;
use crate::auth::SessionWatch;
use crate::history;
use crate::limits::Refusal;
use crate::person::Person;

/// How often an idle connection is pinged, so proxies do not close it.
const KEEPALIVE: Duration = Duration::from_secs(20);
/// How long a page at its open-tabs limit has to send `Resume` (its waiting tab holds its place).
pub(super) const RESUME_AT_LIMIT_WAIT: Duration = Duration::from_secs(2);
/// Close codes of a page that left on purpose (closed, reloaded, navigated away): nothing to keep.
const LEFT_ON_PURPOSE: [u16; 2] = [1000, 1001];

pub(super) struct Connection<S> {
    pub(super) sink: S,
    pub(super) state: AppState,
    pub(super) session: Session,
    /// The token of this socket's `Hello`, under which its session waits if the socket drops.
    token: Option<Secret>,
    /// Nothing has arrived yet: only now may the page resume.
    pub(super) fresh: bool,
    /// The last [`Replay::mark`](super::replay::Replay::mark) a ping asked the page to confirm.
    receipt_asked: u64,
    /// Another gateway holds the session the page asked to resume: a socket open to it, and the
    /// `Resume` to send it first.
    /// Boxed, as are the relay's futures below: held inline, a peer socket (rustls state and
    /// all) and its connect and relay futures made every tab cost ~15 KB more, relay or not
    /// (2,000 idle tabs: 29.6 KB a tab against 14.3 KB boxed, `bench/scale.md`).
    relay: Option<Box<(peer::Owner, Utf8Bytes)>>,
}

/// The socket is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Closed {
    /// It failed or closed without a goodbye: the page may come back for its session.
    Dropped,
    /// The page said goodbye, or the gateway is stopping.
    Left,
    /// The page came back on another socket and took the session over.
    Replaced,
    /// The page asked for a session another gateway holds: the socket is relayed there.
    Relayed,
}

/// Serves one WebSocket connection until the client leaves or the gateway shuts down.
///
/// Sends `Hello` first (with a resume token when `server.resume_grace_secs` is not 0); a client
/// that asked for another `protocol` version gets an `unsupported_version` error and the socket is
/// closed. When the page leaves, all its streams are cancelled; when the socket drops, they run on
/// for the grace period, for the page to resume. A person over their open-tabs limit gets the
/// reason (`rate_limited`) and the socket is closed. A socket opened under a sign-in (`signin`)
/// is closed, its streams stopped, when that sign-in ends.
// The connection's and its streams' spans are at `debug`, so the default `info` log does not make
// them: tracing-subscriber's registry keeps a slot and a hash map for every span it ever held at
// once, and 2,000 streams' worth of those, made mid-burst, pinned 14 MB of the heap for good (a
// minute after 2,000 streams, 2.4x a fresh gateway against 1.33x; `bench/scale.md`). Its `info`
// lines name their connection and stream themselves.
#[instrument(level = "debug", skip_all, fields(conn, stream))]
pub async fn serve_socket<S, R, E>(
    sink: S,
    mut incoming: R,
    state: AppState,
    conn: u64,
    protocol: Option<&str>,
    person: Person,
    signin: Option<SessionWatch>,
) where
    S: Sink<Message> + Unpin,
    S::Error: Display,
    R: Stream<Item = Result<Message, E>> + Unpin,
    E: Display,
{
    tracing::Span::current().record("conn", conn);
    let person_key = {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        person.hash(&mut hasher);
        hasher.finish()
    };
    let grace = Duration::from_secs(state.limits().resume_grace_secs);
    let token = if grace.is_zero() { None } else { resume::new_token() };
    let mut session = Session::new(conn, person, person_key, state.limits().resume_buffer_bytes);
    session.signin = signin;
    let tab = state.people().open_socket(&session.person);
    let mut c = Connection { sink, state, session, token, fresh: true, receipt_asked: 0, relay: None };
    tracing::info!(conn, "connected");
    if let Some(token) = &c.token {
        Box::pin(peer::announce(&c.state, token, true)).await;
    }
    let hello = ServerMessage::Hello {
        protocol: PROTOCOL_VERSION,
        gateway: env!("CARGO_PKG_VERSION").to_owned(),
        resume: c.token.clone(),
        history: history::may_sync(&c.state, &c.session.person),
    };
    if c.send(frames::encode(&hello)).await.is_err() {
        return;
    }
    if let Some(asked) = protocol.filter(|p| p.trim() != PROTOCOL_VERSION.to_string()) {
        let message = format!(
            "this gateway speaks protocol {PROTOCOL_VERSION}, the page asked for {asked}; reload the page"
        );
        let _ = c.send(frames::error(None, ErrorCode::UnsupportedVersion, message)).await;
        let _ = c.sink.close().await;
        return;
    }
    match tab {
        Ok(tab) => c.session.tab = Some(tab),
        // A page coming back for a tab that waits for it is within its limit: that tab holds its
        // place, and this socket takes it over.
        Err(refusal) => {
            if !c.resume_at_limit(&mut incoming).await {
                let _ = c.send(refused(None, refusal)).await;
                let _ = c.sink.close().await;
                return;
            }
        }
    }
    if let Some(quota) = c.state.people().quota(&c.session.person).await {
        let resets_in_ms = u64::try_from(quota.resets_in.as_millis()).unwrap_or(u64::MAX);
        let frame = ServerMessage::Quota { used: quota.used, limit: quota.limit, resets_in_ms };
        if c.send(frames::encode(&frame)).await.is_err() {
            return finish(c).await;
        }
    }
    let mut claimed = c.token.as_ref().map(|t| c.state.resumes().register(t, c.session.person.clone()));
    let mut handover = None;
    let shutdown = c.state.shutdown().clone();
    let mut keepalive = tokio::time::interval_at(Instant::now() + KEEPALIVE, KEEPALIVE);
    // After a stall, one ping is enough; a burst of catch-up pings is not.
    keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let closed = loop {
        let step = tokio::select! {
            biased;
            () = shutdown.cancelled() => Err(Closed::Left),
            () = SessionWatch::ended_or_never(c.session.signin.as_ref()) => c.sign_in_ended().await,
            reply = claim_of(&mut claimed) => match reply {
                Some(reply) => {
                    handover = Some(reply);
                    Err(Closed::Replaced)
                }
                None => {
                    claimed = None;
                    Ok(())
                }
            },
            Some(first) = c.session.from_streams.recv() => c.forward(first).await,
            frame = incoming.next() => match frame {
                Some(Ok(message)) => c.on_message(message).await,
                Some(Err(err)) => {
                    tracing::debug!(error = %err, "socket read failed");
                    Err(Closed::Dropped)
                }
                None => Err(Closed::Dropped),
            },
            Some(joined) = c.session.tasks.join_next_with_id(), if !c.session.tasks.is_empty() => {
                c.reap(joined).await
            }
            _ = keepalive.tick() => c.ask_receipt().await,
        };
        if let Err(closed) = step {
            break closed;
        }
    };
    let Connection { mut sink, state, session, token, relay, .. } = c;
    if let (Some(relayed), Closed::Relayed) = (relay, closed) {
        let (owner, first) = *relayed;
        // This socket's own session never ran anything: the tab lives on the owner, whose
        // `Hello` (relayed) gives the page the token to come back with.
        if let Some(token) = &token {
            state.resumes().forget(token);
            peer::withdraw(&state, token);
        }
        session.end(&state).await;
        Box::pin(peer::relay(&state, owner, first, &mut sink, &mut incoming)).await;
        let _ = sink.close().await;
        tracing::info!(conn, "relay ended");
        return;
    }
    let _ = sink.close().await;
    drop(sink);
    match (handover, token, claimed) {
        (Some(reply), token, _) => {
            tracing::info!(conn, "the page came back on another socket");
            if let Some(token) = token {
                peer::withdraw(&state, &token);
            }
            if let Err(session) = reply.send(session) {
                session.end(&state).await;
            }
        }
        (None, Some(token), Some(claimed)) if closed == Closed::Dropped && !grace.is_zero() => {
            resume::wait_for_page(&state, &token, session, grace, claimed).await;
        }
        (None, token, _) => {
            if let Some(token) = token {
                state.resumes().forget(&token);
                peer::withdraw(&state, &token);
            }
            session.end(&state).await;
        }
    }
    tracing::info!(conn, "disconnected");
}

/// The next claim of this connection's session; never, if it cannot be claimed.
async fn claim_of(claimed: &mut Option<resume::Claimed>) -> Option<tokio::sync::oneshot::Sender<Session>> {
    match claimed {
        Some(claimed) => claimed.await.ok(),
        None => std::future::pending().await,
    }
}

/// Before the loop: the session ends (nothing was registered for it yet).
async fn finish<S>(c: Connection<S>)
where
    S: Sink<Message> + Unpin,
{
    let Connection { mut sink, state, session, .. } = c;
    let _ = sink.close().await;
    session.end(&state).await;
}

impl<S> Connection<S>
where
    S: Sink<Message> + Unpin,
    S::Error: Display,
{
    pub(super) async fn send(&mut self, frame: Utf8Bytes) -> Result<(), Closed> {
        self.sink.send(Message::Text(frame)).await.map_err(|err| {
            tracing::debug!(error = %err, "socket write failed");
            Closed::Dropped
        })
    }

    /// Sends a stream frame and any others already waiting, then flushes once. Each is kept for a
    /// resume before it is written: a write that fails may still have lost it.
    async fn forward(&mut self, first: Outgoing) -> Result<(), Closed> {
        let mut next = Some(first);
        let mut batch = 0;
        while let Some(outgoing) = next {
            if self.session.arrived(&outgoing) {
                self.session.replay.keep(&outgoing);
                self.sink.feed(Message::Text(outgoing.frame)).await.map_err(|_| Closed::Dropped)?;
            }
            batch += 1;
            next = if batch < 64 { self.session.from_streams.try_recv().ok() } else { None };
        }
        self.sink.flush().await.map_err(|_| Closed::Dropped)?;
        if self.session.replay.mark() > self.receipt_asked {
            self.ask_receipt().await?;
        }
        Ok(())
    }

    /// Pings the page with the replay's mark: its pong says it has every frame sent so far, and
    /// the streams that had ended are let go (see `replay`). Also the keep-alive.
    async fn ask_receipt(&mut self) -> Result<(), Closed> {
        let mark = self.session.replay.mark();
        self.receipt_asked = mark;
        let payload = Bytes::copy_from_slice(&mark.to_be_bytes());
        self.sink.send(Message::Ping(payload)).await.map_err(|_| Closed::Dropped)
    }

    async fn on_message(&mut self, message: Message) -> Result<(), Closed> {
        match message {
            Message::Text(text) => self.on_text(text, Instant::now()).await,
            Message::Binary(_) => {
                self.send(frames::error(
                    None,
                    ErrorCode::BadFrame,
                    "binary frames are not used; send JSON text",
                ))
                .await
            }
            Message::Close(Some(goodbye)) if LEFT_ON_PURPOSE.contains(&goodbye.code) => Err(Closed::Left),
            // A close without a reason (a page replacing a silent socket) may be followed by a
            // resume.
            Message::Close(_) => Err(Closed::Dropped),
            Message::Pong(payload) => {
                // Only a pong of our own ping carries eight bytes; others confirm nothing.
                if let Ok(mark) = <[u8; 8]>::try_from(payload.as_ref()) {
                    let mark = u64::from_be_bytes(mark);
                    // A page cannot confirm what was never sent.
                    if mark <= self.receipt_asked {
                        self.session.replay.delivered(mark);
                    }
                }
                Ok(())
            }
            Message::Ping(_) => Ok(()),
        }
    }

    async fn on_text(&mut self, text: Utf8Bytes, received_at: Instant) -> Result<(), Closed> {
        let limit = self.state.limits().max_frame_bytes;
        if text.len() > limit {
            let message = format!(
                "the request is {} bytes; this gateway accepts at most {limit} (server.max_frame_bytes)",
                text.len()
            );
            return self.send(frames::error(stream_of(&text), ErrorCode::PromptTooLarge, message)).await;
        }
        let fresh = std::mem::replace(&mut self.fresh, false);
        match serde_json::from_str::<ClientMessage>(&text) {
            Ok(ClientMessage::Resume(request)) if fresh => {
                if !self.state.resumes().holds(&request.token)
                    && let Some(address) = Box::pin(peer::owner(&self.state, &request.token)).await
                    && let Some(owner) =
                        Box::pin(peer::connect(&self.state, &address, &self.session.person)).await
                {
                    self.relay = Some(Box::new((owner, text)));
                    return Err(Closed::Relayed);
                }
                self.resume(request).await.map(drop)
            }
            Ok(ClientMessage::Resume(_)) => {
                let message = "a resume must be the first frame on a new connection; reconnect to resume";
                self.send(frames::error(None, ErrorCode::BadFrame, message)).await
            }
            Ok(ClientMessage::Start(start)) => self.start(start, received_at).await,
            Ok(ClientMessage::Cancel { stream }) => {
                // A stream that already ended has nothing to cancel; its Done or Error is on its way.
                if let Some(running) = self.session.running.get(&stream) {
                    running.cancel.cancel();
                }
                Ok(())
            }
            Ok(ClientMessage::UseKey { provider, key }) => self.use_key(provider, key).await,
            Ok(ClientMessage::Ping { nonce }) => {
                self.send(frames::encode(&ServerMessage::Pong { nonce })).await
            }
            Err(err) => {
                let what = if err.is_data() { "is not a valid Flint message" } else { "is not valid JSON" };
                self.send(frames::error(None, ErrorCode::BadFrame, format!("the frame {what}: {err}"))).await
            }
        }
    }

    /// A stream task ended. Normally its last frame already removed it; a task that panicked did
    /// not, and its client is told.
    async fn reap(&mut self, joined: Result<(task::Id, StreamId), task::JoinError>) -> Result<(), Closed> {
        let task = match &joined {
            Ok((task, _)) => *task,
            Err(err) => err.id(),
        };
        let Some(id) = self.session.running.iter().find(|(_, r)| r.task == task).map(|(id, _)| *id) else {
            return Ok(());
        };
        self.session.running.remove(&id);
        if let Err(err) = joined {
            tracing::error!(stream = id, error = %err, "stream task failed");
            let message = "a bug in the gateway ended this stream; details are in its log";
            return self.send(frames::error(Some(id), ErrorCode::Internal, message)).await;
        }
        Ok(())
    }
}

/// A person's limit reached: `rate_limited`, the sentence and when to retry.
pub(super) fn refused(stream: Option<StreamId>, refusal: Refusal) -> Utf8Bytes {
    let retry_after_ms = refusal.retry_after.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1));
    frames::encode(&ServerMessage::Error {
        stream,
        code: ErrorCode::RateLimited,
        message: refusal.message,
        retry_after_ms,
    })
}

/// The `stream` field of an oversized frame, read without building the rest.
fn stream_of(text: &str) -> Option<StreamId> {
    // Unknown fields are skipped without being built, so this costs one pass over the text.
    #[derive(Deserialize)]
    struct StreamOnly {
        stream: Option<StreamId>,
    }
    serde_json::from_str::<StreamOnly>(text).ok()?.stream
}
