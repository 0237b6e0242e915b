//! Plain logic for several generations at once (variations, compare): the page's status while tiles
//! run, how often their numbers are repainted, and what a tile says about edits that did not apply.

use flint_protocol::worker::{EditKind, EditReport};
use flint_protocol::{StreamMetrics, Usage};

use super::StreamStatus;
use crate::metrics::LiveMetrics;

/// How often numbers are repainted while several streams run: ten tiles at 60 deltas a second each
/// would otherwise re-render the page's text 600 times a second for numbers nobody can read.
pub const METRICS_EVERY_MS: f64 = 100.0;

/// Live metrics, told to the display at most every [`METRICS_EVERY_MS`].
#[derive(Debug, Clone, Default)]
pub struct ThrottledMetrics {
    live: LiveMetrics,
    shown_ms: f64,
}

impl ThrottledMetrics {
    /// Starts over from `started` (to be shown at once).
    pub fn start(&mut self, started: LiveMetrics) -> LiveMetrics {
        self.shown_ms = started.started_ms.unwrap_or_default();
        self.live = started;
        self.live.clone()
    }

    /// More text at `now`: the figures to show, when due (the first text always is).
    pub fn on_text(&mut self, now: f64, len: usize) -> Option<LiveMetrics> {
        self.live.on_text(now, len);
        let due = now - self.shown_ms >= METRICS_EVERY_MS || self.live.bytes == len;
        due.then(|| {
            self.shown_ms = now;
            self.live.clone()
        })
    }

    /// The model's reasoning reached `tokens` at `now`.
    pub fn on_thinking(&mut self, now: f64, tokens: u32) {
        self.live.on_thinking(now, tokens);
    }

    /// The gateway's final figures (to be shown at once).
    pub fn on_done(&mut self, usage: Usage, metrics: StreamMetrics) -> LiveMetrics {
        self.live.on_done(usage, metrics);
        self.live.clone()
    }

    /// What it holds now, shown or not.
    pub fn live(&self) -> &LiveMetrics {
        &self.live
    }
}

/// The page's status while tiles run: streaming while any streams, then done if any finished,
/// cancelled if any was stopped, an error only when every tile failed.
pub fn group_status(tiles: &[StreamStatus]) -> StreamStatus {
    if tiles.contains(&StreamStatus::Streaming) {
        StreamStatus::Streaming
    } else if tiles.contains(&StreamStatus::Done) {
        StreamStatus::Done
    } else if tiles.contains(&StreamStatus::Cancelled) {
        StreamStatus::Cancelled
    } else {
        StreamStatus::Error
    }
}

/// What a tile says about its edit answer: blocks that did not apply are not dropped in silence.
pub fn edit_note(report: &EditReport) -> Option<String> {
    let failed = report.failed.len();
    let all = failed + report.applied as usize;
    match (failed, report.kind) {
        (0, EditKind::Prose) if report.hunks.is_empty() => Some("Changed nothing.".into()),
        (0, _) => None,
        (1, _) if all == 1 => Some("Its only edit did not apply.".into()),
        (n, _) if n == all => Some(format!("None of its {all} edits applied.")),
        (n, _) => Some(format!("{n} of its {all} edits did not apply.")),
    }
}

#[cfg(test)]
mod tests {
    use flint_protocol::worker::FailedEdit;

    use super::*;

    #[test]
    fn a_tile_says_when_its_edits_did_not_all_apply() {
        let mut report = EditReport { kind: EditKind::Edits, applied: 2, ..Default::default() };
        assert_eq!(edit_note(&report), None);
        report.failed = vec![FailedEdit::default()];
        assert_eq!(edit_note(&report).as_deref(), Some("1 of its 3 edits did not apply."));
        report.applied = 0;
        assert_eq!(edit_note(&report).as_deref(), Some("Its only edit did not apply."));
        report.failed.push(FailedEdit::default());
        assert_eq!(edit_note(&report).as_deref(), Some("None of its 2 edits applied."));
        let prose = EditReport { kind: EditKind::Prose, ..Default::default() };
        assert_eq!(edit_note(&prose).as_deref(), Some("Changed nothing."));
    }

    #[test]
    fn the_group_streams_while_any_tile_does_and_fails_only_when_all_did() {
        use StreamStatus::*;
        assert_eq!(group_status(&[Done, Streaming, Error]), Streaming);
        assert_eq!(group_status(&[Error, Done, Cancelled]), Done);
        assert_eq!(group_status(&[Error, Cancelled]), Cancelled);
        assert_eq!(group_status(&[Error, Error]), Error);
    }

    #[test]
    fn tile_numbers_repaint_at_most_every_interval() {
        let mut metrics = ThrottledMetrics::default();
        metrics.start(LiveMetrics::started(1_000.0));
        assert!(metrics.on_text(1_010.0, 5).is_some(), "the first text shows at once");
        assert!(metrics.on_text(1_050.0, 5).is_none(), "held back within the interval");
        let shown = metrics.on_text(1_111.0, 5).expect("due after the interval");
        assert_eq!(shown.bytes, 15, "what was held back is in the next figures");
    }
}
