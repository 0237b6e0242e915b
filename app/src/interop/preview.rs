//! Typed access to the preview frames (`app/js/preview.js`), which load the preview runtime
//! (`public/preview.html`) and talk to it over a `MessagePort` each.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use web_sys::HtmlElement;

use crate::console::ConsoleLevel;

#[wasm_bindgen(module = "/js/checks.js")]
extern "C" {
    /// A page running hidden in its check frame (`app/js/checks.js`).
    type PageCheck;

    #[wasm_bindgen(js_name = createCheck)]
    fn create_check(
        runtime_url: &str,
        doc: &str,
        expect: &str,
        on_done: &Closure<dyn FnMut(String)>,
    ) -> PageCheck;

    #[wasm_bindgen(method)]
    fn dispose(this: &PageCheck);
}

/// A callback JS calls with a JSON report.
type JsonCallback = Closure<dyn FnMut(String)>;

/// A running check and the callback it reports to; dropping it stops the check.
struct Checking {
    js: PageCheck,
    _on_done: Closure<dyn FnMut(String)>,
}

impl Drop for Checking {
    fn drop(&mut self) {
        self.js.dispose();
    }
}

/// Where the preview runtime is served, relative to the app's page (copied from `public/` by the build).
pub const RUNTIME_URL: &str = "preview.html";

// preview.js, checks.js and picture.js import the pacing of snapshots and frames, the console
// limits, a streaming project's pages, the frame itself and hidden frames from files of their own. wasm-bindgen ships a JS file
// beside the others only when some Rust code names it, so they are named here; nothing in Rust
// calls them.
#[wasm_bindgen(module = "/js/preview_pacing.js")]
extern "C" {
    #[allow(dead_code)]
    type PreviewPacing;
}

#[wasm_bindgen(module = "/js/preview_console.js")]
extern "C" {
    #[allow(dead_code)]
    type ConsoleLimiter;
}

#[wasm_bindgen(module = "/js/frame_messages.js")]
extern "C" {
    #[allow(dead_code)]
    type FrameMessages;
}

#[wasm_bindgen(module = "/js/preview_live_runs.js")]
extern "C" {
    #[allow(dead_code)]
    type LiveRuns;
}

#[wasm_bindgen(module = "/js/preview_frame.js")]
extern "C" {
    #[allow(dead_code)]
    type Frame;
}

#[wasm_bindgen(module = "/js/hidden_run.js")]
extern "C" {
    #[allow(dead_code)]
    type HiddenRun;
}

#[wasm_bindgen(module = "/js/preview_pool.js")]
extern "C" {
    #[wasm_bindgen(js_name = prepareFrames)]
    fn prepare_frames_js(count: u32, runtime_url: &str);
}

/// Loads preview frames ahead for `count` tiles, kept for the tiles' previews when they are made
/// (making them at the Run key was half of ten tiles' long frames).
pub fn prepare_frames(count: usize) {
    prepare_frames_js(u32::try_from(count).unwrap_or(u32::MAX), RUNTIME_URL);
}

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

    #[wasm_bindgen(method, js_name = runFinished)]
    fn run_finished(this: &FlintPreview, doc: &str, app: bool, on_shown: &Closure<dyn FnMut()>);

    #[wasm_bindgen(method, js_name = runLive)]
    fn run_live(this: &FlintPreview, doc: &str);

    #[wasm_bindgen(method)]
    fn prepare(this: &FlintPreview, doc: Option<String>);

    #[wasm_bindgen(method)]
    fn dispose(this: &FlintPreview);

    #[wasm_bindgen(method, js_name = pick)]
    fn pick_js(this: &FlintPreview, on: bool, on_picked: &Closure<dyn FnMut(String)>) -> bool;
}

/// The live preview: snapshots morph a sandboxed runtime frame while an answer streams; the finished
/// document runs in a fresh sandboxed frame swapped in once loaded. The pages' console lines are
/// limited (200 a second per preview), clipped and delivered once per animation frame.
pub struct Preview {
    js: FlintPreview,
    runtime_url: String,
    /// The page being checked, if any; a new check replaces it.
    checking: RefCell<Option<Checking>>,
    /// The page being drawn to compare with the prompt's picture, if any; a new one replaces it.
    drawing: RefCell<Option<super::likeness::Drawing>>,
    /// Pick mode's callback, while the person picks.
    on_picked: RefCell<Option<JsonCallback>>,
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
        Self {
            js,
            runtime_url: runtime_url.to_owned(),
            checking: RefCell::new(None),
            drawing: RefCell::new(None),
            on_picked: RefCell::new(None),
            _on_console: callback,
            on_shown: RefCell::new(None),
        }
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
    /// is called once it is on screen (never, if another `run` comes first). `app`: a React
    /// project's page, which a frame made ready for it ([`Self::prepare`]) may take.
    pub fn run(&self, doc: &str, app: bool, on_shown: impl FnOnce() + 'static) {
        let callback = Closure::once(on_shown);
        self.js.run_finished(doc, app, &callback);
        *self.on_shown.borrow_mut() = Some(callback);
    }

    /// Runs a streaming project's page: like [`Self::run`], but a page still starting is left to
    /// show first (only the newest waits for it), so a page slower to start than the stream is to
    /// change still shows while it streams.
    pub fn run_live(&self, doc: &str) {
        self.js.run_live(doc);
    }

    /// Keeps a final frame running `doc`, a warm page (React loaded, nothing mounted), for the
    /// next React answer's pages to be swapped into: a fresh frame takes most of a second to load
    /// React. `None` lets it go.
    pub fn prepare(&self, doc: Option<String>) {
        self.js.prepare(doc);
    }

    /// Runs the complete document `doc` a second time, hidden, and judges it (what shows, the
    /// elements in `expect_json`, whether buttons respond, errors, failed loads); `on_done` gets the
    /// check frame's JSON once, never from inside a call into this preview. A later check, or
    /// dropping the preview, stops this one (its `on_done` is then never called).
    pub fn check(&self, doc: &str, expect_json: &str, on_done: impl FnOnce(String) + 'static) {
        let mut on_done = Some(on_done);
        let callback = Closure::<dyn FnMut(String)>::new(move |json: String| {
            if let Some(done) = on_done.take() {
                done(json);
            }
        });
        let js = create_check(&self.runtime_url, doc, expect_json, &callback);
        // The previous check (if any) is disposed here, after the new one exists.
        *self.checking.borrow_mut() = Some(Checking { js, _on_done: callback });
    }

    /// Draws the complete document `doc` a third time, hidden, at `picture`'s size, for the worker
    /// to compare with it; `on_done` as [`super::likeness::draw`]'s. A later drawing, a new answer
    /// ([`Self::stop_drawing`]) or dropping the preview stops this one.
    pub fn draw_for_likeness(
        &self,
        doc: &str,
        picture: &flint_protocol::image::ImageData,
        on_done: impl FnOnce(Result<super::likeness::Drawn, String>) + 'static,
    ) {
        let drawing = super::likeness::draw(&self.runtime_url, doc, picture, on_done);
        *self.drawing.borrow_mut() = Some(drawing);
    }

    /// Stops the drawing under way, if any (its page is no longer the one shown).
    pub fn stop_drawing(&self) {
        self.drawing.borrow_mut().take();
    }
}

impl Preview {
    /// Pick mode on the finished page shown: the person's next click there picks an element and
    /// `on_picked` gets the frame's report as JSON (its path, or `cancelled`), once, never from
    /// inside this call. False when no finished page is shown. `stop_picking` ends it.
    pub fn pick(&self, on_picked: impl FnOnce(String) + 'static) -> bool {
        let mut on_picked = Some(on_picked);
        let callback = Closure::<dyn FnMut(String)>::new(move |json: String| {
            if let Some(done) = on_picked.take() {
                // Not inside the frame's message: the callback may end pick mode (and drop this).
                leptos::task::spawn_local(async move { done(json) });
            }
        });
        let started = self.js.pick_js(true, &callback);
        *self.on_picked.borrow_mut() = started.then_some(callback);
        started
    }

    /// Ends pick mode.
    pub fn stop_picking(&self) {
        let noop = Closure::<dyn FnMut(String)>::new(|_: String| {});
        self.js.pick_js(false, &noop);
        self.on_picked.borrow_mut().take();
    }
}

impl Drop for Preview {
    fn drop(&mut self) {
        self.checking.borrow_mut().take();
        self.drawing.borrow_mut().take();
        self.js.dispose();
    }
}
