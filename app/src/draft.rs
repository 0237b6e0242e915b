//! The prompt being written, shared so that more than the prompt box can read and fill it (a shared
//! link fills it on start-up; Share reads it).

use leptos::prelude::*;

/// The prompt suggested on a fresh page.
pub const STARTER_PROMPT: &str =
    "A pomodoro timer with start, pause and reset buttons and a circular progress ring.";

/// The person's draft; cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct Draft {
    /// The prompt text, as typed.
    pub prompt: RwSignal<String>,
}

impl Draft {
    /// A draft holding [`STARTER_PROMPT`].
    pub fn new() -> Self {
        Self { prompt: RwSignal::new(STARTER_PROMPT.to_owned()) }
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
