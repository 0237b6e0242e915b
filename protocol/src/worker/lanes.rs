//! The worker's side of the gateway connection, as the page sees it: how to connect, the
//! connection's state, and one merged [`LaneUpdate`] per stream per display frame.
//!
//! The worker owns the socket: it keeps each stream's sequence and resume state and feeds the text
//! straight into its parser. The page hears only what it shows: frames other than text, forwarded
//! as they came ([`LaneEvent::Frame`], whatever their kind, so a new kind needs no change here),
//! how much text arrived (for the speed figures), and the parse.

use serde::{Deserialize, Serialize};

use super::ParsedUpdate;
use crate::{ServerMessage, StreamId};

/// Where and how the worker connects (the page knows its own origin and options).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectSettings {
    /// The WebSocket URL.
    pub url: String,
    /// First reconnect delay in milliseconds (doubled per failed attempt).
    pub base_delay_ms: u32,
    /// Longest reconnect delay in milliseconds.
    pub max_delay_ms: u32,
    /// How often to ping; a connection silent for two intervals is replaced.
    pub ping_interval_ms: u32,
    /// Whether the browser says it is online now.
    pub online: bool,
}

/// The state of the tab's gateway connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionState {
    /// The first connection attempt is under way.
    #[default]
    Connecting,
    /// The socket is open.
    Connected,
    /// The connection was lost or refused; a retry is scheduled or under way.
    Reconnecting,
    /// The browser reports no network; retries continue when it returns.
    Offline,
}

impl ConnectionState {
    /// The word shown in the status (end-to-end tests match on it).
    pub fn label(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Reconnecting => "reconnecting",
            Self::Offline => "offline",
        }
    }
}

/// What the connection is doing, sent when it changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionReport {
    /// Its state.
    pub state: ConnectionState,
    /// While waiting to reconnect: the delay chosen, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_in_ms: Option<u32>,
    /// The socket failed to open twice in a row: the page should ask the gateway why (a browser
    /// hides a refused handshake's status from the page and the worker alike).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_why: bool,
}

/// Something that happened to a stream, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "frame", rename_all = "snake_case")]
pub enum LaneEvent {
    /// A frame of the gateway's about this stream, other than text (queued, started, done,
    /// error, and any kind added later), as it came.
    Frame(ServerMessage),
    /// The connection was lost and the stream cannot be resumed: it failed, its text kept.
    Lost(String),
    /// It was stopped before the gateway ever heard of it.
    Cancelled,
}

/// One stream's news since its previous update: at most one per stream per display frame, all of
/// them in one message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaneUpdate {
    /// The stream.
    pub stream: StreamId,
    /// Bytes of answer text received since the previous update (the parse below has them).
    #[serde(default)]
    pub text_bytes: u64,
    /// Frames other than text, in order; they come after the text counted above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<LaneEvent>,
    /// The parse since the previous update, applied after the events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parsed: Option<ParsedUpdate>,
}

/// The stream a gateway frame belongs to; `None` for connection-level frames. A match, not a look
/// at the serialized `stream` field: it runs for every frame the worker forwards (thinking frames
/// up to once a display frame), and a kind added later must be placed here by the compiler.
pub fn frame_stream(frame: &ServerMessage) -> Option<StreamId> {
    match frame {
        ServerMessage::Queued { stream, .. }
        | ServerMessage::Started { stream, .. }
        | ServerMessage::Delta { stream, .. }
        | ServerMessage::Thinking { stream, .. }
        | ServerMessage::Stalled { stream, .. }
        | ServerMessage::Done { stream, .. } => Some(*stream),
        ServerMessage::Error { stream, .. } => *stream,
        ServerMessage::Hello { .. } | ServerMessage::Quota { .. } | ServerMessage::Pong { .. } => None,
    }
}

/// Whether a frame ends its stream (no more frames of it follow).
pub fn frame_is_final(frame: &ServerMessage) -> bool {
    matches!(frame, ServerMessage::Done { .. } | ServerMessage::Error { stream: Some(_), .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorCode, FinishReason};

    #[test]
    fn frames_are_routed_by_their_stream_field() {
        let queued = ServerMessage::Queued { stream: 4, ahead: 2 };
        assert_eq!(frame_stream(&queued), Some(4));
        assert!(!frame_is_final(&queued));
        let quota = ServerMessage::Quota { used: 1, limit: 2, resets_in_ms: 3 };
        assert_eq!(frame_stream(&quota), None);
        let failed = ServerMessage::Error {
            stream: Some(9),
            code: ErrorCode::UpstreamUnavailable,
            message: "x".into(),
            retry_after_ms: None,
        };
        assert_eq!(frame_stream(&failed), Some(9));
        assert!(frame_is_final(&failed));
        let done = ServerMessage::Done {
            stream: 1,
            finish: FinishReason::Stop,
            usage: Default::default(),
            metrics: Default::default(),
        };
        assert!(frame_is_final(&done));
    }

    #[test]
    fn lane_updates_round_trip() {
        let update = LaneUpdate {
            stream: 3,
            text_bytes: 12,
            events: vec![
                LaneEvent::Frame(ServerMessage::Started {
                    stream: 3,
                    provider: "p".into(),
                    model: "m".into(),
                }),
                LaneEvent::Lost("gone".into()),
                LaneEvent::Cancelled,
            ],
            parsed: None,
        };
        let json = serde_json::to_string(&update).expect("serialises");
        assert_eq!(serde_json::from_str::<LaneUpdate>(&json).expect("parses"), update);
    }
}
