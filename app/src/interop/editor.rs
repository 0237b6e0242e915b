//! Typed access to the Monaco editor (`app/js/editor.js`).

use flint_protocol::worker::LineEdit;
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

    #[wasm_bindgen(method, js_name = editLines)]
    fn edit_lines(this: &FlintEditor, json: &str) -> bool;

    #[wasm_bindgen(method, js_name = replaceText)]
    fn replace_text(this: &FlintEditor, text: &str);

    #[wasm_bindgen(method)]
    fn begin(this: &FlintEditor);

    #[wasm_bindgen(method)]
    fn finish(this: &FlintEditor);

    #[wasm_bindgen(method)]
    fn ended(this: &FlintEditor);

    #[wasm_bindgen(method)]
    fn text(this: &FlintEditor) -> String;

    #[wasm_bindgen(method)]
    fn select(this: &FlintEditor, start: u32, end: u32);

    #[wasm_bindgen(method, js_name = setOnEdit)]
    fn set_on_edit(this: &FlintEditor, callback: Option<&Closure<dyn FnMut()>>);

    #[wasm_bindgen(method)]
    fn dispose(this: &FlintEditor);
}

// editor.js and preview.js import `./pacer.js` (how often streamed text is painted), editor.js
// `./stream_view.js` (a new file's text while it streams), editor.js and diff.js `./monaco.js`. wasm-bindgen ships a JS file beside the
// others only when some Rust code names it, so they are named here; nothing in Rust calls them.
#[wasm_bindgen(module = "/js/pacer.js")]
extern "C" {
    #[allow(dead_code)]
    #[wasm_bindgen(js_name = watchInput)]
    fn watch_input(pacer: &JsValue);
}

#[wasm_bindgen(module = "/js/monaco.js")]
extern "C" {
    #[allow(dead_code)]
    #[wasm_bindgen(js_name = loadMonaco)]
    fn load_monaco() -> JsValue;
}

#[wasm_bindgen(module = "/js/stream_view.js")]
extern "C" {
    #[allow(dead_code)]
    type StreamView;
}

/// A Monaco editor that streamed text is appended to, at most once per animation frame (less often
/// when painting costs more than the frame allows: see `app/js/pacer.js`).
pub struct Editor {
    js: FlintEditor,
    on_edit: Option<Closure<dyn FnMut()>>,
}

impl Editor {
    /// Creates the editor inside `container` (Monaco loads asynchronously; calls made before it is
    /// ready are kept and applied).
    pub fn new(container: &HtmlElement) -> Self {
        Self { js: create_editor(container), on_edit: None }
    }

    /// Calls `on_edit` after each change the person makes to the text (Flint's own appends and
    /// resets do not count).
    pub fn on_edit(&mut self, on_edit: impl FnMut() + 'static) {
        let callback = Closure::<dyn FnMut()>::new(on_edit);
        self.js.set_on_edit(Some(&callback));
        self.on_edit = Some(callback);
    }

    /// Clears the editor for a new file in `language` (a Monaco language id).
    pub fn reset(&self, language: &str) {
        self.js.reset(language);
    }

    /// Appends text at the end (buffered until the next animation frame).
    pub fn append(&self, text: &str) {
        self.js.append(text);
    }

    /// Replaces lines of the text, in order (an edit stream's blocks as they apply); where Monaco
    /// is not there yet, sets the text `edited` gives whole (the edits already made on it).
    pub fn edit_lines(&self, edits: &[LineEdit], edited: impl FnOnce() -> String) {
        if edits.is_empty() {
            return;
        }
        let applied = serde_json::to_string(edits).is_ok_and(|json| self.js.edit_lines(&json));
        if !applied {
            self.js.replace_text(&edited());
        }
    }

    /// A stream starts: read-only until [`Self::finish`].
    pub fn begin(&self) {
        self.js.begin();
    }

    /// The stream ended: flush, push one undo stop, make it editable.
    pub fn finish(&self) {
        self.js.finish();
    }

    /// The run's status has left "streaming" (done, cancelled, failed): a finished new file goes
    /// from the plain view to Monaco after the frame that paints it.
    pub fn ended(&self) {
        self.js.ended();
    }

    /// The current text, including appends not yet painted.
    pub fn text(&self) -> String {
        self.js.text()
    }

    /// Selects bytes `start..end` of `text` (the editor's text) and scrolls them into view.
    pub fn select(&self, text: &str, start: usize, end: usize) {
        // Monaco counts UTF-16 units.
        let units = |at: usize| text.get(..at).map_or(0, |t| t.encode_utf16().count()) as u32;
        self.js.select(units(start), units(end));
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        self.js.set_on_edit(None);
        self.js.dispose();
    }
}
