//! `use_session()`: the wiring between the app's state, the [`Runner`] and the IndexedDB store.
//!
//! The whole session is one record, kept in memory and written whole: at once after a quiet spell,
//! then at most every [`SAVE_INTERVAL_MS`](super::throttle::SAVE_INTERVAL_MS) while a stream or typing keeps changing it, and at once
//! when a generation starts or ends. Nothing is written until the stored record has been read back,
//! so start-up cannot overwrite the session it is about to restore.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use send_wrapper::SendWrapper;

use super::saved::{
    RestoredNotice, SavedGeneration, SavedSession, SavedStatus, kind_record, restore, spent_record,
    storage_problem,
};
use super::throttle::SaveThrottle;
use crate::context::{FanOut, ModelChoice};
use crate::draft::Draft;
use crate::interop::store::{SessionStore, StoreError};
use crate::interop::{epoch_ms, now_ms};
use crate::models::is_usable;
use crate::run::{RunEvent, RunObserver, Runner, StreamStatus};

mod history;

pub use history::History;

/// What the person sees of saving; provided as context by the app.
#[derive(Clone)]
pub struct SessionStatus {
    /// The notice after a restore, until dismissed.
    pub restored: RwSignal<Option<RestoredNotice>>,
    /// Why the session cannot be saved, until dismissed.
    pub problem: RwSignal<Option<String>>,
    /// Earlier generations, kept until the person deletes them.
    pub history: History,
}

/// Saves the session as `draft`, `choice.picked`, `fan_out.count` and `runner`'s generations
/// change, and restores the saved one on start-up unless the page `opened_shared_link` (a shared
/// link wins).
pub fn use_session(
    draft: Draft,
    choice: ModelChoice,
    fan_out: FanOut,
    runner: &Runner,
    opened_shared_link: bool,
) -> SessionStatus {
    let problem = RwSignal::new(None);
    let changed = RwSignal::new(0);
    let saver = Rc::new(Saver::new(*runner, problem, changed));
    let status = SessionStatus {
        restored: RwSignal::new(None),
        problem,
        history: History {
            saver: SendWrapper::new(Rc::clone(&saver)),
            draft,
            pictures: crate::pictures::expect_pictures(),
            changed,
        },
    };

    let weak = Rc::downgrade(&saver);
    let observer: RunObserver = Rc::new(move |event: RunEvent<'_>| {
        if let Some(saver) = weak.upgrade() {
            saver.on_run(event);
        }
    });
    runner.set_observer(Some(observer));
    let detach = *runner;
    on_cleanup(move || detach.set_observer(None));

    let state = runner.state();
    watch_into(&saver, move || draft.prompt.get(), |s, prompt| s.prompt = Some(prompt.clone()));
    watch_into(&saver, move || choice.picked.get(), |s, picked| s.model = picked.clone());
    watch_into(&saver, move || choice.profile.get(), |s, profile| s.profile = profile.clone());
    watch_into(&saver, move || draft.goal.get(), |s, goal| s.goal = Some(goal.clone()));
    watch_into(&saver, move || state.versions.get(), |s, versions| s.versions = Some(versions.clone()));
    watch_into(&saver, move || fan_out.count.get(), |s, count| s.variations = Some(*count));
    watch_into(&saver, move || draft.auto_continue.get(), |s, on| s.auto_continue = Some(*on));
    watch_into(&saver, move || draft.kind.get(), |s, kind| s.kind = kind_record(*kind));
    watch_into(&saver, move || state.spent.get(), |s, spent| s.spent = spent_record(*spent));
    let pictures = crate::pictures::expect_pictures();
    let saved_pictures = pictures.saved();
    watch_into(&saver, move || saved_pictures.get(), |s, saved| s.pictures = saved.clone());

    let initial_prompt = draft.prompt.get_untracked();
    let initial_count = fan_out.count.get_untracked();
    let initial_goal = draft.goal.get_untracked();
    let runner = *runner;
    let restored = status.restored;
    spawn_local(async move {
        let saved = saver.load().await;
        let plan = restore(&saved, opened_shared_link);
        // The person may have typed or run something while the store opened: theirs wins.
        if let Some(prompt) = plan.prompt
            && draft.prompt.get_untracked() == initial_prompt
        {
            draft.prompt.set(prompt);
        }
        if let Some(goal) = plan.goal
            && draft.goal.get_untracked() == initial_goal
        {
            draft.goal.set(goal);
        }
        let state = runner.state();
        if let Some(versions) = plan.versions {
            // Versions made since start-up (a shared link's code, a run) come after the saved ones.
            state.versions.update(|v| v.adopt(versions));
        }
        if let Some(code) = plan.code
            && state.status.get_untracked() == StreamStatus::Idle
        {
            runner.show_code(code);
        }
        if let Some(saved) = plan.pictures
            && pictures.images.with_untracked(Vec::is_empty)
        {
            pictures.restore(saved);
        }
        if let Some(on) = plan.auto_continue {
            draft.auto_continue.set(on);
        }
        if plan.kind.is_some() && draft.kind.get_untracked().is_none() {
            draft.kind.set(plan.kind);
        }
        if let Some(spent) = plan.spent {
            // Streams finished while the store opened add to what earlier visits spent.
            state.spent.update(|now| *now = crate::metrics::total_cost([*now, Some(spent)]));
        }
        if plan.profile.is_some() && choice.profile.get_untracked().is_none() {
            choice.profile.set(plan.profile);
        }
        if let Some(count) = plan.variations
            && fan_out.count.get_untracked() == initial_count
        {
            fan_out.count.set(count.clamp(1, crate::variations::MAX_VARIATIONS));
        }
        restored.set(plan.notice);
        // What changed before the store opened (a shared link's prompt and code) was not written,
        // and `load` replaced the record in memory with the saved one: record what the page shows.
        // Only then (a link is opened before this hook watches anything): a start-up with nothing
        // new writes nothing.
        if opened_shared_link || saver.changed_early.get() {
            saver.change(|s| {
                s.prompt = Some(draft.prompt.get_untracked());
                s.goal = Some(draft.goal.get_untracked());
                s.versions = Some(state.versions.get_untracked());
                s.variations = Some(fan_out.count.get_untracked());
                s.profile = choice.profile.get_untracked();
                s.kind = kind_record(draft.kind.get_untracked());
                s.pictures = saved_pictures.get_untracked();
            });
        }
        if let Some(model) = plan.model {
            // Only a model this gateway still offers; if the list cannot be read, trust the pick.
            let usable = choice.models.await.map_or(true, |list| is_usable(&list, &model));
            if usable && choice.picked.get_untracked().is_none() {
                choice.picked.set(Some(model));
            }
        }
    });
    status
}

/// Writes `source`'s value into the session whenever it changes (not at start: the restore does).
fn watch_into<T: Clone + PartialEq + Send + Sync + 'static>(
    saver: &Rc<Saver>,
    source: impl Fn() -> T + Send + Sync + 'static,
    write: impl Fn(&mut SavedSession, &T) + 'static,
) {
    let saver = SendWrapper::new(Rc::clone(saver));
    Effect::watch(source, move |value: &T, _, _| saver.change(|s| write(s, value)), false);
}

/// The in-memory session and its writer.
struct Saver {
    runner: Runner,
    problem: RwSignal<Option<String>>,
    /// Bumped when a history entry is added.
    history_changed: RwSignal<u32>,
    /// `None` until opened, and for good when IndexedDB cannot be used.
    store: RefCell<Option<SessionStore>>,
    loaded: Cell<bool>,
    /// Something changed before the store opened (see `use_session`).
    changed_early: Cell<bool>,
    session: RefCell<SavedSession>,
    /// The editor changed since the last write: read its code at the next one.
    code_changed: Cell<bool>,
    throttle: RefCell<SaveThrottle>,
    pending: RefCell<Option<TimeoutHandle>>,
    /// The person was told saving fails: once is enough.
    warned: Cell<bool>,
}

impl Saver {
    fn new(runner: Runner, problem: RwSignal<Option<String>>, history_changed: RwSignal<u32>) -> Self {
        Self {
            runner,
            problem,
            history_changed,
            store: RefCell::new(None),
            loaded: Cell::new(false),
            changed_early: Cell::new(false),
            session: RefCell::new(SavedSession::default()),
            code_changed: Cell::new(false),
            throttle: RefCell::new(SaveThrottle::default()),
            pending: RefCell::new(None),
            warned: Cell::new(false),
        }
    }

    /// Opens the store and reads the saved session (empty when there is none or it cannot be read);
    /// writes are allowed from here on.
    async fn load(self: &Rc<Self>) -> SavedSession {
        let saved = match SessionStore::open().await {
            Ok(store) => {
                let read = store.load().await;
                *self.store.borrow_mut() = Some(store);
                match read {
                    Ok(Some(json)) => SavedSession::from_json(&json)
                        .map_err(|err| leptos::logging::warn!("Flint: not restoring the last session: {err}"))
                        .ok(),
                    Ok(None) => None,
                    Err(err) => {
                        self.warn(&err);
                        None
                    }
                }
            }
            Err(err) => {
                self.warn(&err);
                None
            }
        };
        let saved = saved.unwrap_or_default();
        let mut session = saved.clone();
        // A generation started before the store opened is newer than the saved one.
        let started = self.session.borrow_mut().generation.take();
        if started.is_some() {
            session.generation = started;
        }
        *self.session.borrow_mut() = session;
        self.loaded.set(true);
        if self.session.borrow().generation != saved.generation {
            self.write_now();
        }
        saved
    }

    fn on_run(self: &Rc<Self>, event: RunEvent<'_>) {
        match event {
            RunEvent::Started { model, prompt } => {
                let mut session = self.session.borrow_mut();
                let pictures = session.pictures.clone();
                session.generation = Some(SavedGeneration {
                    id: Some(epoch_ms()),
                    prompt: prompt.to_owned(),
                    model: model.to_owned(),
                    code: String::new(),
                    status: SavedStatus::Streaming,
                    pictures,
                });
                drop(session);
                self.code_changed.set(false);
                self.write_now();
            }
            RunEvent::Streamed => {
                self.code_changed.set(true);
                self.request();
            }
            RunEvent::Ended(status) => {
                if let (Some(generation), Some(status)) =
                    (self.session.borrow_mut().generation.as_mut(), SavedStatus::from_stream(status))
                {
                    generation.status = status;
                }
                self.code_changed.set(true);
                self.write_now();
                self.history_changed.update(|n| *n += 1);
                if self.session.borrow().generation.as_ref().is_some_and(|g| g.picture_bytes() > 0) {
                    self.cap_history_pictures();
                }
            }
            RunEvent::Edited => {
                // Code typed before anything ran is kept as a generation of its own.
                let mut session = self.session.borrow_mut();
                if session.generation.is_none() {
                    session.generation = Some(SavedGeneration {
                        id: Some(epoch_ms()),
                        prompt: session.prompt.clone().unwrap_or_default(),
                        model: session.model.clone().unwrap_or_default(),
                        code: String::new(),
                        status: SavedStatus::Done,
                        pictures: None,
                    });
                }
                drop(session);
                self.code_changed.set(true);
                self.request();
            }
        }
    }

    fn change(self: &Rc<Self>, edit: impl FnOnce(&mut SavedSession)) {
        if !self.loaded.get() {
            self.changed_early.set(true);
        }
        edit(&mut self.session.borrow_mut());
        self.request();
    }

    /// Writes now, or once the throttle allows; a write already waiting will carry this change.
    fn request(self: &Rc<Self>) {
        if self.pending.borrow().is_some() {
            return;
        }
        let delay = self.throttle.borrow().delay(now_ms());
        if delay <= 0.0 {
            self.write_now();
            return;
        }
        let weak: Weak<Self> = Rc::downgrade(self);
        let timer = set_timeout_with_handle(
            move || {
                if let Some(saver) = weak.upgrade() {
                    saver.pending.take();
                    saver.write_now();
                }
            },
            Duration::from_secs_f64(delay / 1_000.0),
        );
        match timer {
            Ok(handle) => *self.pending.borrow_mut() = Some(handle),
            // No timer (no window): write now rather than never.
            Err(_) => self.write_now(),
        }
    }

    /// Writes the whole session, with the editor's code if it changed.
    fn write_now(self: &Rc<Self>) {
        if let Some(timer) = self.pending.take() {
            timer.clear();
        }
        if !self.loaded.get() {
            return;
        }
        if self.code_changed.take() {
            // From the workspace, the person's last keystrokes read back first (read before the
            // session is borrowed: reading them back tells `on_run`).
            let code = self.runner.code().unwrap_or_default();
            if let Some(generation) = self.session.borrow_mut().generation.as_mut() {
                generation.code = code;
            }
        }
        self.throttle.borrow_mut().wrote(now_ms());
        let write = {
            let session = self.session.borrow();
            let history = session.generation.as_ref().and_then(|g| Some((g.id?, g.to_json())));
            self.store.borrow().as_ref().map(|store| store.save(&session.to_json(), history))
        };
        let Some(write) = write else { return };
        let weak = Rc::downgrade(self);
        spawn_local(async move {
            if let (Err(err), Some(saver)) = (write.await, weak.upgrade()) {
                saver.warn(&err);
            }
        });
    }

    fn warn(&self, err: &StoreError) {
        leptos::logging::warn!("Flint: cannot save the session: {err}");
        if !self.warned.replace(true) {
            self.problem.set(Some(storage_problem(&err.to_string())));
        }
    }
}
