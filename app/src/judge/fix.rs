//! The request "Fix" sends: what failed, in the words of the checks, and how the page differs from
//! the prompt's picture when it looks too little like it, for the model to repair in the current
//! code (sent as an edit of it).

use super::likeness::Likeness;
use super::report::Report;

/// Longest fix request, in characters: a page's errors are its own words and may be long.
const PROMPT_CHARS: usize = 2_000;

/// What to ask the model when `report` has failures or `likeness` is under
/// [`super::likeness::GOOD_LIKENESS`] with findings (`None` when there is nothing to fix).
pub fn fix_prompt(report: &Report, likeness: &Likeness) -> Option<String> {
    let findings = likeness.fix_findings();
    if report.all_pass() && findings.is_none() {
        return None;
    }
    let mut text = String::from("Fix this page.");
    if !report.all_pass() {
        text.push_str(" Flint ran it in a browser and these checks failed:\n");
    }
    let mut said: Vec<&str> = Vec::new();
    for check in report.failures() {
        text.push_str("- ");
        text.push_str(&check.label);
        match check.detail.as_deref() {
            // The same reason for every check (a page that never finished) is said once.
            Some(detail) if !said.contains(&detail) => {
                said.push(detail);
                text.push_str(": ");
                text.push_str(detail);
            }
            _ => {}
        }
        text.push('\n');
    }
    if let Some(findings) = findings {
        text.push_str(if report.all_pass() { " " } else { "" });
        text.push_str("Drawn at the size of the attached picture, it does not look like it yet:\n");
        for finding in findings {
            text.push_str("- ");
            text.push_str(finding);
            text.push('\n');
        }
    }
    if let Some((at, _)) = text.char_indices().nth(PROMPT_CHARS) {
        text.truncate(at);
        text.push_str("…\n");
    }
    text.push_str("Change only what these need and keep everything else as it is.");
    Some(text)
}
