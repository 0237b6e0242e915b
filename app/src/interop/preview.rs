//! Typed access to the preview frames (`app/js/preview.js`), which load the preview runtime
//! (`public/preview.html`) and talk to it over a `MessagePort` each.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use web_sys::HtmlElement;

use crate::console::ConsoleLevel;

/// Where the preview runtime is served, relative to the app's page (copied from `public/` by Trunk).
pub const RUNTIME_URL: &str = "preview.html";

#[wasm_bindgen(module = "/js/preview.js")]
extern "C" {
    /// The JS side of the preview.
    type FlintPreview;

    #[wasm_bindgen(js_name = createPreview)]
    fn create_preview(
        container: &HtmlElement,
        runtime_url: &str,
        on_console: &Closure<dyn FnMut(String, String)>,
    ) -> FlintPreview;

    #[wasm_bindgen(method)]
    fn begin(this: &FlintPreview);

    #[wasm_bindgen(method)]
    fn snapshot(this: &FlintPreview, html: &str);

    #[wasm_bindgen(method)]
    fn run(this: &FlintPreview, doc: &str, on_shown: &Closure<dyn FnMut()>);

    #[wasm_bindgen(method)]
    fn dispose(this: &FlintPreview);
}

/// The live preview: snapshots morph a sandboxed runtime frame while an answer streams; the finished
/// document runs in a fresh sandboxed frame swapped in once loaded. The pages' console lines are
/// limited (200 a second per preview), clipped and delivered once per animation frame.
pub struct Preview {
    js: FlintPreview,
    _on_console: Closure<dyn FnMut(String, String)>,
    /// The latest `run`'s callback; JS never calls a superseded one, so replacing it is safe.
    on_shown: RefCell<Option<Closure<dyn FnMut()>>>,
}

impl Preview {
    /// Creates the preview inside `container`; `on_console` receives the previewed pages' console
    /// output and uncaught errors.
    pub fn new(
        container: &HtmlElement,
        runtime_url: &str,
        mut on_console: impl FnMut(ConsoleLevel, String) + 'static,
    ) -> Self {
        let callback = Closure::<dyn FnMut(String, String)>::new(move |level: String, text: String| {
            on_console(ConsoleLevel::parse(&level), text);
        });
        let js = create_preview(container, runtime_url, &callback);
        Self { js, _on_console: callback, on_shown: RefCell::new(None) }
    }

    /// A new answer starts; its first snapshot replaces the previous answer's page.
    pub fn begin(&self) {
        self.js.begin();
    }

    /// Shows a partial document (scripts do not run); at most one is applied per animation frame.
    pub fn snapshot(&self, html: &str) {
        self.js.snapshot(html);
    }

    /// Runs the complete document, scripts included (the runtime captures its console); `on_shown`
    /// is called once it is on screen (never, if another `run` comes first).
    pub fn run(&self, doc: &str, on_shown: impl FnOnce() + 'static) {
        let callback = Closure::once(on_shown);
        self.js.run(doc, &callback);
        *self.on_shown.borrow_mut() = Some(callback);
    }
}

impl Drop for Preview {
    fn drop(&mut self) {
        self.js.dispose();
    }
}
