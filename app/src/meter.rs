//! The context meter: what the worker's [`BudgetReport`] means to the person (the counting itself
//! is kept going by [`crate::budget::use_budget`]).

use flint_protocol::worker::{BudgetReport, Zone};

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
