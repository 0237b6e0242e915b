//! One generation from prompt to preview: the [`Runner`] starts a stream on the gateway, forwards its
//! text to the parser worker, and applies the worker's updates to the editor and the preview.
//!
//! ```text
//! gateway ──Delta──▶ Runner ──Append──▶ worker ──ParsedUpdate──▶ Runner ──▶ editor (append / frame)
//!                      │                                            └────▶ preview (snapshot / frame)
//!                      └──▶ metrics, status, error signals ──▶ components
//! ```

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use flint_protocol::worker::{
    AnswerFile, BudgetRequest, EditReport, ParsedUpdate, WorkerRequest, WorkerResponse,
};
use flint_protocol::{FinishReason, StartRequest, StreamId};
use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::console::{ConsoleLevel, ConsoleLog};
use crate::export::page_of_code;
use crate::gateway::{StreamEvent, StreamHandler};
use crate::interop::editor::Editor;
use crate::interop::now_ms;
use crate::interop::preview::Preview;
use crate::interop::worker::{ParserWorker, WORKER_URL};
use crate::metrics::LiveMetrics;
use crate::prompt::{Job, start_request};
use crate::share::code_language;
use crate::versions::Origin;

mod state;
mod tiles;
mod versions;
pub use state::{RunEvent, RunObserver, RunState, StreamStatus};
pub use tiles::Tile;
use tiles::TileRun;

/// How the current stream ended, which decides whether its page runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Complete,
    Stopped,
}

/// How long the editor must be still before the preview shows the person's edits.
const EDIT_RENDER_DELAY_MS: u64 = 300;

type StartFn = Box<dyn Fn(StartRequest, StreamHandler) -> StreamId>;
type CancelFn = Box<dyn Fn(StreamId)>;

struct Inner {
    state: RunState,
    start: StartFn,
    cancel: CancelFn,
    worker: Option<ParserWorker>,
    editor: RefCell<Option<Editor>>,
    /// Code to show once the editor exists (a shared link is read before the editor is created).
    pending_code: RefCell<Option<String>>,
    preview: RefCell<Option<Preview>>,
    /// A page to run in the preview once it exists.
    pending_render: RefCell<Option<String>>,
    /// The page last rendered as a whole (not a streaming snapshot): what "Run this page" runs.
    shown_page: RefCell<Option<String>>,
    /// The last answer's preview document (its CSS and JS files inlined).
    document: RefCell<Option<String>>,
    /// The preview is about to show the person's edits.
    edit_render: RefCell<Option<TimeoutHandle>>,
    current: Cell<Option<StreamId>>,
    /// The current generation's job and model.
    job: RefCell<Option<(Job, String)>>,
    outcome: Cell<Option<Outcome>>,
    /// The user stopped the current stream: what the editor shows now is final.
    frozen: Cell<bool>,
    /// The worker was told the current stream is over.
    worker_finished: Cell<bool>,
    observer: RefCell<Option<RunObserver>>,
    /// The running variations, if the last prompt was fanned out.
    tiles: RefCell<Vec<Rc<TileRun>>>,
    /// The status shows the tiles' group, not a single generation.
    group: Cell<bool>,
    /// The group's figures (all tiles together), shown throttled.
    group_metrics: tiles::ThrottledMetrics,
}

/// Runs generations; shared through context (see [`expect_runner`]).
#[derive(Clone)]
pub struct Runner(SendWrapper<Rc<Inner>>);

/// The [`Runner`] provided by the app.
pub fn expect_runner() -> Runner {
    expect_context::<Runner>()
}

impl Runner {
    /// A runner that starts streams with `start` and stops them with `cancel` (from `use_gateway`).
    pub fn new(
        start: impl Fn(StartRequest, StreamHandler) -> StreamId + 'static,
        cancel: impl Fn(StreamId) + 'static,
    ) -> Self {
        let inner = Rc::new_cyclic(|weak: &Weak<Inner>| {
            let weak = weak.clone();
            let worker = ParserWorker::spawn(WORKER_URL, move |response| {
                let Some(inner) = weak.upgrade() else { return };
                match response {
                    WorkerResponse::Parsed(update) => inner.apply(update),
                    WorkerResponse::Budget(report) => inner.state.budget.set(Some(report)),
                    WorkerResponse::Ready => {}
                }
            });
            let worker = worker.map_err(|err| leptos::logging::error!("Flint: {err}")).ok();
            Inner {
                state: RunState::new(),
                start: Box::new(start),
                cancel: Box::new(cancel),
                worker,
                editor: RefCell::new(None),
                pending_code: RefCell::new(None),
                preview: RefCell::new(None),
                pending_render: RefCell::new(None),
                shown_page: RefCell::new(None),
                document: RefCell::new(None),
                edit_render: RefCell::new(None),
                current: Cell::new(None),
                job: RefCell::new(None),
                outcome: Cell::new(None),
                frozen: Cell::new(false),
                worker_finished: Cell::new(false),
                observer: RefCell::new(None),
                tiles: RefCell::new(Vec::new()),
                group: Cell::new(false),
                group_metrics: tiles::ThrottledMetrics::default(),
            }
        });
        Self(SendWrapper::new(inner))
    }

    /// The signals to display.
    pub fn state(&self) -> RunState {
        self.0.state
    }

    /// Gives the runner the editor to stream into.
    pub fn attach_editor(&self, mut editor: Option<Editor>) {
        if let Some(editor) = &mut editor {
            if let Some(code) = self.0.pending_code.take() {
                show_in(editor, &code);
            }
            let weak = Rc::downgrade(&*self.0);
            editor.on_edit(move || {
                if let Some(inner) = weak.upgrade() {
                    inner.on_edit();
                }
            });
        }
        *self.0.editor.borrow_mut() = editor;
    }

    /// The last answer's page with its CSS and JS inlined, if the editor still shows that answer's
    /// main file unchanged; else the editor's code as a page. `None` when there is no code.
    pub fn page(&self) -> Option<String> {
        let code = self.editor_text().filter(|c| !c.trim().is_empty())?;
        let composed = self.0.state.files.with_untracked(|files| {
            let main = files.iter().find(|f| f.content == code)?;
            (files.len() > 1 && main.language == "html").then(|| self.0.document.borrow().clone())?
        });
        Some(composed.unwrap_or_else(|| page_of_code(&code)))
    }

    /// The editor's text (or the code waiting for it); `None` before the editor exists.
    pub fn editor_text(&self) -> Option<String> {
        let pending = self.0.pending_code.borrow().clone();
        pending.or_else(|| self.0.editor.borrow().as_ref().map(Editor::text))
    }

    /// Puts finished `code` that came from outside (a shared link, a restored session, an entry
    /// from the history) in the editor, and in the preview as a still page whose scripts wait for
    /// [`Self::run_held_page`]; stops a generation under way so that it does not write over it.
    pub fn show_code(&self, code: String) {
        self.cancel();
        self.0.state.held.set(true);
        self.0.state.review.set(None);
        self.0.keep_version(&code, "", "", Origin::Opened);
        self.0.show_version(code, None, Vec::new());
    }

    /// Asks the worker to count the next request (see [`RunState::budget`] for its answer).
    pub fn measure(&self, request: BudgetRequest) {
        self.0.send(WorkerRequest::Budget(request));
    }

    /// The file a prompt would edit now: the editor's code, or the current version's while an
    /// answer is still streaming into the editor. `None` when there is no code.
    pub fn edit_base(&self) -> Option<String> {
        let streaming = self.0.state.status.get_untracked() == StreamStatus::Streaming;
        let code = if streaming {
            self.0.state.versions.with_untracked(|v| v.current().map(|v| v.code.clone()))
        } else {
            self.editor_text()
        };
        code.filter(|c| !c.trim().is_empty())
    }

    /// Tells `observer` when generations start, stream and end (the saved session listens); `None`
    /// stops telling.
    pub fn set_observer(&self, observer: Option<RunObserver>) {
        *self.0.observer.borrow_mut() = observer;
    }

    /// Runs the page held still since it came from outside: the person clicked "Run this page".
    pub fn run_held_page(&self) {
        let inner = &self.0;
        if !inner.state.held.get_untracked() {
            return;
        }
        inner.state.held.set(false);
        // Cloned out first: `render` writes `shown_page`, and an `if let` would hold the borrow.
        let page = inner.shown_page.borrow().clone();
        if let Some(page) = page {
            inner.render(page);
        }
    }

    /// Gives the runner the preview to render into.
    pub fn attach_preview(&self, preview: Option<Preview>) {
        *self.0.preview.borrow_mut() = preview;
        if let Some(page) = self.0.pending_render.take() {
            self.0.render(page);
        }
    }

    /// Adds a line to the console panel.
    pub fn log(&self, level: ConsoleLevel, text: String) {
        self.0.state.console.update(|c| c.push(level, text));
    }

    /// Starts `job` on `model`, stopping any generation under way.
    pub fn run(&self, model: Option<String>, job: Job) {
        let inner = &self.0;
        let state = inner.state;
        if job.prompt.is_empty() {
            state.error.set(Some("Type what to build first.".into()));
            return;
        }
        let Some(model) = model else {
            state
                .error
                .set(Some("No model is selected: pick one that is available (see the notice above).".into()));
            inner.set_status(StreamStatus::Error);
            return;
        };
        self.stop_current();
        inner.cancel_tiles();
        // The person asked for this page: it runs when complete.
        state.held.set(false);
        state.tiles.set(Vec::new());
        state.error.set(None);
        state.served_by.set(None);
        state.queued.set(None);
        state.console.update(ConsoleLog::clear);
        inner.set_status(StreamStatus::Streaming);
        state.metrics.set(LiveMetrics::started(now_ms()).priced(job.price_of(&model), job.prompt_tokens));
        inner.outcome.set(None);
        inner.frozen.set(false);
        inner.worker_finished.set(false);
        inner.pending_code.take();
        inner.pending_render.take();
        inner.document.take();
        inner.clear_edit_render();
        state.files.set(Vec::new());
        state.review.set(None);
        state.edit.set(None);
        state.answer_tokens.set(0);
        if let Some(editor) = inner.editor.borrow().as_ref() {
            // An edit keeps showing the code it edits until its first change arrives.
            match &job.base {
                Some(base) => {
                    editor.reset(code_language(base));
                    editor.append(base);
                }
                None => editor.reset("markdown"),
            }
            editor.begin();
        }
        if let Some(preview) = inner.preview.borrow().as_ref() {
            preview.begin();
        }
        let weak = Rc::downgrade(&**inner);
        let id_cell = Rc::new(Cell::new(0));
        let id_for_handler = Rc::clone(&id_cell);
        let handler: StreamHandler = Rc::new(move |event| {
            if let Some(inner) = weak.upgrade() {
                inner.on_event(id_for_handler.get(), event);
            }
        });
        let id = (inner.start)(start_request(&model, &job), handler);
        id_cell.set(id);
        inner.current.set(Some(id));
        inner.send(WorkerRequest::Reset { stream: id, preview_only: false, base: job.base.clone() });
        inner.notify(RunEvent::Started { model: &model, prompt: &job.prompt });
        *inner.job.borrow_mut() = Some((job, model));
    }

    /// Stops the current generation. The editor keeps exactly what it shows: text still in flight
    /// is dropped, so nothing changes after the user pressed Cancel.
    pub fn cancel(&self) {
        let inner = &self.0;
        if inner.group.get() {
            inner.cancel_all_tiles();
            return;
        }
        let Some(id) = inner.current.get() else { return };
        if inner.state.status.get_untracked() != StreamStatus::Streaming || inner.frozen.get() {
            return;
        }
        inner.set_status(StreamStatus::Cancelled);
        (inner.cancel)(id);
        inner.freeze(id);
        // A stopped edit changes nothing: its blocks so far are not half-applied to the code.
        let base = inner.job.borrow().as_ref().and_then(|(job, _)| job.base.clone());
        if let Some(base) = base {
            inner.state.edit.set(None);
            inner.show_version(base, None, Vec::new());
        }
    }

    fn stop_current(&self) {
        let inner = &self.0;
        if let Some(old) = inner.current.get() {
            let streaming = inner.state.status.get_untracked() == StreamStatus::Streaming;
            if streaming && !inner.group.get() && !inner.frozen.get() {
                (inner.cancel)(old);
            }
            // Its later events and updates are ignored from here on.
            inner.finish_worker(old);
            inner.current.set(None);
        }
    }
}

/// Replaces the editor's text with `code`, editable.
fn show_in(editor: &Editor, code: &str) {
    editor.reset(code_language(code));
    editor.append(code);
    editor.finish();
}

impl Inner {
    /// Sets the status; the observer hears when a generation stops streaming.
    fn set_status(&self, status: StreamStatus) {
        let was = self.state.status.get_untracked();
        self.state.status.set(status);
        if was == StreamStatus::Streaming && status != StreamStatus::Streaming && !self.group.get() {
            self.notify(RunEvent::Ended(status));
        }
    }

    /// The person edited the code: tell the observer, and show the edits in the preview once the
    /// typing pauses.
    fn on_edit(self: &Rc<Self>) {
        self.notify(RunEvent::Edited);
        self.clear_edit_render();
        let weak = Rc::downgrade(self);
        let timer = set_timeout_with_handle(
            move || {
                let Some(inner) = weak.upgrade() else { return };
                inner.edit_render.take();
                let code = inner.editor.borrow().as_ref().map(Editor::text);
                if let Some(code) = code {
                    inner.render(page_of_code(&code));
                    inner.state.code_revision.update(|n| *n += 1);
                }
            },
            Duration::from_millis(EDIT_RENDER_DELAY_MS),
        );
        *self.edit_render.borrow_mut() = timer.ok();
    }

    /// Makes `code` the current version: in the editor, and in the preview as `page` (its files
    /// inlined) or else as the code itself; `files` are what Export offers. Either may not exist
    /// yet: they get it when attached.
    fn show_version(&self, code: String, page: Option<String>, files: Vec<AnswerFile>) {
        self.clear_edit_render();
        self.state.code_revision.update(|n| *n += 1);
        self.render(page.clone().unwrap_or_else(|| page_of_code(&code)));
        *self.document.borrow_mut() = page;
        self.state.files.set(files);
        match self.editor.borrow().as_ref() {
            Some(editor) => show_in(editor, &code),
            None => *self.pending_code.borrow_mut() = Some(code),
        }
    }

    /// Runs a finished `page` in the main preview, now or once it is attached; while the page is
    /// held (it came from outside), shows it still instead: scripts removed, as while streaming.
    fn render(&self, page: String) {
        *self.shown_page.borrow_mut() = Some(page.clone());
        match self.preview.borrow().as_ref() {
            Some(preview) if self.state.held.get_untracked() => {
                preview.begin();
                preview.snapshot(&page);
            }
            Some(preview) => preview.run(&page, || {}),
            None => *self.pending_render.borrow_mut() = Some(page),
        }
    }

    /// Forgets edits waiting to be shown: another version is about to be shown.
    fn clear_edit_render(&self) {
        if let Some(timer) = self.edit_render.take() {
            timer.clear();
        }
    }

    fn notify(&self, event: RunEvent<'_>) {
        // Cloned out of the cell so that the observer may call back into the runner.
        let observer = self.observer.borrow().clone();
        if let Some(observer) = observer {
            observer(event);
        }
    }

    fn send(&self, request: WorkerRequest) {
        if let Some(worker) = &self.worker {
            worker.send(&request);
        }
    }

    /// Tells the worker the stream is over (once); it answers with the final update.
    fn finish_worker(&self, id: StreamId) {
        if !self.worker_finished.replace(true) {
            self.send(WorkerRequest::Finish { stream: id });
        }
    }

    fn freeze(&self, id: StreamId) {
        if self.frozen.replace(true) {
            return;
        }
        if let Some(editor) = self.editor.borrow().as_ref() {
            editor.finish();
        }
        self.finish_worker(id);
        self.state.code_revision.update(|n| *n += 1);
    }

    fn on_event(&self, id: StreamId, event: StreamEvent) {
        if self.current.get() != Some(id) {
            return;
        }
        let state = self.state;
        if state.queued.get_untracked().is_some() {
            state.queued.set(None);
        }
        match event {
            StreamEvent::Queued { ahead } => state.queued.set(Some(ahead)),
            StreamEvent::Started { provider, model } => {
                state.served_by.set(Some(format!("{provider}/{model}")))
            }
            StreamEvent::Delta { text } => {
                if self.frozen.get() {
                    return;
                }
                state.metrics.update(|m| m.on_text(now_ms(), text.len()));
                self.send(WorkerRequest::Append { stream: id, text });
            }
            StreamEvent::Done { finish, usage, metrics } => {
                state.metrics.update(|m| m.on_done(usage, metrics));
                state.add_spent(state.metrics);
                if self.frozen.get() {
                    return;
                }
                if finish == FinishReason::Cancelled {
                    self.outcome.set(Some(Outcome::Stopped));
                    self.set_status(StreamStatus::Cancelled);
                } else {
                    // "done" once the finished page is on screen (see `apply`).
                    self.outcome.set(Some(Outcome::Complete));
                    if self.worker.is_none() {
                        self.set_status(StreamStatus::Done);
                    }
                }
                self.finish_worker(id);
            }
            StreamEvent::Failed { message, .. } => {
                state.add_spent(state.metrics);
                if self.frozen.get() {
                    return;
                }
                self.outcome.set(Some(Outcome::Stopped));
                state.error.set(Some(message));
                self.set_status(StreamStatus::Error);
                self.finish_worker(id);
            }
        }
    }

    fn apply(self: &Rc<Self>, update: ParsedUpdate) {
        let id = update.stream;
        if self.current.get() != Some(id) {
            self.apply_tile(update);
            return;
        }
        if self.frozen.get() {
            return;
        }
        if let Some(editor) = self.editor.borrow().as_ref() {
            if update.code_reset {
                editor.reset(&update.language);
            }
            editor.edit_lines(&update.code_edits);
            editor.append(&update.code_append);
            if update.done {
                editor.finish();
            }
        }
        if update.code_reset || !update.code_append.is_empty() || !update.code_edits.is_empty() {
            self.notify(RunEvent::Streamed);
        }
        if self.state.answer_tokens.get_untracked() != update.answer_tokens {
            self.state.answer_tokens.set(update.answer_tokens);
        }
        let complete = update.done && self.outcome.get() == Some(Outcome::Complete);
        let stopped = update.done && self.outcome.get() == Some(Outcome::Stopped);
        if let Some(report) = update.edits {
            self.state.edit.set(Some(EditReport { hunks: Vec::new(), ..report.clone() }));
            if complete || stopped {
                let proposal = update.files.iter().find(|f| f.main).map(|f| f.content.clone());
                self.propose(report, proposal.unwrap_or_default(), stopped);
            }
        } else if complete {
            self.keep_answer(Origin::Generated);
        }
        if update.done {
            self.state.files.set(update.files);
            self.document.borrow_mut().clone_from(&update.preview);
            self.state.code_revision.update(|n| *n += 1);
        }
        let preview = self.preview.borrow();
        match (update.preview, preview.as_ref()) {
            (Some(doc), Some(preview)) if complete => {
                let weak = Rc::downgrade(self);
                preview.run(&doc, move || {
                    if let Some(inner) = weak.upgrade()
                        && inner.current.get() == Some(id)
                    {
                        inner.set_status(StreamStatus::Done);
                    }
                });
            }
            (Some(doc), Some(preview)) => preview.snapshot(&doc),
            _ if complete => self.set_status(StreamStatus::Done),
            _ => {}
        }
    }
}
