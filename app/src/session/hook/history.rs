//! [`History`]: the person's earlier generations, listed, reopened and deleted through the session's
//! [`Saver`], so that the current record never brings a deleted entry back.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use send_wrapper::SendWrapper;

use super::Saver;
use crate::draft::Draft;
use crate::interop::store::{SessionStore, StoreError};
use crate::pictures::Pictures;
use crate::session::saved::{
    HISTORY_PICTURE_BYTES, SavedGeneration, history_entries, pictures_let_go, pictures_over_cap,
};

/// The history of generations: list, reopen, delete.
#[derive(Clone)]
pub struct History {
    pub(super) saver: SendWrapper<Rc<Saver>>,
    pub(super) draft: Draft,
    pub(super) pictures: Pictures,
    /// Bumped when entries are added or removed, so a shown list reloads.
    pub changed: RwSignal<u32>,
}

impl History {
    /// Every entry, newest first; empty when the browser keeps nothing.
    pub async fn entries(&self) -> Vec<SavedGeneration> {
        let store = self.saver.store.borrow().clone();
        let Some(store) = store else { return Vec::new() };
        match store.history().await {
            Ok(records) => history_entries(&records),
            Err(err) => {
                self.saver.warn(&err);
                Vec::new()
            }
        }
    }

    /// Puts `entry` back: its prompt (and pictures) in the prompt box, its code in the editor and
    /// the preview. Later edits go to this entry.
    pub fn open(&self, entry: SavedGeneration) {
        self.saver.runner.show_code(entry.code.clone());
        self.draft.prompt.set(entry.prompt.clone());
        self.pictures.restore(entry.pictures.clone().unwrap_or_default());
        self.saver.code_changed.set(false);
        self.saver.session.borrow_mut().generation = Some(entry);
        self.saver.write_now();
    }

    /// Deletes entry `id`. What is on screen stays, but is no longer kept in the history.
    pub fn delete(&self, id: u64) {
        self.forget(|g| g.id == Some(id));
        let write = self.saver.store.borrow().as_ref().map(|store| store.delete_history(id));
        self.finish(write);
    }

    /// Deletes every entry.
    pub fn clear(&self) {
        self.forget(|_| true);
        let write = self.saver.store.borrow().as_ref().map(SessionStore::clear_history);
        self.finish(write);
    }

    fn forget(&self, matches: impl Fn(&SavedGeneration) -> bool) {
        let saver = &self.saver;
        if let Some(generation) = saver.session.borrow_mut().generation.as_mut()
            && matches(generation)
        {
            generation.id = None;
        }
    }

    fn finish(&self, write: Option<impl std::future::Future<Output = Result<(), StoreError>> + 'static>) {
        let Some(write) = write else { return };
        let saver = Rc::downgrade(&self.saver);
        let changed = self.changed;
        spawn_local(async move {
            if let Err(err) = write.await
                && let Some(saver) = saver.upgrade()
            {
                saver.warn(&err);
            }
            changed.try_update(|n| *n += 1);
        });
        // The current record must not bring a deleted entry back on its next write.
        self.saver.write_now();
    }
}

impl Saver {
    /// After a run whose prompt had pictures: while the history's pictures pass
    /// [`HISTORY_PICTURE_BYTES`], the oldest entries let theirs go, and the person is told. Read after
    /// the run's own write, which IndexedDB orders first.
    pub(super) fn cap_history_pictures(&self) {
        let store = self.store.borrow().clone();
        let Some(store) = store else { return };
        let (problem, changed) = (self.problem, self.history_changed);
        spawn_local(async move {
            let Ok(records) = store.history().await else { return };
            let entries = history_entries(&records);
            let over = pictures_over_cap(&entries, HISTORY_PICTURE_BYTES);
            if over.is_empty() {
                return;
            }
            let count = over.len();
            let rewritten =
                over.into_iter().filter_map(|g| Some((g.id?, g.clone().without_pictures().to_json())));
            match store.put_history(rewritten.collect()).await {
                Ok(()) => {
                    problem.try_set(Some(pictures_let_go(count)));
                    changed.try_update(|n| *n += 1);
                }
                Err(err) => leptos::logging::warn!("Flint: cannot let old pictures go: {err}"),
            }
        });
    }
}
