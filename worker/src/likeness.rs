//! "Looks like the picture": how close a rendered page is to the mock a person gave.
//!
//! Both images are shrunk onto one small grid of cells (the page is rendered at the mock's width,
//! so a cell covers the same CSS pixels in both), and three views of that grid are compared:
//! structure (SSIM on luminance at three scales, which forgives anti-aliasing, other fonts and
//! shifts of a few pixels), the colour of layout blocks (where the dark header, the tinted sidebar,
//! the card are) and the colour histogram (the palette, wherever it sits). Where the two differ in
//! a way a person can name, [`Finding`]s say how, in the mock's pixels.
//!
//! Plain Rust and no browser: the worker runs it in wasm, the tests and `bench/vision.md` natively.

mod findings;
mod grid;
pub mod request;
mod structure;

use thiserror::Error;

pub use grid::Grid;

/// Narrowest and shortest side accepted: under this there is no layout to compare.
pub const MIN_SIDE: u32 = 8;
/// Longest side accepted (the app downscales a mock before it gets here; a page is cropped).
pub const MAX_SIDE: u32 = 16_384;
/// Most pixels accepted in one image (64 MB of RGBA).
pub const MAX_PIXELS: u64 = 16_000_000;
/// Cells across the comparison grid.
pub const GRID_COLUMNS: usize = 64;
/// Most rows of cells compared: a page more than this many grid widths tall is compared down to
/// there (about four screens of a desktop mock), and its height is still reported.
pub const GRID_MAX_ROWS: usize = 4 * GRID_COLUMNS;

/// An image as RGBA8 rows, top to bottom, checked on construction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgba {
    width: u32,
    height: u32,
    data: Vec<u8>,
}

/// Why an image cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ImageError {
    /// A side is below [`MIN_SIDE`].
    #[error("the image is {width}×{height} px; at least {MIN_SIDE}×{MIN_SIDE} is needed to compare a layout")]
    TooSmall {
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
    },
    /// A side is above [`MAX_SIDE`] or the pixel count above [`MAX_PIXELS`].
    #[error(
        "the image is {width}×{height} px; at most {MAX_SIDE} px a side and {MAX_PIXELS} pixels are compared — downscale it first"
    )]
    TooLarge {
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
    },
    /// The pixels are not standard base64.
    #[error("its pixels are not base64 (standard alphabet, padded)")]
    NotBase64,
    /// The bytes are not `width × height × 4`.
    #[error("the image says {width}×{height} px but has {bytes} bytes of RGBA, not {expected}")]
    WrongLength {
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// The bytes given.
        bytes: usize,
        /// The bytes its size needs.
        expected: u64,
    },
}

impl Rgba {
    /// Checks that `data` is `width × height` RGBA8 pixels of a size that can be compared.
    pub fn new(width: u32, height: u32, data: Vec<u8>) -> Result<Self, ImageError> {
        if width < MIN_SIDE || height < MIN_SIDE {
            return Err(ImageError::TooSmall { width, height });
        }
        let pixels = u64::from(width) * u64::from(height);
        if width > MAX_SIDE || height > MAX_SIDE || pixels > MAX_PIXELS {
            return Err(ImageError::TooLarge { width, height });
        }
        let expected = pixels * 4;
        if data.len() as u64 != expected {
            return Err(ImageError::WrongLength { width, height, bytes: data.len(), expected });
        }
        Ok(Self { width, height, data })
    }

    /// Its width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Its height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Its RGBA8 bytes, rows top to bottom.
    pub fn data(&self) -> &[u8] {
        &self.data
    }
}

/// A difference a person can act on, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The sentence ("the page is 40 px taller than the picture").
    pub text: String,
    /// How much it matters, 0–1: findings are listed most important first.
    pub weight: f32,
}

/// The three views the score is made of, each 0–1 (1: the same).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Views {
    /// SSIM of the luminance at three scales: lines, edges, blocks.
    pub structure: f32,
    /// The colours of the layout's blocks, where they are.
    pub blocks: f32,
    /// The palette, wherever it sits.
    pub palette: f32,
}

/// How closely a page looks like its picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Likeness {
    /// 1: looks the same; 0: nothing alike.
    pub score: f32,
    /// What the score is made of.
    pub views: Views,
    /// What differs, most important first (at most [`MAX_FINDINGS`]).
    pub findings: Vec<Finding>,
}

/// Most findings reported: past a handful, a person (or the Fix prompt) stops reading.
pub const MAX_FINDINGS: usize = 5;

/// How much each view counts in the score (measured with `bench/vision.md`).
const WEIGHT_STRUCTURE: f32 = 0.4;
const WEIGHT_BLOCKS: f32 = 0.4;
const WEIGHT_PALETTE: f32 = 0.2;

/// The offsets (cells across, cells down) a page is tried at: up to two cells (about 25 px of an
/// 800 px mock) up or down, one to either side.
const OFFSETS: [(isize, isize); 15] = [
    (0, 0),
    (0, -1),
    (0, 1),
    (0, -2),
    (0, 2),
    (-1, 0),
    (-1, -1),
    (-1, 1),
    (-1, -2),
    (-1, 2),
    (1, 0),
    (1, -1),
    (1, 1),
    (1, -2),
    (1, 2),
];

/// Compares a page rendered at the picture's width (`page`) with the picture (`mock`).
///
/// The page may be taller or shorter: the shorter image is extended with its own background
/// (the colour of its bottom rows), so blank space past the end costs little and missing content
/// costs what it would anywhere else.
pub fn compare(mock: &Rgba, page: &Rgba) -> Likeness {
    let mock_grid = Grid::from_rgba(mock, GRID_COLUMNS, GRID_MAX_ROWS);
    let page_grid = Grid::from_rgba(page, GRID_COLUMNS, GRID_MAX_ROWS);
    let rows = mock_grid.rows().max(page_grid.rows());
    let (a, b) = (mock_grid.extended(rows), page_grid.extended(rows));
    // A page laid out a few px lower or to the side (a taller header, other margins) is the same
    // layout: the page is tried at each small offset and the best kept.
    let (structure, blocks) = OFFSETS
        .iter()
        .map(|&(dx, dy)| {
            let moved = b.shifted(dx, dy);
            (structure::ssim_pyramid(&a, &moved), structure::block_colours(&a, &moved))
        })
        .max_by(|x, y| (x.0 + x.1).total_cmp(&(y.0 + y.1)))
        .unwrap_or((0.0, 0.0));
    let palette = structure::palette(&a, &b);
    let score =
        (WEIGHT_STRUCTURE * structure + WEIGHT_BLOCKS * blocks + WEIGHT_PALETTE * palette).clamp(0.0, 1.0);
    let mut findings = findings::describe(mock, page, &a, &b);
    findings.sort_by(|x, y| y.weight.total_cmp(&x.weight));
    findings.truncate(MAX_FINDINGS);
    Likeness { score, views: Views { structure, blocks, palette }, findings }
}

#[cfg(test)]
#[path = "likeness_tests.rs"]
mod tests;
