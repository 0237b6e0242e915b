//! What a [`Runner`](super::Runner) shows and tells: the status and signals components read, and
//! the events its observer (the saved session) hears.

use std::rc::Rc;

use flint_protocol::worker::{AnswerFile, BudgetReport, EditReport};
use leptos::prelude::*;

use super::Tile;
use crate::console::ConsoleLog;
pub use crate::generation::StreamStatus;
use crate::judge::Checked;
use crate::metrics::LiveMetrics;
use crate::pick::Picked;
use crate::review::Review;
use crate::versions::Versions;

/// The signals components read; cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct RunState {
    /// The current generation's status.
    pub status: RwSignal<StreamStatus>,
    /// The error to show, if any.
    pub error: RwSignal<Option<String>>,
    /// Timing and token counts.
    pub metrics: RwSignal<LiveMetrics>,
    /// The model that actually serves the generation (`provider/model`), once started.
    pub served_by: RwSignal<Option<String>>,
    /// While the generation waits for its provider (`max_concurrent`): how many start before it.
    pub queued: RwSignal<Option<u32>>,
    /// The previewed page's console.
    pub console: RwSignal<ConsoleLog>,
    /// The finished answer's files (empty while streaming and for code not from an answer).
    pub files: RwSignal<Vec<AnswerFile>>,
    /// The project file the editor shows (`None`: the code is not a project, or its main file).
    pub open_file: RwSignal<Option<String>>,
    /// The variations (or compared models) of the last fanned-out prompt.
    pub tiles: RwSignal<Vec<Tile>>,
    /// The worker's count of the next request against the model's window.
    pub budget: RwSignal<Option<BudgetReport>>,
    /// The revision of the last budget request sent: a report for another one is stale.
    pub budget_sent: RwSignal<u32>,
    /// Tokens of the current answer so far.
    pub answer_tokens: RwSignal<u32>,
    /// What the current edit did to its file so far (blocks applied and failed).
    pub edit: RwSignal<Option<EditReport>>,
    /// A proposed edit waiting for the person's review.
    pub review: RwSignal<Option<Review>>,
    /// Every kept version and the one shown.
    pub versions: RwSignal<Versions>,
    /// The preview shows code that came from outside the person's hands (a shared link, a restored
    /// session, the history) as a still page: its scripts run only once the person clicks "Run
    /// this page" (or runs a prompt, or promotes a tile).
    pub held: RwSignal<bool>,
    /// What this session's streams have cost (those the gateway prices), and whether that is
    /// partly an estimate; saved with the session.
    pub spent: RwSignal<Option<(f64, bool)>>,
    /// The checks of the page in the main preview.
    pub checks: RwSignal<Checked>,
    /// How much that page looks like the prompt's picture, when the prompt had one.
    pub likeness: RwSignal<crate::judge::Likeness>,
    /// Which fix of an earlier page the main generation is (0: the person's own prompt).
    pub fix_attempt: RwSignal<u8>,
    /// Pick mode is on in the main preview.
    pub picking: RwSignal<bool>,
    /// The element picked there: the next edit is held to it.
    pub picked: RwSignal<Option<Picked>>,
    /// Why the last pick picked nothing.
    pub pick_note: RwSignal<Option<String>>,
    /// What the model thought so far (never code).
    pub thinking: RwSignal<Option<crate::generation::thinking::Thought>>,
    /// The provider has sent nothing for a while: the sentence.
    pub stalled: RwSignal<Option<String>>,
}

impl RunState {
    pub(super) fn new() -> Self {
        Self {
            status: RwSignal::new(StreamStatus::Idle),
            error: RwSignal::new(None),
            metrics: RwSignal::new(LiveMetrics::default()),
            served_by: RwSignal::new(None),
            queued: RwSignal::new(None),
            console: RwSignal::new(ConsoleLog::default()),
            files: RwSignal::new(Vec::new()),
            open_file: RwSignal::new(None),
            tiles: RwSignal::new(Vec::new()),
            budget: RwSignal::new(None),
            budget_sent: RwSignal::new(0),
            answer_tokens: RwSignal::new(0),
            edit: RwSignal::new(None),
            review: RwSignal::new(None),
            versions: RwSignal::new(Versions::default()),
            spent: RwSignal::new(None),
            held: RwSignal::new(false),
            checks: RwSignal::new(Checked::Waiting),
            likeness: RwSignal::new(crate::judge::Likeness::None),
            fix_attempt: RwSignal::new(0),
            picking: RwSignal::new(false),
            picked: RwSignal::new(None),
            pick_note: RwSignal::new(None),
            thinking: RwSignal::new(None),
            stalled: RwSignal::new(None),
        }
    }
}

/// What a [`Runner`](super::Runner) tells its observer (see [`Runner::set_observer`](super::Runner::set_observer)), as it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEvent<'a> {
    /// A generation started (its editor text is empty).
    Started {
        /// The model it runs on.
        model: &'a str,
        /// The prompt it runs.
        prompt: &'a str,
    },
    /// Streamed code reached the editor (at most once per frame).
    Streamed,
    /// The generation ended with this status (done, cancelled or error); the editor still shows
    /// its text, though a failed stream's last frame of code may follow as [`Self::Streamed`].
    Ended(StreamStatus),
    /// The person changed the editor's text.
    Edited,
}

/// Receives a [`Runner`](super::Runner)'s [`RunEvent`]s.
pub type RunObserver = Rc<dyn Fn(RunEvent<'_>)>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_stream_says_it_is_queued() {
        assert_eq!(StreamStatus::Streaming.text(None), "streaming");
        assert_eq!(StreamStatus::Streaming.text(Some(3)), "queued · 3 ahead");
        assert_eq!(StreamStatus::Streaming.text(Some(0)), "queued · next");
        assert_eq!(StreamStatus::Cancelled.text(Some(3)), "cancelled", "an ended stream waits for nothing");
    }
}
