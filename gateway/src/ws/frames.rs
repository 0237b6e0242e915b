//! Server frames serialised once, straight into the bytes the socket sends.

use axum::extract::ws::Utf8Bytes;
use flint_protocol::{ErrorCode, ServerMessage, StreamId};
use serde::Serialize;

/// A frame for the connection loop to send, from a stream task.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The stream it belongs to.
    pub stream: StreamId,
    /// The serialised frame.
    pub frame: Utf8Bytes,
    /// A delta's `seq`: where a resuming page says it got to.
    pub seq: Option<u32>,
    /// `Done` or `Error`: the stream is over once this is sent.
    pub last: bool,
}

/// `ServerMessage::Delta` borrowing its text, so a flush does not copy the pending buffer.
#[derive(Serialize)]
#[serde(tag = "type", rename = "delta")]
struct DeltaRef<'a> {
    stream: StreamId,
    seq: u32,
    text: &'a str,
}

/// Serialises a delta frame.
pub(crate) fn delta(stream: StreamId, seq: u32, text: &str) -> Utf8Bytes {
    let mut out = Vec::with_capacity(text.len() + 48);
    match serde_json::to_writer(&mut out, &DeltaRef { stream, seq, text }) {
        Ok(()) => String::from_utf8(out).map(Utf8Bytes::from).unwrap_or_else(|_| internal(stream)),
        Err(_) => internal(stream),
    }
}

/// Serialises any server frame.
pub(crate) fn encode(message: &ServerMessage) -> Utf8Bytes {
    match serde_json::to_string(message) {
        Ok(json) => Utf8Bytes::from(json),
        // Serialising these types cannot fail (no maps with non-string keys, no custom impls).
        Err(_) => Utf8Bytes::from_static(
            r#"{"type":"error","code":"internal","message":"the gateway could not encode a frame"}"#,
        ),
    }
}

/// An error frame.
pub(crate) fn error(stream: Option<StreamId>, code: ErrorCode, message: impl Into<String>) -> Utf8Bytes {
    encode(&ServerMessage::Error { stream, code, message: message.into(), retry_after_ms: None })
}

fn internal(stream: StreamId) -> Utf8Bytes {
    error(Some(stream), ErrorCode::Internal, "the gateway could not encode a frame")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_delta_is_a_protocol_delta() {
        let frame = delta(3, 9, "<p class=\"x\">é\n");
        let parsed: ServerMessage = serde_json::from_str(frame.as_str()).expect("valid frame");
        assert_eq!(parsed, ServerMessage::Delta { stream: 3, seq: 9, text: "<p class=\"x\">é\n".into() });
    }
}
