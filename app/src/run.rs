//! The driver of generations: the [`Runner`] keeps the [`Generation`]s under way (one on the editor,
//! or several in tiles), feeds them the gateway's stream events and the parser worker's updates,
//! and carries out the [`Command`]s they answer with against the gateway, the worker, the editor,
//! the previews, the [`Workspace`] and the display signals. What happens when is decided in
//! [`crate::generation`], tested natively; this module only does it.
//!
//! ```text
//! worker (socket + parser) ──StreamEvent (frames, text counts, parse)──▶ Generation
//!                              └──Code / Preview / Show / KeepVersion…──▶ Runner::exec ──▶ browser
//! ```

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use flint_protocol::worker::{BudgetRequest, WorkerRequest};
use flint_protocol::{StartRequest, StreamId};
use leptos::prelude::*;

use crate::console::{ConsoleLevel, ConsoleLog};
use crate::export::page_of_code;
use crate::gateway::{StreamHandler, WorkerLink};
use crate::generation::group::ThrottledMetrics;
use crate::generation::{Generation, Surface};
use crate::interop::editor::Editor;
use crate::interop::now_ms;
use crate::interop::preview::Preview;
use crate::judge::Expect;
use crate::prompt::Job;
use crate::versions::Origin;
use crate::workspace::Workspace;

mod checks;
mod exec;
mod likeness;
mod pick;
mod ready;
mod shown;
mod state;
mod tiles;
mod versions;
pub use state::{RunEvent, RunObserver, RunState, StreamStatus};
pub use tiles::Tile;
use tiles::TileSlot;

type StartFn = Box<dyn Fn(StartRequest, StreamHandler) -> StreamId>;
type CancelFn = Box<dyn Fn(StreamId)>;

/// Which generation a command or an event belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The single run on the editor.
    Main,
    /// The tile with this key.
    Tile(u64),
}

struct Inner {
    state: RunState,
    workspace: Workspace,
    start: StartFn,
    cancel: CancelFn,
    worker: WorkerLink,
    editor: RefCell<Option<Editor>>,
    preview: RefCell<Option<Preview>>,
    /// A page to run in the preview once it exists.
    pending_render: RefCell<Option<String>>,
    /// The page last rendered as a whole (not a streaming snapshot): what "Run this page" runs.
    shown_page: RefCell<Option<String>>,
    /// The last answer's preview document (its CSS and JS files inlined).
    document: RefCell<Option<String>>,
    /// The person's edits wait to be read back into the workspace (and shown in the preview).
    edit_render: RefCell<Option<TimeoutHandle>>,
    observer: RefCell<Option<RunObserver>>,
    /// The single run, if the last prompt was not fanned out.
    main: RefCell<Option<Generation>>,
    /// The running variations, if it was.
    tiles: RefCell<Vec<TileSlot>>,
    /// The status shows the tiles' group, not a single generation.
    group: Cell<bool>,
    /// The group's figures (all tiles together), shown throttled.
    group_metrics: RefCell<ThrottledMetrics>,
    /// What the main preview's pages are checked for (the last prompt's named elements).
    expect: RefCell<Expect>,
    /// The picture the main preview's pages are compared with (the last prompt's first).
    picture: RefCell<Option<flint_protocol::image::ImageData>>,
    /// Numbers each check, so that a late report for a page no longer shown is dropped.
    check_seq: Cell<u64>,
    /// The main preview's latest check.
    main_check: Cell<u64>,
    /// Itself, for callbacks that must not keep it alive.
    this: Weak<Inner>,
    /// Numbers the pages asked of the worker, so that only the latest is shown.
    page_seq: Cell<u32>,
    /// A tile's Pick waits for its promoted page to show in the main preview.
    pick_pending: Cell<bool>,
    /// The warm page a React answer's frame is made ready with, once the worker built it (it
    /// depends only on the gateway's packages): asked for once, not each time the prompt settles.
    ready_page: RefCell<Option<String>>,
}

/// Runs generations; `Copy`, shared through context (see [`expect_runner`]).
#[derive(Clone, Copy)]
pub struct Runner {
    inner: StoredValue<Rc<Inner>, LocalStorage>,
    state: RunState,
    workspace: Workspace,
}

/// The [`Runner`] provided by the app.
pub fn expect_runner() -> Runner {
    expect_context::<Runner>()
}

impl Runner {
    /// A runner that starts streams with `start` and stops them with `cancel`, and has `worker`
    /// parse and count (all three from `use_gateway`).
    pub fn new(
        start: impl Fn(StartRequest, StreamHandler) -> StreamId + 'static,
        cancel: impl Fn(StreamId) + 'static,
        worker: WorkerLink,
    ) -> Self {
        let state = RunState::new();
        let workspace = Workspace::new();
        worker.on_budget(move |report| state.budget.set(Some(report)));
        let inner = Rc::new_cyclic(|weak: &Weak<Inner>| {
            let this = weak.clone();
            Inner {
                state,
                workspace,
                start: Box::new(start),
                cancel: Box::new(cancel),
                worker,
                editor: RefCell::new(None),
                preview: RefCell::new(None),
                pending_render: RefCell::new(None),
                shown_page: RefCell::new(None),
                document: RefCell::new(None),
                edit_render: RefCell::new(None),
                observer: RefCell::new(None),
                main: RefCell::new(None),
                tiles: RefCell::new(Vec::new()),
                group: Cell::new(false),
                group_metrics: RefCell::new(ThrottledMetrics::default()),
                expect: RefCell::new(Expect::default()),
                picture: RefCell::new(None),
                check_seq: Cell::new(0),
                main_check: Cell::new(0),
                this,
                page_seq: Cell::new(0),
                pick_pending: Cell::new(false),
                ready_page: RefCell::new(None),
            }
        });
        Self { inner: StoredValue::new_local(inner), state, workspace }
    }

    fn inner(&self) -> Rc<Inner> {
        self.inner.get_value()
    }

    /// The signals to display.
    pub fn state(&self) -> RunState {
        self.state
    }

    /// The current code.
    pub fn workspace(&self) -> Workspace {
        self.workspace
    }

    /// Gives the runner the editor to stream into; it shows the current code.
    pub fn attach_editor(&self, mut editor: Option<Editor>) {
        let inner = self.inner();
        if let Some(editor) = &mut editor {
            if let Some(code) = self.workspace.nonblank() {
                shown::show_in(editor, &code, self.state.open_file);
            }
            let weak = Rc::downgrade(&inner);
            editor.on_edit(move || {
                if let Some(inner) = weak.upgrade() {
                    inner.on_edit();
                }
            });
        }
        *inner.editor.borrow_mut() = editor;
    }

    /// The last answer's page with its CSS and JS inlined, if the code is still that answer's
    /// main file unchanged; else the code as a page. `None` when there is no code.
    pub fn page(&self) -> Option<String> {
        let code = self.code().filter(|c| !c.trim().is_empty())?;
        let composed = self.state.files.with_untracked(|files| {
            // The answer's own page while its code is unchanged (its files inlined, or a React
            // project built).
            (crate::project::answer_code(files)? == code).then(|| self.inner().document.borrow().clone())?
        });
        if composed.is_none() && crate::project::project_of(&code, &[]).is_some() {
            // A project changed since its answer: the page the worker last built of it.
            return self.inner().shown_page.borrow().clone();
        }
        Some(composed.unwrap_or_else(|| page_of_code(&code)))
    }

    /// The current code, with the person's latest edits; `None` when there is none yet.
    pub fn code(&self) -> Option<String> {
        self.inner().flush_edits();
        Some(self.workspace.code()).filter(|c| !c.is_empty())
    }

    /// Puts finished `code` that came from outside (a shared link, a restored session, an entry
    /// from the history) in the editor, and in the preview as a still page whose scripts wait for
    /// [`Self::run_held_page`]; stops a generation under way so that it does not write over it.
    pub fn show_code(&self, code: String) {
        self.cancel();
        let inner = self.inner();
        self.state.held.set(true);
        self.state.review.set(None);
        // Code from outside: nothing says what it should have.
        inner.expect.replace(Expect::default());
        inner.picture.replace(None);
        inner.keep_version_from(None, &code, "", "", None, Origin::Opened);
        inner.show_version(code, None, Vec::new());
    }

    /// Shows the project's file at `path` in the editor (a file tab), unless an answer streams in.
    pub fn open_file(&self, path: String) {
        if self.state.status.get_untracked() != StreamStatus::Streaming {
            self.inner().open_file(path);
        }
    }

    /// Asks the worker to count the next request (see [`RunState::budget`] for its answer).
    pub fn measure(&self, request: BudgetRequest) {
        self.inner().send(WorkerRequest::Budget(request));
    }

    /// The file a prompt would edit now: the current code, or the current version's while an
    /// answer is still streaming into the editor. `None` when there is no code.
    pub fn edit_base(&self) -> Option<String> {
        let streaming = self.state.status.get_untracked() == StreamStatus::Streaming;
        let code = if streaming {
            self.state.versions.with_untracked(|v| v.current().map(|v| v.code.clone()))
        } else {
            self.code()
        };
        code.filter(|c| !c.trim().is_empty())
    }

    /// What the main preview's pages are checked for: the elements the last prompt named.
    pub fn expectations(&self) -> Expect {
        self.inner().expect.borrow().clone()
    }

    /// Tells `observer` when generations start, stream and end (the saved session listens); `None`
    /// stops telling.
    pub fn set_observer(&self, observer: Option<RunObserver>) {
        *self.inner().observer.borrow_mut() = observer;
    }

    /// Runs the page held still since it came from outside: the person clicked "Run this page".
    pub fn run_held_page(&self) {
        let inner = self.inner();
        if !self.state.held.get_untracked() {
            return;
        }
        self.state.held.set(false);
        // Cloned out first: `render` writes `shown_page`.
        let page = inner.shown_page.borrow().clone();
        if let Some(page) = page {
            inner.render(page);
        }
    }

    /// Gives the runner the preview to render into.
    pub fn attach_preview(&self, preview: Option<Preview>) {
        let inner = self.inner();
        let attached = preview.is_some();
        *inner.preview.borrow_mut() = preview;
        if let Some(main) = inner.main.borrow_mut().as_mut() {
            main.attach_preview(attached);
        }
        if let Some(page) = inner.pending_render.take() {
            inner.render(page);
        }
    }

    /// Adds a line to the console panel.
    pub fn log(&self, level: ConsoleLevel, text: String) {
        self.state.console.update(|c| c.push(level, text));
    }

    /// Starts `job` on `model`, stopping any generation under way.
    pub fn run(&self, model: Option<String>, job: Job) {
        let inner = self.inner();
        let state = self.state;
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
        inner.stop_current();
        inner.cancel_tiles();
        // The person asked for this page: it runs when complete.
        state.held.set(false);
        state.tiles.set(Vec::new());
        state.error.set(None);
        state.served_by.set(None);
        state.review.set(None);
        state.console.update(ConsoleLog::clear);
        inner.pending_render.take();
        inner.clear_edit_render();
        inner.expect.replace(job.expect.clone());
        // A fix is sent without the pictures, but its page is still meant to look like them.
        if job.fix_attempt == 0 {
            inner.picture.replace(likeness::picture_of(&job));
        }
        state.fix_attempt.set(job.fix_attempt);
        let mut main = Generation::new(Rc::new(job), model, None, Surface::Editor, inner.worker.available());
        main.attach_preview(inner.preview.borrow().is_some());
        let commands = main.start(now_ms());
        *inner.main.borrow_mut() = Some(main);
        inner.exec(Target::Main, commands);
    }

    /// Stops the current generation (or every tile). The editor keeps exactly what it shows: text
    /// still in flight is dropped, so nothing changes after the person pressed Cancel.
    pub fn cancel(&self) {
        let inner = self.inner();
        if inner.group.get() {
            inner.cancel_all_tiles();
            return;
        }
        let commands = inner.main.borrow_mut().as_mut().map(Generation::cancel).unwrap_or_default();
        inner.exec(Target::Main, commands);
    }
}

impl Inner {
    /// Stops the single run, whose later events and updates are ignored from here on.
    fn stop_current(self: &Rc<Self>) {
        let old = self.main.borrow_mut().take();
        if let Some(mut old) = old {
            self.exec(Target::Main, old.retire());
        }
    }

    /// Sets the page's status outside any generation (a run that could not start).
    fn set_status(&self, status: StreamStatus) {
        let was = self.state.status.get_untracked();
        self.state.status.set(status);
        if was == StreamStatus::Streaming && status != StreamStatus::Streaming && !self.group.get() {
            self.notify(RunEvent::Ended(status));
        }
    }

    /// Calls `f` on generation `target`, if it is still there.
    fn with_lane<R>(&self, target: Target, f: impl FnOnce(&mut Generation) -> R) -> Option<R> {
        match target {
            Target::Main => self.main.borrow_mut().as_mut().map(f),
            Target::Tile(key) => {
                self.tiles.borrow_mut().iter_mut().find(|t| t.view.key == key).map(|t| f(&mut t.lane))
            }
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
        self.worker.send(&request);
    }
}
