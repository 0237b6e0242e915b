//! Typed access to Monaco's diff editor (`FlintDiff` in `app/js/diff.js`).

use wasm_bindgen::prelude::*;
use web_sys::HtmlElement;

#[wasm_bindgen(module = "/js/diff.js")]
extern "C" {
    type FlintDiff;

    #[wasm_bindgen(js_name = createDiff)]
    fn create_diff(container: &HtmlElement) -> FlintDiff;

    #[wasm_bindgen(method)]
    fn show(this: &FlintDiff, original: &str, modified: &str, language: &str);

    #[wasm_bindgen(method)]
    fn reveal(this: &FlintDiff, line: u32);

    #[wasm_bindgen(method)]
    fn dispose(this: &FlintDiff);
}

/// A read-only diff between two texts.
pub struct DiffView {
    js: FlintDiff,
}

impl DiffView {
    /// Creates it inside `container` (Monaco loads asynchronously; what is shown before is kept).
    pub fn new(container: &HtmlElement) -> Self {
        Self { js: create_diff(container) }
    }

    /// Shows `original` against `modified`, in `language` (a Monaco language id).
    pub fn show(&self, original: &str, modified: &str, language: &str) {
        self.js.show(original, modified, language);
    }

    /// Scrolls the modified side to `line` (1-based).
    pub fn reveal(&self, line: u32) {
        self.js.reveal(line);
    }
}

impl Drop for DiffView {
    fn drop(&mut self) {
        self.js.dispose();
    }
}
