//! A person's own key for a provider: taken only where the operator allows it, and only in a form
//! an `Authorization` header can carry.

use std::fmt::Display;

use axum::extract::ws::Message;
use flint_protocol::{ErrorCode, Secret};
use futures::Sink;

use super::connection::{Closed, Connection};
use super::frames;

impl<S> Connection<S>
where
    S: Sink<Message> + Unpin,
    S::Error: Display,
{
    /// Keeps (or forgets) the person's own key for `provider`, if its operator allows that.
    pub(super) async fn use_key(&mut self, provider: String, key: Option<Secret>) -> Result<(), Closed> {
        let allowed = self
            .state
            .providers()
            .iter()
            .find(|p| p.name() == provider)
            .map(|p| p.models().first().is_some_and(|m| m.user_key));
        let refusal = match (allowed, &key) {
            (_, None) => None,
            (None, Some(_)) => {
                Some((ErrorCode::UnknownModel, format!("this gateway has no provider named {provider:?}")))
            }
            (Some(false), Some(_)) => Some((
                ErrorCode::Unauthorized,
                format!(
                    "{provider} does not take your own key here; the operator can allow it with allow_user_keys"
                ),
            )),
            (Some(true), Some(_)) => None,
        };
        if let Some((code, message)) = refusal {
            return self.send(frames::error(None, code, message)).await;
        }
        let key = match key.as_ref().map(|k| own_key(k.expose())).transpose() {
            Ok(key) => key.flatten(),
            Err(why) => {
                let message = format!(
                    "that is not a key {provider} can take: {why}; it was not kept, and your streams go on \
                     as before"
                );
                return self.send(frames::error(None, ErrorCode::InvalidParams, message)).await;
            }
        };
        tracing::info!(conn = self.session.conn, %provider, own_key = key.is_some(), "own key");
        match key {
            Some(key) => self.session.keys.insert(provider, key),
            None => self.session.keys.remove(&provider),
        };
        Ok(())
    }
}

/// The longest own key taken, in characters: far more than any provider's.
pub(super) const MAX_OWN_KEY_CHARS: usize = 1024;

/// A person's own key as sent, trimmed: `None` when empty (back to the operator's key), `Err` with
/// why when no provider could take it in an `Authorization` header. Only printable ASCII without
/// spaces goes: a header cannot carry a line break (such a key would go with no `Authorization`
/// at all), and the reason never quotes the key.
pub(super) fn own_key(sent: &str) -> Result<Option<Secret>, String> {
    let key = sent.trim();
    if key.is_empty() {
        return Ok(None);
    }
    let chars = key.chars().count();
    if chars > MAX_OWN_KEY_CHARS {
        return Err(format!("it is {chars} characters long, and a key has at most {MAX_OWN_KEY_CHARS}"));
    }
    if let Some(at) = key.chars().position(|c| !c.is_ascii_graphic()) {
        return Err(format!(
            "character {} is a space, a line break, a control character or not ASCII, and keys are \
             printable ASCII without spaces",
            at + 1
        ));
    }
    Ok(Some(Secret::new(key)))
}
