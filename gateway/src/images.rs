//! Images in a start: refused before any upstream call when the model does not see them, and each
//! checked again on receipt ([`flint_protocol::image::check_sent`]): the page checked and
//! downscaled them, but the page is not a trust boundary.

use flint_protocol::image::{self, ImageRefusal};
use flint_protocol::{ChatMessage, ErrorCode, Role};

/// Why a start's images are refused: the code and the sentence of its Error frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// [`ErrorCode::ImagesNotSeen`] or [`ErrorCode::ImageRefused`].
    pub code: ErrorCode,
    /// A sentence a person can act on.
    pub message: String,
}

impl From<ImageRefusal> for Refused {
    fn from(refusal: ImageRefusal) -> Self {
        Self { code: ErrorCode::ImageRefused, message: refusal.to_string() }
    }
}

/// What a start's checked images amount to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Images {
    /// How many, all messages together.
    pub count: usize,
    /// Their decoded bytes.
    pub bytes: usize,
    /// The prompt tokens they are estimated to cost ([`image::estimated_tokens`]).
    pub tokens: u32,
}

/// The model a start asks for, as far as images go.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// `provider/model`.
    pub id: &'a str,
    /// Whether it sees images ([`flint_protocol::ModelInfo::vision`]).
    pub vision: bool,
    /// `[vision] model`, which describes images for models that do not see.
    pub describer: Option<&'a str>,
}

/// Checks the images of `messages` for `model`: none is sent to a model that does not see, only a
/// person's messages carry them, each passes [`image::check_sent`], and the counts and bytes stay
/// within the limits of [`image`]. Cheap checks first, so a forged request costs no decoding.
pub fn check(messages: &[ChatMessage], model: Target<'_>) -> Result<Images, Refused> {
    let count: usize = messages.iter().map(|m| m.images.len()).sum();
    if count == 0 {
        return Ok(Images::default());
    }
    if !model.vision {
        return Err(not_seen(model));
    }
    if messages.iter().any(|m| m.role != Role::User && !m.images.is_empty()) {
        return Err(Refused {
            code: ErrorCode::ImageRefused,
            message: "only your own messages may carry images; send them with a prompt".to_owned(),
        });
    }
    if let Some(m) = messages.iter().find(|m| m.images.len() > image::MAX_IMAGES) {
        return Err(ImageRefusal::TooManyImages(m.images.len()).into());
    }
    if count > image::MAX_REQUEST_IMAGES {
        return Err(Refused {
            code: ErrorCode::ImageRefused,
            message: format!(
                "this conversation carries {count} images; the most sent at once is {}: start a new session \
                 or remove earlier images",
                image::MAX_REQUEST_IMAGES
            ),
        });
    }
    let bytes: usize = messages.iter().flat_map(|m| &m.images).map(image::ImageData::byte_len).sum();
    if bytes > image::MAX_REQUEST_IMAGE_BYTES {
        return Err(ImageRefusal::TooManyBytes { total: bytes, max: image::MAX_REQUEST_IMAGE_BYTES }.into());
    }
    let mut tokens = 0u32;
    for sent in messages.iter().flat_map(|m| &m.images) {
        let info = image::check_sent(sent)?;
        tokens = tokens.saturating_add(image::estimated_tokens(info.width, info.height));
    }
    Ok(Images { count, bytes, tokens })
}

fn not_seen(model: Target<'_>) -> Refused {
    let id = model.id;
    let message = match model.describer {
        Some(describer) => format!(
            "{id} does not see images, so they were not sent; {describer} (the [vision] model) describes them \
             for it: send the description instead, or pick a model that sees"
        ),
        None => format!(
            "{id} does not see images, so they were not sent, and this gateway has no [vision] model to describe \
             them; pick a model that sees images, or describe the picture in words"
        ),
    };
    Refused { code: ErrorCode::ImagesNotSeen, message }
}

impl Images {
    /// For a log line: "1 image, 312 KB", never their data (base64 floods logs).
    pub fn summary(&self) -> String {
        let noun = if self.count == 1 { "image" } else { "images" };
        format!("{} {noun}, {} KB", self.count, self.bytes.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use flint_protocol::image::{ImageData, ImageType};

    use super::*;

    fn png() -> ImageData {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x40\0\0\0\x30\x08\x02\0\0\0\0\0\0\0".to_vec();
        bytes.extend([0; 8]);
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        ImageData { media_type: ImageType::Png, data, width: 64, height: 48 }
    }

    const SEEING: Target<'static> = Target { id: "p/m", vision: true, describer: None };

    fn user(images: usize) -> ChatMessage {
        ChatMessage::with_images(Role::User, "this", vec![png(); images])
    }

    #[test]
    fn checked_images_are_counted_and_estimated() {
        let images =
            check(&[user(2), ChatMessage::new(Role::Assistant, "ok"), user(1)], SEEING).expect("fine");
        assert_eq!((images.count, images.tokens), (3, 3 * 255));
        assert_eq!(images.summary(), "3 images, 1 KB");
        assert_eq!(
            check(&[ChatMessage::new(Role::User, "hi")], Target { vision: false, ..SEEING }),
            Ok(Images::default())
        );
    }

    #[test]
    fn only_a_persons_messages_carry_images_and_a_request_carries_at_most_eight() {
        let assistant = ChatMessage::with_images(Role::Assistant, "here", vec![png()]);
        let refused = check(&[assistant], SEEING).expect_err("an assistant's image");
        assert!(refused.message.contains("only your own messages"), "{}", refused.message);
        let refused = check(&[user(4), user(4), user(1)], SEEING).expect_err("nine in all");
        assert_eq!(refused.code, ErrorCode::ImageRefused);
        assert!(
            refused.message.contains("carries 9 images; the most sent at once is 8"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn the_bytes_of_a_request_are_bounded_before_any_is_decoded() {
        let heavy = ImageData { data: "A".repeat(image::MAX_SEND_BYTES / 3 * 4), ..png() };
        let messages: Vec<ChatMessage> =
            (0..5).map(|_| ChatMessage::with_images(Role::User, "x", vec![heavy.clone()])).collect();
        let refused = check(&messages, SEEING).expect_err("7.5 MiB of images");
        assert!(refused.message.contains("the most is 6144 KB in all"), "{}", refused.message);
    }
}
