//! Fix: a page's failed checks sent back to the model as an edit request, by the person's click or
//! key, or on their own when auto-fix is on (off by default, capped per run, never after a cancel
//! or an error such as a spent quota).

use leptos::prelude::*;

use crate::context::{FanOut, ModelChoice};
use crate::draft::Draft;
use crate::judge::Report;
use crate::launch::launch_fix;
use crate::run::{Runner, StreamStatus};

/// Most automatic fixes one run may ask for.
pub const AUTO_FIX_MAX: u8 = 3;

/// The attempt an automatic fix of a page with `report` would be, after a generation that ended
/// `status` and was itself fix `attempt` (0: the person's prompt); `None` when it must not follow.
pub fn next_auto_fix(report: &Report, status: StreamStatus, attempt: u8, cap: u8) -> Option<u8> {
    let wanted = !report.all_pass() && status == StreamStatus::Done;
    (wanted && attempt < cap.min(AUTO_FIX_MAX)).then_some(attempt + 1)
}

/// The Fix action for the main preview: whether there is something to fix, what stopped the last
/// fix, and the action itself.
#[derive(Clone, Copy)]
pub struct UseFix {
    /// The page's checks are in and some failed (or it looks too little like the prompt's picture),
    /// and nothing is streaming.
    pub can_fix: Memo<bool>,
    /// Why the last fix could not be sent.
    pub note: RwSignal<Option<String>>,
    /// Sends the fix (attempt 1).
    pub fix: Callback<()>,
}

/// Fix for the main preview, and auto-fix after each generation in the editor that ends with a page
/// failing its checks.
pub fn use_fix(runner: Runner, choice: ModelChoice, fan_out: FanOut, draft: Draft) -> UseFix {
    let state = runner.state();
    let note = RwSignal::new(None::<String>);
    let send = move |report: Report, attempt: u8| {
        note.set(launch_fix(&runner, choice, fan_out, draft, &report, attempt).err());
    };
    let fix = Callback::new(move |()| {
        if let Some(report) = state.checks.with_untracked(|c| c.report().cloned()) {
            send(report, 1);
        }
    });
    let can_fix = Memo::new(move |_| {
        state.status.get() != StreamStatus::Streaming
            && state.checks.with(|c| c.report().is_some_and(|r| !r.all_pass()))
            // A page that passes every check but looks too little like the prompt's picture.
            || state.status.get() != StreamStatus::Streaming
                && state.checks.with(|c| c.report().is_some())
                && state.likeness.with(|l| l.fix_findings().is_some())
    });

    // Armed while a generation in the editor streams; the first report after it ends decides.
    let armed = RwSignal::new(false);
    Effect::new(move |_| {
        if state.status.get() == StreamStatus::Streaming && state.tiles.with_untracked(Vec::is_empty) {
            armed.set(true);
        }
    });
    Effect::new(move |_| {
        let status = state.status.get();
        let Some(report) = state.checks.with(|c| c.report().cloned()) else { return };
        if !armed.get_untracked() || status == StreamStatus::Streaming {
            return;
        }
        armed.set(false);
        let attempt = state.fix_attempt.get_untracked();
        let Some(next) = next_auto_fix(&report, status, attempt, draft.auto_fix.get_untracked()) else {
            return;
        };
        if attempt > 0 && state.review.with_untracked(Option::is_some) {
            // The person turned auto-fix on: an earlier attempt's proposal is taken, and the next
            // attempt edits it. The last attempt's proposal waits for their review.
            runner.review_all(true);
            runner.finish_review();
        }
        // Not inside this effect: the generation it starts must not belong to it.
        queue_microtask(move || send(report, next));
    });
    UseFix { can_fix, note, fix }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::Check;

    fn report(pass: bool) -> Report {
        Report {
            checks: vec![Check {
                id: "errors".into(),
                label: "No errors".into(),
                passed: pass,
                detail: None,
            }],
        }
    }

    #[test]
    fn auto_fix_follows_only_a_finished_failing_page_and_stops_at_its_cap() {
        let failing = report(false);
        assert_eq!(next_auto_fix(&failing, StreamStatus::Done, 0, 0), None, "off by default");
        assert_eq!(next_auto_fix(&failing, StreamStatus::Done, 0, 1), Some(1));
        assert_eq!(next_auto_fix(&failing, StreamStatus::Done, 1, 1), None, "at the cap");
        assert_eq!(next_auto_fix(&failing, StreamStatus::Done, 2, 3), Some(3));
        assert_eq!(next_auto_fix(&failing, StreamStatus::Done, 3, 9), None, "never past AUTO_FIX_MAX");
        assert_eq!(next_auto_fix(&report(true), StreamStatus::Done, 0, 3), None, "nothing to fix");
        assert_eq!(next_auto_fix(&failing, StreamStatus::Cancelled, 0, 3), None, "never after a cancel");
        assert_eq!(
            next_auto_fix(&failing, StreamStatus::Error, 1, 3),
            None,
            "never after an error (a quota)"
        );
    }
}
