//! What Flint asks the model: a [`Job`] is one prompt made into messages (see
//! [`flint_protocol::prompt::RequestParts`]), with the file it edits, if any.

use flint_protocol::prompt::{ProjectKind, RequestParts, Turn};
use flint_protocol::worker::BudgetReport;
use flint_protocol::{ChatMessage, Price, Profile, StartRequest};

use crate::judge::{Expect, expect};
use crate::pictures::JobPictures;
use crate::profiles;

/// One prompt, ready to send to one model or several.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The instruction as the person typed it.
    pub prompt: String,
    /// The messages sent.
    pub messages: Vec<ChatMessage>,
    /// The file the answer edits (the worker applies its search/replace blocks to it); `None` for
    /// a new page.
    pub base: Option<String>,
    /// The version it starts from (index), which the answer's version will hang off.
    pub parent: Option<usize>,
    /// The profile in effect (Spark, Deep…): its settings and system text go to its own model.
    pub profile: Option<Profile>,
    /// Continuations the gateway may ask for when an answer stops at its length limit.
    pub auto_continue: Option<u8>,
    /// Prices of the models it may run on (those the gateway prices), for the live cost.
    pub prices: Vec<(String, Price)>,
    /// The request's size in tokens as the page counted it, until the upstream says.
    pub prompt_tokens: Option<u32>,
    /// The elements the prompt and the goal name, and their topic, which the finished page is
    /// checked for.
    pub expect: Expect,
    /// Which automatic or asked-for fix of an earlier page this is (0: the person's own prompt).
    pub fix_attempt: u8,
    /// The lines (1-based, inclusive) of the element picked in the preview: its edits must stay
    /// inside them (those outside are proposed unticked and reported).
    pub scope: Option<(usize, usize)>,
    /// The sampler's seed for a run without tiles: a benchmark fixes it so that its single run
    /// repeats and is best of N's tile 1; `None` (a person's run) lets the provider pick.
    pub seed: Option<u64>,
    /// The prompt's pictures: sent to the models that see, described to the others.
    pub pictures: JobPictures,
}

impl Job {
    /// The job for `parts`, leaving out the oldest `dropped` turns of history.
    pub fn new(parts: &RequestParts<'_>, dropped: usize) -> Self {
        Self {
            prompt: parts.prompt.trim().to_owned(),
            messages: parts.messages(dropped),
            base: parts.file.map(str::to_owned),
            parent: None,
            profile: None,
            auto_continue: None,
            prices: Vec::new(),
            prompt_tokens: None,
            expect: expect(parts.prompt, parts.goal, parts.file.is_some()),
            fix_attempt: 0,
            scope: None,
            seed: None,
            pictures: JobPictures::default(),
        }
    }

    /// A new page from `prompt` alone: no goal, no file, no history.
    pub fn fresh(prompt: &str) -> Self {
        Self::new(&RequestParts { goal: "", file: None, history: &[], prompt, kind: ProjectKind::Html }, 0)
    }
}

/// What the person asks for, as the page holds it when they press Run.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The instruction.
    pub prompt: &'a str,
    /// The pinned goal.
    pub goal: &'a str,
    /// The file to edit (`None`: a new page).
    pub file: Option<&'a str>,
    /// Earlier turns to carry (empty: a fresh context).
    pub thread: &'a [Turn],
    /// The worker's latest count of this request, if it has answered.
    pub budget: Option<&'a BudgetReport>,
    /// What a new answer is made of.
    pub kind: ProjectKind,
}

/// The job for `ask`, or why it cannot be sent: nothing to ask, or a request the model would
/// reject for its length. The oldest turns the budget leaves out are not sent.
pub fn compose(ask: Ask<'_>) -> Result<Job, String> {
    if ask.prompt.trim().is_empty() {
        return Err("Type what to build first.".into());
    }
    let parts = RequestParts {
        goal: ask.goal,
        file: ask.file,
        history: ask.thread,
        prompt: ask.prompt,
        kind: ask.kind,
    };
    let dropped = match ask.budget {
        Some(b) if !b.fits => return Err(too_long(b)),
        Some(b) => (b.dropped as usize).min(ask.thread.len()),
        None => 0,
    };
    let mut job = Job::new(&parts, dropped);
    job.prompt_tokens = ask.budget.map(|b| b.total);
    Ok(job)
}

/// Why a request that does not fit is not sent, and what to do.
pub fn too_long(b: &BudgetReport) -> String {
    let room = b.window.saturating_sub(b.reserved_output);
    format!(
        "Not sent: this request needs {} tokens, more than the {room} the model has for input ({} in \
         all, {} kept for the answer). Shorten the goal, the prompt or the code, or ask for a new page \
         (untick “Edit current code”).",
        b.total, b.window, b.reserved_output
    )
}

/// Why a request of `total` tokens cannot go to every model of a compare (`(id, window)` each), or
/// `None` when it fits them all: the meter plans for the selected model only.
pub fn too_long_for_any(total: u32, models: &[(String, u32)]) -> Option<String> {
    let (id, window) = models.iter().find(|(_, w)| total > w.saturating_sub(reserved_output(*w)))?;
    let room = window.saturating_sub(reserved_output(*window));
    Some(format!(
        "Not sent: {id} has room for {room} input tokens ({window} in all) and this request needs {total}. \
         Leave it out of the compare, or shorten the goal, the prompt or the code."
    ))
}

impl Job {
    /// What `model` charges, if the gateway says.
    pub fn price_of(&self, model: &str) -> Option<Price> {
        self.prices.iter().find(|(id, _)| id == model).map(|(_, price)| *price)
    }
}

/// The request for `job` on `model` (the stream id is assigned by the gateway connection): the
/// profile's settings apply on the profile's model; continuation as the person set it, else as the
/// profile says.
pub fn start_request(model: &str, job: &Job) -> StartRequest {
    let mut messages = job.messages.clone();
    let mut params = profiles::apply(job.profile.as_ref(), model, &mut messages);
    params.auto_continue = job.auto_continue.or(params.auto_continue);
    params.seed = job.seed.or(params.seed);
    let mut request = StartRequest { stream: 0, model: model.to_owned(), messages, params };
    job.pictures.dress(&mut request);
    request
}

/// Tokens kept free for the answer: a quarter of the window, at most the gateway's default cap
/// (`server.max_tokens`, 8,192).
pub fn reserved_output(window: u32) -> u32 {
    (window / 4).min(8_192)
}

#[cfg(test)]
mod tests {
    use flint_protocol::Role;
    use flint_protocol::prompt::{EDIT_SYSTEM_PROMPT, SYSTEM_PROMPT};

    use super::*;

    #[test]
    fn a_quarter_of_the_window_is_kept_for_the_answer_at_most_the_gateway_cap() {
        assert_eq!(reserved_output(128_000), 8_192);
        assert_eq!(reserved_output(8_192), 2_048);
    }

    #[test]
    fn a_fresh_job_is_system_then_user() {
        let r = start_request("local/smollm2", &Job::fresh("  a red button \n"));
        assert_eq!(r.model, "local/smollm2");
        assert_eq!(r.messages[0], ChatMessage::new(Role::System, SYSTEM_PROMPT));
        assert_eq!(r.messages[1], ChatMessage::new(Role::User, "a red button"));
        assert_eq!(r.params.seed, None, "a person's run: the provider picks the seed");
        let seeded = Job { seed: Some(4_200), ..Job::fresh("a red button") };
        assert_eq!(start_request("local/smollm2", &seeded).params.seed, Some(4_200));
    }

    fn ask<'a>(budget: Option<&'a BudgetReport>, thread: &'a [Turn]) -> Ask<'a> {
        Ask {
            prompt: "bigger",
            goal: "a timer",
            file: Some("<p>x</p>\n"),
            thread,
            budget,
            kind: ProjectKind::Html,
        }
    }

    #[test]
    fn a_request_that_does_not_fit_is_not_sent() {
        let report = BudgetReport {
            window: 1000,
            reserved_output: 250,
            total: 900,
            fits: false,
            ..Default::default()
        };
        let err = compose(ask(Some(&report), &[])).unwrap_err();
        assert!(err.contains("needs 900 tokens, more than the 750"), "{err}");
        assert_eq!(compose(Ask { prompt: " ", ..ask(None, &[]) }).unwrap_err(), "Type what to build first.");
    }

    #[test]
    fn the_turns_the_budget_drops_are_not_sent() {
        let thread = [
            Turn { prompt: "one".into(), code: "1".into() },
            Turn { prompt: "two".into(), code: "2".into() },
        ];
        let report = BudgetReport { fits: true, dropped: 1, history: vec![5, 5], ..Default::default() };
        let job = compose(ask(Some(&report), &thread)).unwrap();
        let users: Vec<&str> = job.messages.iter().map(|m| m.content.as_str()).collect();
        assert!(!users.contains(&"one") && users.contains(&"two"), "{users:?}");
        assert!(job.messages[0].content.ends_with("a timer"));
        // Without a count yet, everything is sent (the gateway still refuses what is too long).
        assert_eq!(compose(ask(None, &thread)).unwrap().messages.len(), 6);
    }

    #[test]
    fn a_compare_is_refused_when_one_model_is_too_small() {
        let models = [("big/m".to_owned(), 128_000), ("small/m".to_owned(), 4_096)];
        assert_eq!(too_long_for_any(3_000, &models), None);
        let why = too_long_for_any(3_500, &models).unwrap();
        assert!(why.starts_with("Not sent: small/m has room for 3072 input tokens"), "{why}");
    }

    #[test]
    fn an_edit_job_keeps_its_base() {
        let parts = RequestParts {
            goal: "",
            file: Some("<p>x</p>\n"),
            history: &[],
            prompt: "bold",
            kind: ProjectKind::Html,
        };
        let job = Job::new(&parts, 0);
        assert_eq!(job.base.as_deref(), Some("<p>x</p>\n"));
        assert_eq!(job.prompt, "bold");
        assert!(job.messages[0].content.starts_with(EDIT_SYSTEM_PROMPT));
    }
}
