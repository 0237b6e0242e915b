//! `/api/share`: storing a share link on the gateway for a short `/s/<id>` path. The app sends
//! [`ShareRequest`] and reads [`ShareCreated`]; the gateway reads and writes the same types, so the
//! two cannot drift apart.
//!
//! A prompt's pictures travel only in a stored link, never in a `#p=` fragment (a URL is no place
//! for megabytes, and a fragment ends up in histories and chat previews): they go with
//! [`ShareRequest::pictures`] and come back from `GET /api/share/<id>/pictures` as
//! [`StoredPictures`]. Both ends run [`check_pictures`]: the gateway before storing, the page
//! before attaching (a row edited in the database must not break the page).

use serde::{Deserialize, Serialize};

use crate::image::{ImageData, ImageRefusal, MAX_IMAGES, check_sent};

/// The longest picture name kept with a stored link, in characters (a file name, or "sketch").
pub const MAX_PICTURE_NAME_CHARS: usize = 200;

/// `POST /api/share` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareRequest {
    /// The encoded link, as after `#p=`.
    pub link: String,
    /// The prompt's pictures, kept beside the link (never inside it); empty from older pages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pictures: Vec<SharedPicture>,
}

/// One picture of a shared prompt: its name and the picture as models are sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedPicture {
    /// The file's name, or what it came from ("pasted image", "sketch").
    pub name: String,
    /// The picture, checked by [`check_pictures`].
    pub image: ImageData,
}

/// `GET /api/share/<id>/pictures` answer: the pictures stored with the link, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredPictures {
    /// The pictures.
    pub pictures: Vec<SharedPicture>,
}

/// Why the pictures of a stored link are refused; each sentence says what a person can do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PictureRefusal {
    /// More than [`MAX_IMAGES`], the prompt's own cap.
    #[error(
        "A shared prompt carries at most {MAX_IMAGES} pictures and this one has {0}: remove some, then share again"
    )]
    TooMany(usize),
    /// A name longer than [`MAX_PICTURE_NAME_CHARS`].
    #[error(
        "A picture's name is {0} characters long; a shared picture's name may have at most \
         {MAX_PICTURE_NAME_CHARS}: attach it again under a shorter name"
    )]
    NameTooLong(usize),
    /// One picture fails the prompt's own check ([`check_sent`]).
    #[error("The picture “{name}” cannot be shared: {why}")]
    Picture {
        /// Its name (cut short for the sentence).
        name: String,
        /// Why.
        why: ImageRefusal,
    },
}

/// Checks `pictures` as a prompt's would be checked on receipt: at most [`MAX_IMAGES`], each one
/// passing [`check_sent`] (format by its bytes, size, sides, pixels), names within
/// [`MAX_PICTURE_NAME_CHARS`]. Answers the pictures' decoded bytes.
pub fn check_pictures(pictures: &[SharedPicture]) -> Result<usize, PictureRefusal> {
    if pictures.len() > MAX_IMAGES {
        return Err(PictureRefusal::TooMany(pictures.len()));
    }
    let mut bytes = 0usize;
    for picture in pictures {
        let chars = picture.name.chars().count();
        if chars > MAX_PICTURE_NAME_CHARS {
            return Err(PictureRefusal::NameTooLong(chars));
        }
        check_sent(&picture.image)
            .map_err(|why| PictureRefusal::Picture { name: picture.name.chars().take(60).collect(), why })?;
        bytes = bytes.saturating_add(picture.image.byte_len());
    }
    Ok(bytes)
}

/// `POST /api/share` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareCreated {
    /// The new id.
    pub id: String,
    /// The path to share (`/s/<id>`).
    pub path: String,
    /// When the link expires (Unix seconds); absent: kept until deleted (and from older gateways).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// How to delete it: `DELETE /api/share/<id>`, sent by the same person (the same sign-in, or
    /// the same address for anonymous use).
    #[serde(default)]
    pub delete: String,
    /// How many pictures were stored with the link (absent: none, or an older gateway).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pictures: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::ImageType;

    /// A 1 × 1 PNG's header: enough for [`check_sent`], which reads headers only.
    fn png(width: u32, height: u32) -> ImageData {
        use base64::Engine as _;
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        bytes.extend_from_slice(&width.to_be_bytes());
        bytes.extend_from_slice(&height.to_be_bytes());
        bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        ImageData { media_type: ImageType::Png, data, width, height }
    }

    fn picture(name: &str, image: ImageData) -> SharedPicture {
        SharedPicture { name: name.into(), image }
    }

    #[test]
    fn pictures_pass_the_prompts_own_checks_and_cap() {
        let one = picture("mock.png", png(800, 600));
        assert_eq!(check_pictures(&[]), Ok(0));
        assert!(check_pictures(&vec![one.clone(); MAX_IMAGES]).is_ok());
        assert_eq!(check_pictures(&vec![one.clone(); MAX_IMAGES + 1]), Err(PictureRefusal::TooMany(5)));
        let long = picture(&"n".repeat(MAX_PICTURE_NAME_CHARS + 1), png(8, 8));
        assert_eq!(check_pictures(&[long]), Err(PictureRefusal::NameTooLong(201)));
        let huge = picture("strip.png", png(30_000, 10));
        assert!(matches!(
            check_pictures(&[huge]),
            Err(PictureRefusal::Picture { why: ImageRefusal::SideTooLong { .. }, .. })
        ));
        let mut lying = png(8, 8);
        lying.media_type = ImageType::Jpeg;
        let refused = check_pictures(&[one, picture("x.jpg", lying)]).expect_err("a PNG claiming JPEG");
        assert!(refused.to_string().contains("“x.jpg”"), "{refused}");
    }

    #[test]
    fn an_older_pages_request_without_pictures_still_reads_and_writes_the_same() {
        let request: ShareRequest = serde_json::from_str(r#"{"link":"v1.abc"}"#).unwrap();
        assert!(request.pictures.is_empty());
        assert_eq!(serde_json::to_string(&request).unwrap(), r#"{"link":"v1.abc"}"#);
    }

    #[test]
    fn an_older_gateways_answer_without_expiry_or_delete_still_reads() {
        let created: ShareCreated = serde_json::from_str(r#"{"id":"abc","path":"/s/abc"}"#).unwrap();
        assert_eq!(created.expires_at, None);
        assert_eq!(created.delete, "");
        let kept = serde_json::to_string(&created).unwrap();
        assert!(!kept.contains("expires_at"), "{kept}");
    }
}
