//! Typed access to the Monaco editor (`app/js/editor.js`).

use wasm_bindgen::prelude::*;
use web_sys::HtmlElement;

#[wasm_bindgen(module = "/js/editor.js")]
extern "C" {
    /// The JS side of the editor.
    type FlintEditor;

    #[wasm_bindgen(js_name = createEditor)]
    fn create_editor(container: &HtmlElement) -> FlintEditor;

    #[wasm_bindgen(method)]
    fn reset(this: &FlintEditor, language: &str);

    #[wasm_bindgen(method)]
    fn append(this: &FlintEditor, text: &str);

    #[wasm_bindgen(method)]
    fn begin(this: &FlintEditor);

    #[wasm_bindgen(method)]
    fn finish(this: &FlintEditor);

    #[wasm_bindgen(method)]
    fn text(this: &FlintEditor) -> String;

    #[wasm_bindgen(method)]
    fn dispose(this: &FlintEditor);
}

/// A Monaco editor that streamed text is appended to, at most once per animation frame.
pub struct Editor(FlintEditor);

impl Editor {
    /// Creates the editor inside `container` (Monaco loads asynchronously; calls made before it is
    /// ready are kept and applied).
    pub fn new(container: &HtmlElement) -> Self {
        Self(create_editor(container))
    }

    /// Clears the editor for a new file in `language` (a Monaco language id).
    pub fn reset(&self, language: &str) {
        self.0.reset(language);
    }

    /// Appends text at the end (buffered until the next animation frame).
    pub fn append(&self, text: &str) {
        self.0.append(text);
    }

    /// A stream starts: read-only until [`Self::finish`].
    pub fn begin(&self) {
        self.0.begin();
    }

    /// The stream ended: flush, push one undo stop, make it editable.
    pub fn finish(&self) {
        self.0.finish();
    }

    /// The current text, including appends not yet painted.
    pub fn text(&self) -> String {
        self.0.text()
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        self.0.dispose();
    }
}
