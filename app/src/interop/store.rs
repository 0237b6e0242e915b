//! Typed access to the page's saved session in IndexedDB (`app/js/store.js`).

use std::future::Future;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/js/store.js")]
extern "C" {
    /// The JS side of the store.
    type FlintStore;

    #[wasm_bindgen(js_name = openStore)]
    fn open_store() -> js_sys::Promise;

    #[wasm_bindgen(method)]
    fn load(this: &FlintStore) -> js_sys::Promise;

    #[wasm_bindgen(method)]
    fn save(this: &FlintStore, json: &str) -> js_sys::Promise;
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

/// One string record kept in IndexedDB across reloads.
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

    /// Replaces the record with `json`. The write is issued now, so writes land in call order;
    /// the future says whether it was committed.
    pub fn save(&self, json: &str) -> impl Future<Output = Result<(), StoreError>> + use<> {
        let write = JsFuture::from(self.0.save(json));
        async move {
            write.await?;
            Ok(())
        }
    }
}
