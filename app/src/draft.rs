//! The prompt being written, shared so that more than the prompt box can read and fill it (a shared
//! link fills it on start-up; Share reads it).

use flint_protocol::prompt::ProjectKind;
use leptos::prelude::*;

/// The prompt suggested on a fresh page.
pub const STARTER_PROMPT: &str =
    "A pomodoro timer with start, pause and reset buttons and a circular progress ring.";

/// The person's draft of the next request; cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct Draft {
    /// The prompt text, as typed.
    pub prompt: RwSignal<String>,
    /// The pinned goal: what we are building and its acceptance criteria, at the top of every
    /// request, never trimmed.
    pub goal: RwSignal<String>,
    /// Carry the earlier turns of this version's thread ("continue thread"); off by default: each
    /// prompt gets a fresh context.
    pub continue_thread: RwSignal<bool>,
    /// Ask for edits of the code in the editor rather than a new page (when there is code).
    pub edit: RwSignal<bool>,
    /// Let the gateway continue an answer cut off at its length limit (off by default: each
    /// continuation costs the whole prompt again).
    pub auto_continue: RwSignal<bool>,
    /// Fixes asked for on their own when a finished page fails its checks (0: off, the default;
    /// at most [`crate::fix::AUTO_FIX_MAX`]).
    pub auto_fix: RwSignal<u8>,
    /// The project kind the person picked; `None` (Auto): the active profile's, else the one the
    /// prompt's words suggest, else a plain HTML page.
    pub kind: RwSignal<Option<ProjectKind>>,
    /// The kind the active profile sets (`kind` in its `[profiles.NAME]`), if any.
    pub profile_kind: Signal<Option<ProjectKind>>,
}

impl Draft {
    /// A draft holding [`STARTER_PROMPT`].
    pub fn new() -> Self {
        Self {
            prompt: RwSignal::new(STARTER_PROMPT.to_owned()),
            goal: RwSignal::new(String::new()),
            continue_thread: RwSignal::new(false),
            edit: RwSignal::new(true),
            auto_continue: RwSignal::new(false),
            auto_fix: RwSignal::new(0),
            kind: RwSignal::new(None),
            profile_kind: Signal::stored(None),
        }
    }

    /// This draft, with `profile_kind` as the active profile's kind.
    pub fn following(self, profile_kind: Signal<Option<ProjectKind>>) -> Self {
        Self { profile_kind, ..self }
    }

    /// The kind a new answer is asked for: the person's pick, else what Auto stands for.
    pub fn kind(&self) -> ProjectKind {
        self.kind.get().unwrap_or_else(|| self.auto_kind())
    }

    /// What Auto stands for: the active profile's kind, else the one the prompt's words suggest,
    /// else a plain HTML page.
    pub fn auto_kind(&self) -> ProjectKind {
        self.profile_kind
            .get()
            .or_else(|| self.prompt.with(|p| ProjectKind::suggested_by(p)))
            .unwrap_or_default()
    }

    /// [`Self::kind`] without tracking.
    pub fn kind_untracked(&self) -> ProjectKind {
        untrack(|| self.kind())
    }
}

impl Default for Draft {
    fn default() -> Self {
        Self::new()
    }
}

/// The [`Draft`] provided by the app.
pub fn expect_draft() -> Draft {
    expect_context::<Draft>()
}
