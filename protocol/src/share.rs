//! Shareable prompt links: a [`SharedPrompt`] packed into text that fits in a URL fragment
//! (`#p=<link>`), so a link carries the prompt without any server storing it.
//!
//! A link is a version prefix and a payload: `v1.` then base64url (no padding) of zlib-compressed
//! JSON. The prefix decides how the rest is read, so a later format can change the payload while
//! links made today keep opening. zlib rather than raw deflate: its checksum costs 6 bytes and turns a
//! link altered in transit into an error instead of a silently different prompt.

use base64::Engine as _;
use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use miniz_oxide::inflate::TINFLStatus;
use serde::{Deserialize, Serialize};

use crate::prompt::ProjectKind;

/// The link format [`encode`] writes.
pub const CURRENT_VERSION: u32 = 1;

/// The most variations a shared prompt asks for.
pub const MAX_VARIATIONS: u8 = 10;

/// The longest encoded link (the text after `#p=`) offered to share: beyond about 8,000 characters
/// chat apps and some browsers cut URLs.
pub const MAX_LINK_CHARS: usize = 8_000;

/// The most bytes a link may unpack to; anything larger is refused unread, so a small hostile link
/// cannot make the page allocate gigabytes.
pub const MAX_UNPACKED_BYTES: usize = 1 << 20;

/// Base64url without padding when writing; padding is accepted when reading, in case a tool added it.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// What a link shares: enough to run the same prompt elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedPrompt {
    /// What to build.
    pub prompt: String,
    /// Standing instructions pinned above the prompt (the pinned goal), if any.
    pub system: Option<String>,
    /// The model to run it with (`provider/model`), if one was selected.
    pub model: Option<String>,
    /// How many variations to generate, `1..=`[`MAX_VARIATIONS`].
    pub variations: u8,
    /// The code in the editor, only when the person chose to include it.
    pub code: Option<String>,
    /// The profile it was run with (`spark`), if one was active; a Flint without that profile
    /// uses `model` alone.
    pub profile: Option<String>,
    /// The project kind it asks for, when the prompt's words alone would not give it (React
    /// picked for "a todo app"); `None`: what the words suggest.
    pub kind: Option<ProjectKind>,
}

impl SharedPrompt {
    /// A link to `prompt` alone: no pinned goal, no model, one variation, no code.
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            prompt: prompt.into(),
            system: None,
            model: None,
            variations: 1,
            code: None,
            profile: None,
            kind: None,
        }
    }
}

impl Default for SharedPrompt {
    fn default() -> Self {
        Self::new("")
    }
}

/// Why a link cannot be opened; each message says what the person can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShareLinkError {
    /// The link names a format this Flint does not know, so a newer Flint made it.
    #[error(
        "This link was made by a newer version of Flint (link format v{version}; this one reads up to \
         v{CURRENT_VERSION}). Update Flint to open it."
    )]
    UnknownVersion {
        /// The version the link names.
        version: u32,
    },
    /// The link is not one Flint wrote, or was altered on the way.
    #[error("This shared link is garbled ({0}). Copy the whole link again, exactly as it was sent.")]
    Garbled(&'static str),
    /// The link ends early: part of it was lost when it was copied or sent.
    #[error(
        "This shared link is cut short. Copy the whole link again; some apps cut long links, so \
         paste it into the address bar whole."
    )]
    Truncated,
    /// The link unpacks to more than [`MAX_UNPACKED_BYTES`]: no link Flint offers does.
    #[error(
        "This shared link unpacks to more than {} KiB, far more than a shared prompt, so it was not \
         made by Flint. It was not opened.",
        MAX_UNPACKED_BYTES / 1024
    )]
    TooLarge,
}

/// Packs `shared` into a link (the text after `#p=`), in the [`CURRENT_VERSION`] format.
pub fn encode(shared: &SharedPrompt) -> String {
    let payload = PayloadV1::from(shared);
    let json = serde_json::to_vec(&payload).expect("strings and integers always serialise");
    let packed = miniz_oxide::deflate::compress_to_vec_zlib(&json, 9);
    format!("v{CURRENT_VERSION}.{}", BASE64.encode(packed))
}

/// Reads a link made by [`encode`], in this or any earlier format.
pub fn decode(link: &str) -> Result<SharedPrompt, ShareLinkError> {
    let link = link.trim();
    let (version, body) = split_version(link)?;
    match version {
        1 => decode_v1(body),
        version => Err(ShareLinkError::UnknownVersion { version }),
    }
}

/// Whether an encoded link is longer than [`MAX_LINK_CHARS`], so not worth offering.
pub fn is_too_long(link: &str) -> bool {
    link.len() > MAX_LINK_CHARS
}

/// `v<digits>.rest` → (digits, rest).
fn split_version(link: &str) -> Result<(u32, &str), ShareLinkError> {
    const NO_VERSION: ShareLinkError = ShareLinkError::Garbled("it does not start with a format such as v1.");
    let rest = link.strip_prefix('v').ok_or(NO_VERSION)?;
    let (digits, body) = rest.split_once('.').ok_or(NO_VERSION)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NO_VERSION);
    }
    // All digits: only overflow can fail, and no Flint has written such a version.
    let version = digits.parse().map_err(|_| NO_VERSION)?;
    Ok((version, body))
}

fn decode_v1(body: &str) -> Result<SharedPrompt, ShareLinkError> {
    let packed = BASE64.decode(body).map_err(|err| match err {
        // A length or final symbol that base64 cannot end on: the text was cut.
        base64::DecodeError::InvalidLength(_) | base64::DecodeError::InvalidLastSymbol(..) => {
            ShareLinkError::Truncated
        }
        _ => ShareLinkError::Garbled("it holds characters a link never contains"),
    })?;
    let json = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&packed, MAX_UNPACKED_BYTES).map_err(
        |err| match err.status {
            TINFLStatus::HasMoreOutput => ShareLinkError::TooLarge,
            TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => ShareLinkError::Truncated,
            _ => ShareLinkError::Garbled("its compressed data is damaged"),
        },
    )?;
    let payload: PayloadV1 = serde_json::from_slice(&json)
        .map_err(|_| ShareLinkError::Garbled("it does not describe a prompt"))?;
    Ok(payload.into())
}

/// The v1 JSON payload. Kept apart from [`SharedPrompt`] so that changing the Rust type cannot
/// change how existing v1 links read; a new optional field may be added here (older Flints ignore
/// it), anything else needs a new version.
#[derive(Serialize, Deserialize)]
struct PayloadV1 {
    prompt: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    variations: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    /// Added after the first v1 links: absent in them, ignored by Flints that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    profile: Option<String>,
    /// Added with project kinds ([`ProjectKind::key`]); a kind this Flint does not know (a newer
    /// Flint's) is read as none, so the link still opens with what its words suggest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
}

fn one() -> u8 {
    1
}

fn is_one(n: &u8) -> bool {
    *n == 1
}

impl From<&SharedPrompt> for PayloadV1 {
    fn from(s: &SharedPrompt) -> Self {
        Self {
            prompt: s.prompt.clone(),
            system: s.system.clone(),
            model: s.model.clone(),
            variations: s.variations,
            code: s.code.clone(),
            profile: s.profile.clone(),
            kind: s.kind.map(|k| k.key().to_owned()),
        }
    }
}

impl From<PayloadV1> for SharedPrompt {
    fn from(p: PayloadV1) -> Self {
        Self {
            prompt: p.prompt,
            system: p.system,
            model: p.model,
            // A hand-edited count still opens, within what Flint offers.
            variations: p.variations.clamp(1, MAX_VARIATIONS),
            code: p.code,
            profile: p.profile,
            kind: p.kind.as_deref().and_then(ProjectKind::from_key),
        }
    }
}

#[cfg(test)]
#[path = "share_tests.rs"]
mod tests;
