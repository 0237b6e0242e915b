//! The worker's answer to a likeness request: both images checked and decoded, then compared.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use flint_protocol::worker::{LikenessReport, RgbaImage};

use super::{ImageError, MAX_PIXELS, MAX_SIDE, MIN_SIDE, Rgba, compare};

/// Why a request's image cannot be compared, as a sentence naming which one.
fn refuse(which: &str, err: impl std::fmt::Display) -> String {
    format!("The {which} could not be compared: {err}.")
}

/// `image` decoded into pixels, its size checked before its base64 is decoded (a page that claims
/// 30,000 px sides or sends more bytes than its size costs nothing but this sentence).
pub fn decode(image: &RgbaImage) -> Result<Rgba, ImageError> {
    let (width, height) = (image.width, image.height);
    if width < MIN_SIDE || height < MIN_SIDE {
        return Err(ImageError::TooSmall { width, height });
    }
    let pixels = u64::from(width) * u64::from(height);
    if width > MAX_SIDE || height > MAX_SIDE || pixels > MAX_PIXELS {
        return Err(ImageError::TooLarge { width, height });
    }
    let expected = pixels * 4;
    // Standard base64 with padding: four characters for every three bytes.
    if image.rgba.len() as u64 != expected.div_ceil(3) * 4 {
        return Err(ImageError::WrongLength { width, height, bytes: image.rgba.len() / 4 * 3, expected });
    }
    let data = STANDARD.decode(image.rgba.as_bytes()).map_err(|_| ImageError::NotBase64)?;
    Rgba::new(width, height, data)
}

/// Compares the request's page with its mock; `clock` reads milliseconds (the worker's
/// `performance.now`, or nothing natively) so the report says what it cost.
pub fn answer(job: u32, mock: &RgbaImage, page: &RgbaImage, clock: impl Fn() -> f64) -> LikenessReport {
    let started = clock();
    let images = decode(mock)
        .map_err(|e| refuse("picture", e))
        .and_then(|m| Ok((m, decode(page).map_err(|e| refuse("page's drawing", e))?)));
    let (score, findings, problem) = match images {
        Ok((mock, page)) => {
            let likeness = compare(&mock, &page);
            (Some(likeness.score), likeness.findings.into_iter().map(|f| f.text).collect(), None)
        }
        Err(problem) => (None, Vec::new(), Some(problem)),
    };
    LikenessReport { job, score, findings, problem, ms: clock() - started }
}
