//! Versions and the review of edits: what becomes a version, and how a proposed edit is kept
//! hunk by hunk (see [`crate::versions`] and [`crate::review`] for the plain logic).

use flint_protocol::worker::{EditKind, EditReport};
use leptos::prelude::*;

use super::{Inner, RunEvent, Runner, StreamStatus, show_in};
use crate::export::page_of_code;
use crate::interop::editor::Editor;
use crate::interop::epoch_ms;
use crate::review::Review;
use crate::versions::Origin;

impl Runner {
    /// Keeps `code` (the file an edit starts from) as a version when the person changed the
    /// current version by hand, so that the review and a revert start from what they see.
    pub fn keep_hand_edits(&self, code: &str) {
        self.0.keep_version(code, "", "", Origin::HandEdit);
    }

    /// Shows version `index` (0-based) in the editor and the preview; the next change branches
    /// from it. A review under way is dropped.
    pub fn select_version(&self, index: usize) {
        let inner = &self.0;
        if inner.state.status.get_untracked() == StreamStatus::Streaming {
            self.cancel();
        }
        let mut code = None;
        inner.state.versions.update(|v| code = v.select(index).map(|v| v.code.clone()));
        if let Some(code) = code {
            inner.state.review.set(None);
            inner.state.edit.set(None);
            inner.show_version(code, None, Vec::new());
        }
    }

    /// Keeps or rejects hunk `index` of the review; the preview shows the result.
    pub fn review_hunk(&self, index: usize, keep: bool) {
        self.0.update_review(|r| r.set(index, keep));
    }

    /// Keeps or rejects every hunk of the review.
    pub fn review_all(&self, keep: bool) {
        self.0.update_review(|r| r.set_all(keep));
    }

    /// Ends the review: the kept hunks become a new version (none kept: the code stays as it was).
    pub fn finish_review(&self) {
        let inner = &self.0;
        let Some(review) = inner.state.review.get_untracked() else { return };
        inner.state.review.set(None);
        inner.state.edit.set(None);
        let result = review.result();
        if review.kept() > 0 {
            inner.keep_version_from(review.parent, &result, &review.prompt, &review.model, Origin::Edited);
        }
        inner.show_version(result, None, Vec::new());
        inner.notify(RunEvent::Edited);
    }
}

impl Inner {
    /// Keeps `code` as a new version (unless it is the current one), child of the current one.
    pub(super) fn keep_version(&self, code: &str, prompt: &str, model: &str, origin: Origin) {
        if code.trim().is_empty() {
            return;
        }
        self.state.versions.update(|v| {
            v.push(code.to_owned(), prompt, model, epoch_ms(), origin);
        });
    }

    /// Keeps `code` as a new version, child of version `parent`.
    pub(super) fn keep_version_from(
        &self,
        parent: Option<usize>,
        code: &str,
        prompt: &str,
        model: &str,
        origin: Origin,
    ) {
        if code.trim().is_empty() {
            return;
        }
        self.state.versions.update(|v| {
            v.push_from(parent, code.to_owned(), prompt, model, epoch_ms(), origin);
        });
    }

    /// Keeps the finished answer in the editor as a version of the one it started from.
    pub(super) fn keep_answer(&self, origin: Origin) {
        let code = self.editor.borrow().as_ref().map(Editor::text);
        let job = self.job.borrow();
        if let (Some(code), Some((job, model))) = (code, job.as_ref()) {
            self.keep_version_from(job.parent, &code, &job.prompt, model, origin);
        }
    }

    /// A finished edit: its hunks (from `proposal`, the worker's final text, which the hunks'
    /// byte ranges refer to) go to review, and the editor shows the base until the person applies
    /// them; a whole new file is kept like any answer. `stopped`: the answer failed part-way.
    pub(super) fn propose(&self, report: EditReport, proposal: String, stopped: bool) {
        let Some((job, model)) = self.job.borrow().clone() else { return };
        let Some(base) = job.base else { return };
        if report.kind == EditKind::WholeFile {
            // Like any answer: kept when complete; a failed one stays in the editor as it got
            // (the versions still hold the code it replaced).
            if !stopped {
                self.keep_answer(Origin::Generated);
            }
            return;
        }
        if report.hunks.is_empty() {
            // Nothing to review: the code stays as it was.
            self.show_version(base, None, Vec::new());
            if stopped {
                return;
            }
            let why = match report.failed.len() {
                0 => "The answer did not change the code".to_owned(),
                1 => "The answer's only edit did not apply (see the list below the code)".to_owned(),
                n => format!("None of the answer's {n} edits applied (see the list below the code)"),
            };
            self.state.error.set(Some(format!(
                "{why}. Try again, or untick “Edit current code” to ask for a whole new page."
            )));
            return;
        }
        // Blocks that did not apply stay listed from `state.edit` (see `FailedEdits`).
        let mut review = Review::new(base.clone(), proposal, report.hunks);
        review.prompt = job.prompt;
        review.model = model;
        review.parent = job.parent;
        self.state.review.set(Some(review));
        // Until applied, the proposal lives in the review: the editor (and so Run, Share, Export
        // and the saved session) keeps the current version.
        if let Some(editor) = self.editor.borrow().as_ref() {
            show_in(editor, &base);
        }
        self.state.code_revision.update(|n| *n += 1);
    }

    /// Changes the review and shows its result in the preview.
    fn update_review(&self, change: impl FnOnce(&mut Review)) {
        let mut result = None;
        self.state.review.update(|r| {
            if let Some(r) = r {
                change(r);
                result = Some(r.result());
            }
        });
        if let Some(code) = result {
            self.render(page_of_code(&code));
        }
    }
}
