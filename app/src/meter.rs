//! The context meter: what the worker's [`BudgetReport`] means to the person, and
//! [`use_budget`], which keeps the worker counting what the next request would send.

use std::cell::RefCell;
use std::rc::Rc;

use flint_protocol::prompt::{RequestParts, file_text, goal_text, turn_text};
use flint_protocol::worker::{BudgetReport, BudgetRequest, Zone};
use flint_protocol::{ModelInfo, Tokenizer};
use leptos::prelude::*;

use crate::app::ModelChoice;
use crate::draft::Draft;
use crate::launch::context_now;
use crate::run::Runner;

/// Tokens kept free for the answer: a quarter of the window, at most the gateway's default cap
/// (`server.max_tokens`, 8,192).
pub fn reserved_output(window: u32) -> u32 {
    (window / 4).min(8_192)
}

/// `1,234` or `12.3k` or `128k`.
pub fn tokens_short(n: u32) -> String {
    match n {
        0..=9_999 => {
            let s = n.to_string();
            if s.len() > 3 { format!("{},{}", &s[..s.len() - 3], &s[s.len() - 3..]) } else { s }
        }
        10_000..=99_999 => format!("{:.1}k", f64::from(n) / 1_000.0),
        _ => format!("{}k", (f64::from(n) / 1_000.0).round()),
    }
}

/// The zone's words and its CSS class.
pub fn zone_text(zone: Zone) -> (&'static str, &'static str) {
    match zone {
        Zone::Sharp => ("sharp", "zone-sharp"),
        Zone::SomeDrift => ("some drift", "zone-some-drift"),
        Zone::DriftLikely => ("drift likely", "zone-drift-likely"),
        Zone::AboutToOverflow => ("about to overflow", "zone-overflow"),
    }
}

/// What the meter shows for `report` while `answer` tokens have streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterView {
    /// `12.3k / 128k tokens`, with `≈` when estimated.
    pub tokens: String,
    /// Fill of the bar, 0–100, of the room for input.
    pub fill: u32,
    /// The zone's words and class.
    pub zone: (&'static str, &'static str),
    /// The breakdown, for the tooltip.
    pub detail: String,
    /// What the person must know before sending: turns left out, or that it does not fit.
    pub note: Option<String>,
}

/// The meter for `report`, with `answer` tokens of a streaming answer added.
pub fn meter_view(report: &BudgetReport, answer: u32) -> MeterView {
    let room = report.window.saturating_sub(report.reserved_output).max(1);
    let used = report.total.saturating_add(answer);
    let fill = (u64::from(used) * 100 / u64::from(room)).min(100) as u32;
    let approx = if report.exact { "" } else { "≈ " };
    let answer_part = if answer > 0 { format!(" (answer {})", tokens_short(answer)) } else { String::new() };
    let tokens =
        format!("{approx}{} / {} tokens{answer_part}", tokens_short(used), tokens_short(report.window));
    let turns: u32 = report.history.iter().skip(report.dropped as usize).sum();
    let kept = report.history.len().saturating_sub(report.dropped as usize);
    let counted = if report.exact {
        "counted with o200k"
    } else {
        "an estimate: this model's tokenizer is not in Flint"
    };
    let plural = if kept == 1 { "" } else { "s" };
    let detail = format!(
        "system {} · goal {} · code {} · thread {turns} ({kept} turn{plural}) · prompt {} · kept for the \
         answer {} — {counted}",
        report.system, report.goal, report.file, report.prompt, report.reserved_output
    );
    let zone = if used > room { Zone::AboutToOverflow } else { report.zone };
    let note = if !report.fits {
        Some(crate::prompt::too_long(report))
    } else if report.dropped > 0 {
        let n = report.dropped;
        Some(format!(
            "To fit, the {} oldest turn{} of the thread will not be sent.",
            if n == 1 { "one".to_owned() } else { n.to_string() },
            if n == 1 { "" } else { "s" }
        ))
    } else {
        None
    };
    MeterView { tokens, fill, zone: zone_text(zone), detail, note }
}

/// What was last sent to the worker, so that only changed parts travel.
#[derive(Default)]
struct Sent {
    revision: u32,
    model: Option<(u32, Tokenizer)>,
    system: Option<String>,
    goal: Option<String>,
    file: Option<String>,
    history: Option<Vec<String>>,
    prompt: Option<String>,
}

/// `Some(new)` when it differs from what was sent (and records it).
fn changed<T: PartialEq + Clone>(sent: &mut Option<T>, new: T) -> Option<T> {
    (sent.as_ref() != Some(&new)).then(|| {
        *sent = Some(new.clone());
        new
    })
}

/// Keeps the worker counting the next request as the person types, pins a goal, switches model
/// or options, and as the code changes; its reports land in [`RunState::budget`](crate::run::RunState::budget).
pub fn use_budget(runner: &Runner, draft: Draft, choice: ModelChoice) {
    let sent = Rc::new(RefCell::new(Sent::default()));
    let model = Memo::new(move |_| {
        let id = choice.selected.get()?;
        let list = choice.models.get()?.ok()?;
        list.models.into_iter().find(|m: &ModelInfo| m.id == id).map(|m| (m.context_window, m.tokenizer))
    });
    let state = runner.state();
    // Sends the parts `fill` sets (those it leaves `None` are unchanged), when any changed.
    let send = {
        let runner = runner.clone();
        move |fill: &dyn Fn(&mut Sent, &mut BudgetRequest)| {
            let Some((window, tokenizer)) = model.get_untracked() else { return };
            let mut sent = sent.borrow_mut();
            let model_changed = changed(&mut sent.model, (window, tokenizer)).is_some();
            let mut request = BudgetRequest {
                revision: sent.revision + 1,
                window,
                reserved_output: reserved_output(window),
                tokenizer,
                ..Default::default()
            };
            fill(&mut sent, &mut request);
            let any = request.system.is_some()
                || request.goal.is_some()
                || request.file.is_some()
                || request.history.is_some()
                || request.prompt.is_some();
            if any || model_changed {
                sent.revision = request.revision;
                runner.state().budget_sent.set(request.revision);
                runner.measure(request);
            }
        }
    };
    // The code and the thread: read only when something that can change them did (the editor's
    // text is not a signal; `code_revision` stands for it).
    let runner = runner.clone();
    let send_context = send.clone();
    Effect::new(move |_| {
        model.track();
        draft.edit.track();
        draft.continue_thread.track();
        state.code_revision.track();
        state.versions.track();
        let context = context_now(&runner, draft);
        send_context(&|sent, request| {
            let parts = RequestParts { goal: "", file: context.file.as_deref(), history: &[], prompt: "" };
            request.system = changed(&mut sent.system, parts.system().to_owned());
            request.file =
                changed(&mut sent.file, context.file.as_deref().map(file_text).unwrap_or_default());
            let file = context.file.as_deref();
            request.history =
                changed(&mut sent.history, context.thread.iter().map(|t| turn_text(t, file)).collect());
        });
    });
    // What the person types: cheap, sent as they type.
    Effect::new(move |_| {
        model.track();
        let prompt = draft.prompt.get();
        let goal = draft.goal.get();
        send(&|sent, request| {
            request.goal = changed(&mut sent.goal, goal_text(&goal));
            request.prompt = changed(&mut sent.prompt, prompt.trim().to_owned());
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(total: u32, fits: bool, dropped: u32) -> BudgetReport {
        BudgetReport {
            window: 8_192,
            reserved_output: 2_048,
            exact: false,
            history: vec![100, 200],
            total,
            fits,
            dropped,
            zone: Zone::Sharp,
            ..Default::default()
        }
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(tokens_short(950), "950");
        assert_eq!(tokens_short(8_192), "8,192");
        assert_eq!(tokens_short(12_345), "12.3k");
        assert_eq!(tokens_short(128_000), "128k");
        assert_eq!(reserved_output(128_000), 8_192);
        assert_eq!(reserved_output(8_192), 2_048);
    }

    #[test]
    fn the_meter_adds_the_streaming_answer_and_says_when_it_estimates() {
        let v = meter_view(&report(1_000, true, 0), 500);
        assert_eq!(v.tokens, "≈ 1,500 / 8,192 tokens (answer 500)");
        assert_eq!(v.fill, 24);
        assert_eq!(v.note, None);
        assert!(v.detail.contains("an estimate"));
        let full = meter_view(&report(6_000, true, 0), 500);
        assert_eq!((full.fill, full.zone.0), (100, "about to overflow"));
    }

    #[test]
    fn the_meter_says_what_is_left_out_or_that_it_does_not_fit() {
        let v = meter_view(&report(5_000, true, 1), 0);
        assert_eq!(v.note.as_deref(), Some("To fit, the one oldest turn of the thread will not be sent."));
        assert!(v.detail.contains("thread 200 (1 turn)"));
        let v = meter_view(&report(9_000, false, 2), 0);
        assert!(v.note.unwrap().starts_with("Not sent: this request needs 9000 tokens"));
    }
}
