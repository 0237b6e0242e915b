//! A WebSocket carrying text frames, with Rust callbacks instead of JS event handlers.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{CloseEvent, MessageEvent, WebSocket};

/// Why a socket could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// The browser refused the URL.
    #[error("cannot open a WebSocket to {url}: {reason}")]
    Open {
        /// The URL.
        url: String,
        /// The browser's explanation.
        reason: String,
    },
    /// The frame could not be sent.
    #[error("cannot send on the WebSocket: {0}")]
    Send(String),
}

/// What the socket reports.
pub struct SocketCallbacks {
    /// The connection is open.
    pub on_open: Box<dyn FnMut()>,
    /// A text frame arrived.
    pub on_text: Box<dyn FnMut(String)>,
    /// The connection closed (or never opened), with the close code and reason.
    pub on_close: Box<dyn FnMut(u16, String)>,
}

/// An open or opening WebSocket. Dropping it closes the connection without calling `on_close`.
pub struct Socket {
    ws: WebSocket,
    _on_open: Closure<dyn FnMut()>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
}

fn describe(err: &JsValue) -> String {
    err.as_string()
        .or_else(|| err.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())))
        .unwrap_or_else(|| format!("{err:?}"))
}

impl Socket {
    /// Starts connecting to `url`.
    pub fn connect(url: &str, callbacks: SocketCallbacks) -> Result<Self, SocketError> {
        let ws = WebSocket::new(url)
            .map_err(|e| SocketError::Open { url: url.to_owned(), reason: describe(&e) })?;
        let SocketCallbacks { on_open, mut on_text, mut on_close } = callbacks;
        let open = Closure::<dyn FnMut()>::new(on_open);
        let message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            // The gateway only sends text frames; binary ones are not part of the protocol.
            if let Some(text) = event.data().as_string() {
                on_text(text);
            }
        });
        let close = Closure::<dyn FnMut(CloseEvent)>::new(move |event: CloseEvent| {
            on_close(event.code(), event.reason());
        });
        ws.set_onopen(Some(open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(message.as_ref().unchecked_ref()));
        ws.set_onclose(Some(close.as_ref().unchecked_ref()));
        Ok(Self { ws, _on_open: open, _on_message: message, _on_close: close })
    }

    /// Whether frames sent now go out: a socket still connecting throws, and one closing drops
    /// them without a word.
    pub fn is_open(&self) -> bool {
        self.ws.ready_state() == WebSocket::OPEN
    }

    /// Sends one text frame.
    pub fn send(&self, text: &str) -> Result<(), SocketError> {
        self.ws.send_with_str(text).map_err(|e| SocketError::Send(describe(&e)))
    }

    /// Closes the connection; `on_close` follows.
    pub fn close(&self) {
        // Closing an already closing socket is harmless; the error case is only a bad code.
        let _ = self.ws.close();
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
    }
}
