//! Binds [`Session`] and the gateway [`Link`] to the worker global: `onmessage` in, `postMessage`
//! out, `setTimeout` for coalescing and for building the exact token counter once the worker is
//! ready. Messages are JSON strings of the protocol's worker types in both directions. The socket's
//! text goes straight into the parser; what the page is owed about each stream leaves merged with
//! its parse, all streams in one message per display frame ([`Lanes`]).

use std::cell::RefCell;
use std::rc::Rc;

use flint_protocol::StreamId;
use flint_protocol::worker::{LaneEvent, ParsedUpdate, WorkerRequest, WorkerResponse};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::lanes::Lanes;
use crate::link::{Link, LinkEvent};
use crate::session::{Next, Session};
use crate::tokens::TokenCounter;

/// How often to check whether the worker is quiet enough to build the o200k counter (0.2–0.4 s
/// that block the worker); the first check comes after the page's first requests were answered
/// with estimates.
const EXACT_COUNTER_CHECK_MS: i32 = 100;

/// How long no stream must have had text before the counter is built: an answer arriving while it
/// builds would wait for it (a person who presses Run at once must not see a late first token).
const QUIET_BEFORE_BUILD_MS: f64 = 500.0;

struct Worker {
    scope: DedicatedWorkerGlobalScope,
    session: RefCell<Session>,
    lanes: RefCell<Lanes>,
    /// The gateway connection, once the page said where.
    link: RefCell<Option<Rc<Link>>>,
    /// Fires [`Session::flush`]; kept alive for the worker's lifetime.
    flush: RefCell<Option<Closure<dyn FnMut()>>>,
}

impl Worker {
    fn now(&self) -> f64 {
        self.scope.performance().map_or(0.0, |p| p.now())
    }

    fn post(&self, response: &WorkerResponse) {
        match serde_json::to_string(response) {
            Ok(json) => {
                if let Err(err) = self.scope.post_message(&JsValue::from_str(&json)) {
                    web_sys::console::error_2(&"flint-worker: postMessage failed".into(), &err);
                }
            }
            Err(err) => web_sys::console::error_1(&format!("flint-worker: {err}").into()),
        }
    }

    fn send(&self, updates: Vec<ParsedUpdate>) {
        let lanes = self.lanes.borrow_mut().merge(updates);
        if !lanes.is_empty() {
            self.post(&WorkerResponse::Lanes { lanes });
        }
    }

    /// Carries out what the session asked for.
    fn follow(&self, next: Next) {
        match next {
            Next::Idle => {}
            Next::Send(updates) => {
                self.send(updates);
                // A preview held back for later needs a timer: no more text may come.
                let again = self.session.borrow_mut().rearm();
                if let Some(ms) = again {
                    self.arm(ms);
                }
            }
            Next::FlushIn(ms) => self.arm(ms),
            Next::Budget(report) => self.post(&WorkerResponse::Budget(report)),
            Next::Page(id, built) => self.post(&match built {
                Ok((page, shape)) => {
                    WorkerResponse::Page { id, page: Some(page), problems: Vec::new(), shape: Some(shape) }
                }
                Err(problems) => WorkerResponse::Page { id, page: None, problems, shape: None },
            }),
        }
    }

    /// What the gateway link reports.
    fn on_link(&self, event: LinkEvent) {
        let now = self.now();
        match event {
            LinkEvent::Text(stream, text) => {
                // Text of a stream the page stopped listening to is dropped here.
                if !self.session.borrow().has_stream(stream) {
                    return;
                }
                self.lanes.borrow_mut().text(stream, text.len());
                let next = self.session.borrow_mut().text(stream, &text, now);
                self.follow(next);
            }
            LinkEvent::Stream(stream, event) => self.on_stream_event(stream, event, now),
            LinkEvent::Gateway(frame) => self.post(&WorkerResponse::Gateway { frame }),
            LinkEvent::Connection(report) => self.post(&WorkerResponse::Connection(report)),
        }
    }

    /// A stream's event goes to the page with its next update; its last one goes at once, with the
    /// final parse.
    fn on_stream_event(&self, stream: StreamId, event: LaneEvent, now: f64) {
        let last = match &event {
            LaneEvent::Frame(frame) => flint_protocol::worker::frame_is_final(frame),
            LaneEvent::Lost(_) | LaneEvent::Cancelled => true,
        };
        self.lanes.borrow_mut().event(stream, event);
        let next = if last {
            self.session.borrow_mut().handle(WorkerRequest::Finish { stream }, now)
        } else {
            Next::Idle
        };
        let next = match next {
            Next::Idle => self.session.borrow_mut().wake(now),
            next => next,
        };
        self.follow(next);
    }

    fn on_message(self: &Rc<Self>, data: JsValue) {
        let Some(text) = data.as_string() else {
            web_sys::console::warn_1(&"flint-worker: ignoring a non-string message".into());
            return;
        };
        let request = match serde_json::from_str::<WorkerRequest>(&text) {
            Ok(request) => request,
            Err(err) => {
                web_sys::console::warn_1(&format!("flint-worker: bad request: {err}").into());
                return;
            }
        };
        let link = self.link.borrow().clone();
        match (request, link) {
            (WorkerRequest::Connect(settings), None) => {
                let weak = Rc::downgrade(self);
                let link = Link::connect(self.scope.clone(), settings, move |event| {
                    if let Some(worker) = weak.upgrade() {
                        worker.on_link(event);
                    }
                });
                *self.link.borrow_mut() = Some(link);
            }
            (WorkerRequest::Connect(_), Some(_)) => {
                web_sys::console::warn_1(&"flint-worker: already connected".into());
            }
            (WorkerRequest::Start(request), Some(link)) => link.start(request),
            (WorkerRequest::Cancel { stream }, Some(link)) => link.cancel(stream),
            (WorkerRequest::UseKey { provider, key }, Some(link)) => link.use_key(&provider, key),
            (WorkerRequest::Online { online }, Some(link)) => link.set_online(online),
            (
                WorkerRequest::Start(_)
                | WorkerRequest::Cancel { .. }
                | WorkerRequest::UseKey { .. }
                | WorkerRequest::Online { .. },
                None,
            ) => web_sys::console::warn_1(&"flint-worker: not connected yet (Connect comes first)".into()),
            (WorkerRequest::Likeness { job, mock, page }, _) => {
                let report = crate::likeness::request::answer(job, &mock, &page, || self.now());
                self.post(&WorkerResponse::Likeness(report));
            }
            (request, _) => {
                let next = self.session.borrow_mut().handle(request, self.now());
                self.follow(next);
            }
        }
    }

    /// Builds the exact counter and hands it to the session; re-sends the budget, now exact.
    fn upgrade_counter(&self) {
        let report = self.session.borrow_mut().set_counter(TokenCounter::o200k());
        if let Some(report) = report {
            self.post(&WorkerResponse::Budget(report));
        }
    }

    /// Calls [`Session::flush`] in `ms` milliseconds.
    fn arm(&self, ms: f64) {
        if let Some(callback) = self.flush.borrow().as_ref() {
            let handler = callback.as_ref().unchecked_ref();
            if let Err(err) =
                self.scope.set_timeout_with_callback_and_timeout_and_arguments_0(handler, ms.ceil() as i32)
            {
                web_sys::console::error_2(&"flint-worker: setTimeout failed".into(), &err);
            }
        }
    }
}

/// Installs the message handler and tells the page the worker is ready.
pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let worker = Rc::new(Worker {
        scope,
        session: RefCell::new(Session::new()),
        lanes: RefCell::new(Lanes::default()),
        link: RefCell::new(None),
        flush: RefCell::new(None),
    });

    let for_timer = Rc::clone(&worker);
    let flush = Closure::<dyn FnMut()>::new(move || {
        let (updates, again) = {
            let mut session = for_timer.session.borrow_mut();
            (session.flush(for_timer.now()), session.rearm())
        };
        for_timer.send(updates);
        if let Some(ms) = again {
            for_timer.arm(ms);
        }
    });
    *worker.flush.borrow_mut() = Some(flush);

    let for_messages = Rc::clone(&worker);
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        for_messages.on_message(event.data());
    });
    worker.scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker does.
    on_message.forget();
    worker.post(&WorkerResponse::Ready);

    build_counter_when_quiet(worker);
}

/// Builds the exact counter once the worker is quiet, checking every [`EXACT_COUNTER_CHECK_MS`].
fn build_counter_when_quiet(worker: Rc<Worker>) {
    let scope = worker.scope.clone();
    let check = Closure::once_into_js(move || {
        if worker.session.borrow().is_quiet(worker.now(), QUIET_BEFORE_BUILD_MS) {
            worker.upgrade_counter();
        } else {
            build_counter_when_quiet(worker);
        }
    });
    if let Err(err) = scope
        .set_timeout_with_callback_and_timeout_and_arguments_0(check.unchecked_ref(), EXACT_COUNTER_CHECK_MS)
    {
        web_sys::console::error_2(&"flint-worker: setTimeout failed".into(), &err);
    }
}
