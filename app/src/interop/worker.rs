//! The web worker (crate `flint-worker`): it holds the gateway socket and parses the answers; the
//! page sends it requests and gets its updates (see `gateway::use_gateway`).
//!
//! Messages are JSON strings of [`WorkerRequest`] / [`WorkerResponse`]. Anything posted before the
//! worker's wasm is initialised would be lost, so requests wait here until it says `Ready`. A worker
//! that never gets there (its script or wasm failed to load, say because the gateway restarted while
//! the page was loading) is started again, so the queued requests are not stuck for good. So is one
//! that fails after it was ready (a panic leaves its wasm in no state to go on): its socket and
//! streams are gone with it, and the page is told (`on_lost`) so that it can fail them and tell the
//! new worker again where to connect.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use flint_protocol::worker::{WorkerRequest, WorkerResponse};
use leptos::prelude::{TimeoutHandle, set_timeout_with_handle};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker, WorkerOptions, WorkerType};

/// Where the build puts the worker's loader (`data-loader-shim` on the worker's link in index.html).
pub const WORKER_URL: &str = "./flint-worker_loader.js";

/// How long a worker may take to say `Ready` before it is started again (it loads a few MB of wasm;
/// a slow machine compiles that in a second or two).
const READY_WITHIN_MS: u64 = 10_000;

/// The worker could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the parser worker {url}: {reason}")]
pub struct WorkerError {
    url: String,
    reason: String,
}

type Handlers = (Closure<dyn FnMut(MessageEvent)>, Closure<dyn FnMut(ErrorEvent)>);

struct Inner {
    url: String,
    on_response: Box<dyn Fn(WorkerResponse)>,
    on_lost: Box<dyn Fn()>,
    worker: RefCell<Option<Worker>>,
    handlers: RefCell<Option<Handlers>>,
    ready: Cell<bool>,
    /// A worker that was ready failed, and the page has not been told yet.
    lost: Cell<bool>,
    queue: RefCell<Vec<String>>,
    /// Starts made so far (the first included).
    starts: Cell<u32>,
    /// Fires if the current worker is not ready in time.
    watchdog: RefCell<Option<TimeoutHandle>>,
}

/// A running parser worker.
pub struct ParserWorker {
    inner: Rc<Inner>,
}

impl ParserWorker {
    /// Starts the worker; `on_response` receives what it sends (parsed updates, budget reports),
    /// except `Ready`, which this handles. `on_lost` is called when a worker that was ready failed
    /// and a new one was started in its place (requests sent from it go to the new one).
    pub fn spawn(
        url: &str,
        on_response: impl Fn(WorkerResponse) + 'static,
        on_lost: impl Fn() + 'static,
    ) -> Result<Self, WorkerError> {
        let inner = Rc::new(Inner {
            url: url.to_owned(),
            on_response: Box::new(on_response),
            on_lost: Box::new(on_lost),
            worker: RefCell::new(None),
            handlers: RefCell::new(None),
            ready: Cell::new(false),
            lost: Cell::new(false),
            queue: RefCell::new(Vec::new()),
            starts: Cell::new(0),
            watchdog: RefCell::new(None),
        });
        start(&inner)?;
        Ok(Self { inner })
    }

    /// Sends a request (queued until the worker is ready).
    pub fn send(&self, request: &WorkerRequest) {
        let Ok(json) = serde_json::to_string(request) else { return };
        let inner = &self.inner;
        let worker = inner.worker.borrow();
        match worker.as_ref().filter(|_| inner.ready.get()) {
            Some(worker) => post(worker, &json),
            None => inner.queue.borrow_mut().push(json),
        }
    }
}

/// Starts (or starts again) the worker; requests wait in the queue until it says `Ready`.
fn start(inner: &Rc<Inner>) -> Result<(), WorkerError> {
    stop(inner);
    inner.starts.set(inner.starts.get() + 1);
    // A module worker: built with `data-bindgen-target="web"`, whose loader imports the
    // wasm-bindgen glue (the classic `no-modules` loader calls init in a deprecated way).
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    let worker = Worker::new_with_options(&inner.url, &options)
        .map_err(|e| WorkerError { url: inner.url.clone(), reason: format!("{e:?}") })?;
    let weak = Rc::downgrade(inner);
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let Some(inner) = weak.upgrade() else { return };
        let Some(text) = event.data().as_string() else { return };
        match serde_json::from_str::<WorkerResponse>(&text) {
            Ok(WorkerResponse::Ready) => on_ready(&inner),
            Ok(response) => (inner.on_response)(response),
            Err(err) => leptos::logging::warn!("Flint: unreadable message from the worker: {err}"),
        }
    });
    let weak = Rc::downgrade(inner);
    let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
        leptos::logging::error!("Flint: the parser worker failed: {}", event.message());
        // Handled here: not reported again as the page's own uncaught error.
        event.prevent_default();
        let Some(inner) = weak.upgrade() else { return };
        if inner.ready.get() {
            // Its state is lost: a new one from a timer (this closure belongs to the old one, which
            // `start` drops), then the page hears of it.
            inner.ready.set(false);
            inner.lost.set(true);
            restart_later(&inner, 0);
        } else {
            // Before `Ready` nothing of it works: start it again rather than wait for the watchdog.
            restart_later(&inner, 1_000);
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    *inner.worker.borrow_mut() = Some(worker);
    *inner.handlers.borrow_mut() = Some((on_message, on_error));
    restart_later(inner, READY_WITHIN_MS);
    Ok(())
}

/// Starts the worker again in `ms` unless it is ready by then.
fn restart_later(inner: &Rc<Inner>, ms: u64) {
    let weak: Weak<Inner> = Rc::downgrade(inner);
    let timer = set_timeout_with_handle(
        move || {
            let Some(inner) = weak.upgrade() else { return };
            inner.watchdog.take();
            if inner.ready.get() {
                return;
            }
            if !inner.lost.get() {
                leptos::logging::warn!(
                    "Flint: the parser worker did not start (attempt {}); starting it again",
                    inner.starts.get()
                );
            }
            if let Err(err) = start(&inner) {
                leptos::logging::error!("Flint: {err}");
            }
            if inner.lost.replace(false) {
                (inner.on_lost)();
            }
        },
        Duration::from_millis(ms),
    );
    if let Some(earlier) = inner.watchdog.replace(timer.ok()) {
        earlier.clear();
    }
}

fn on_ready(inner: &Rc<Inner>) {
    inner.ready.set(true);
    if let Some(timer) = inner.watchdog.take() {
        timer.clear();
    }
    let queued = std::mem::take(&mut *inner.queue.borrow_mut());
    if let Some(worker) = inner.worker.borrow().as_ref() {
        for message in queued {
            post(worker, &message);
        }
    }
}

/// Detaches and ends the current worker, if any.
fn stop(inner: &Inner) {
    inner.ready.set(false);
    if let Some(worker) = inner.worker.borrow_mut().take() {
        worker.set_onmessage(None);
        worker.set_onerror(None);
        worker.terminate();
    }
    inner.handlers.borrow_mut().take();
}

fn post(worker: &Worker, json: &str) {
    if let Err(err) = worker.post_message(&JsValue::from_str(json)) {
        leptos::logging::error!("Flint: cannot post to the parser worker: {err:?}");
    }
}

impl Drop for ParserWorker {
    fn drop(&mut self) {
        if let Some(timer) = self.inner.watchdog.take() {
            timer.clear();
        }
        stop(&self.inner);
    }
}
