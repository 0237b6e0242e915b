//! Variations ranked by their checks and, with a picture in the prompt, by how much they look like
//! it: the higher merit first, then the one that finished sooner. Tiles whose checks are not in yet
//! come after, in their own order.
//!
//! A tile's merit is the share of checks it passed plus its likeness score (0–1, a page that could
//! not be drawn counting 0): the picture says as much about what the person wants as the words, so
//! one failed check of six (−0.17) is worth about as much as a page looking 17 points less alike.
//! Without a picture every likeness is absent and the checks alone decide, as before.

use std::cmp::Ordering;

use super::report::Report;

/// A tile as ranking sees it.
#[derive(Debug, Clone, Copy)]
pub struct Ranked<'a> {
    /// Its checks, once in.
    pub report: Option<&'a Report>,
    /// When its answer finished (ms from its start), if it did.
    pub finished_ms: Option<f64>,
    /// How much it looks like the prompt's picture (0–1), once scored (see
    /// [`super::Likeness::rank_score`]).
    pub likeness: Option<f32>,
}

/// What a tile with checks in is worth: its share of checks passed (an empty report counts as 0)
/// plus its likeness.
fn merit(report: &Report, likeness: Option<f32>) -> f64 {
    #[allow(clippy::cast_precision_loss)] // check counts are tiny
    let share = report.passed() as f64 / report.total().max(1) as f64;
    share + f64::from(likeness.unwrap_or(0.0))
}

/// The indices of `tiles`, best first.
pub fn rank(tiles: &[Ranked<'_>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tiles.len()).collect();
    order.sort_by(|&a, &b| {
        let (ta, tb) = (&tiles[a], &tiles[b]);
        match (ta.report, tb.report) {
            (Some(ra), Some(rb)) => merit(rb, tb.likeness)
                .total_cmp(&merit(ra, ta.likeness))
                .then_with(|| {
                    let (fa, fb) = (ta.finished_ms.unwrap_or(f64::MAX), tb.finished_ms.unwrap_or(f64::MAX));
                    fa.total_cmp(&fb)
                })
                .then(a.cmp(&b)),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => a.cmp(&b),
        }
    });
    order
}
