//! Images in a prompt: the formats Flint accepts, the limits on them, and the checks the page's
//! worker runs before decoding and the gateway runs again on receipt (the page is not a trust
//! boundary).
//!
//! [`inspect`] reads only a file's header: the format by its magic bytes (never by its name or a
//! claimed type) and its size, so a decompression bomb or a 30,000 px side is refused before any
//! pixel is decoded. [`check_sent`] checks one [`ImageData`] as a model would be sent it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

mod header;

pub use header::inspect;

/// The largest file a person may pick; bigger files are refused before they are read.
pub const MAX_SOURCE_BYTES: usize = 20 * 1024 * 1024;
/// The longest side read before decoding: longer sides are refused (a 30,000 px strip is a bomb
/// in all but name).
pub const MAX_SIDE: u32 = 16_384;
/// The most pixels read before decoding (40 Mpx is 160 MB of RGBA once decoded).
pub const MAX_PIXELS: u64 = 40_000_000;
/// The longest side a model is sent, after downscaling; OpenAI fits images into 2048 px anyway.
pub const SEND_MAX_SIDE: u32 = 2_048;
/// The most decoded bytes of one image as sent to a model.
pub const MAX_SEND_BYTES: usize = 1_536 * 1024;
/// The most images in one message.
pub const MAX_IMAGES: usize = 4;
/// The most images in one request, all messages together (a conversation's earlier turns carry
/// theirs): each is re-sent, and paid for, on every turn.
pub const MAX_REQUEST_IMAGES: usize = 2 * MAX_IMAGES;
/// The most decoded image bytes in one request, all messages together: four images at their
/// largest, 8 MiB of base64, which `server.max_frame_bytes` (default 11 MiB) admits.
pub const MAX_REQUEST_IMAGE_BYTES: usize = MAX_IMAGES * MAX_SEND_BYTES;

/// A raster format Flint accepts; serde as its media type (`image/png`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ImageType {
    /// PNG.
    #[serde(rename = "image/png")]
    Png,
    /// JPEG.
    #[serde(rename = "image/jpeg")]
    Jpeg,
    /// WebP (lossy, lossless or extended).
    #[serde(rename = "image/webp")]
    Webp,
    /// GIF; only its first frame is used.
    #[serde(rename = "image/gif")]
    Gif,
}

impl ImageType {
    /// The media type, as in a data URL.
    pub fn media_type(&self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
            Self::Gif => "image/gif",
        }
    }

    /// The type for a media type, if Flint accepts it.
    pub fn from_media_type(media_type: &str) -> Option<Self> {
        [Self::Png, Self::Jpeg, Self::Webp, Self::Gif]
            .into_iter()
            .find(|t| t.media_type().eq_ignore_ascii_case(media_type.trim()))
    }

    /// The format's common name, for sentences.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Png => "PNG",
            Self::Jpeg => "JPEG",
            Self::Webp => "WebP",
            Self::Gif => "GIF",
        }
    }
}

impl std::fmt::Display for ImageType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.media_type())
    }
}

/// One image as sent to a model: already checked and downscaled by the page's worker.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageData {
    /// Its format.
    pub media_type: ImageType,
    /// The file, standard base64 with padding, without a `data:` prefix.
    pub data: String,
    /// Width in pixels, as its header says.
    pub width: u32,
    /// Height in pixels, as its header says.
    pub height: u32,
}

impl ImageData {
    /// The image as a `data:` URL, the way chat completions and the Responses API take it.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }

    /// The decoded size in bytes, from the length of the base64 text (exact when it is valid).
    pub fn byte_len(&self) -> usize {
        let text = self.data.trim_end_matches('=');
        text.len() / 4 * 3 + (text.len() % 4).saturating_sub(1)
    }

    /// An estimate of the prompt tokens the image costs, by OpenAI's published rule for
    /// high-detail images (platform.openai.com/docs/guides/images-vision, "Calculating costs"):
    /// fit within 2048 × 2048, scale so the short side is at most 768 px, then 85 tokens plus 170
    /// per 512 px tile. Other providers count differently; the reservation only needs a fair bound
    /// and is settled with the provider's reported usage.
    pub fn estimated_tokens(&self) -> u32 {
        estimated_tokens(self.width, self.height)
    }
}

/// [`ImageData::estimated_tokens`] for a size.
pub fn estimated_tokens(width: u32, height: u32) -> u32 {
    let (mut w, mut h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    let fit = (2048.0 / w.max(h)).min(1.0);
    (w, h) = (w * fit, h * fit);
    let short = (768.0 / w.min(h)).min(1.0);
    (w, h) = (w * short, h * short);
    let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
    // At most 4 × 2 tiles after the fitting above, so the cast cannot truncate.
    85 + 170 * tiles as u32
}

/// What a header says, read without decoding pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    /// The format its magic bytes say.
    pub kind: ImageType,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Why an image is refused; each sentence says what a person can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageRefusal {
    /// Nothing to read.
    #[error("The file is empty: it is not an image")]
    Empty,
    /// An SVG drawing: vector, and able to carry scripts.
    #[error(
        "This file is an SVG drawing; Flint takes PNG, JPEG, WebP or GIF images (SVG can carry scripts): \
         export it as PNG first"
    )]
    Svg,
    /// A known format Flint does not read.
    #[error("This file is a {0}; Flint takes PNG, JPEG, WebP or GIF images: convert it to PNG first")]
    OtherFormat(&'static str),
    /// Not an image at all.
    #[error("This file is not an image Flint reads: it takes PNG, JPEG, WebP or GIF")]
    NotAnImage,
    /// The header stops early.
    #[error("The file ends inside its header: it is not a whole image")]
    Truncated,
    /// The header is there but does not make sense.
    #[error(
        "The {kind} file's header is damaged ({why}): open and save it again, or take a screenshot of it"
    )]
    Malformed {
        /// The format its magic bytes say.
        kind: &'static str,
        /// What is wrong.
        why: &'static str,
    },
    /// A side of zero pixels.
    #[error("The image says it is {width} × {height} px: an image needs at least one pixel a side")]
    ZeroSide {
        /// Width claimed.
        width: u32,
        /// Height claimed.
        height: u32,
    },
    /// A side longer than [`MAX_SIDE`].
    #[error(
        "The image is {width} × {height} px; the most Flint reads is {MAX_SIDE} px a side: crop or shrink it"
    )]
    SideTooLong {
        /// Width claimed.
        width: u32,
        /// Height claimed.
        height: u32,
    },
    /// More than [`MAX_PIXELS`].
    #[error(
        "The image is {width} × {height} px, {} million pixels; the most Flint reads is {} million: crop or shrink it",
        u64::from(*width) * u64::from(*height) / 1_000_000,
        MAX_PIXELS / 1_000_000
    )]
    TooManyPixels {
        /// Width claimed.
        width: u32,
        /// Height claimed.
        height: u32,
    },
    /// A file over [`MAX_SOURCE_BYTES`].
    #[error("The file is {} MB; the most Flint reads is {} MB", .0 / (1024 * 1024), MAX_SOURCE_BYTES / (1024 * 1024))]
    FileTooLarge(usize),
    /// An image over [`MAX_SEND_BYTES`] as sent.
    #[error("The image is {} KB as sent; the most a model is sent is {} KB per image: shrink it", .0 / 1024, MAX_SEND_BYTES / 1024)]
    TooLargeToSend(usize),
    /// A side over [`SEND_MAX_SIDE`] as sent.
    #[error(
        "The image is {width} × {height} px as sent; a model is sent at most {SEND_MAX_SIDE} px a side: shrink it"
    )]
    SideTooLongToSend {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
    },
    /// The data is not standard base64.
    #[error("The image's data is not valid base64: attach the image again")]
    BadBase64,
    /// The bytes are another format than the one claimed.
    #[error("The image says it is {claimed} but its bytes are {found}: attach the image again")]
    TypeMismatch {
        /// The media type claimed.
        claimed: ImageType,
        /// The format the bytes are.
        found: ImageType,
    },
    /// The claimed size is not the header's.
    #[error(
        "The image says it is {claimed_width} × {claimed_height} px but its header says {width} × {height} px: \
         attach the image again"
    )]
    SizeMismatch {
        /// Width claimed.
        claimed_width: u32,
        /// Height claimed.
        claimed_height: u32,
        /// Width in the header.
        width: u32,
        /// Height in the header.
        height: u32,
    },
    /// More than [`MAX_IMAGES`] in one message.
    #[error("A message carries {0} images; the most is {MAX_IMAGES}: remove some")]
    TooManyImages(usize),
    /// More image bytes in one request than its total allows.
    #[error("The images of this request come to {} KB; the most is {} KB in all: remove some", .total / 1024, .max / 1024)]
    TooManyBytes {
        /// Decoded bytes of all images.
        total: usize,
        /// The most allowed.
        max: usize,
    },
}

/// Checks the sizes a header claims against the limits on reading.
fn check_size(width: u32, height: u32) -> Result<(), ImageRefusal> {
    if width == 0 || height == 0 {
        return Err(ImageRefusal::ZeroSide { width, height });
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(ImageRefusal::SideTooLong { width, height });
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageRefusal::TooManyPixels { width, height });
    }
    Ok(())
}

/// Checks an [`ImageData`] as received: its base64 decodes, [`inspect`] agrees with its media type
/// and size, its sides are at most [`SEND_MAX_SIDE`] and its bytes at most [`MAX_SEND_BYTES`].
pub fn check_sent(image: &ImageData) -> Result<ImageInfo, ImageRefusal> {
    // Bound the text before decoding it, so a huge string is refused without a second copy.
    if image.byte_len() > MAX_SEND_BYTES {
        return Err(ImageRefusal::TooLargeToSend(image.byte_len()));
    }
    let bytes = STANDARD.decode(image.data.as_bytes()).map_err(|_| ImageRefusal::BadBase64)?;
    if bytes.len() > MAX_SEND_BYTES {
        return Err(ImageRefusal::TooLargeToSend(bytes.len()));
    }
    let info = inspect(&bytes)?;
    if info.kind != image.media_type {
        return Err(ImageRefusal::TypeMismatch { claimed: image.media_type, found: info.kind });
    }
    if (info.width, info.height) != (image.width, image.height) {
        return Err(ImageRefusal::SizeMismatch {
            claimed_width: image.width,
            claimed_height: image.height,
            width: info.width,
            height: info.height,
        });
    }
    if info.width > SEND_MAX_SIDE || info.height > SEND_MAX_SIDE {
        return Err(ImageRefusal::SideTooLongToSend { width: info.width, height: info.height });
    }
    Ok(info)
}

/// Images described for a log line ("1 image, 312 KB"): never their data, which floods logs.
pub fn summary(images: &[ImageData]) -> String {
    let bytes: usize = images.iter().map(ImageData::byte_len).sum();
    let noun = if images.len() == 1 { "image" } else { "images" };
    format!("{} {noun}, {} KB", images.len(), bytes.div_ceil(1024))
}

#[cfg(test)]
mod tests;
