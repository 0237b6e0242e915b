//! A prompt's pictures in a share link (issue 28): they travel only in a stored link, never in the
//! `#p=` fragment. Share sends them beside the link text; `/s/<id>` opens the app at
//! `#p=<link>&s=<id>`, and the page fetches them from `GET /api/share/<id>/pictures` (`crate::app`),
//! checks them again here (a row edited in the gateway's database must not break the page) and
//! attaches them without describing or running anything until the person asks.

use flint_protocol::image::ImageData;
use flint_protocol::stored_link::{MAX_PICTURE_NAME_CHARS, SharedPicture, StoredPictures, check_pictures};

/// The fragment key naming the stored link whose pictures to fetch: `&s=<id>`.
const KEY: &str = "s=";

/// The stored link id in a page's `location.hash` (`#p=…&s=<id>`), if it names one an id could be
/// (32 hex digits, as the gateway makes them); anything else is ignored, never fetched.
pub fn stored_in_hash(hash: &str) -> Option<&str> {
    let fragment = hash.strip_prefix('#').unwrap_or(hash);
    let id = fragment.split('&').find_map(|part| part.strip_prefix(KEY))?;
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(id)
}

/// Where the page fetches the pictures of the stored link `id`.
pub fn pictures_url(id: &str) -> String {
    format!("/api/share/{id}/pictures")
}

/// What Share sends of the attached pictures (each name and picture as models are sent it), names
/// cut to what the gateway keeps.
pub fn to_share<'a>(images: impl IntoIterator<Item = (&'a str, &'a ImageData)>) -> Vec<SharedPicture> {
    images
        .into_iter()
        .map(|(name, image)| SharedPicture {
            name: name.chars().take(MAX_PICTURE_NAME_CHARS).collect(),
            image: image.clone(),
        })
        .collect()
}

/// The pictures a stored link answered (each name and picture), checked as the prompt checks its
/// own before they are attached; the sentence to show when they fail.
pub fn received(stored: StoredPictures) -> Result<Vec<(String, ImageData)>, String> {
    check_pictures(&stored.pictures)
        .map_err(|why| format!("The shared prompt opened, but its pictures were not attached: {why}."))?;
    Ok(stored.pictures.into_iter().map(|p| (p.name, p.image)).collect())
}

/// What to say when fetching the pictures failed: the answer's `status` if one came, else what
/// the browser said (`reason`).
pub fn fetch_problem(status: Option<u16>, reason: &str) -> String {
    let why = match status {
        Some(404) => {
            "they are no longer stored (the link was deleted, or this Flint no longer keeps stored links)"
                .to_owned()
        }
        Some(410) => "the stored link has expired".to_owned(),
        Some(400) => "the gateway found them damaged".to_owned(),
        Some(401) => {
            return "The shared prompt opened, but its pictures are kept for signed-in people only: sign in, \
                    then open the link again."
                .to_owned();
        }
        _ => reason.to_owned(),
    };
    format!("The shared prompt opened, but its pictures could not be fetched: {why}. Ask for a new link.")
}

/// Why a link made with `count` pictures does not carry them, from the gateway's refusal to store
/// it (`status`, and its sentence): stored links switched off (404), or another reason.
pub fn not_carried(count: usize, status: Option<u16>, message: &str) -> String {
    let noun = if count == 1 { "picture" } else { "pictures" };
    if status == Some(404) {
        format!(
            "This link carries the prompt but not its {count} {noun}: pictures travel only in a stored \
             link, never in the link itself, and this Flint does not store links (share.enabled). Send \
             the {noun} separately."
        )
    } else {
        format!(
            "This link carries the prompt but not its {count} {noun}: they could not be stored ({}). \
             Send the {noun} separately, or try again.",
            message.trim().trim_end_matches('.')
        )
    }
}

/// What the share panel says of a stored link that was sent `sent` pictures and kept `kept` (the
/// gateway's count; an older gateway keeps none and says nothing).
pub fn carried(sent: usize, kept: usize) -> Option<String> {
    match (sent, kept) {
        (0, _) => None,
        (_, 0) => Some(
            "Carries the prompt only: this Flint kept the link but not its pictures (an older version); \
             send the pictures separately"
                .to_owned(),
        ),
        (_, 1) => Some("Carries the prompt and its picture".to_owned()),
        (_, n) => Some(format!("Carries the prompt and its {n} pictures")),
    }
}

#[cfg(test)]
#[path = "stored_pictures_tests.rs"]
mod tests;
