//! Best of N's deadline: once the first page is complete, the variations still writing get a bounded
//! extra time, then they are stopped and the best checked page wins. Without it best of 8 waited for
//! every page, and pages of a small model that fail tend to ramble to their token limit: in
//! `bench/judge.md` (before the deadline) row 5 took 363 s as best of 8 for pages a single run wrote
//! in 4 s, and such rows made nearly all of best of 8's 3.80× a single run's time, while the pages
//! that passed came in close behind the first.

/// How many times the first page's time the slowest page may take in all.
pub const FACTOR: f64 = 2.5;

/// The least extra time, so that a first page that was very quick (a cached or tiny answer) does
/// not stop the rest almost at once.
pub const MIN_EXTRA_MS: f64 = 5_000.0;

/// How long after the first page is complete (it took `first_finished_ms` from its start) the
/// variations still writing may go on.
pub fn extra_wait_ms(first_finished_ms: f64) -> f64 {
    (first_finished_ms.max(0.0) * (FACTOR - 1.0)).max(MIN_EXTRA_MS)
}

/// What the person is told when the deadline stopped `stopped` variations after `waited_ms`.
pub fn stopped_note(stopped: usize, waited_ms: f64) -> String {
    let noun = if stopped == 1 { "variation" } else { "variations" };
    format!(
        "Stopped {stopped} {noun} still writing {:.0} s after the first page was done; the best checked page wins \
         (Retry on a tile runs it again).",
        waited_ms / 1000.0
    )
}
