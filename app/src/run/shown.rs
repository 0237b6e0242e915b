//! What the editor and the main preview show of the workspace: a version made current, a page run
//! or held still, and the person's own edits read back into the workspace once their typing pauses.

use std::rc::Rc;
use std::time::Duration;

use flint_protocol::project::with_file;
use flint_protocol::worker::AnswerFile;
use leptos::prelude::*;

use super::{Inner, RunEvent};
use crate::export::page_of_code;
use crate::interop::editor::Editor;
use crate::project::shown_file;

/// How long the editor must be still before its text is read back and the preview shows it.
const EDIT_RENDER_DELAY_MS: u64 = 300;

/// Replaces the editor's text with `code`, editable: a project's file `open` asks for (else its
/// main file), which `open` then names; any other code whole.
pub(super) fn show_in(editor: &Editor, code: &str, open: RwSignal<Option<String>>) {
    let (path, language, text) = open.with_untracked(|open| shown_file(code, open.as_deref()));
    if open.with_untracked(|open| *open != path) {
        open.set(path);
    }
    editor.reset(language);
    editor.append(&text);
    editor.finish();
}

impl Inner {
    /// The person edited the code: read it back and show it in the preview once the typing pauses.
    pub(super) fn on_edit(self: &Rc<Self>) {
        self.clear_edit_render();
        let weak = Rc::downgrade(self);
        let timer = set_timeout_with_handle(
            move || {
                if let Some(inner) = weak.upgrade() {
                    inner.flush_edits();
                }
            },
            Duration::from_millis(EDIT_RENDER_DELAY_MS),
        );
        match timer {
            Ok(timer) => *self.edit_render.borrow_mut() = Some(timer),
            // No timer (no window): read it now rather than never.
            Err(_) => self.read_edits(),
        }
    }

    /// Reads the person's edits back now if some wait (what reads the code calls this first, so
    /// that nothing typed in the last moment is missed).
    pub(super) fn flush_edits(&self) {
        if let Some(timer) = self.edit_render.take() {
            timer.clear();
            self.read_edits();
        }
    }

    /// The one place the editor's text is read: the person's edits become the workspace's code
    /// (a project's file goes back in its place among the others).
    fn read_edits(&self) {
        let text = self.editor.borrow().as_ref().map(Editor::text);
        let Some(text) = text else { return };
        let code = match self.state.open_file.get_untracked() {
            Some(path) => self.workspace.with_code(|now| with_file(now, &path, &text)).unwrap_or(text),
            None => text,
        };
        if self.workspace.with_code(|now| now == code) {
            return;
        }
        self.render_code(&code);
        self.workspace.set(code);
        self.notify(RunEvent::Edited);
    }

    /// Makes `code` the current version: in the workspace, the editor, and the preview as `page`
    /// (its files inlined) or else as the code itself; `files` are what Export offers. The editor
    /// or the preview may not exist yet: they get it when attached.
    pub(super) fn show_version(&self, code: String, page: Option<String>, files: Vec<AnswerFile>) {
        self.clear_edit_render();
        self.state.files.set(files);
        match &page {
            Some(page) => self.render(page.clone()),
            None => self.render_code(&code),
        }
        *self.document.borrow_mut() = page;
        if let Some(editor) = self.editor.borrow().as_ref() {
            show_in(editor, &code, self.state.open_file);
        }
        self.workspace.set(code);
    }

    /// Shows `code` in the main preview: a page as itself, a React project's file as the page the
    /// worker builds of it with the last answer's other files (a later call wins).
    pub(super) fn render_code(&self, code: &str) {
        let files = self.state.files.with_untracked(|files| crate::project::project_of(code, files));
        let Some(files) = files else {
            self.render(page_of_code(code));
            return;
        };
        let asked = self.page_seq.get().wrapping_add(1);
        self.page_seq.set(asked);
        let weak = self.this.clone();
        self.worker.page(files, move |built| {
            let Some(inner) = weak.upgrade().filter(|i| i.page_seq.get() == asked) else { return };
            inner.render(built.unwrap_or_else(|problems| crate::project::problems_page(&problems)));
        });
    }

    /// Runs a finished `page` in the main preview, now or once it is attached; while the page is
    /// held (it came from outside), shows it still instead: scripts removed, as while streaming.
    pub(super) fn render(&self, page: String) {
        *self.shown_page.borrow_mut() = Some(page.clone());
        match self.preview.borrow().as_ref() {
            Some(preview) if self.state.held.get_untracked() => {
                preview.begin();
                preview.snapshot(&page);
            }
            Some(preview) => {
                let weak = self.this.clone();
                preview.run(&page, false, move || {
                    if let Some(inner) = weak.upgrade() {
                        inner.main_page_shown();
                    }
                });
                let expect = self.expect.borrow().clone();
                self.check_page(super::Target::Main, preview, &page, expect);
                let picture = self.picture.borrow().clone();
                self.compare_page(super::Target::Main, preview, &page, picture);
            }
            None => *self.pending_render.borrow_mut() = Some(page),
        }
    }

    /// Shows the project's file at `path` in the editor, the edits to the one shown read first.
    pub(super) fn open_file(&self, path: String) {
        self.flush_edits();
        self.state.open_file.set(Some(path));
        if let Some(editor) = self.editor.borrow().as_ref() {
            self.workspace.with_code(|code| show_in(editor, code, self.state.open_file));
        }
    }

    /// Forgets edits waiting to be read: another version is about to be shown.
    pub(super) fn clear_edit_render(&self) {
        if let Some(timer) = self.edit_render.take() {
            timer.clear();
        }
    }
}
