//! A socket opened under a sign-in ends with it: at once on a sign-out through this gateway, and
//! otherwise when the store, asked again before each `Start` and every `auth.session_check_secs`,
//! says the sign-in is over (`token revoke`, a sign-out through another gateway, expiry).

use std::fmt::Display;

use axum::extract::ws::Message;
use flint_protocol::{ErrorCode, StreamId};
use futures::Sink;

use super::connection::{Closed, Connection};
use super::frames;
use crate::auth::Unknown;

impl<S> Connection<S>
where
    S: Sink<Message> + Unpin,
    S::Error: Display,
{
    /// The sign-in ended: the page is told why, and the socket closes with its streams (nothing
    /// is kept for a resume: the next socket would have to sign in again anyway).
    pub(super) async fn sign_in_ended(&mut self) -> Result<(), Closed> {
        tracing::info!(conn = self.session.conn, "the sign-in ended; closing its socket");
        let (_, sentence) = Unknown::SessionEnded.answer();
        let _ = self.send(frames::error(None, ErrorCode::Unauthorized, sentence)).await;
        Err(Closed::Left)
    }

    /// Before stream `id` starts: `Ok(true)` when the socket's sign-in (if any) still holds,
    /// `Ok(false)` when the store cannot say (the page was told), and the socket's end when the
    /// sign-in is over.
    pub(super) async fn still_signed_in(&mut self, id: StreamId) -> Result<bool, Closed> {
        let Some(watch) = &self.session.signin else { return Ok(true) };
        match self.state.auth().recheck(watch.signed_in()).await {
            Ok(()) => Ok(true),
            Err(Unknown::StoreUnavailable) => {
                let (_, sentence) = Unknown::StoreUnavailable.answer();
                self.send(frames::error(Some(id), ErrorCode::UpstreamUnavailable, sentence)).await?;
                Ok(false)
            }
            Err(_) => self.sign_in_ended().await.map(|()| false),
        }
    }
}
