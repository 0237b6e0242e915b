//! Handing files to the browser: a download, or a page opened in a new tab, both from blob URLs.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, Url};

use crate::export::TabPage;
use crate::interop::preview::RUNTIME_URL;

/// Why the browser would not take the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DownloadError(String);

impl From<JsValue> for DownloadError {
    fn from(value: JsValue) -> Self {
        Self(value.as_string().unwrap_or_else(|| format!("{value:?}")))
    }
}

/// How long a download's blob URL stays valid: long enough for the browser to read it.
const DOWNLOAD_URL_LIFETIME: std::time::Duration = std::time::Duration::from_secs(60);

fn blob_url(bytes: &[u8], mime: &str) -> Result<String, DownloadError> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_u8_array_sequence_and_options(&parts, &options)?;
    Ok(Url::create_object_url_with_blob(&blob)?)
}

/// Saves `bytes` as a file called `name`.
pub fn download(name: &str, mime: &str, bytes: &[u8]) -> Result<(), DownloadError> {
    let url = blob_url(bytes, mime)?;
    let revoke = url.clone();
    leptos::prelude::set_timeout(move || drop(Url::revoke_object_url(&revoke)), DOWNLOAD_URL_LIFETIME);
    let document = web_sys::window().and_then(|w| w.document()).ok_or(DownloadError("no document".into()))?;
    let link: HtmlAnchorElement = document.create_element("a")?.unchecked_into();
    link.set_href(&url);
    link.set_download(name);
    link.click();
    Ok(())
}

/// Opens `page` in a new tab, with no way back to this one (`noopener`): a wrapper page from a
/// blob URL, kept until this page closes so the tab can be reloaded, framing the preview runtime
/// (see [`TabPage::wrapper`]).
pub fn open_in_tab(page: &TabPage) -> Result<(), DownloadError> {
    let window = web_sys::window().ok_or(DownloadError("no window".into()))?;
    let base = window.document().and_then(|d| d.base_uri().ok().flatten()).unwrap_or_default();
    // Resolved as the preview frames resolve it.
    let runtime = Url::new_with_base(RUNTIME_URL, &base)?.href();
    let html = page.wrapper(&runtime).map_err(|e| DownloadError(e.to_string()))?;
    let url = blob_url(html.as_bytes(), "text/html;charset=utf-8")?;
    // With `noopener` the browser returns no handle, so a blocked pop-up cannot be told apart.
    window.open_with_url_and_target_and_features(&url, "_blank", "noopener")?;
    Ok(())
}
