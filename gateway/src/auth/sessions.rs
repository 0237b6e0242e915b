//! The sockets open under each sign-in, so that the end of a sign-in closes them.
//!
//! The sign-in is checked when a socket is opened; before this, a socket opened earlier kept
//! starting streams after its person signed out or their token was revoked. A sign-out through
//! this gateway now ends that sign-in's sockets at once ([`OpenSessions::end`]). A sign-in ended
//! where this gateway cannot see it (`token revoke` from the command line, a sign-out through
//! another gateway on the same PostgreSQL store, its expiry) is found by asking the store again:
//! before every `Start` (`Auth::recheck`) and every `auth.session_check_secs` while sockets are
//! open under it (one check per sign-in, however many tabs).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::store::{AuthStore, hash};
use super::unix_now;

/// A request's sign-in, by its session's stored hash; added as a request extension by the
/// sign-in layer when a session cookie names the person.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SignedIn(Arc<str>);

impl SignedIn {
    /// The sign-in of the session `secret` (its cookie's value).
    pub fn of_secret(secret: &str) -> Self {
        Self(hash(secret).into())
    }

    /// The session's hash, as the store keeps it.
    pub fn hash(&self) -> &str {
        &self.0
    }
}

type Open = Arc<Mutex<HashMap<SignedIn, Watched>>>;

/// A sign-in with sockets open under it.
struct Watched {
    ended: CancellationToken,
    sockets: usize,
    /// The task asking the store, every `session_check_secs`, whether the sign-in still holds.
    checker: Option<AbortHandle>,
}

impl Watched {
    /// No more checks: the sign-in ended, or its last socket closed.
    fn stop(&self) {
        if let Some(checker) = &self.checker {
            checker.abort();
        }
    }
}

/// Every sign-in with sockets open on this gateway.
pub(crate) struct OpenSessions {
    open: Open,
    check_every: Duration,
}

impl OpenSessions {
    /// None open yet; each is checked against the store every `check_every`.
    pub(crate) fn new(check_every: Duration) -> Self {
        Self { open: Arc::default(), check_every: check_every.max(Duration::from_secs(1)) }
    }

    /// A socket opened under `signed_in`: its watch ends when the sign-in does. The first socket
    /// of a sign-in starts its periodic check in `store` (none without a store).
    pub(crate) fn watch(&self, signed_in: &SignedIn, store: Option<&AuthStore>) -> SessionWatch {
        let mut open = lock(&self.open);
        let watched = open.entry(signed_in.clone()).or_insert_with(|| {
            let ended = CancellationToken::new();
            let checker = store.map(|store| {
                let check = check_until_ended(
                    store.clone(),
                    signed_in.clone(),
                    ended.clone(),
                    Arc::downgrade(&self.open),
                    self.check_every,
                );
                tokio::spawn(check).abort_handle()
            });
            Watched { ended, sockets: 0, checker }
        });
        watched.sockets += 1;
        SessionWatch {
            signed_in: signed_in.clone(),
            ended: watched.ended.clone(),
            open: Arc::clone(&self.open),
        }
    }

    /// The sign-in is over: every socket under it closes now.
    pub(crate) fn end(&self, signed_in: &SignedIn) {
        end(&self.open, signed_in);
    }

    /// Sign-ins with sockets open now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.open).len()
    }
}

fn lock(open: &Open) -> MutexGuard<'_, HashMap<SignedIn, Watched>> {
    // Each change is one insert, update or remove: the map stays consistent after a panic.
    open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn end(open: &Open, signed_in: &SignedIn) {
    let removed = lock(open).remove(signed_in);
    if let Some(watched) = removed {
        watched.ended.cancel();
        watched.stop();
    }
}

/// Asks the store whether `signed_in` still holds until it does not, then ends it. A store that
/// cannot answer ends nothing: an outage should not sign everyone out (a `Start` still needs
/// the store's yes).
async fn check_until_ended(
    store: AuthStore,
    signed_in: SignedIn,
    ended: CancellationToken,
    open: Weak<Mutex<HashMap<SignedIn, Watched>>>,
    every: Duration,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        ticks.tick().await;
        match store.session_of_hash(signed_in.hash(), unix_now()).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                tracing::info!(
                    "a sign-in ended elsewhere (signed out, revoked or expired); closing its sockets"
                );
                match open.upgrade() {
                    Some(open) => end(&open, &signed_in),
                    None => ended.cancel(),
                }
                return;
            }
            Err(err) => tracing::warn!(error = %err, "re-checking a sign-in failed; its sockets stay open"),
        }
    }
}

/// A socket's hold on its sign-in: [`SessionWatch::ended`] resolves when the sign-in ends.
pub struct SessionWatch {
    signed_in: SignedIn,
    ended: CancellationToken,
    open: Open,
}

impl SessionWatch {
    /// The sign-in watched.
    pub fn signed_in(&self) -> &SignedIn {
        &self.signed_in
    }

    /// Resolves when the sign-in ends (signed out, revoked, expired).
    pub async fn ended(&self) {
        self.ended.cancelled().await;
    }

    /// Resolves when `watch`'s sign-in ends; never without one (a socket nobody signed in to).
    pub async fn ended_or_never(watch: Option<&Self>) {
        match watch {
            Some(watch) => watch.ended().await,
            None => std::future::pending().await,
        }
    }
}

impl std::fmt::Debug for SessionWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionWatch").field("ended", &self.ended.is_cancelled()).finish_non_exhaustive()
    }
}

impl Drop for SessionWatch {
    fn drop(&mut self) {
        // An ended sign-in was removed when it ended (a new one under the same hash is not ours).
        if self.ended.is_cancelled() {
            return;
        }
        let mut open = lock(&self.open);
        let last = open.get_mut(&self.signed_in).is_some_and(|watched| {
            watched.sockets = watched.sockets.saturating_sub(1);
            watched.sockets == 0
        });
        if last && let Some(watched) = open.remove(&self.signed_in) {
            watched.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ending_a_sign_in_ends_each_of_its_watches_and_no_other() {
        let sessions = OpenSessions::new(Duration::from_secs(30));
        let (ada, eve) = (SignedIn::of_secret("ada"), SignedIn::of_secret("eve"));
        let first = sessions.watch(&ada, None);
        let second = sessions.watch(&ada, None);
        let other = sessions.watch(&eve, None);
        assert_eq!(sessions.len(), 2);
        sessions.end(&ada);
        tokio::time::timeout(Duration::from_secs(1), async {
            first.ended().await;
            second.ended().await;
        })
        .await
        .expect("both sockets of the sign-in hear it");
        assert!(!other.ended.is_cancelled(), "another sign-in is untouched");
        drop((first, second));
        assert_eq!(sessions.len(), 1);
        drop(other);
        assert_eq!(sessions.len(), 0, "nothing is kept for sign-ins without sockets");
    }
}
