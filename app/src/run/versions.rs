//! Versions and the review of edits: what becomes a version, and how a proposed edit is kept
//! hunk by hunk (see [`crate::versions`] and [`crate::review`] for the plain logic).

use leptos::prelude::*;

use super::{Inner, RunEvent, Runner, StreamStatus};
use crate::interop::epoch_ms;
use crate::review::Review;
use crate::versions::{FromPictures, Origin};

impl Runner {
    /// Keeps `code` (the file an edit starts from) as a version when the person changed the
    /// current version by hand, so that the review and a revert start from what they see.
    pub fn keep_hand_edits(&self, code: &str) {
        self.inner().keep_version(code, "", "", Origin::HandEdit);
    }

    /// Shows version `index` (0-based) in the editor and the preview; the next change branches
    /// from it. A review under way is dropped.
    pub fn select_version(&self, index: usize) {
        let inner = self.inner();
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
        self.inner().update_review(|r| r.set(index, keep));
    }

    /// Keeps or rejects every hunk of one file of a project's review.
    pub fn review_file(&self, path: &str, keep: bool) {
        self.inner().update_review(|r| r.set_file(path, keep));
    }

    /// Keeps or rejects every hunk of the review.
    pub fn review_all(&self, keep: bool) {
        self.inner().update_review(|r| r.set_all(keep));
    }

    /// Ends the review: the kept hunks become a new version (none kept: the code stays as it was).
    pub fn finish_review(&self) {
        let inner = self.inner();
        let Some(review) = inner.state.review.get_untracked() else { return };
        inner.state.review.set(None);
        inner.state.edit.set(None);
        let result = review.result();
        if review.kept() > 0 {
            inner.keep_version_from(
                review.parent,
                &result,
                &review.prompt,
                &review.model,
                None,
                Origin::Edited,
            );
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

    /// Keeps `code` as a new version, child of version `parent`, with the pictures its prompt had.
    pub(super) fn keep_version_from(
        &self,
        parent: Option<usize>,
        code: &str,
        prompt: &str,
        model: &str,
        pictures: Option<FromPictures>,
        origin: Origin,
    ) {
        if code.trim().is_empty() {
            return;
        }
        self.state.versions.update(|v| {
            let index = v.push_from(parent, code.to_owned(), prompt, model, epoch_ms(), origin);
            v.note_pictures(index, pictures);
        });
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
            self.render_code(&code);
        }
    }
}
