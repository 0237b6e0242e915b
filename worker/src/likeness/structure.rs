//! The three views the score is made of, each 0–1 (1: the same).

use super::grid::{Cell, Grid};

/// SSIM's stabilising constants for values in 0–1 (the usual K1 = 0.01, K2 = 0.03).
const C1: f32 = 0.0001;
const C2: f32 = 0.0009;
/// How many scales SSIM is taken at (the grid, then halved each time).
const SCALES: usize = 3;
/// Colour distance at which two blocks count as wholly different (a light block against a mid
/// grey one; text set in another font moves a block's mean far less).
const BLOCK_FAR: f32 = 0.35;
/// Levels per channel in the palette's histogram.
const LEVELS: usize = 4;

/// Mean SSIM of the luminance over 3×3 windows, averaged over [`SCALES`] scales: the coarse ones
/// see the layout, the fine one the lines of text and the edges.
pub fn ssim_pyramid(a: &Grid, b: &Grid) -> f32 {
    let (mut a, mut b) = (a.clone(), b.clone());
    let mut total = 0.0;
    let mut counted = 0.0;
    for _ in 0..SCALES {
        if let Some(s) = ssim(&a, &b) {
            total += s;
            counted += 1.0;
        }
        a = a.halved();
        b = b.halved();
    }
    if counted == 0.0 { 1.0 } else { (total / counted).clamp(0.0, 1.0) }
}

/// Mean SSIM over every 3×3 window of two grids of one size; `None` when they are too small.
fn ssim(a: &Grid, b: &Grid) -> Option<f32> {
    let (columns, rows) = (a.columns(), a.rows());
    if columns < 3 || rows < 3 {
        return None;
    }
    let la: Vec<f32> =
        (0..rows).flat_map(|y| a.row(y).iter().map(|c| c.luma()).collect::<Vec<_>>()).collect();
    let lb: Vec<f32> =
        (0..rows).flat_map(|y| b.row(y).iter().map(|c| c.luma()).collect::<Vec<_>>()).collect();
    let mut sum = 0.0;
    let mut windows = 0.0;
    for y in 1..rows - 1 {
        for x in 1..columns - 1 {
            let (mut ma, mut mb) = (0.0, 0.0);
            for dy in 0..3 {
                for dx in 0..3 {
                    let i = (y + dy - 1) * columns + x + dx - 1;
                    ma += la[i];
                    mb += lb[i];
                }
            }
            ma /= 9.0;
            mb /= 9.0;
            let (mut va, mut vb, mut cov) = (0.0, 0.0, 0.0);
            for dy in 0..3 {
                for dx in 0..3 {
                    let i = (y + dy - 1) * columns + x + dx - 1;
                    let (da, db) = (la[i] - ma, lb[i] - mb);
                    va += da * da;
                    vb += db * db;
                    cov += da * db;
                }
            }
            va /= 8.0;
            vb /= 8.0;
            cov /= 8.0;
            let s = ((2.0 * ma * mb + C1) * (2.0 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
            sum += s;
            windows += 1.0;
        }
    }
    Some(sum / windows)
}

/// How alike the colours of the layout's blocks are: the grid halved twice (a 16-wide grid of
/// blocks), each pair of blocks scored by their colour distance.
pub fn block_colours(a: &Grid, b: &Grid) -> f32 {
    let (a, b) = (a.halved().halved(), b.halved().halved());
    let mut sum = 0.0;
    let mut n = 0.0;
    for y in 0..a.rows() {
        for (ca, cb) in a.row(y).iter().zip(b.row(y)) {
            sum += 1.0 - (ca.distance(*cb) / BLOCK_FAR).min(1.0);
            n += 1.0;
        }
    }
    if n == 0.0 { 1.0 } else { sum / n }
}

/// How alike the palettes are, wherever the colours sit: the intersection of the cells' colour
/// histograms ([`LEVELS`] levels a channel).
pub fn palette(a: &Grid, b: &Grid) -> f32 {
    let (ha, hb) = (histogram(a), histogram(b));
    ha.iter().zip(&hb).map(|(x, y)| x.min(*y)).sum::<f32>().clamp(0.0, 1.0)
}

fn histogram(grid: &Grid) -> Vec<f32> {
    let mut bins = vec![0.0; LEVELS * LEVELS * LEVELS];
    let level = |v: f32| ((v * LEVELS as f32) as usize).min(LEVELS - 1);
    let mut n = 0.0;
    for y in 0..grid.rows() {
        for c in grid.row(y) {
            let Cell { r, g, b } = *c;
            bins[(level(r) * LEVELS + level(g)) * LEVELS + level(b)] += 1.0;
            n += 1.0;
        }
    }
    if n > 0.0 {
        for bin in &mut bins {
            *bin /= n;
        }
    }
    bins
}
