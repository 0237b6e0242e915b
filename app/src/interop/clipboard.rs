//! Copying text for the person (`navigator.clipboard`).

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    // `catch`: outside a secure context `navigator.clipboard` is missing and the call throws.
    #[wasm_bindgen(catch, js_namespace = ["navigator", "clipboard"], js_name = writeText)]
    fn write_text(text: &str) -> Result<js_sys::Promise, JsValue>;
}

/// Puts `text` on the clipboard; `false` when the browser cannot or will not.
pub async fn copy_text(text: &str) -> bool {
    match write_text(text) {
        Ok(promise) => JsFuture::from(promise).await.is_ok(),
        Err(_) => false,
    }
}
