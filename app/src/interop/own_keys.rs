//! The person's own API keys, kept in this browser's `localStorage` (never in the saved session,
//! the history, exports or share links) and sent only over the gateway socket.
//!
//! Generated pages cannot read them: they run in sandboxed frames without Flint's origin.

use std::collections::BTreeMap;

const STORAGE_KEY: &str = "flint.own-keys";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The stored keys, by provider name.
pub fn load() -> BTreeMap<String, String> {
    storage()
        .and_then(|s| s.get_item(STORAGE_KEY).ok()?)
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default()
}

/// Stores `key` for `provider` (`None` forgets it); `false` when the browser would not.
pub fn store(provider: &str, key: Option<&str>) -> bool {
    let mut keys = load();
    match key {
        Some(key) => keys.insert(provider.to_owned(), key.to_owned()),
        None => keys.remove(provider),
    };
    let Some(storage) = storage() else { return false };
    let result = if keys.is_empty() {
        storage.remove_item(STORAGE_KEY)
    } else {
        serde_json::to_string(&keys).map_or(Ok(()), |json| storage.set_item(STORAGE_KEY, &json))
    };
    result.is_ok()
}
