//! The parser worker's updates: the code and the preview as the answer streams, and what the
//! finished answer leaves (a version, a review, the files).

use flint_protocol::project::bundle;
use flint_protocol::worker::{EditKind, EditReport, ParsedUpdate, apply_line_edits};

use super::group::edit_note;
use super::{
    CodeChange, Command, Display, Generation, Notice, Outcome, PreviewChange, StreamStatus, Surface,
};
use crate::versions::Origin;

/// What a finished answer without a file of code is told.
const NO_CODE: &str = "The answer has no code to show: the model wrote only text (it is in the editor). Run it again, or try another model.";

impl Generation {
    /// The worker's update for this generation's stream at `now_ms` (others are ignored).
    pub fn on_parsed(&mut self, update: ParsedUpdate, now_ms: f64) -> Vec<Command> {
        if self.stream != Some(update.stream) {
            return Vec::new();
        }
        self.now_ms = now_ms;
        match self.surface {
            Surface::Editor => self.on_parsed_editor(update),
            Surface::Tile => self.on_parsed_tile(update),
        }
    }

    fn on_parsed_editor(&mut self, update: ParsedUpdate) -> Vec<Command> {
        let mut out = Vec::new();
        if self.frozen {
            return out;
        }
        let changed = self.take_code(&update, &mut out);
        if let Some(problems) = update.problems.clone().filter(|p| !p.is_empty()) {
            out.push(Command::Show(Display::Problems(problems)));
        }
        let whole = update.edits.as_ref().is_none_or(|r| r.kind == EditKind::WholeFile);
        if let Some(kept) = update.done.then(|| bundle(&update.files)).flatten().filter(|_| whole) {
            self.code.clone_from(&kept);
            out.push(Command::Code(CodeChange::Project(kept)));
        }
        if update.done {
            out.push(Command::Code(CodeChange::Finish));
        }
        if changed {
            out.push(Command::Notify(Notice::Streamed));
        }
        if self.answer_tokens != update.answer_tokens {
            self.answer_tokens = update.answer_tokens;
            out.push(Command::Show(Display::AnswerTokens(update.answer_tokens)));
        }
        let complete = update.done && self.outcome == Some(Outcome::Complete);
        let stopped = update.done && self.outcome == Some(Outcome::Stopped);
        let no_code = update.files.is_empty() && update.edits.is_none();
        if let Some(report) = update.edits {
            out.push(Command::Show(Display::Edit(Some(EditReport { hunks: Vec::new(), ..report.clone() }))));
            if complete || stopped {
                let proposal = update.files.iter().find(|f| f.main).map(|f| f.content.clone());
                self.propose(report, proposal.unwrap_or_default(), stopped, &mut out);
            }
        } else if complete {
            out.push(self.keep(Origin::Generated));
        }
        if update.done {
            self.files.clone_from(&update.files);
            self.document.clone_from(&update.preview);
            out.push(Command::Show(Display::Files(update.files)));
            out.push(Command::Show(Display::Document(update.preview.clone())));
        }
        match update.preview {
            Some(doc) if complete && self.has_preview => {
                self.page_complete = true;
                let run = if update.live { PreviewChange::RunApp(doc) } else { PreviewChange::Run(doc) };
                out.push(Command::Preview(run));
            }
            Some(doc) if !complete => out.push(Command::Preview(streamed(doc, update.live))),
            _ if complete => {
                if no_code {
                    // Nothing to preview and nothing said: an empty frame would tell the person nothing.
                    out.push(Command::Show(Display::Error(Some(NO_CODE.to_owned()))));
                }
                self.set_status(StreamStatus::Done, &mut out);
            }
            _ => {}
        }
        out
    }

    fn on_parsed_tile(&mut self, update: ParsedUpdate) -> Vec<Command> {
        let mut out = Vec::new();
        if let Some(problems) = update.problems.clone().filter(|p| !p.is_empty()) {
            out.push(Command::Show(Display::Problems(problems)));
        }
        // A tile gets its code whole with the last update, also when stopped (it can be promoted).
        let mut ignored = Vec::new();
        self.take_code(&update, &mut ignored);
        if update.done {
            let whole = update.edits.as_ref().is_none_or(|r| r.kind == EditKind::WholeFile);
            if let Some(kept) = bundle(&update.files).filter(|_| whole) {
                self.code = kept;
            }
            self.files = update.files;
            out.push(Command::Show(Display::Note(update.edits.as_ref().and_then(edit_note))));
        }
        if self.frozen {
            return out;
        }
        let complete = update.done && self.outcome == Some(Outcome::Complete);
        self.page_complete = complete;
        let Some(doc) = update.preview else {
            if complete {
                self.set_status(StreamStatus::Done, &mut out);
            }
            return out;
        };
        if self.race.first_preview_ms.is_none() {
            self.race.first_preview_ms = Some(self.now_ms - self.started_ms);
            out.push(Command::Show(Display::Race(self.race)));
        }
        self.document = Some(doc.clone());
        match (self.has_preview, complete) {
            (true, true) => out.push(Command::Preview(PreviewChange::Run(doc))),
            (true, false) => out.push(Command::Preview(streamed(doc, update.live))),
            (false, true) => self.set_status(StreamStatus::Done, &mut out),
            (false, false) => {}
        }
        out
    }

    /// Applies an update's code to [`Self::code`], telling the editor the same; whether it changed.
    pub(super) fn take_code(&mut self, update: &ParsedUpdate, out: &mut Vec<Command>) -> bool {
        if update.code_reset {
            self.code.clear();
            out.push(Command::Code(CodeChange::Reset(update.language.clone())));
        }
        if !update.code_edits.is_empty() {
            // The worker sends only edits that fit the text it was told (see `apply_line_edits`).
            if let Some(code) = apply_line_edits(&self.code, &update.code_edits) {
                self.code = code;
            }
            out.push(Command::Code(CodeChange::EditLines(update.code_edits.clone())));
        }
        if !update.code_append.is_empty() {
            self.code.push_str(&update.code_append);
            out.push(Command::Code(CodeChange::Append(update.code_append.clone())));
        }
        update.code_reset || !update.code_append.is_empty() || !update.code_edits.is_empty()
    }
}

/// A streamed preview: a project's page runs, a page's snapshot is morphed inert.
fn streamed(doc: String, live: bool) -> PreviewChange {
    if live { PreviewChange::Live(doc) } else { PreviewChange::Snapshot(doc) }
}
