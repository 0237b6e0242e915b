//! The worker's WebSocket to the gateway: connects, keeps each stream's sequence and resume state
//! ([`Streams`]), reconnects with backoff, pings, and replaces a silent connection. Text goes to
//! the parser; other frames and the connection's state go to the page (see [`LinkEvent`]).
//!
//! A worker's socket is the page's: same origin, same cookies, and the gateway's own-origin check
//! sees the page's `Origin`. The person's own keys pass through here to the gateway and nowhere
//! else; they are never logged.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use flint_protocol::worker::{ConnectSettings, ConnectionReport, ConnectionState, LaneEvent};
use flint_protocol::{ClientMessage, Secret, ServerMessage, StartRequest, StreamId};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{CloseEvent, DedicatedWorkerGlobalScope, MessageEvent, WebSocket};

use crate::backoff::reconnect_delay_ms;
use crate::streams::{Routed, Streams};

/// How long streams wait for a lost connection to come back and resume them before they fail:
/// past the gateway's default grace period (`server.resume_grace_secs`, 30 s), it has let them go.
const GIVE_UP_RESUMING_MS: f64 = 45_000.0;

/// What the link tells the worker.
pub enum LinkEvent {
    /// Text of a stream, in order.
    Text(StreamId, String),
    /// Anything else about a stream.
    Stream(StreamId, LaneEvent),
    /// A frame about the connection.
    Gateway(ServerMessage),
    /// The connection's state changed.
    Connection(ConnectionReport),
}

type Handlers = (Closure<dyn FnMut()>, Closure<dyn FnMut(MessageEvent)>, Closure<dyn FnMut(CloseEvent)>);

struct Socket {
    ws: WebSocket,
    _handlers: Handlers,
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
    }
}

/// The connection; made by [`Link::connect`], it lives as long as the worker.
pub struct Link {
    scope: DedicatedWorkerGlobalScope,
    settings: ConnectSettings,
    sink: Box<dyn Fn(LinkEvent)>,
    streams: RefCell<Streams<StreamId>>,
    socket: RefCell<Option<Socket>>,
    /// Counts sockets made: events of a socket that is no longer the current one are ignored.
    generation: Cell<u64>,
    open: Cell<bool>,
    online: Cell<bool>,
    ever_connected: Cell<bool>,
    attempt: Cell<u32>,
    last_seen_ms: Cell<f64>,
    /// When the connection was lost, while it is.
    lost_at_ms: Cell<Option<f64>>,
    nonce: Cell<u64>,
    /// The pending reconnect timer.
    retry: Cell<Option<i32>>,
    this: Weak<Link>,
}

impl Link {
    /// Connects with `settings`; what happens goes to `sink`.
    pub fn connect(
        scope: DedicatedWorkerGlobalScope,
        settings: ConnectSettings,
        sink: impl Fn(LinkEvent) + 'static,
    ) -> Rc<Self> {
        let link = Rc::new_cyclic(|this| Self {
            scope,
            online: Cell::new(settings.online),
            settings,
            sink: Box::new(sink),
            streams: RefCell::new(Streams::default()),
            socket: RefCell::new(None),
            generation: Cell::new(0),
            open: Cell::new(false),
            ever_connected: Cell::new(false),
            attempt: Cell::new(0),
            last_seen_ms: Cell::new(0.0),
            lost_at_ms: Cell::new(None),
            nonce: Cell::new(0),
            retry: Cell::new(None),
            this: this.clone(),
        });
        link.open_socket();
        link.start_pinging();
        link
    }

    /// Starts a stream (its id chosen by the page); its frames wait for the connection.
    pub fn start(&self, request: StartRequest) {
        let id = request.stream;
        self.streams.borrow_mut().open(request, id);
        self.flush();
    }

    /// Stops a stream; one the gateway never heard of ends here.
    pub fn cancel(&self, stream: StreamId) {
        let ended = self.streams.borrow_mut().cancel(stream);
        match ended {
            Some((_, event)) => (self.sink)(LinkEvent::Stream(stream, event)),
            None => self.flush(),
        }
    }

    /// Uses the person's own key for `provider` (`None`: the gateway's) on every connection.
    pub fn use_key(&self, provider: &str, key: Option<Secret>) {
        self.streams.borrow_mut().use_key(provider, key);
        self.flush();
    }

    /// The browser went online or offline.
    pub fn set_online(&self, online: bool) {
        self.online.set(online);
        if self.open.get() {
            return;
        }
        if online {
            self.attempt.set(0);
            self.open_socket();
        } else {
            self.report(ConnectionState::Offline, None, false);
        }
    }

    fn now(&self) -> f64 {
        self.scope.performance().map_or(0.0, |p| p.now())
    }

    fn report(&self, state: ConnectionState, retry_in_ms: Option<u32>, ask_why: bool) {
        (self.sink)(LinkEvent::Connection(ConnectionReport { state, retry_in_ms, ask_why }));
    }

    fn open_socket(&self) {
        if let Some(retry) = self.retry.take() {
            self.scope.clear_timeout_with_handle(retry);
        }
        let waiting = self.ever_connected.get() || self.attempt.get() > 0;
        let state = if waiting { ConnectionState::Reconnecting } else { ConnectionState::Connecting };
        self.report(state, None, false);
        // A socket made now replaces any other: from here on only its events count.
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        self.open.set(false);
        let ws = match WebSocket::new(&self.settings.url) {
            Ok(ws) => ws,
            Err(err) => {
                web_sys::console::warn_2(&"flint-worker: cannot open the WebSocket".into(), &err);
                self.schedule_reconnect(false);
                return;
            }
        };
        let current = move |this: &Weak<Link>| this.upgrade().filter(|l| l.generation.get() == generation);
        let this = self.this.clone();
        let on_open = Closure::<dyn FnMut()>::new(move || {
            if let Some(link) = current(&this) {
                link.on_open();
            }
        });
        let this = self.this.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            // The gateway only sends text frames; binary ones are not part of the protocol.
            if let (Some(link), Some(text)) = (current(&this), event.data().as_string()) {
                link.on_text(&text);
            }
        });
        let this = self.this.clone();
        let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |event: CloseEvent| {
            if let Some(link) = current(&this) {
                link.on_close(event.code(), &event.reason());
            }
        });
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        // Replacing a socket drops the old one, which detaches its handlers first.
        self.socket.replace(Some(Socket { ws, _handlers: (on_open, on_message, on_close) }));
    }

    fn on_open(&self) {
        self.open.set(true);
        self.ever_connected.set(true);
        self.attempt.set(0);
        self.last_seen_ms.set(self.now());
        self.lost_at_ms.set(None);
        self.report(ConnectionState::Connected, None, false);
        self.flush();
    }

    fn on_text(&self, text: &str) {
        self.last_seen_ms.set(self.now());
        let message = match serde_json::from_str::<ServerMessage>(text) {
            Ok(message) => message,
            Err(err) => {
                let warning =
                    format!("flint-worker: ignoring a frame the worker does not understand ({err})");
                web_sys::console::warn_1(&warning.into());
                return;
            }
        };
        let routed = self.streams.borrow_mut().route(message);
        match routed {
            Routed::Text { handler, text, gap } => {
                if gap {
                    web_sys::console::warn_1(
                        &"flint-worker: a stream skipped a sequence number; text may be missing".into(),
                    );
                }
                (self.sink)(LinkEvent::Text(handler, text));
            }
            Routed::Frame { handler, frame } => {
                (self.sink)(LinkEvent::Stream(handler, LaneEvent::Frame(frame)))
            }
            Routed::Connection(frame) => (self.sink)(LinkEvent::Gateway(frame)),
            Routed::Nothing => {}
        }
    }

    fn on_close(&self, code: u16, reason: &str) {
        self.open.set(false);
        // This runs inside the socket's own close handler: drop the socket after it returns.
        if let Some(old) = self.socket.take() {
            let later = Closure::once_into_js(move || drop(old));
            let _ =
                self.scope.set_timeout_with_callback_and_timeout_and_arguments_0(later.unchecked_ref(), 0);
        }
        if self.ever_connected.get() {
            let line = format!("flint-worker: gateway connection closed (code {code} {reason})");
            web_sys::console::log_1(&line.into());
        }
        if self.lost_at_ms.get().is_none() {
            self.lost_at_ms.set(Some(self.now()));
        }
        // With a resume token nothing fails here: the next socket resumes the streams.
        let lost = self.streams.borrow_mut().connection_lost(
            "The connection to the gateway was lost; the text received so far is kept. Run again once it \
             reconnects.",
        );
        for (stream, event) in lost {
            (self.sink)(LinkEvent::Stream(stream, event));
        }
        // Also after a connection that worked: a sign-in may have expired or been revoked meanwhile.
        self.schedule_reconnect(self.attempt.get() == 1);
    }

    fn schedule_reconnect(&self, ask_why: bool) {
        let attempt = self.attempt.get();
        let s = &self.settings;
        let delay = reconnect_delay_ms(attempt, s.base_delay_ms, s.max_delay_ms, js_sys::Math::random());
        self.attempt.set(attempt.saturating_add(1));
        let state = if self.online.get() { ConnectionState::Reconnecting } else { ConnectionState::Offline };
        self.report(state, Some(delay), ask_why);
        let this = self.this.clone();
        let retry = Closure::once_into_js(move || {
            if let Some(link) = this.upgrade() {
                link.retry.set(None);
                link.open_socket();
            }
        });
        match self
            .scope
            .set_timeout_with_callback_and_timeout_and_arguments_0(retry.unchecked_ref(), delay as i32)
        {
            // One reconnect at a time: a second timer would replace the socket the first opened.
            Ok(handle) => {
                if let Some(earlier) = self.retry.replace(Some(handle)) {
                    self.scope.clear_timeout_with_handle(earlier);
                }
            }
            Err(_) => web_sys::console::error_1(&"flint-worker: cannot schedule a reconnect".into()),
        }
    }

    /// Sends what waits in the outbox, if the socket is open. Frames stay queued while it is not:
    /// one sent to a socket that is connecting or closing would be lost, and its stream wait for ever.
    fn flush(&self) {
        if !self.open.get() || !self.streams.borrow().has_outbox() {
            return;
        }
        let socket = self.socket.borrow();
        let Some(socket) = socket.as_ref().filter(|s| s.ws.ready_state() == WebSocket::OPEN) else { return };
        let frames = self.streams.borrow_mut().take_outbox();
        for frame in frames {
            if let Err(err) = socket.ws.send_with_str(&frame) {
                web_sys::console::warn_2(&"flint-worker: cannot send on the WebSocket".into(), &err);
            }
        }
    }

    /// Pings on an interval; a connection silent for two intervals is presumed dead and replaced.
    /// Streams waiting for a connection that stays away fail, their text kept.
    fn start_pinging(&self) {
        let this = self.this.clone();
        let interval = self.settings.ping_interval_ms;
        let tick = Closure::<dyn FnMut()>::new(move || {
            if let Some(link) = this.upgrade() {
                link.ping(interval);
            }
        });
        let ms = interval as i32;
        if self
            .scope
            .set_interval_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), ms)
            .is_err()
        {
            web_sys::console::error_1(&"flint-worker: cannot schedule pings".into());
        }
        // The pings last as long as the worker.
        tick.forget();
    }

    fn ping(&self, interval_ms: u32) {
        if !self.open.get() {
            self.give_up_resuming();
            return;
        }
        let silent_for = self.now() - self.last_seen_ms.get();
        if silent_for > 2.0 * f64::from(interval_ms) {
            // A dead network can hold a polite close for minutes: drop the socket and reconnect now.
            let line = format!("flint-worker: no answer from the gateway for {silent_for:.0} ms");
            web_sys::console::warn_1(&line.into());
            drop(self.socket.take());
            self.on_close(4000, "no answer to pings");
            return;
        }
        let nonce = self.nonce.get().wrapping_add(1);
        self.nonce.set(nonce);
        self.streams.borrow_mut().queue_control(&ClientMessage::Ping { nonce });
        self.flush();
    }

    fn give_up_resuming(&self) {
        let Some(lost_at) = self.lost_at_ms.get() else { return };
        if self.now() - lost_at < GIVE_UP_RESUMING_MS {
            return;
        }
        let failed = self.streams.borrow_mut().give_up_resuming(
            "The connection to the gateway stayed away too long to pick this answer up again; the text \
             received so far is kept. Run again once it reconnects.",
        );
        for (stream, event) in failed {
            (self.sink)(LinkEvent::Stream(stream, event));
        }
    }
}
