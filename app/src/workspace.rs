//! The current code and its version: the one source of truth for what the person works on. The
//! editor is a view of it; the preview's page, edits, export, share, the budget and the saved
//! session read it here, never from Monaco.
//!
//! An answer streams in as appends to the `String` (no signal per frame for a 500 KB text): the
//! version counts every change, but readers are woken only when the code settles — a stream
//! stopped writing, a version shown, the person's edits read back (debounced, see
//! [`crate::run`]).

use flint_protocol::worker::apply_line_edits;
use leptos::prelude::*;

use crate::generation::CodeChange;

/// The current code; `Copy`, provided as context (see [`expect_workspace`]).
#[derive(Debug, Clone, Copy)]
pub struct Workspace {
    code: StoredValue<String>,
    version: RwSignal<u64>,
}

/// The [`Workspace`] provided by the app.
pub fn expect_workspace() -> Workspace {
    expect_context::<Workspace>()
}

impl Default for Workspace {
    fn default() -> Self {
        Self::new()
    }
}

impl Workspace {
    /// An empty workspace.
    pub fn new() -> Self {
        Self { code: StoredValue::new(String::new()), version: RwSignal::new(0) }
    }

    /// The version, tracked: what reads it runs again once the code settles after a change.
    pub fn version(&self) -> u64 {
        self.version.get()
    }

    /// Subscribes what runs now to the code: it runs again once the code settles after a change.
    pub fn track(&self) {
        self.version.track();
    }

    /// The version, untracked (it counts every change, streamed ones included).
    pub fn version_untracked(&self) -> u64 {
        self.version.get_untracked()
    }

    /// A copy of the code (untracked).
    pub fn code(&self) -> String {
        self.code.get_value()
    }

    /// Reads the code without copying it (untracked).
    pub fn with_code<R>(&self, read: impl FnOnce(&str) -> R) -> R {
        self.code.with_value(|code| read(code))
    }

    /// The code, unless it is blank.
    pub fn nonblank(&self) -> Option<String> {
        self.with_code(|code| (!code.trim().is_empty()).then(|| code.to_owned()))
    }

    /// Replaces the code with finished `code` (a version shown, the person's edits read back).
    pub fn set(&self, code: String) {
        self.code.set_value(code);
        self.version.update(|v| *v += 1);
    }

    /// Makes a streamed change. Readers are woken by [`CodeChange::Finish`] and
    /// [`CodeChange::Replace`], not by each append.
    pub fn apply(&self, change: &CodeChange) {
        match change {
            CodeChange::Begin => {}
            CodeChange::Finish => self.version.update(|v| *v += 1),
            CodeChange::Replace(code) | CodeChange::Project(code) => self.set(code.clone()),
            CodeChange::Reset(_) => self.stream(String::clear),
            CodeChange::Append(text) => self.stream(|code| code.push_str(text)),
            CodeChange::EditLines(edits) => self.stream(|code| {
                if let Some(edited) = apply_line_edits(code, edits) {
                    *code = edited;
                }
            }),
        }
    }

    fn stream(&self, change: impl FnOnce(&mut String)) {
        self.code.update_value(change);
        self.version.update_untracked(|v| *v += 1);
    }
}

#[cfg(test)]
mod tests {
    use flint_protocol::worker::LineEdit;

    use super::*;

    #[test]
    fn streamed_changes_build_the_code_and_count_as_versions() {
        let owner = Owner::new();
        owner.set();
        let workspace = Workspace::new();
        workspace.set("a\nb\n".into());
        let before = workspace.version_untracked();
        workspace.apply(&CodeChange::Reset("html".into()));
        workspace.apply(&CodeChange::Append("one\ntwo\n".into()));
        workspace.apply(&CodeChange::EditLines(vec![LineEdit { start: 1, end: 2, text: "2\n".into() }]));
        workspace.apply(&CodeChange::Append("three".into()));
        assert_eq!(workspace.code(), "one\n2\nthree");
        assert_eq!(workspace.version_untracked(), before + 4, "each streamed change is a version");
        workspace.apply(&CodeChange::Replace("base".into()));
        assert_eq!(workspace.nonblank().as_deref(), Some("base"));
        workspace.set("  \n".into());
        assert_eq!(workspace.nonblank(), None, "blank code is no code");
    }
}
