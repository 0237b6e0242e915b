//! "Looks like the picture": the page asks the worker how close a drawn page is to the mock.
//!
//! Until the images module (`protocol::image`) lands, both images travel as raw RGBA in base64:
//! the mock decoded by the page, the page as its picture frame drew it
//! ([`crate::frames::FromFrame::Pixels`], passed on as it came).

use serde::{Deserialize, Serialize};

/// An image as `width × height` RGBA8 pixels, rows top to bottom, in standard base64 (with padding).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RgbaImage {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// The pixels, base64.
    pub rgba: String,
}

/// The worker's answer to [`super::WorkerRequest::Likeness`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LikenessReport {
    /// The request's job, echoed.
    pub job: u32,
    /// 0–1, 1 looks the same; absent when the images could not be compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// What differs, in words, most important first ("the page is 40 px taller than the picture").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// Why the images could not be compared, as a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// What comparing cost in the worker (ms), decoding included.
    #[serde(default)]
    pub ms: f64,
}
