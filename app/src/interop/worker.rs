//! The parser web worker (crate `flint-worker`): text goes in, editor and preview updates come out.
//!
//! Messages are JSON strings of [`WorkerRequest`] / [`WorkerResponse`]. Anything posted before the
//! worker's wasm is initialised would be lost, so requests wait here until it says `Ready`.

use std::cell::RefCell;
use std::rc::Rc;

use flint_protocol::worker::{WorkerRequest, WorkerResponse};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker, WorkerOptions, WorkerType};

/// Where Trunk puts the worker's loader (`data-loader-shim` on the worker's link in index.html).
pub const WORKER_URL: &str = "./flint-worker_loader.js";

/// The worker could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the parser worker {url}: {reason}")]
pub struct WorkerError {
    url: String,
    reason: String,
}

#[derive(Default)]
struct Pending {
    ready: bool,
    queue: Vec<String>,
}

/// A running parser worker.
pub struct ParserWorker {
    worker: Worker,
    pending: Rc<RefCell<Pending>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
}

impl ParserWorker {
    /// Starts the worker; `on_response` receives what it sends (parsed updates, budget reports),
    /// except `Ready`, which this handles.
    pub fn spawn(url: &str, on_response: impl Fn(WorkerResponse) + 'static) -> Result<Self, WorkerError> {
        // A module worker: Trunk builds it with `data-bindgen-target="web"`, whose loader imports the
        // wasm-bindgen glue (the classic `no-modules` loader calls init in a deprecated way).
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Module);
        let worker = Worker::new_with_options(url, &options)
            .map_err(|e| WorkerError { url: url.to_owned(), reason: format!("{e:?}") })?;
        let pending = Rc::new(RefCell::new(Pending::default()));
        let for_messages = Rc::clone(&pending);
        let for_ready = worker.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let Some(text) = event.data().as_string() else { return };
            match serde_json::from_str::<WorkerResponse>(&text) {
                Ok(WorkerResponse::Ready) => {
                    let queued = {
                        let mut p = for_messages.borrow_mut();
                        p.ready = true;
                        std::mem::take(&mut p.queue)
                    };
                    for message in queued {
                        post(&for_ready, &message);
                    }
                }
                Ok(response) => on_response(response),
                Err(err) => leptos::logging::warn!("Flint: unreadable message from the worker: {err}"),
            }
        });
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            leptos::logging::error!("Flint: the parser worker failed: {}", event.message());
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Self { worker, pending, _on_message: on_message, _on_error: on_error })
    }

    /// Sends a request (queued until the worker is ready).
    pub fn send(&self, request: &WorkerRequest) {
        let Ok(json) = serde_json::to_string(request) else { return };
        let mut pending = self.pending.borrow_mut();
        if pending.ready {
            drop(pending);
            post(&self.worker, &json);
        } else {
            pending.queue.push(json);
        }
    }
}

fn post(worker: &Worker, json: &str) {
    if let Err(err) = worker.post_message(&JsValue::from_str(json)) {
        leptos::logging::error!("Flint: cannot post to the parser worker: {err:?}");
    }
}

impl Drop for ParserWorker {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}
