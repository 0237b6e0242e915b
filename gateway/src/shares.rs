//! Stored short links: a shared prompt kept in SQLite under an unguessable id, for links too long
//! to paste into a chat app. `POST /api/share` stores a link (the text a `#p=` fragment carries)
//! and answers its id, its expiry and how to delete it; `GET /s/<id>` sends the browser to
//! `/#p=<link>`, so the app opens it exactly as it opens a fragment link; `DELETE /api/share/<id>`
//! deletes it, for the person who stored it only. Only links that decode are stored, trimmed: the
//! store never holds junk. A stored link becomes a `Location` header, so `/s/<id>` checks it again
//! before sending it: a row from an older gateway (which stored links untrimmed) or edited by hand
//! must never break the response or add headers to it.
//!
//! Stored links fill the operator's disk at a stranger's request, so they are off by default on a
//! non-loopback address; when on, each person ([`crate::person::Person`]) may keep
//! `share.max_links_per_person` links of `share.max_bytes_per_person` bytes in all, each for
//! `share.ttl_days` ([`store`]).
//!
//! A prompt's pictures travel only in a stored link ([`pictures`]): checked as the prompt path
//! checks them, kept in the link's row (so they go with its deletion and expiry) and counted against
//! the owner's bytes; `/s/<id>` then adds `&s=<id>` to the fragment, and the app fetches them.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRequest, Path as UrlPath, Request, State};
use axum::http::StatusCode;
use axum::http::header::{HeaderValue, LOCATION};
use axum::response::{IntoResponse, Response};
use flint_protocol::share::decode;

use crate::AppState;
use crate::config::ShareConfig;
use crate::error::{AppError, body_refused};
use crate::person::Who;
use crate::store::Store;

pub mod pictures;
pub mod store;

pub use crate::clock::Clock;
pub use store::ShareStore;
use store::valid_id;

pub use crate::store::{Kept, Lookup, Quota, StoreError, Stored};

/// Why a share request is refused: as any HTTP route ([`AppError`]), or by the store's policy.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// Switched off, unavailable, not a link, too large, not found.
    #[error(transparent)]
    App(#[from] AppError),
    /// The person keeps `share.max_links_per_person` links already.
    #[error("the person keeps {0} stored links already")]
    TooManyLinks(usize),
    /// The link would take the person past `share.max_bytes_per_person`.
    #[error("the person's stored links would pass {0} bytes")]
    TooManyBytes(usize),
    /// The link passed its expiry (`share.ttl_days`) and was deleted.
    #[error("the stored link expired")]
    Expired,
    /// The pictures sent with a link fail the prompt's own checks or cap.
    #[error(transparent)]
    Pictures(#[from] flint_protocol::stored_link::PictureRefusal),
}

impl From<StoreError> for ShareError {
    fn from(err: StoreError) -> Self {
        Self::App(err.into())
    }
}

impl From<Quota> for ShareError {
    fn from(quota: Quota) -> Self {
        match quota {
            Quota::Links(limit) => Self::TooManyLinks(limit),
            Quota::Bytes(limit) => Self::TooManyBytes(limit),
        }
    }
}

impl IntoResponse for ShareError {
    fn into_response(self) -> Response {
        let (status, sentence) = match self {
            Self::App(err) => return err.into_response(),
            Self::TooManyLinks(limit) => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "you keep {limit} stored links here already, the most this Flint keeps per person \
                     (share.max_links_per_person); delete one you no longer need, or share the long link instead"
                ),
            ),
            Self::TooManyBytes(limit) => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "your stored links would take more than {limit} bytes here, the most this Flint keeps per \
                     person (share.max_bytes_per_person); delete some you no longer need, or share the long \
                     link instead"
                ),
            ),
            Self::Pictures(why) => (StatusCode::BAD_REQUEST, why.to_string()),
            Self::Expired => (
                StatusCode::GONE,
                "this shared prompt has expired and was deleted (this Flint keeps stored links for \
                 share.ttl_days days); ask for a new link"
                    .to_owned(),
            ),
        };
        (status, sentence).into_response()
    }
}

// The request and answer of `POST /api/share` are the protocol's: the app reads the same types.
pub use flint_protocol::stored_link::{ShareCreated, ShareRequest};

/// The store as the gateway has it: switched off, unavailable (why), or open.
pub type Shares = Option<Result<Arc<ShareStore>, String>>;

/// Whether `config` turns stored links on for a gateway listening on `listen`: as it says, else on
/// loopback only, where the one storing them is the one whose disk they fill.
pub fn enabled(config: &ShareConfig, listen: SocketAddr) -> bool {
    config.stored_links_on(listen)
}

/// Stored links in `store` as the configuration asks for on `listen`, logging why when the store
/// cannot keep them.
pub fn open_configured(config: &ShareConfig, listen: SocketAddr, store: &Arc<dyn Store>) -> Shares {
    if !enabled(config, listen) {
        if config.enabled.is_none() {
            tracing::info!(
                "stored share links are off on {listen} (not loopback); set share.enabled = true to keep them"
            );
        }
        return None;
    }
    // SQLite opens its file at once, so a file that failed is known now; PostgreSQL is asked on
    // first use (its errors answer 503 then, and it may come up after the gateway).
    if let Some(problem) = store.link_problem() {
        tracing::error!("stored share links are unavailable: {problem}");
        return Some(Err(problem));
    }
    Some(Ok(Arc::new(ShareStore::new(config, Arc::clone(store)))))
}

pub(crate) fn store(state: &AppState) -> Result<Arc<ShareStore>, AppError> {
    match state.shares() {
        None => Err(AppError::SharesOff),
        Some(Err(_)) => Err(AppError::SharesUnavailable),
        Some(Ok(store)) => Ok(store.clone()),
    }
}

/// The store, for a route naming the stored link `id`: an id the gateway could not have made is
/// not found, and never reaches the store.
pub(crate) fn store_for(state: &AppState, id: &str) -> Result<Arc<ShareStore>, AppError> {
    let store = store(state)?;
    if !valid_id(id) {
        return Err(AppError::ShareNotFound);
    }
    Ok(store)
}

/// `POST /api/share`'s body, refused in Flint's words ([`body_refused`]).
pub struct ShareBody(pub ShareRequest);

impl<S: Send + Sync> FromRequest<S> for ShareBody {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        let body = Json::<ShareRequest>::from_request(request, state).await;
        body.map(|Json(share)| Self(share)).map_err(|rejection| {
            let too_large = "this shared prompt is larger than this Flint takes in one request: share it without \
                             the code, or without its pictures";
            body_refused(rejection.status(), &rejection.body_text(), too_large)
        })
    }
}

/// `POST /api/share`: stores a link that decodes and is within `share.max_link_bytes` and the
/// person's quotas.
pub async fn create(
    State(state): State<AppState>,
    Who(person): Who,
    ShareBody(request): ShareBody,
) -> Result<Response, ShareError> {
    let store = store(&state)?;
    let limit = state.share_limit();
    // Pasted links often carry a line end; stored with it, it would end up in the redirect.
    let link = request.link.trim().to_owned();
    if link.len() > limit {
        return Err(AppError::LinkTooLarge(limit).into());
    }
    decode(&link).map_err(|err| AppError::BadLink(err.to_string()))?;
    let count = request.pictures.len();
    let kept = pictures::to_store(request.pictures)?;
    // The database, then the person's quota.
    let stored = store.put_with(&person, &link, kept.as_deref()).await??;
    let Stored { id, expires_at } = stored;
    Ok(Json(ShareCreated {
        path: format!("/s/{id}"),
        delete: format!("DELETE /api/share/{id}"),
        id,
        expires_at,
        pictures: count,
    })
    .into_response())
}

/// `GET /s/<id>`: sends the browser to the app with the stored link in the fragment, and its id
/// (`&s=<id>`) when pictures are kept with it, for the app to fetch them.
pub async fn open(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ShareError> {
    let store = store_for(&state, &id)?;
    let (link, with_pictures) = match store.get(&id).await? {
        Lookup::Found(kept) => (kept.link, kept.pictures),
        Lookup::Expired => return Err(ShareError::Expired),
        Lookup::Missing => return Err(AppError::ShareNotFound.into()),
    };
    // `valid_id` admitted only hex, so the id is safe in a header.
    let Some(location) = location(&link, with_pictures.then_some(id.as_str())) else {
        tracing::warn!(id = %id, "a stored share link is damaged and cannot be opened");
        return Err(AppError::BadLink(DAMAGED.to_owned()).into());
    };
    Ok((StatusCode::SEE_OTHER, [(LOCATION, location)]).into_response())
}

/// `DELETE /api/share/<id>`: deletes a link its owner stored. Anyone else hears "not found", as
/// for an id never stored, so ids cannot be probed this way.
pub async fn delete(
    State(state): State<AppState>,
    Who(person): Who,
    UrlPath(id): UrlPath<String>,
) -> Result<StatusCode, ShareError> {
    let store = store_for(&state, &id)?;
    if store.delete(&person, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(AppError::ShareNotFound.into())
    }
}

/// What `/s/<id>` answers for a stored link that cannot be opened.
const DAMAGED: &str =
    "the shared prompt stored at this address is damaged and cannot be opened; ask for a new link";

/// The redirect to the app for a stored link, if it is a link: one that decodes, trimmed as new
/// ones are; with `pictures`, the id they are fetched by. Decoding admits only the characters of a
/// link, and the header value is built without panicking, so no stored bytes can end the header or
/// start another.
fn location(link: &str, pictures: Option<&str>) -> Option<HeaderValue> {
    let link = link.trim();
    decode(link).ok()?;
    let fetch = pictures.map(|id| format!("&s={id}")).unwrap_or_default();
    HeaderValue::from_str(&format!("/#p={link}{fetch}")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_stored_links_that_decode_become_a_location() {
        let link = flint_protocol::share::encode(&flint_protocol::share::SharedPrompt::new("a page"));
        let expected = HeaderValue::from_str(&format!("/#p={link}")).expect("a header value");
        assert_eq!(
            location(&format!("{link}\r\n"), None),
            Some(expected),
            "older rows were stored untrimmed"
        );
        for damaged in [format!("{link}\r\nSet-Cookie: a=b"), format!("{link}\u{0}"), "v1.\t".to_owned()] {
            assert_eq!(location(&damaged, None), None, "{damaged:?}");
        }
        let with = location(&link, Some("ab12")).expect("a header value");
        assert_eq!(with.to_str().ok(), Some(format!("/#p={link}&s=ab12").as_str()));
    }

    #[test]
    fn unset_means_on_for_loopback_only_and_explicit_wins() {
        let at = |a: &str| a.parse::<SocketAddr>().expect("address");
        let unset = ShareConfig::default();
        assert!(enabled(&unset, at("127.0.0.1:8787")) && enabled(&unset, at("[::1]:8787")));
        assert!(!enabled(&unset, at("0.0.0.0:8787")) && !enabled(&unset, at("[::]:8787")));
        assert!(!enabled(&unset, at("192.168.1.10:8787")));
        let on = ShareConfig { enabled: Some(true), ..ShareConfig::default() };
        assert!(enabled(&on, at("0.0.0.0:8787")));
        let off = ShareConfig { enabled: Some(false), ..ShareConfig::default() };
        assert!(!enabled(&off, at("127.0.0.1:8787")));
    }
}
