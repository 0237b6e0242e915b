//! What of a generation becomes a version: a finished answer, a promoted tile, an edit proposed
//! for review.

use flint_protocol::worker::{EditKind, EditReport};

use super::{CodeChange, Command, Display, Generation, Notice, StreamStatus};
use crate::review::Review;
use crate::versions::Origin;

impl Generation {
    /// Makes its code the current version (a tile's Promote): kept, shown in the editor and the
    /// main preview (scripts running, as in its tile), and saved like a finished generation.
    pub fn promote(&self) -> Result<Vec<Command>, &'static str> {
        if self.streaming() {
            return Err("still streaming: promote it once it is done, or cancel it first");
        }
        if self.code.trim().is_empty() {
            return Err("it has no code to promote");
        }
        Ok(vec![
            Command::KeepVersion {
                code: self.code.clone(),
                parent: self.job.parent,
                prompt: self.job.prompt.clone(),
                model: self.model.clone(),
                origin: Origin::Promoted,
                pictures: self.job.pictures.for_version(&self.model),
            },
            Command::ShowVersion {
                code: self.code.clone(),
                page: self.document.clone(),
                files: self.files.clone(),
                run: true,
            },
            Command::Notify(Notice::Started { model: self.model.clone(), prompt: self.job.prompt.clone() }),
            Command::Notify(Notice::Ended(StreamStatus::Done)),
        ])
    }

    /// The finished answer, kept as a version of the one it started from.
    pub(super) fn keep(&self, origin: Origin) -> Command {
        Command::KeepVersion {
            code: self.code.clone(),
            parent: self.job.parent,
            prompt: self.job.prompt.clone(),
            model: self.model.clone(),
            origin,
            pictures: self.job.pictures.for_version(&self.model),
        }
    }

    /// A finished edit: its hunks (from `proposal`, the worker's final text, which the hunks'
    /// byte ranges refer to) go to review, and the editor shows the base until the person applies
    /// them; a whole new file is kept like any answer. `stopped`: the answer failed part-way.
    pub(super) fn propose(
        &mut self,
        report: EditReport,
        proposal: String,
        stopped: bool,
        out: &mut Vec<Command>,
    ) {
        let Some(base) = self.job.base.clone() else { return };
        if report.kind == EditKind::WholeFile {
            // Like any answer: kept when complete; a failed one stays in the editor as it got
            // (the versions still hold the code it replaced).
            if !stopped {
                out.push(self.keep(Origin::Generated));
            }
            return;
        }
        if report.hunks.is_empty() {
            // Nothing to review: the code stays as it was.
            out.push(Command::Restore(base));
            if stopped {
                return;
            }
            let why = match report.failed.len() {
                0 => "The answer did not change the code".to_owned(),
                1 => "The answer's only edit did not apply (see the list below the code)".to_owned(),
                n => format!("None of the answer's {n} edits applied (see the list below the code)"),
            };
            let why = format!("{why}. Try again, or untick “Edit current code” to ask for a whole new page.");
            out.push(Command::Show(Display::Error(Some(why))));
            return;
        }
        // Blocks that did not apply stay listed from the edit report (see `FailedEdits`).
        let mut review = Review::new(base.clone(), proposal, report.hunks);
        if let Some(scope) = self.job.scope {
            let outside = review.keep_only_within(scope);
            if outside > 0 {
                let edits = if outside == 1 { "1 edit falls" } else { "Some edits fall" };
                out.push(Command::Show(Display::Error(Some(format!(
                    "{edits} outside the element you picked (lines {}–{}): {} left unticked in the review.",
                    scope.0,
                    scope.1,
                    if outside == 1 { "it is" } else { "they are" }
                )))));
            }
        }
        review.prompt.clone_from(&self.job.prompt);
        review.model.clone_from(&self.model);
        review.parent = self.job.parent;
        out.push(Command::Propose(review));
        // Until applied, the proposal lives in the review: the editor (and so Run, Share, Export
        // and the saved session) keeps the current version.
        self.code.clone_from(&base);
        out.push(Command::Code(CodeChange::Replace(base)));
    }
}
