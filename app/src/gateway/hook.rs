//! `use_gateway()`: the tab's one WebSocket to the gateway, shared by every generation.
//!
//! The socket lives on the main thread. The gateway coalesces each stream to about one frame per
//! display frame, so even several 50k tokens/s streams are a few hundred small messages per second —
//! far below the ~13k messages/s the main thread parses — and moving the socket into the worker would
//! only add a hop. The parse into files does run in the worker (see `interop::worker`).

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use flint_protocol::{PROTOCOL_VERSION, Secret, ServerMessage, StartRequest, StreamId};
use leptos::prelude::*;
use send_wrapper::SendWrapper;

use super::backoff::reconnect_delay_ms;
use super::streams::{Quota, Routed, StreamEvent, Streams};
use super::{ConnectionProblem, ConnectionState, UseGatewayOptions, socket_url};
use crate::interop::http::{FetchError, post_empty};
use crate::interop::socket::{Socket, SocketCallbacks};
use crate::interop::{now_ms, online, page_origin, random};

mod keepalive;

use keepalive::start_pinging;

/// Receives one stream's events.
pub type StreamHandler = Rc<dyn Fn(StreamEvent)>;

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
    /// Starts a generation (`request.stream` is ignored and assigned); events go to the handler.
    /// Requests made while disconnected wait for the connection.
    pub start: StartFn,
    /// Stops a generation; its handler still receives the final `Done`.
    pub cancel: CancelFn,
    /// Uses the person's own key for a provider (`None`: the gateway's), on every connection.
    pub use_key: Callback<(String, Option<Secret>)>,
}

struct Inner {
    url: String,
    options: UseGatewayOptions,
    streams: RefCell<Streams<StreamHandler>>,
    socket: RefCell<Option<Socket>>,
    /// Counts sockets made: events of a socket that is no longer the current one are ignored.
    generation: Cell<u64>,
    open: Cell<bool>,
    ever_connected: Cell<bool>,
    attempt: Cell<u32>,
    last_seen_ms: Cell<f64>,
    /// When the connection was lost, while it is.
    lost_at_ms: Cell<Option<f64>>,
    nonce: Cell<u64>,
    retry: RefCell<Option<TimeoutHandle>>,
    ping: RefCell<Option<IntervalHandle>>,
    disposed: Cell<bool>,
    state: RwSignal<ConnectionState>,
    retry_in_ms: RwSignal<Option<u32>>,
    gateway_version: RwSignal<Option<String>>,
    history_sync: RwSignal<Option<bool>>,
    problem: RwSignal<Option<ConnectionProblem>>,
    quota: RwSignal<Option<(Quota, f64)>>,
}

/// [`use_gateway_with_options`] with the defaults.
pub fn use_gateway()
-> UseGatewayReturn<impl Fn(StartRequest, StreamHandler) -> StreamId + Clone, impl Fn(StreamId) + Clone> {
    use_gateway_with_options(UseGatewayOptions::default())
}

/// Opens the tab's gateway connection; it closes when the calling component is cleaned up.
pub fn use_gateway_with_options(
    options: UseGatewayOptions,
) -> UseGatewayReturn<impl Fn(StartRequest, StreamHandler) -> StreamId + Clone, impl Fn(StreamId) + Clone> {
    let url = options.url.clone().unwrap_or_else(|| {
        let (protocol, host) = page_origin();
        socket_url(&protocol, &host, "/ws")
    });
    let inner = Rc::new(Inner {
        url,
        options,
        streams: RefCell::new(Streams::default()),
        socket: RefCell::new(None),
        generation: Cell::new(0),
        open: Cell::new(false),
        ever_connected: Cell::new(false),
        attempt: Cell::new(0),
        last_seen_ms: Cell::new(0.0),
        lost_at_ms: Cell::new(None),
        nonce: Cell::new(0),
        retry: RefCell::new(None),
        ping: RefCell::new(None),
        disposed: Cell::new(false),
        state: RwSignal::new(ConnectionState::Connecting),
        retry_in_ms: RwSignal::new(None),
        gateway_version: RwSignal::new(None),
        history_sync: RwSignal::new(None),
        problem: RwSignal::new(None),
        quota: RwSignal::new(None),
    });
    connect(&inner);
    start_pinging(&inner);

    let weak = Rc::downgrade(&inner);
    let on_online = window_event_listener(leptos::ev::online, move |_| {
        if let Some(inner) = weak.upgrade()
            && !inner.open.get()
        {
            inner.attempt.set(0);
            connect(&inner);
        }
    });
    let weak = Rc::downgrade(&inner);
    let on_offline = window_event_listener(leptos::ev::offline, move |_| {
        if let Some(inner) = weak.upgrade()
            && !inner.open.get()
        {
            inner.state.set(ConnectionState::Offline);
        }
    });

    let for_cleanup = SendWrapper::new(Rc::clone(&inner));
    on_cleanup(move || {
        for_cleanup.disposed.set(true);
        if let Some(retry) = for_cleanup.retry.take() {
            retry.clear();
        }
        if let Some(ping) = for_cleanup.ping.take() {
            ping.clear();
        }
        for_cleanup.socket.take();
        on_online.remove();
        on_offline.remove();
    });

    let for_start = SendWrapper::new(Rc::clone(&inner));
    let start = move |request: StartRequest, handler: StreamHandler| {
        let id = for_start.streams.borrow_mut().open(request, handler);
        flush(&for_start);
        id
    };
    let for_cancel = SendWrapper::new(inner.clone());
    let cancel = move |stream: StreamId| {
        let ended = for_cancel.streams.borrow_mut().cancel(stream);
        match ended {
            Some((handler, event)) => handler(event),
            None => flush(&for_cancel),
        }
    };

    let for_key = SendWrapper::new(inner.clone());
    let use_key = Callback::new(move |(provider, key): (String, Option<Secret>)| {
        for_key.streams.borrow_mut().use_key(&provider, key);
        flush(&for_key);
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
    }
}

fn connect(inner: &Rc<Inner>) {
    if inner.disposed.get() {
        return;
    }
    if let Some(retry) = inner.retry.take() {
        retry.clear();
    }
    inner.retry_in_ms.set(None);
    let waiting = inner.ever_connected.get() || inner.attempt.get() > 0;
    inner.state.set(if waiting { ConnectionState::Reconnecting } else { ConnectionState::Connecting });
    // A socket made now replaces any other: from here on only its events count.
    let generation = inner.generation.get() + 1;
    inner.generation.set(generation);
    inner.open.set(false);
    let (w_open, w_text, w_close) = (Rc::downgrade(inner), Rc::downgrade(inner), Rc::downgrade(inner));
    let callbacks = SocketCallbacks {
        on_open: Box::new(move || with_current(&w_open, generation, on_open)),
        on_text: Box::new(move |text| with_current(&w_text, generation, |inner| on_text(inner, &text))),
        on_close: Box::new(move |code, reason| {
            with_current(&w_close, generation, |inner| on_close(inner, code, &reason))
        }),
    };
    match Socket::connect(&inner.url, callbacks) {
        Ok(socket) => {
            // Replacing a socket drops the old one, which detaches its handlers first.
            inner.socket.replace(Some(socket));
        }
        Err(err) => {
            leptos::logging::warn!("{err}");
            schedule_reconnect(inner);
        }
    }
}

fn with(weak: &Weak<Inner>, f: impl FnOnce(&Rc<Inner>)) {
    if let Some(inner) = weak.upgrade() {
        f(&inner);
    }
}

/// Runs `f` for an event of socket `generation`, unless a newer socket replaced it.
fn with_current(weak: &Weak<Inner>, generation: u64, f: impl FnOnce(&Rc<Inner>)) {
    if let Some(inner) = weak.upgrade()
        && inner.generation.get() == generation
    {
        f(&inner);
    }
}

fn on_open(inner: &Rc<Inner>) {
    inner.open.set(true);
    inner.ever_connected.set(true);
    inner.attempt.set(0);
    inner.last_seen_ms.set(now_ms());
    inner.lost_at_ms.set(None);
    inner.state.set(ConnectionState::Connected);
    flush(inner);
}

fn on_text(inner: &Rc<Inner>, text: &str) {
    inner.last_seen_ms.set(now_ms());
    let message = match serde_json::from_str::<ServerMessage>(text) {
        Ok(message) => message,
        Err(err) => {
            leptos::logging::warn!("Flint: ignoring a frame the app does not understand ({err})");
            return;
        }
    };
    let routed = inner.streams.borrow_mut().route(message);
    match routed {
        Routed::Stream { handler, event, gap } => {
            if gap {
                leptos::logging::warn!("Flint: a stream skipped a sequence number; text may be missing");
            }
            handler(event);
        }
        Routed::Hello { protocol, gateway, history } => {
            inner.gateway_version.set(Some(gateway));
            // Set on every greeting, changed or not: a reconnect is when queued changes go out.
            inner.history_sync.set(Some(history));
            inner.problem.set((protocol != PROTOCOL_VERSION).then(|| {
                ConnectionProblem::said(format!(
                    "The gateway speaks protocol {protocol} and this page protocol {PROTOCOL_VERSION}: \
                     reload the page."
                ))
            }));
        }
        Routed::ConnectionError { code, message } => {
            leptos::logging::warn!("Flint: the gateway rejected a frame ({code:?}): {message}");
            inner.problem.set(Some(ConnectionProblem::said(message)));
        }
        Routed::Quota(quota) => inner.quota.set(Some((quota, now_ms()))),
        Routed::Nothing => {}
    }
}

fn on_close(inner: &Rc<Inner>, code: u16, reason: &str) {
    inner.open.set(false);
    // This runs inside the socket's own close handler: drop the socket after it returns.
    if let Some(old) = inner.socket.take() {
        set_timeout(move || drop(old), Duration::ZERO);
    }
    if inner.ever_connected.get() {
        leptos::logging::log!("Flint: gateway connection closed (code {code} {reason})");
    }
    if inner.lost_at_ms.get().is_none() {
        inner.lost_at_ms.set(Some(now_ms()));
    }
    // With a resume token nothing fails here: the next socket resumes the streams.
    let lost = inner.streams.borrow_mut().connection_lost(
        "The connection to the gateway was lost; the text received so far is kept. Run again once it \
         reconnects.",
    );
    for (handler, event) in lost {
        handler(event);
    }
    // Also after a connection that worked: a sign-in may have expired or been revoked meanwhile.
    if inner.attempt.get() == 1 {
        ask_why_refused(inner);
    }
    schedule_reconnect(inner);
}

/// A socket that cannot open may have been refused: a browser hides the 403 (or the 401 of a
/// missing sign-in) from the page, so ask the gateway's access probe, whose refusal says what to
/// change. Asked once per outage, on the second failure in a row (a first one is often a gateway
/// still starting).
fn ask_why_refused(inner: &Rc<Inner>) {
    if inner.options.url.is_some() {
        return;
    }
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

fn schedule_reconnect(inner: &Rc<Inner>) {
    if inner.disposed.get() {
        return;
    }
    let attempt = inner.attempt.get();
    let o = &inner.options;
    let delay = reconnect_delay_ms(attempt, o.base_delay_ms, o.max_delay_ms, random());
    inner.attempt.set(attempt.saturating_add(1));
    inner.retry_in_ms.set(Some(delay));
    inner.state.set(if online() { ConnectionState::Reconnecting } else { ConnectionState::Offline });
    let weak = Rc::downgrade(inner);
    let handle =
        set_timeout_with_handle(move || with(&weak, connect), Duration::from_millis(u64::from(delay)));
    match handle {
        Ok(handle) => {
            // One reconnect at a time: a second timer would replace the socket the first opened.
            if let Some(earlier) = inner.retry.borrow_mut().replace(handle) {
                earlier.clear();
            }
        }
        Err(_) => leptos::logging::error!("Flint: cannot schedule a reconnect"),
    }
}

/// Sends what waits in the outbox, if the socket is open. Frames stay queued while it is not: one
/// sent to a socket that is connecting or closing would be lost, and its stream wait for ever.
fn flush(inner: &Rc<Inner>) {
    if !inner.open.get() || !inner.streams.borrow().has_outbox() {
        return;
    }
    let socket = inner.socket.borrow();
    let Some(socket) = socket.as_ref().filter(|s| s.is_open()) else { return };
    let frames = inner.streams.borrow_mut().take_outbox();
    for frame in frames {
        if let Err(err) = socket.send(&frame) {
            leptos::logging::warn!("{err}");
        }
    }
}
