//! Variations ranked by their checks: the larger share of checks passed first, then the one that
//! finished sooner. Tiles whose checks are not in yet come after, in their own order.

use std::cmp::Ordering;

use super::report::Report;

/// A tile as ranking sees it.
#[derive(Debug, Clone, Copy)]
pub struct Ranked<'a> {
    /// Its checks, once in.
    pub report: Option<&'a Report>,
    /// When its answer finished (ms from its start), if it did.
    pub finished_ms: Option<f64>,
}

/// Compares two shares `a.0/a.1` and `b.0/b.1` without floats (an empty report counts as 0).
fn share(a: (usize, usize), b: (usize, usize)) -> Ordering {
    (a.0 * b.1.max(1)).cmp(&(b.0 * a.1.max(1)))
}

/// The indices of `tiles`, best first.
pub fn rank(tiles: &[Ranked<'_>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tiles.len()).collect();
    order.sort_by(|&a, &b| {
        let (ta, tb) = (&tiles[a], &tiles[b]);
        match (ta.report, tb.report) {
            (Some(ra), Some(rb)) => share((rb.passed(), rb.total()), (ra.passed(), ra.total()))
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
