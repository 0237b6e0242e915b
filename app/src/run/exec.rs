//! Carrying out a generation's [`Command`]s: the only place they touch the gateway, the worker, the
//! editor, the previews and the display signals.

use std::cell::Cell;
use std::rc::Rc;

use leptos::prelude::*;

use crate::console::ConsoleLevel;
use flint_protocol::StreamId;

use crate::gateway::{StreamEvent, StreamHandler};
use crate::generation::{CodeChange, Command, Display, Notice, PreviewChange};
use crate::interop::now_ms;
use crate::interop::preview::Preview;
use crate::judge::{Check, Checked, Report};

use super::{Inner, RunEvent, Target};

impl Inner {
    /// An event of stream `id` (its frames, its text counted, its parse), for the generation
    /// `target`.
    fn on_stream_event(self: &Rc<Self>, target: Target, id: StreamId, event: StreamEvent) {
        let now = now_ms();
        let text = match &event {
            StreamEvent::Text { bytes } => Some(*bytes),
            _ => None,
        };
        // A stopped tile's late text does not count in the group's figures.
        let counts = target != Target::Main
            && self.with_lane(target, |lane| lane.stream() == Some(id) && lane.streaming()) == Some(true);
        let Some(commands) = self.with_lane(target, |lane| lane.on_stream_event(id, event, now)) else {
            return;
        };
        if let (Some(bytes), true) = (text, counts) {
            let shown = self.group_metrics.borrow_mut().on_text(now, bytes);
            if let Some(metrics) = shown {
                self.state.metrics.set(metrics);
            }
        }
        self.exec(target, commands);
    }

    /// The complete page of stream `id` is on screen.
    fn page_shown(self: &Rc<Self>, target: Target, id: StreamId) {
        let now = now_ms();
        if let Some(commands) = self.with_lane(target, |lane| lane.page_shown(id, now)) {
            self.exec(target, commands);
        }
    }

    /// Does `commands` for generation `target`, in order.
    pub(super) fn exec(self: &Rc<Self>, target: Target, commands: Vec<Command>) {
        for command in commands {
            match command {
                Command::StartStream(request) => self.start_stream(target, request),
                Command::CancelStream(id) => (self.cancel)(id),
                Command::Worker(request) => self.send(request),
                Command::Code(change) if target == Target::Main => self.change_code(&change),
                Command::Code(_) => {}
                Command::Preview(change) => self.change_preview(target, change),
                Command::Show(display) => match target {
                    Target::Main => self.show(display),
                    Target::Tile(key) => self.show_in_tile(key, display),
                },
                Command::KeepVersion { code, parent, prompt, model, origin, pictures } => {
                    self.keep_version_from(parent, &code, &prompt, &model, pictures, origin);
                }
                Command::Propose(review) => self.state.review.set(Some(review)),
                Command::ShowVersion { code, page, files, run } => {
                    if run {
                        self.state.held.set(false);
                    }
                    self.show_version(code, page, files);
                }
                Command::Restore(code) => self.restore(target, code),
                Command::Notify(notice) => match notice {
                    Notice::Started { model, prompt } => {
                        self.notify(RunEvent::Started { model: &model, prompt: &prompt });
                    }
                    Notice::Streamed => self.notify(RunEvent::Streamed),
                    Notice::Ended(status) => {
                        if let Some(editor) = self.editor.borrow().as_ref() {
                            editor.ended();
                        }
                        self.notify(RunEvent::Ended(status));
                    }
                },
                Command::Spent(cost) => {
                    if cost.is_some() {
                        self.state.spent.update(|spent| *spent = crate::metrics::total_cost([*spent, cost]));
                    }
                }
            }
        }
    }

    /// Starts a stream for `target`; its events come back to it (`Generation::started` learns the
    /// id, and events of an id it does not have are stale).
    fn start_stream(self: &Rc<Self>, target: Target, request: flint_protocol::StartRequest) {
        let weak = Rc::downgrade(self);
        let id_cell = Rc::new(Cell::new(0));
        let id_for_handler = Rc::clone(&id_cell);
        let handler: StreamHandler = Rc::new(move |event| {
            if let Some(inner) = weak.upgrade() {
                inner.on_stream_event(target, id_for_handler.get(), event);
            }
        });
        let id = (self.start)(request, handler);
        id_cell.set(id);
        if let Some(commands) = self.with_lane(target, |lane| lane.started(id)) {
            self.exec(target, commands);
        }
    }

    /// The single run's code changes: in the workspace (the truth) and in the editor (its view).
    fn change_code(&self, change: &CodeChange) {
        self.workspace.apply(change);
        let editor = self.editor.borrow();
        let Some(editor) = editor.as_ref() else { return };
        match change {
            CodeChange::Reset(language) => {
                self.state.open_file.set(None);
                editor.reset(language);
            }
            CodeChange::Append(text) => editor.append(text),
            CodeChange::EditLines(edits) => editor.edit_lines(edits, || self.workspace.code()),
            CodeChange::Begin => editor.begin(),
            CodeChange::Finish => editor.finish(),
            CodeChange::Replace(code) => super::shown::show_in(editor, code, self.state.open_file),
            // The editor already shows the main file, the project's first.
            CodeChange::Project(_) => {}
        }
    }

    /// A stopped edit's base comes back after the stop (or the end) has painted: giving Monaco the
    /// whole text and running the page again took 80–210 ms, and "cancelled" waited behind them.
    /// A newer run by then wins, as in [`Self::change_preview`].
    fn restore(self: &Rc<Self>, target: Target, code: String) {
        let stream = self.with_lane(target, |lane| lane.stream()).flatten();
        let weak = Rc::downgrade(self);
        crate::interop::after_paint(move || {
            let Some(inner) = weak.upgrade() else { return };
            if inner.with_lane(target, |lane| lane.stream()).flatten() == stream {
                inner.show_version(code, None, Vec::new());
            }
        });
    }

    fn change_preview(self: &Rc<Self>, target: Target, change: PreviewChange) {
        let stream = self.with_lane(target, |lane| lane.stream()).flatten();
        if let PreviewChange::Run(_) | PreviewChange::RunApp(_) | PreviewChange::Live(_) = change {
            // A page that runs (a finished one, or a React project's as it streams) is written,
            // run (and a finished one checked) after the next frame has painted: making its frame
            // and posting the whole page cost this thread (Chromium runs the sandboxed frames in
            // a renderer process of their own, as traces show), and "done", "cancelled" or a
            // typed key should not wait behind it. A newer run by then wins.
            let weak = Rc::downgrade(self);
            crate::interop::after_paint(move || {
                let Some(inner) = weak.upgrade() else { return };
                if inner.with_lane(target, |lane| lane.stream()).flatten() == stream {
                    inner.change_preview_now(target, change, stream);
                }
            });
            return;
        }
        self.change_preview_now(target, change, stream);
    }

    fn change_preview_now(self: &Rc<Self>, target: Target, change: PreviewChange, stream: Option<u32>) {
        let expect = self.with_lane(target, |lane| lane.job().expect.clone()).unwrap_or_default();
        let picture = match target {
            // The main run's picture outlives a fix's job, which is sent without it.
            Target::Main => self.picture.borrow().clone(),
            Target::Tile(_) => {
                self.with_lane(target, |lane| super::likeness::picture_of(lane.job())).flatten()
            }
        };
        let weak = Rc::downgrade(self);
        let app = matches!(change, PreviewChange::RunApp(_));
        let apply = |preview: &Preview| match change {
            PreviewChange::Begin => {
                self.forget_checks(target);
                preview.stop_drawing();
                preview.begin();
            }
            PreviewChange::Snapshot(doc) => preview.snapshot(&doc),
            PreviewChange::Live(doc) => preview.run_live(&doc),
            PreviewChange::Run(doc) | PreviewChange::RunApp(doc) => {
                preview.run(&doc, app, move || {
                    if let (Some(inner), Some(id)) = (weak.upgrade(), stream) {
                        inner.page_shown(target, id);
                    }
                });
                self.check_page(target, preview, &doc, expect);
                self.compare_page(target, preview, &doc, picture);
            }
        };
        match target {
            Target::Main => {
                if let Some(preview) = self.preview.borrow().as_ref() {
                    apply(preview);
                }
            }
            Target::Tile(key) => {
                let tiles = self.tiles.borrow();
                if let Some(preview) =
                    tiles.iter().find(|t| t.view.key == key).and_then(|t| t.preview.as_ref())
                {
                    apply(preview);
                }
            }
        }
    }

    /// Shows a single run's figure on the page.
    fn show(&self, display: Display) {
        let state = self.state;
        match display {
            // The generation tells the observer itself (`Notice::Ended`).
            Display::Status(status) => state.status.set(status),
            Display::Queued(queued) => state.queued.set(queued),
            Display::ServedBy(model) => state.served_by.set(Some(model)),
            Display::Error(error) => state.error.set(error),
            Display::Metrics(metrics) => state.metrics.set(metrics),
            Display::AnswerTokens(tokens) => state.answer_tokens.set(tokens),
            Display::Edit(report) => state.edit.set(report),
            Display::Files(files) => state.files.set(files),
            Display::Document(doc) => *self.document.borrow_mut() = doc,
            Display::Thinking(thought) => state.thinking.set(thought),
            Display::Stalled(notice) => state.stalled.set(notice),
            Display::Problems(problems) => {
                state.error.set(Some(problems_sentence(&problems)));
                // A check the page failed before it could run: Fix (and auto-fix) send it back.
                state.checks.set(Checked::Done(build_report(&problems)));
                state.console.update(|c| {
                    for problem in problems {
                        c.push(ConsoleLevel::Error, format!("[build] {problem}"));
                    }
                });
            }
            // Tiles' figures.
            Display::Note(_) | Display::Race(_) => {}
        }
    }

    /// Shows a tile's figure in its tile (its status also decides the group's).
    fn show_in_tile(&self, key: u64, display: Display) {
        let view = {
            let tiles = self.tiles.borrow();
            let Some(tile) = tiles.iter().find(|t| t.view.key == key) else { return };
            tile.view.clone()
        };
        match display {
            Display::Status(status) => {
                view.status.set(status);
                self.refresh_group();
            }
            Display::Queued(queued) => view.queued.set(queued),
            Display::Error(error) => view.error.set(error),
            Display::Metrics(metrics) => view.metrics.set(metrics),
            Display::Note(note) => view.note.set(note),
            Display::Race(race) => view.race.set(race),
            Display::Thinking(thought) => view.thinking.set(thought),
            Display::Stalled(notice) => view.stalled.set(notice),
            Display::Problems(problems) => view.error.set(Some(problems_sentence(&problems))),
            Display::ServedBy(_)
            | Display::AnswerTokens(_)
            | Display::Edit(_)
            | Display::Files(_)
            | Display::Document(_) => {}
        }
    }
}

/// What the person reads when the finished project does not build: the first problem, and that
/// the preview shows the last version that did.
fn problems_sentence(problems: &[String]) -> String {
    let more = match problems.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more in the console)", n - 1),
    };
    let first = problems.first().map_or("", String::as_str);
    format!(
        "The finished code does not run: {first}{more}. The preview shows the last version that did; Fix can repair it."
    )
}

/// The report of a project that does not build: one failed check, where it fails.
fn build_report(problems: &[String]) -> Report {
    let check = Check {
        id: "builds".into(),
        label: "The code builds".into(),
        passed: false,
        detail: Some(problems.join("; ")),
    };
    Report { checks: vec![check] }
}
