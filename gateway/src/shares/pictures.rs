//! The pictures of a stored link (issue 28): checked and kept on `POST /api/share`, answered by
//! `GET /api/share/<id>/pictures`.
//!
//! They never go into a URL: a fragment would carry megabytes into browser histories and chat
//! previews, and `/s/<id>` redirects with the link text only. The route is under `/api`, so it gets
//! the same-origin guard of every API route ([`crate::access`]) and no CORS; anyone holding the
//! unguessable id may read them, exactly as anyone holding it may open the link.

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::header::{CACHE_CONTROL, HeaderValue};
use axum::response::{IntoResponse, Response};
use flint_protocol::image::{MAX_IMAGES, MAX_SEND_BYTES};
use flint_protocol::stored_link::{SharedPicture, StoredPictures, check_pictures};

use super::{ShareError, store_for};
use crate::AppState;
use crate::error::AppError;
use crate::store::Lookup;

/// Room a share request needs for its pictures: [`MAX_IMAGES`] at their largest as sent, in base64,
/// with their names and JSON around them.
pub const MAX_BODY_BYTES: usize = MAX_IMAGES * (MAX_SEND_BYTES.div_ceil(3) * 4 + 4 * 1024);

/// What the route answers for pictures that no longer pass the checks (a row edited by hand, or
/// kept by a gateway with other limits).
const DAMAGED: &str = "the pictures stored with this shared prompt are damaged and cannot be opened; \
     the prompt itself still opens: ask for a new link to get the pictures";

/// The text kept for `pictures` once they pass [`check_pictures`]; `None` without pictures, so a
/// link without them is stored exactly as before.
pub fn to_store(pictures: Vec<SharedPicture>) -> Result<Option<String>, ShareError> {
    if pictures.is_empty() {
        return Ok(None);
    }
    check_pictures(&pictures)?;
    let text = serde_json::to_string(&StoredPictures { pictures })
        .map_err(|err| AppError::BadLink(format!("the pictures could not be stored: {err}")))?;
    Ok(Some(text))
}

/// Stored text back into pictures, checked again: only what passes leaves the gateway.
fn from_store(text: &str) -> Option<StoredPictures> {
    let stored: StoredPictures = serde_json::from_str(text).ok()?;
    check_pictures(&stored.pictures).ok()?;
    Some(stored)
}

/// `GET /api/share/<id>/pictures`: the pictures kept with the link `id`, as [`StoredPictures`].
pub async fn get(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ShareError> {
    let store = store_for(&state, &id)?;
    let text = match store.get_pictures(&id).await? {
        Lookup::Found(text) => text,
        Lookup::Expired => return Err(ShareError::Expired),
        Lookup::Missing => return Err(AppError::ShareNotFound.into()),
    };
    let Some(pictures) = from_store(&text) else {
        tracing::warn!(id = %id, "the pictures of a stored share link are damaged");
        return Err(AppError::BadLink(DAMAGED.to_owned()).into());
    };
    // Someone's pictures: a shared cache between them and the gateway keeps no copy.
    Ok(([(CACHE_CONTROL, HeaderValue::from_static("no-store"))], Json(pictures)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_pictures_store_nothing_and_junk_never_reads_back() {
        assert!(to_store(Vec::new()).expect("nothing to check").is_none());
        assert!(from_store("not json").is_none());
        assert!(from_store(r#"{"pictures":[{"name":"x","image":{"media_type":"image/png","data":"AAAA","width":1,"height":1}}]}"#).is_none());
        assert_eq!(from_store(r#"{"pictures":[]}"#), Some(StoredPictures::default()));
    }
}
