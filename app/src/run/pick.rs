//! Picking an element in the main preview: pick mode on the running page, the click's path found in
//! the code ([`crate::pick`]), the editor's selection, and what the next edit is held to. A tile's
//! Pick promotes it first and starts picking once its page runs in the main preview.

use std::rc::Rc;

use leptos::prelude::*;

use super::{Inner, Runner, StreamStatus};
use flint_protocol::project::{section_bytes, sections};

use crate::pick::{PickReport, Picked, find, find_jsx};

#[derive(serde::Deserialize)]
struct Answer {
    #[serde(default)]
    cancelled: bool,
    #[serde(flatten)]
    report: Option<PickReport>,
}

impl Runner {
    /// Pick mode: the person's next click in the main preview picks an element (Esc there, or
    /// [`Self::stop_pick`], ends it). Says why when the page shown cannot be picked from.
    pub fn start_pick(&self) {
        self.inner().start_pick(false);
    }

    /// Promotes tile `key` and picks in its page once the main preview runs it.
    pub fn pick_in_tile(&self, key: u64) -> Result<(), &'static str> {
        let inner = self.inner();
        inner.pick_pending.set(true);
        self.promote(key).inspect_err(|_| inner.pick_pending.set(false))
    }

    /// Ends pick mode without a pick.
    pub fn stop_pick(&self) {
        let inner = self.inner();
        inner.pick_pending.set(false);
        if let Some(preview) = inner.preview.borrow().as_ref() {
            preview.stop_picking();
        }
        self.state.picking.set(false);
    }

    /// Forgets the picked element: the next edit may change the whole file.
    pub fn clear_pick(&self) {
        self.state.picked.set(None);
        self.state.pick_note.set(None);
    }

    /// The element picked in the current code, if it is still there as picked.
    pub fn picked_now(&self, code: &str) -> Option<Picked> {
        let picked = self.state.picked.get_untracked()?;
        // Offsets go stale when the code changed since: then it is not where it was picked.
        let opening = format!("<{}", picked.tag);
        let still = code
            .get(picked.start..picked.start + opening.len())
            .is_some_and(|at| at.eq_ignore_ascii_case(&opening));
        still.then_some(picked)
    }
}

impl Inner {
    /// Pick mode on the main preview; `quiet` when a tile's promoted page asked for it on showing.
    pub(super) fn start_pick(&self, quiet: bool) {
        let state = self.state;
        state.pick_note.set(None);
        if state.status.get_untracked() == StreamStatus::Streaming {
            state.pick_note.set(Some("Wait for the answer to finish, then pick.".into()));
            return;
        }
        let weak = self.this.clone();
        let started = self.preview.borrow().as_ref().is_some_and(|preview| {
            preview.pick(move |json| {
                if let Some(inner) = weak.upgrade() {
                    inner.picked(&json);
                }
            })
        });
        if started {
            state.picking.set(true);
        } else if !quiet {
            state.pick_note.set(Some(
                "Picking works on a running page: run it first (\u{201c}Run this page\u{201d}, or Run)."
                    .into(),
            ));
        }
    }

    /// A page was shown in the main preview: a tile's Pick waiting for it starts now.
    pub(super) fn main_page_shown(self: &Rc<Self>) {
        if self.pick_pending.take() {
            self.start_pick(false);
        }
    }

    /// The frame's answer to pick mode.
    fn picked(&self, json: &str) {
        let state = self.state;
        state.picking.set(false);
        let answer = serde_json::from_str::<Answer>(json).ok();
        let Some(Answer { cancelled: false, report: Some(report) }) = answer else { return };
        self.flush_edits();
        let code = self.workspace.code();
        let found = match report.src.as_deref() {
            Some(src) => find_jsx(&code, src),
            None => find(&code, &report),
        };
        match found {
            Ok(picked) => {
                self.select_picked(&code, &picked);
                state.picked.set(Some(picked));
            }
            Err(why) => state.pick_note.set(Some(format!("Nothing picked: {why}."))),
        }
    }

    /// Selects the picked element in the editor: in a project, in its file, shown first.
    fn select_picked(&self, code: &str, picked: &Picked) {
        let section = picked.file.as_ref().and_then(|(path, _)| {
            sections(code)?
                .into_iter()
                .find(|s| s.path == *path)
                .map(|s| (s.path.clone(), section_bytes(code, &s)))
        });
        let Some((path, bytes)) = section else {
            if let Some(editor) = self.editor.borrow().as_ref() {
                editor.select(code, picked.start, picked.end);
            }
            return;
        };
        self.open_file(path);
        if let Some(editor) = self.editor.borrow().as_ref() {
            let file = &code[bytes.clone()];
            editor.select(file, picked.start - bytes.start, picked.end - bytes.start);
        }
    }
}
