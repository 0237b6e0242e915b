//! `use_gateway()`: the tab's one connection to the gateway, shared by every generation.
//!
//! The WebSocket lives in the web worker, which also parses the answers: text goes from the socket
//! straight into the parser and never crosses to the page. The page hears, per display frame, one
//! message with each stream's news (its frames, how much text came, its parse), and the
//! connection's state when it changes. This hook starts the worker, tells it where to connect, and
//! routes what it says to the listeners and signals.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use flint_protocol::project::ProjectShape;
use flint_protocol::worker::{
    AnswerFile, BudgetReport, ConnectSettings, ConnectionReport, LikenessReport, PreviewPackages, RgbaImage,
    WorkerRequest, WorkerResponse,
};
use flint_protocol::{Secret, StartRequest, StreamId};
use leptos::prelude::*;
use send_wrapper::SendWrapper;

use super::events::{ConnectionNews, Quota, StreamEvent};
use super::pages::Asked;
use super::{ConnectionProblem, ConnectionState, UseGatewayOptions, socket_url};
use crate::interop::http::{FetchError, get_json, post_empty};
use crate::interop::worker::{ParserWorker, WORKER_URL};
use crate::interop::{now_ms, online, page_origin};

/// Receives one stream's events.
pub type StreamHandler = Rc<dyn Fn(StreamEvent)>;

/// Receives the worker's budget reports.
type BudgetHandler = Rc<dyn Fn(BudgetReport)>;

/// What [`use_gateway`] returns.
pub struct UseGatewayReturn<StartFn, CancelFn>
where
    StartFn: Fn(StartRequest, StreamHandler) -> StreamId + Clone,
    CancelFn: Fn(StreamId) + Clone,
{
    /// The connection's state.
    pub state: Signal<ConnectionState>,
    /// While waiting to reconnect: the delay chosen, in milliseconds.
    pub retry_in_ms: Signal<Option<u32>>,
    /// The gateway's build version, once greeted.
    pub gateway_version: Signal<Option<String>>,
    /// Whether the person may sync their history with this gateway, once greeted (`None` until
    /// then): only then may the page ask `/api/history`.
    pub history_sync: Signal<Option<bool>>,
    /// A problem with the connection itself (protocol mismatch, a rejected frame, a refusal), for
    /// display.
    pub problem: Signal<Option<ConnectionProblem>>,
    /// The person's daily token quota and when it was reported (page clock, ms), when the
    /// gateway keeps one for them.
    pub quota: Signal<Option<(Quota, f64)>>,
    /// Starts a generation (`request.stream` is ignored and assigned); events go to the handler,
    /// the worker's parse of its text included. Requests made while disconnected wait for the
    /// connection.
    pub start: StartFn,
    /// Stops a generation; its handler still receives the final `Done`.
    pub cancel: CancelFn,
    /// Uses the person's own key for a provider (`None`: the gateway's), on every connection.
    pub use_key: Callback<(String, Option<Secret>)>,
    /// The worker, for the requests about parsing and counting.
    pub worker: WorkerLink,
}

struct Inner {
    worker: Option<ParserWorker>,
    /// What a new worker is told before anything else (one that failed took it with it).
    connect: RefCell<Option<ConnectSettings>>,
    keys: RefCell<BTreeMap<String, Option<Secret>>>,
    packages: RefCell<Option<PreviewPackages>>,
    /// Pages and likenesses asked of the worker and not answered yet (page requests held until
    /// the packages manifest is in).
    asked: Asked,
    /// The listener of each stream the page still listens to.
    handlers: RefCell<BTreeMap<StreamId, StreamHandler>>,
    next_id: Cell<StreamId>,
    /// The page asks the gateway's access probe itself (not with a custom socket URL).
    own_gateway: bool,
    on_budget: RefCell<Option<BudgetHandler>>,
    state: RwSignal<ConnectionState>,
    retry_in_ms: RwSignal<Option<u32>>,
    gateway_version: RwSignal<Option<String>>,
    history_sync: RwSignal<Option<bool>>,
    problem: RwSignal<Option<ConnectionProblem>>,
    quota: RwSignal<Option<(Quota, f64)>>,
}

impl Inner {
    fn send(&self, request: &WorkerRequest) {
        if let Some(worker) = &self.worker {
            worker.send(request);
        }
    }
}

/// The worker as the runner uses it: parse requests (`Reset`, `Finish`) and budgets.
#[derive(Clone)]
pub struct WorkerLink {
    inner: Rc<Inner>,
}

impl WorkerLink {
    /// Whether a worker runs (without one, nothing streams).
    pub fn available(&self) -> bool {
        self.inner.worker.is_some()
    }

    /// Sends a request about parsing or counting.
    pub fn send(&self, request: &WorkerRequest) {
        self.inner.send(request);
    }

    /// Asks the worker for the preview page of a project's `files`; `f` gets it, or why they do
    /// not build.
    pub fn page(&self, files: Vec<AnswerFile>, f: impl FnOnce(Result<String, Vec<String>>) + 'static) {
        self.page_with(files, None, move |built| f(built.map(|(page, _)| page)));
    }

    /// [`Self::page`] built with `packages` instead of the gateway's when given, and with what the
    /// build found (for an export).
    pub fn page_with(
        &self,
        files: Vec<AnswerFile>,
        packages: Option<PreviewPackages>,
        f: impl FnOnce(Result<(String, ProjectShape), Vec<String>>) + 'static,
    ) {
        let id = self.inner.asked.page(Box::new(f));
        self.inner.asked.send_page(WorkerRequest::Page { id, files, packages }, |r| self.inner.send(r));
    }

    /// Asks the worker for the warm page a React answer's preview is made ready with (see
    /// [`WorkerRequest::WarmPage`]); `f` gets it, or why there is none. Waits, like [`Self::page`],
    /// for the gateway's packages.
    pub fn warm_page(&self, f: impl FnOnce(Result<String, Vec<String>>) + 'static) {
        let id = self.inner.asked.page(Box::new(move |built| f(built.map(|(page, _)| page))));
        self.inner.asked.send_page(WorkerRequest::WarmPage { id }, |r| self.inner.send(r));
    }

    /// Asks the worker how much `page` (a finished page as its picture frame drew it) looks like
    /// `mock` (the prompt's picture); `f` gets the report once, a problem in it if the worker fails.
    pub fn likeness(&self, mock: RgbaImage, page: RgbaImage, f: impl FnOnce(LikenessReport) + 'static) {
        let job = self.inner.asked.likeness(Box::new(f));
        self.inner.send(&WorkerRequest::Likeness { job, mock, page });
    }

    /// The gateway's preview packages (its `/vendor/manifest.json`), once they are in.
    pub fn packages(&self) -> Option<PreviewPackages> {
        self.inner.packages.borrow().clone()
    }

    /// Budget reports go to `f` from now on.
    pub fn on_budget(&self, f: impl Fn(BudgetReport) + 'static) {
        *self.inner.on_budget.borrow_mut() = Some(Rc::new(f));
    }
}

/// [`use_gateway_with_options`] with the defaults.
pub fn use_gateway()
-> UseGatewayReturn<impl Fn(StartRequest, StreamHandler) -> StreamId + Clone, impl Fn(StreamId) + Clone> {
    use_gateway_with_options(UseGatewayOptions::default())
}

/// Starts the worker and its gateway connection; it closes when the calling component is cleaned
/// up.
pub fn use_gateway_with_options(
    options: UseGatewayOptions,
) -> UseGatewayReturn<impl Fn(StartRequest, StreamHandler) -> StreamId + Clone, impl Fn(StreamId) + Clone> {
    let url = options.url.clone().unwrap_or_else(|| {
        let (protocol, host) = page_origin();
        socket_url(&protocol, &host, "/ws")
    });
    let problem = RwSignal::new(None);
    let inner = Rc::new_cyclic(|weak: &std::rc::Weak<Inner>| {
        let weak = weak.clone();
        let lost = weak.clone();
        let worker = ParserWorker::spawn(
            WORKER_URL,
            move |response| {
                if let Some(inner) = weak.upgrade() {
                    on_response(&inner, response);
                }
            },
            move || {
                if let Some(inner) = lost.upgrade() {
                    on_worker_lost(&inner);
                }
            },
        );
        let worker = worker
            .map_err(|err| {
                leptos::logging::error!("Flint: {err}");
                problem.set(Some(ConnectionProblem::said(
                    "This browser could not start Flint's worker, which holds the connection: reload the \
                     page, or try another browser.",
                )));
            })
            .ok();
        Inner {
            worker,
            connect: RefCell::new(None),
            keys: RefCell::new(BTreeMap::new()),
            packages: RefCell::new(None),
            asked: Asked::default(),
            handlers: RefCell::new(BTreeMap::new()),
            next_id: Cell::new(1),
            own_gateway: options.url.is_none(),
            on_budget: RefCell::new(None),
            state: RwSignal::new(ConnectionState::Connecting),
            retry_in_ms: RwSignal::new(None),
            gateway_version: RwSignal::new(None),
            history_sync: RwSignal::new(None),
            problem,
            quota: RwSignal::new(None),
        }
    });
    let connect = ConnectSettings {
        url,
        base_delay_ms: options.base_delay_ms,
        max_delay_ms: options.max_delay_ms,
        ping_interval_ms: options.ping_interval_ms,
        online: online(),
    };
    inner.send(&WorkerRequest::Connect(connect.clone()));
    *inner.connect.borrow_mut() = Some(connect);
    fetch_packages(&inner);

    // A worker hears `online`/`offline` too, but only the page's are the ones the person sees.
    let for_online = SendWrapper::new(Rc::clone(&inner));
    let on_online = window_event_listener(leptos::ev::online, move |_| {
        for_online.send(&WorkerRequest::Online { online: true });
    });
    let for_offline = SendWrapper::new(Rc::clone(&inner));
    let on_offline = window_event_listener(leptos::ev::offline, move |_| {
        for_offline.send(&WorkerRequest::Online { online: false });
    });
    on_cleanup(move || {
        on_online.remove();
        on_offline.remove();
    });

    let for_start = SendWrapper::new(Rc::clone(&inner));
    let start = move |mut request: StartRequest, handler: StreamHandler| {
        let id = for_start.next_id.get();
        for_start.next_id.set(id.wrapping_add(1).max(1));
        request.stream = id;
        for_start.handlers.borrow_mut().insert(id, handler);
        for_start.send(&WorkerRequest::Start(request));
        id
    };
    let for_cancel = SendWrapper::new(Rc::clone(&inner));
    let cancel = move |stream: StreamId| for_cancel.send(&WorkerRequest::Cancel { stream });
    let for_key = SendWrapper::new(Rc::clone(&inner));
    let use_key = Callback::new(move |(provider, key): (String, Option<Secret>)| {
        for_key.keys.borrow_mut().insert(provider.clone(), key.clone());
        for_key.send(&WorkerRequest::UseKey { provider, key });
    });

    UseGatewayReturn {
        state: inner.state.into(),
        retry_in_ms: inner.retry_in_ms.into(),
        gateway_version: inner.gateway_version.into(),
        history_sync: inner.history_sync.into(),
        problem: inner.problem.into(),
        quota: inner.quota.into(),
        start,
        cancel,
        use_key,
        worker: WorkerLink { inner },
    }
}

fn on_response(inner: &Rc<Inner>, response: WorkerResponse) {
    match response {
        WorkerResponse::Lanes { lanes } => {
            for lane in lanes {
                let stream = lane.stream;
                let handler = inner.handlers.borrow().get(&stream).cloned();
                let Some(handler) = handler else { continue };
                let (events, ended) = StreamEvent::of_update(lane);
                if ended {
                    inner.handlers.borrow_mut().remove(&stream);
                }
                for event in events {
                    handler(event);
                }
            }
        }
        WorkerResponse::Connection(report) => on_connection(inner, report),
        WorkerResponse::Gateway { frame } => match ConnectionNews::of(frame) {
            ConnectionNews::Hello { gateway, history, problem } => {
                inner.gateway_version.set(Some(gateway));
                // Set on every greeting, changed or not: a reconnect is when queued changes go out.
                inner.history_sync.set(Some(history));
                inner.problem.set(problem);
            }
            ConnectionNews::Problem(problem) => {
                leptos::logging::warn!("Flint: the gateway rejected a frame: {}", problem.text);
                inner.problem.set(Some(problem));
            }
            ConnectionNews::Quota(quota) => inner.quota.set(Some((quota, now_ms()))),
            ConnectionNews::Nothing => {}
        },
        WorkerResponse::Budget(report) => {
            let on_budget = inner.on_budget.borrow().clone();
            if let Some(on_budget) = on_budget {
                on_budget(report);
            }
        }
        WorkerResponse::Page { id, page, problems, shape } => {
            inner.asked.page_built(id, page.map(|page| (page, shape.unwrap_or_default())).ok_or(problems));
        }
        WorkerResponse::Likeness(report) => inner.asked.likeness_done(report),
        WorkerResponse::Ready => {}
    }
}

/// The gateway's preview packages (what a React project's imports resolve to), for the worker.
/// A gateway that has not built them answers 404: a project's page then says how to build them.
fn fetch_packages(inner: &Rc<Inner>) {
    let weak = SendWrapper::new(Rc::downgrade(inner));
    leptos::task::spawn_local(async move {
        let fetched = get_json::<PreviewPackages>("/vendor/manifest.json").await;
        let Some(inner) = weak.upgrade() else { return };
        match fetched {
            Ok(packages) => {
                inner.send(&WorkerRequest::Packages(packages.clone()));
                *inner.packages.borrow_mut() = Some(packages);
            }
            Err(err) => leptos::logging::log!("Flint: no preview packages ({err}); React previews need them"),
        }
        for request in inner.asked.packages_in() {
            inner.send(&request);
        }
    });
}

/// The worker failed and a new one took its place: the socket and every running answer went with
/// the old one. Each answer ends with a sentence (the page keeps what it showed), and the new
/// worker is told where to connect and which keys to use.
fn on_worker_lost(inner: &Rc<Inner>) {
    leptos::logging::warn!("Flint: the parser worker failed; a new one was started");
    inner.state.set(ConnectionState::Connecting);
    if let Some(connect) = inner.connect.borrow().clone() {
        inner.send(&WorkerRequest::Connect(ConnectSettings { online: online(), ..connect }));
    }
    for (provider, key) in inner.keys.borrow().iter() {
        inner.send(&WorkerRequest::UseKey { provider: provider.clone(), key: key.clone() });
    }
    if let Some(packages) = inner.packages.borrow().clone() {
        inner.send(&WorkerRequest::Packages(packages));
    }
    let lost = std::mem::take(&mut *inner.handlers.borrow_mut());
    for handler in lost.into_values() {
        handler(StreamEvent::Failed { code: None, message: WORKER_LOST.to_owned() });
    }
    inner.asked.worker_lost();
}

/// What a running answer says when the worker holding it failed.
const WORKER_LOST: &str = "Flint's page worker stopped (a fault in Flint, not in the model), and this answer \
                           with it. What it wrote so far is kept: press Run to ask again.";

fn on_connection(inner: &Rc<Inner>, report: ConnectionReport) {
    inner.state.set(report.state);
    inner.retry_in_ms.set(report.retry_in_ms);
    if report.ask_why && inner.own_gateway {
        ask_why_refused(inner);
    }
}

/// A socket that cannot open may have been refused: a browser hides the 403 (or the 401 of a
/// missing sign-in) from the page and the worker, so ask the gateway's access probe, whose refusal
/// says what to change. Asked once per outage, on the second failure in a row (a first one is
/// often a gateway still starting).
fn ask_why_refused(inner: &Rc<Inner>) {
    let weak = SendWrapper::new(Rc::downgrade(inner));
    leptos::task::spawn_local(async move {
        let problem = match post_empty("/api/access").await {
            Err(FetchError::Refused { status: 403, message, .. }) => {
                ConnectionProblem::said(format!("The gateway refused this page: {message}"))
            }
            Err(FetchError::Refused { status: 401, message, .. }) => {
                ConnectionProblem { text: format!("The gateway needs a sign-in: {message}"), sign_in: true }
            }
            _ => return,
        };
        if let Some(inner) = weak.upgrade() {
            inner.problem.set(Some(problem));
        }
    });
}
