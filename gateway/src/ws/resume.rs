//! Dropped connections waiting for their page: the resume tokens, and the grace period during
//! which a session's streams keep running with their frames kept (`server.resume_grace_secs`).
//!
//! Each `Hello` carries a fresh token: 32 bytes from the operating system's CSPRNG. The registry
//! keys sessions by the token's SHA-256, so a lookup's timing says nothing about a token, and
//! hands a session only to the person it belongs to: a token that leaked to someone else resumes
//! nothing, and the owner can still resume.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use flint_protocol::Secret;
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use tokio::task;

use super::replay::OVERFLOWED;
use super::session::Session;
use crate::AppState;
use crate::auth::SessionWatch;
use crate::person::Person;

type Digest32 = [u8; 32];
/// How a session is asked for: the claimer sends where to put it.
type Claim = oneshot::Sender<oneshot::Sender<Session>>;
/// Where a connection hears that its page came back on another socket.
pub(crate) type Claimed = oneshot::Receiver<oneshot::Sender<Session>>;

/// Why a token resumed nothing.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unclaimed {
    /// No session waits under it: never issued, expired, or issued by another gateway.
    Unknown,
    /// It belongs to someone else.
    NotYours,
}

/// Every resumable session, by token digest: live ones too, since a page may reconnect before the
/// gateway has noticed its old socket is dead (a silent network): the new socket then takes over.
#[derive(Default, Clone)]
pub struct Resumes(Arc<Mutex<HashMap<Digest32, (Person, Claim)>>>);

impl Resumes {
    fn waiting(&self) -> MutexGuard<'_, HashMap<Digest32, (Person, Claim)>> {
        // The map stays consistent if a holder panicked: each change is a single insert or remove.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sessions waiting now.
    pub fn len(&self) -> usize {
        self.waiting().len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes the session of a connection whose `Hello` carried `token` resumable by `person`.
    pub(crate) fn register(&self, token: &Secret, person: Person) -> Claimed {
        let (claim, claimed) = oneshot::channel();
        self.waiting().insert(digest(token), (person, claim));
        claimed
    }

    /// Whether a session waits here under `token` (whoever's it is).
    pub(crate) fn holds(&self, token: &Secret) -> bool {
        self.waiting().contains_key(&digest(token))
    }

    /// `token` resumes nothing any more.
    pub(crate) fn forget(&self, token: &Secret) {
        self.waiting().remove(&digest(token));
    }

    /// Takes the session registered under `token`, if it is `person`'s.
    pub(crate) async fn claim(&self, token: &Secret, person: &Person) -> Result<Session, Unclaimed> {
        let key = digest(token);
        let claim = {
            let mut waiting = self.waiting();
            match waiting.get(&key) {
                None => return Err(Unclaimed::Unknown),
                Some((owner, _)) if owner != person => return Err(Unclaimed::NotYours),
                Some(_) => waiting.remove(&key).map(|(_, claim)| claim).ok_or(Unclaimed::Unknown)?,
            }
        };
        let (reply, session) = oneshot::channel();
        claim.send(reply).map_err(|_| Unclaimed::Unknown)?;
        // The waiting session ended in the same instant (grace over, gateway stopping): gone.
        session.await.map_err(|_| Unclaimed::Unknown)
    }
}

/// A fresh resume token, or `None` if the system's random source failed (resume is then off
/// for this connection, which is logged).
pub(crate) fn new_token() -> Option<Secret> {
    let mut bytes = [0u8; 32];
    match getrandom::fill(&mut bytes) {
        Ok(()) => Some(Secret::new(URL_SAFE_NO_PAD.encode(bytes))),
        Err(err) => {
            tracing::error!(error = %err, "no random bytes for a resume token; this tab cannot resume");
            None
        }
    }
}

fn digest(token: &Secret) -> Digest32 {
    Sha256::digest(token.expose().as_bytes()).into()
}

/// Keeps `session` for `grace` after its socket dropped: its streams run on, their frames kept,
/// until the page claims it with `token` or the time is up (then every stream is stopped and
/// everything freed). Runs in the dropped socket's own task, so nothing is left behind.
pub(crate) async fn wait_for_page(
    state: &AppState,
    token: &Secret,
    mut session: Session,
    grace: Duration,
    mut claimed: Claimed,
) {
    let session_conn = session.conn;
    tracing::info!(
        conn = session_conn,
        streams = session.running.len(),
        "socket dropped; waiting for the page to resume"
    );
    // Other gateways may send the page here only as long as it waits.
    super::peer::announce(state, token, false).await;
    let deadline = tokio::time::sleep(grace);
    tokio::pin!(deadline);
    let shutdown = state.shutdown().clone();
    loop {
        tokio::select! {
            biased;
            reply = &mut claimed => {
                if let Ok(reply) = reply {
                    match reply.send(session) {
                        Ok(()) => {
                            tracing::info!(conn = session_conn, "resumed on a new socket");
                            // The new socket recorded the tab under its own token.
                            super::peer::withdraw(state, token);
                            return;
                        }
                        // The new socket went away while taking it: this tab is over.
                        Err(back) => session = back,
                    }
                }
                break;
            }
            () = shutdown.cancelled() => break,
            () = SessionWatch::ended_or_never(session.signin.as_ref()) => {
                tracing::info!(conn = session_conn, "the sign-in ended; stopping the streams of a tab waiting for its page");
                break;
            }
            () = &mut deadline => {
                tracing::info!(conn = session_conn, "no resume within server.resume_grace_secs; stopping the streams");
                break;
            }
            Some(out) = session.from_streams.recv() => {
                let for_page = session.arrived(&out);
                if for_page && !session.replay.keep_away(&out) {
                    tracing::info!(
                        conn = session_conn,
                        bytes = session.replay.bytes(),
                        "frames kept for the page passed server.resume_buffer_bytes; stopping the streams"
                    );
                    let running: Vec<_> = session.running.keys().copied().collect();
                    for id in &running {
                        if let Some(r) = session.running.get(id) {
                            r.cancel.cancel();
                        }
                    }
                    session.replay.give_up(running, OVERFLOWED);
                }
            }
            Some(joined) = session.tasks.join_next_with_id(), if !session.tasks.is_empty() => {
                reaped(&mut session, joined);
            }
        }
    }
    state.resumes().forget(token);
    super::peer::withdraw(state, token);
    session.end(state).await;
}

/// A stream task ended while the page was away; one that panicked sent no last frame.
fn reaped(session: &mut Session, joined: Result<(task::Id, u32), task::JoinError>) {
    let task = match &joined {
        Ok((task, _)) => *task,
        Err(err) => err.id(),
    };
    if let Some(id) = session.running.iter().find(|(_, r)| r.task == task).map(|(id, _)| *id) {
        session.running.remove(&id);
        if let Err(err) = joined {
            tracing::error!(stream = id, error = %err, "stream task failed");
            session.replay.give_up_one(id, "A bug in the gateway ended this answer; details are in its log.");
        }
    }
}
