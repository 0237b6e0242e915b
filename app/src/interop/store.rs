//! Typed access to the page's saved session in IndexedDB (`app/js/store.js`).

use std::future::Future;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/js/store.js")]
extern "C" {
    /// The JS side of the store.
    #[derive(Clone)]
    type FlintStore;

    #[wasm_bindgen(js_name = openStore)]
    fn open_store() -> js_sys::Promise;

    #[wasm_bindgen(method)]
    fn load(this: &FlintStore) -> js_sys::Promise;

    #[wasm_bindgen(method)]
    fn save(
        this: &FlintStore,
        json: &str,
        history_id: Option<f64>,
        history_json: Option<String>,
    ) -> js_sys::Promise;

    #[wasm_bindgen(method, js_name = listHistory)]
    fn list_history(this: &FlintStore) -> js_sys::Promise;

    #[wasm_bindgen(method, js_name = putHistory)]
    fn put_history(this: &FlintStore, ids: Vec<f64>, jsons: Vec<String>) -> js_sys::Promise;

    #[wasm_bindgen(js_name = persistStorage)]
    fn persist_storage() -> js_sys::Promise;

    #[wasm_bindgen(js_name = readChosenFile)]
    fn read_chosen_file(input: &web_sys::HtmlInputElement, max_bytes: f64) -> js_sys::Promise;

    #[wasm_bindgen(method, js_name = deleteHistory)]
    fn delete_history(this: &FlintStore, id: f64) -> js_sys::Promise;

    #[wasm_bindgen(method, js_name = clearHistory)]
    fn clear_history(this: &FlintStore) -> js_sys::Promise;
}

/// Why the browser would not open, read or write the store, in its own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(String);

impl From<JsValue> for StoreError {
    fn from(value: JsValue) -> Self {
        // store.js rejects with strings; anything else is unexpected but still reported.
        Self(value.as_string().unwrap_or_else(|| format!("{value:?}")))
    }
}

/// The session record and the history of generations, kept in IndexedDB across reloads.
#[derive(Clone)]
pub struct SessionStore(FlintStore);

impl SessionStore {
    /// Opens the store, creating it on first use.
    pub async fn open() -> Result<Self, StoreError> {
        let store = JsFuture::from(open_store()).await?;
        Ok(Self(store.unchecked_into()))
    }

    /// The stored record, if one was saved.
    pub async fn load(&self) -> Result<Option<String>, StoreError> {
        Ok(JsFuture::from(self.0.load()).await?.as_string())
    }

    /// Replaces the record with `json` and, with `history`, the history record `(id, json)`, in one
    /// transaction. The write is issued now, so writes land in call order; the future says whether
    /// it was committed.
    pub fn save(
        &self,
        json: &str,
        history: Option<(u64, String)>,
    ) -> impl Future<Output = Result<(), StoreError>> + use<> {
        let (id, entry) = history.map_or((None, None), |(id, json)| (Some(id as f64), Some(json)));
        done(self.0.save(json, id, entry))
    }

    /// Every history record, oldest first.
    pub async fn history(&self) -> Result<Vec<String>, StoreError> {
        let list = JsFuture::from(self.0.list_history()).await?;
        Ok(js_sys::Array::from(&list).iter().filter_map(|v| v.as_string()).collect())
    }

    /// Adds the history records `(id, json)` in one transaction.
    pub fn put_history(
        &self,
        records: Vec<(u64, String)>,
    ) -> impl Future<Output = Result<(), StoreError>> + use<> {
        let (ids, jsons) = records.into_iter().map(|(id, json)| (id as f64, json)).unzip();
        done(self.0.put_history(ids, jsons))
    }

    /// Deletes the history record `id`.
    pub fn delete_history(&self, id: u64) -> impl Future<Output = Result<(), StoreError>> + use<> {
        done(self.0.delete_history(id as f64))
    }

    /// Deletes every history record.
    pub fn clear_history(&self) -> impl Future<Output = Result<(), StoreError>> + use<> {
        done(self.0.clear_history())
    }
}

/// Waits for a write issued now.
fn done(promise: js_sys::Promise) -> impl Future<Output = Result<(), StoreError>> {
    let write = JsFuture::from(promise);
    async move {
        write.await?;
        Ok(())
    }
}

/// Whether the browser agreed to keep Flint's storage when space runs low.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// It will not evict it without asking the person.
    Granted,
    /// It may evict it (most browsers refuse until a site is installed or used often).
    Refused,
    /// The browser has no way to ask.
    Unavailable,
}

/// Asks the browser to keep Flint's storage (`navigator.storage.persist()`).
pub async fn persist_storage_now() -> Persistence {
    match JsFuture::from(persist_storage()).await.ok().and_then(|v| v.as_string()).as_deref() {
        Some("granted") => Persistence::Granted,
        Some("refused") => Persistence::Refused,
        _ => Persistence::Unavailable,
    }
}

/// The text of the file chosen in `input`, `Ok(None)` when none is; files over `max_bytes` are
/// refused unread with their size in the error (`too large: N`).
pub async fn chosen_file_text(
    input: &web_sys::HtmlInputElement,
    max_bytes: u64,
) -> Result<Option<String>, StoreError> {
    Ok(JsFuture::from(read_chosen_file(input, max_bytes as f64)).await?.as_string())
}
