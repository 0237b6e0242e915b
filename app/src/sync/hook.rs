//! `use_history_sync()`: runs [`SyncState`] against the gateway once the gateway's greeting says
//! this person may sync, then when the history changes, on every reconnect, when the browser comes
//! back online, and every minute (other devices' changes). One round at a time; a round asked for
//! while one runs follows it. A page whose greeting says no (local, anonymous) never asks
//! `/api/history`: a browser logs every refusal as an error in its console.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use flint_protocol::sync::{HistoryRecord, PullAnswer, PushAnswer, PushRequest, RecordKind};
use leptos::prelude::*;
use leptos::task::spawn_local;
use send_wrapper::SendWrapper;

use super::state::SyncState;
use crate::interop::epoch_ms;
use crate::interop::http::{FetchError, get_json, post_json};
use crate::interop::store::SessionStore;
use crate::session::History;
use crate::session::saved::{SavedGeneration, history_entries};

/// Where the state is kept: small, read once at start, written after each step.
const STATE_KEY: &str = "flint-history-sync";
/// How often other devices' changes are looked for while the page is open.
const POLL: Duration = Duration::from_secs(60);

/// What the person can see of syncing; provided as context.
#[derive(Clone, Copy)]
pub struct SyncStatus {
    /// Syncing with the gateway: the person is signed in and the gateway keeps history.
    pub on: RwSignal<bool>,
    /// Changes not yet accepted by the gateway.
    pub waiting: RwSignal<usize>,
    /// A round is under way: a change just made may not have been counted in `waiting` yet.
    pub syncing: RwSignal<bool>,
    /// Why the last round stopped early (offline, a limit), until a round succeeds.
    pub problem: RwSignal<Option<String>>,
}

struct Driver {
    history: History,
    /// The gateway's greeting: `Some(true)` once it says this person may sync.
    allowed: Signal<Option<bool>>,
    status: SyncStatus,
    state: RefCell<SyncState>,
    store: RefCell<Option<SessionStore>>,
    running: Cell<bool>,
    again: Cell<bool>,
    /// The gateway said this page does not sync (anonymous, not signed in, no history kept).
    off: Cell<bool>,
}

/// Syncs `history` while `allowed` (the gateway's greeting, [`UseGatewayReturn::history_sync`])
/// says so; returns what to show.
///
/// [`UseGatewayReturn::history_sync`]: crate::gateway::UseGatewayReturn::history_sync
pub fn use_history_sync(history: History, allowed: Signal<Option<bool>>) -> SyncStatus {
    let status = SyncStatus {
        on: RwSignal::new(false),
        waiting: RwSignal::new(0),
        syncing: RwSignal::new(false),
        problem: RwSignal::new(None),
    };
    let state = load_state();
    status.waiting.set(state.waiting());
    let driver = Rc::new(Driver {
        history: history.clone(),
        allowed,
        status,
        state: RefCell::new(state),
        store: RefCell::new(None),
        running: Cell::new(false),
        again: Cell::new(false),
        off: Cell::new(false),
    });
    let kick = SendWrapper::new(Rc::clone(&driver));
    // Runs at once (the start), whenever an entry is added or deleted, and on every greeting.
    Effect::new(move |_| {
        history.changed.track();
        allowed.track();
        Driver::kick(&kick);
    });
    let online = SendWrapper::new(Rc::clone(&driver));
    let listener = window_event_listener(leptos::ev::online, move |_| Driver::kick(&online));
    let poll = SendWrapper::new(Rc::clone(&driver));
    let timer = set_interval_with_handle(move || Driver::kick(&poll), POLL).ok();
    on_cleanup(move || {
        listener.remove();
        if let Some(timer) = timer {
            timer.clear();
        }
    });
    status
}

impl Driver {
    fn kick(self: &Rc<Self>) {
        if self.off.get() || self.allowed.get_untracked() != Some(true) {
            return;
        }
        // The gateway keeps this person's history: say how it stands, also before a round ends.
        self.status.on.set(true);
        if self.running.replace(true) {
            self.again.set(true);
            return;
        }
        self.status.syncing.set(true);
        let driver = Rc::clone(self);
        spawn_local(async move {
            loop {
                driver.again.set(false);
                let result = driver.round().await;
                driver.finish(result);
                if !driver.again.get() || driver.off.get() {
                    break;
                }
            }
            driver.running.set(false);
            driver.status.syncing.set(false);
        });
    }

    fn finish(&self, result: Result<(), FetchError>) {
        self.status.waiting.set(self.state.borrow().waiting());
        save_state(&self.state.borrow());
        match result {
            Ok(()) => {
                self.status.on.set(true);
                self.status.problem.set(None);
            }
            // 401: not signed in; 403: anonymous; 404: this gateway keeps no history.
            Err(
                FetchError::Refused { status: 401 | 403 | 404, .. }
                | FetchError::Status { status: 401 | 403 | 404, .. },
            ) => {
                self.off.set(true);
                self.status.on.set(false);
            }
            Err(err) => {
                leptos::logging::warn!("Flint: history sync paused: {err}");
                self.status.problem.set(Some(err.to_string()));
            }
        }
    }

    /// Scans, pushes what waits, pulls what changed.
    async fn round(&self) -> Result<(), FetchError> {
        let Some(store) = self.store().await else { return Ok(()) };
        // An unreadable history is not an empty one: scanning it would delete every entry.
        let Ok(records) = store.history().await else { return Ok(()) };
        let local: BTreeMap<String, serde_json::Value> = history_entries(&records)
            .into_iter()
            .filter_map(|g| Some((g.id?.to_string(), serde_json::to_value(g.for_sync()).ok()?)))
            .collect();
        let texts: Vec<(String, String)> = local.iter().map(|(id, v)| (id.clone(), v.to_string())).collect();
        self.state.borrow_mut().scan(RecordKind::Generation, &texts, epoch_ms());
        self.status.waiting.set(self.state.borrow().waiting());
        loop {
            let batch = self.state.borrow().next_push(|_, id| local.get(id).cloned());
            if batch.is_empty() {
                break;
            }
            let request = PushRequest { records: batch };
            let answer: PushAnswer = post_json("/api/history/push", &request).await?;
            let apply = self.state.borrow_mut().pushed(&request.records, &answer);
            self.apply(&store, apply).await;
            save_state(&self.state.borrow());
        }
        loop {
            let since = self.state.borrow().cursor;
            let answer: PullAnswer = get_json(&format!("/api/history?since={since}")).await?;
            let apply = self.state.borrow_mut().pulled(&answer);
            self.apply(&store, apply).await;
            save_state(&self.state.borrow());
            if !answer.more {
                return Ok(());
            }
        }
    }

    async fn store(&self) -> Option<SessionStore> {
        if let Some(store) = self.store.borrow().clone() {
            return Some(store);
        }
        let store = SessionStore::open().await.ok()?;
        *self.store.borrow_mut() = Some(store.clone());
        Some(store)
    }

    /// Writes other devices' records into this browser's history.
    async fn apply(&self, store: &SessionStore, records: Vec<HistoryRecord>) {
        if records.is_empty() {
            return;
        }
        for record in records.into_iter().filter(|r| r.kind == RecordKind::Generation) {
            let Ok(id) = record.id.parse::<u64>() else { continue };
            let write = if record.deleted {
                store.delete_history(id).await
            } else {
                let Ok(entry) = serde_json::from_value::<SavedGeneration>(record.body) else { continue };
                store.put_history(vec![(id, entry.to_json())]).await
            };
            if let Err(err) = write {
                leptos::logging::warn!("Flint: cannot keep a synced history entry: {err}");
            }
        }
        self.history.changed.update(|n| *n += 1);
    }
}

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The saved state, or a fresh one for a new device id.
fn load_state() -> SyncState {
    let saved =
        local_storage().and_then(|s| s.get_item(STATE_KEY).ok()?).and_then(|j| SyncState::from_json(&j));
    saved.unwrap_or_else(|| {
        let device = format!("{:016x}", (js_sys::Math::random() * 2f64.powi(53)) as u64);
        SyncState::new(device)
    })
}

fn save_state(state: &SyncState) {
    if let Some(storage) = local_storage()
        && storage.set_item(STATE_KEY, &state.to_json()).is_err()
    {
        leptos::logging::warn!("Flint: cannot keep the history sync's queue");
    }
}
