//! A page's checks as the person reads them. Most come from the check frame, where the page itself
//! runs: its report is the page's word, so only known names are read, each once, and every detail
//! is clipped; whether the answer is a whole document is decided here, from the code, and whether
//! it is on topic here too, from the text the frame reports (the frame never sees the prompt).

use serde::Deserialize;

use super::topic::on_topic;
use super::vocabulary::Expect;

/// What every list of checks says on hover: the checks are the page's own report.
pub const PAGES_WORD: &str = "The page ran these checks on itself, in a hidden copy: a page can claim to pass \
     them. They only rank variations and word a Fix request.";

/// Longest detail kept, in characters.
const DETAIL_CHARS: usize = 300;
/// Results read from one report; a page cannot make the app read more.
const RESULTS_MAX: usize = 64;

/// One check: its name, whether it passed, and what was seen when it did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Stable name (`complete`, `errors`, `has:button`…).
    pub id: String,
    /// How it reads to a person.
    pub label: String,
    /// Whether the page passed it.
    pub passed: bool,
    /// What was seen, for a failure (and some passes).
    pub detail: Option<String>,
}

/// Every check a page was put through (those that did not apply, like buttons on a page without
/// any, are left out).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// In a fixed order: the document, what shows, what the prompt named, buttons, errors, loads.
    pub checks: Vec<Check>,
}

/// Where a page's checks are.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Checked {
    /// No complete page yet.
    #[default]
    Waiting,
    /// Its check frame is running it.
    Running,
    /// The checks are in.
    Done(Report),
}

impl Checked {
    /// The report, once in.
    pub fn report(&self) -> Option<&Report> {
        match self {
            Self::Done(report) => Some(report),
            _ => None,
        }
    }
}

impl Report {
    /// How many passed.
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.passed).count()
    }

    /// How many there are.
    pub fn total(&self) -> usize {
        self.checks.len()
    }

    /// Whether every check passed.
    pub fn all_pass(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }

    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.passed)
    }

    /// "5/6".
    pub fn score(&self) -> String {
        format!("{}/{}", self.passed(), self.total())
    }

    /// The summary and that the page reported its own checks, for a tooltip.
    pub fn tooltip(&self) -> String {
        format!("{}. {PAGES_WORD}", self.summary())
    }

    /// "All 6 checks pass" or "2 of 6 checks failed".
    pub fn summary(&self) -> String {
        let failed = self.total() - self.passed();
        if failed == 0 {
            format!("All {} checks pass", self.total())
        } else {
            format!("{failed} of {} checks failed", self.total())
        }
    }
}

/// What the check frame says (see `public/preview-checks.js` and `app/js/checks.js`).
#[derive(Deserialize)]
struct Outcome {
    #[serde(default)]
    results: Vec<serde_json::Value>,
    /// What the page reads as (its title, text and labels), for the topic.
    text: Option<String>,
    failed: Option<String>,
}

#[derive(Deserialize)]
struct Raw {
    id: String,
    pass: Option<bool>,
    detail: Option<String>,
}

/// Whether `code` is a whole HTML document: it opens with a doctype or `<html>` and ends with `</html>`.
pub fn complete_document(code: &str) -> bool {
    let lower = code.trim().to_ascii_lowercase();
    (lower.starts_with("<!doctype html") || lower.starts_with("<html")) && lower.ends_with("</html>")
}

fn clip(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(DETAIL_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The report for the page made from `code`, from the check frame's `json` about it; `expect` is
/// what the prompt named and its topic. A report that cannot be read, or a page that never
/// finished, fails every check the frame was to make, with the reason.
pub fn read(json: &str, expect: &Expect, code: &str) -> Report {
    let complete = complete_document(code);
    let mut checks = vec![Check {
        id: "complete".into(),
        label: "A whole document".into(),
        passed: complete,
        detail: (!complete).then(|| {
            "The answer is not a whole HTML document (from <!DOCTYPE html> or <html> to </html>).".into()
        }),
    }];
    let mut wanted: Vec<(String, String)> = vec![("visible".into(), "Something shows".into())];
    wanted.extend(expect.terms.iter().map(|t| (t.id.to_owned(), t.label.to_owned())));
    if !expect.topic.is_empty() {
        wanted.push(("topic".into(), "About what was asked".into()));
    }
    wanted.push(("buttons".into(), "Buttons respond".into()));
    wanted.push(("errors".into(), "No errors".into()));
    wanted.push(("loads".into(), "Everything loads".into()));

    let outcome =
        serde_json::from_str::<Outcome>(json).map_err(|_| "The page's checks could not be read.".to_owned());
    let (results, text, failed): (Vec<Raw>, Option<String>, Option<String>) = match outcome {
        Ok(Outcome { failed: Some(why), .. }) => (Vec::new(), None, Some(clip(&why))),
        Ok(Outcome { results, text, .. }) => (
            results.into_iter().take(RESULTS_MAX).filter_map(|v| serde_json::from_value(v).ok()).collect(),
            text,
            None,
        ),
        Err(why) => (Vec::new(), None, Some(why)),
    };
    // Matched here: a result named "topic" from the page is not read.
    let topic = text.map(|text| on_topic(&expect.topic, &text)).map(|on| Raw {
        id: "topic".into(),
        pass: Some(on),
        detail: (!on).then(|| {
            "Nothing on the page mentions what was asked for: it may be about something else.".into()
        }),
    });
    for (id, label) in wanted {
        let raw = if id == "topic" { topic.as_ref() } else { results.iter().find(|r| r.id == id) };
        let (passed, detail) = match (&failed, raw) {
            (Some(why), _) => (false, Some(format!("Not checked: {why}"))),
            // Not applicable (no buttons to click).
            (None, Some(Raw { pass: None, .. })) => continue,
            (None, Some(raw)) => (raw.pass == Some(true), raw.detail.as_deref().map(clip)),
            (None, None) => (false, Some("The check frame did not report it.".into())),
        };
        checks.push(Check { id, label, passed, detail });
    }
    Report { checks }
}
