//! A provider's key: from the configuration or from the person (`allow_user_keys`), as the
//! header that carries it, the redactor that keeps it out of what reaches a browser, and where it
//! comes from, for messages. Shared with the Responses provider.

use std::sync::Arc;

use flint_protocol::Secret;
use reqwest::header::HeaderValue;

use crate::providers::openai_errors::KeyHint;
use crate::providers::redact::Redactor;
use crate::providers::{GenRequest, ProviderError, TextScrubber};

/// A provider's key as configured: the header that carries it, the redactor that keeps it out
/// of what reaches a browser, and where it comes from.
pub(crate) struct Credentials {
    /// `Bearer <key>`, marked sensitive so it never shows in debug output.
    pub authorization: Option<HeaderValue>,
    /// Scrubs the key from upstream text.
    pub redactor: Arc<Redactor>,
    /// Where the key comes from, for messages.
    pub hint: KeyHint,
}

/// The key from `api_key_env` (looked up with `env`), else `api_key`; `optional`: an unset
/// variable means the server wants no key.
pub(crate) fn credentials(
    api_key_env: Option<&str>,
    api_key: Option<&str>,
    optional: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Credentials {
    let (key, hint) = match (api_key_env, api_key) {
        (Some(var), fallback) => {
            let key = env(var).filter(|k| !k.trim().is_empty()).or_else(|| fallback.map(str::to_owned));
            let hint = if key.is_none() && optional {
                KeyHint::Unset(var.to_owned())
            } else {
                KeyHint::Env(var.to_owned())
            };
            (key, hint)
        }
        (None, Some(key)) => (Some(key.to_owned()), KeyHint::ConfigFile),
        (None, None) => (None, KeyHint::None),
    };
    let key = key.map(|k| k.trim().to_owned());
    let redactor = Arc::new(Redactor::new(key.as_deref()));
    let authorization = key.as_ref().and_then(|k| {
        let mut value = HeaderValue::from_str(&format!("Bearer {k}")).ok()?;
        value.set_sensitive(true);
        Some(value)
    });
    Credentials { authorization, redactor, hint }
}

/// A person's own key: sent and scrubbed like the operator's, and named as theirs in errors.
/// `None` if it cannot go in a header (the socket refuses such keys before they get here): a
/// request must not go without the key its person chose.
pub(crate) fn user_credentials(key: &Secret) -> Option<Credentials> {
    let key = key.expose().trim();
    let mut authorization = HeaderValue::from_str(&format!("Bearer {key}")).ok()?;
    authorization.set_sensitive(true);
    Some(Credentials {
        authorization: Some(authorization),
        redactor: user_redactor(key),
        hint: KeyHint::User,
    })
}

/// What scrubs a person's own key from what comes back.
fn user_redactor(key: &str) -> Arc<Redactor> {
    Arc::new(Redactor::new(Some(key.trim())))
}

/// The key a request goes with: the person's own when they set one and the operator allows it,
/// else the operator's; `Err` says why the request cannot go.
pub(crate) fn key_for(
    name: &str,
    request: &GenRequest,
    allow_user_keys: bool,
    operator_problem: Option<String>,
) -> Result<Option<Credentials>, ProviderError> {
    match (&request.key, allow_user_keys) {
        (Some(key), true) => user_credentials(key).map(Some).ok_or_else(|| {
            ProviderError::Unauthorized(format!(
                "your own key for {name} cannot be sent (it holds a character no header may); set it again"
            ))
        }),
        (Some(_), false) => Err(ProviderError::Unauthorized(format!(
            "{name} does not take your own key here; the operator can allow it with allow_user_keys"
        ))),
        (None, _) => match operator_problem {
            Some(problem) => Err(ProviderError::Unauthorized(format!("no API key for {name}: {problem}"))),
            None => Ok(None),
        },
    }
}

/// A scrubber of the key `request` goes with: the person's own where it is used, else `own`.
pub(crate) fn scrubber_for(
    own: &Arc<Redactor>,
    request: &GenRequest,
    allow_user_keys: bool,
) -> Option<Box<dyn TextScrubber>> {
    let redactor = match &request.key {
        Some(key) if allow_user_keys => user_redactor(key.expose()),
        _ => own.clone(),
    };
    Some(Box::new(redactor.stream()))
}

/// Why a provider cannot be used, if it cannot: its key's environment variable is unset. No key
/// configured at all is not a problem: local servers want none.
pub(crate) fn missing_key(name: &str, hint: &KeyHint, authorization: Option<&HeaderValue>) -> Option<String> {
    match (hint, authorization) {
        (KeyHint::Env(var), None) => Some(format!("set {var} to your {name} API key")),
        _ => None,
    }
}
