//! Messages between the page and Flint's web worker.
//!
//! The page forwards each stream's text to the worker; the worker parses it into files and hands back
//! at most one [`WorkerResponse::Parsed`] per stream per display frame.

use serde::{Deserialize, Serialize};

use crate::StreamId;

/// From the page to the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerRequest {
    /// Forget any text of this stream and start over (a new generation, or a retry).
    Reset {
        /// The stream.
        stream: StreamId,
        /// Only previews until the end: the code is sent whole with the last update. For tiles,
        /// which show a page, not code, while they stream.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        preview_only: bool,
    },
    /// More text of a stream, in order.
    Append {
        /// The stream.
        stream: StreamId,
        /// Text to append.
        text: String,
    },
    /// The stream ended; send the final parse at once.
    Finish {
        /// The stream.
        stream: StreamId,
    },
}

/// From the worker to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerResponse {
    /// The worker's wasm is initialised; requests posted before this are lost.
    Ready,
    /// The current parse of a stream.
    Parsed(ParsedUpdate),
}

/// A stream's parse since the previous update.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParsedUpdate {
    /// The stream.
    pub stream: StreamId,
    /// Text to append to the editor's code (the answer's main file).
    pub code_append: String,
    /// When true, clear the editor before appending (the main file changed).
    pub code_reset: bool,
    /// Language of the main file (`html`, `css`, `javascript`, `markdown`…).
    pub language: String,
    /// The whole HTML document to preview, when it changed; CSS and JS files are inlined into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// True on the stream's last update.
    pub done: bool,
    /// Every file of the answer, on the last update only (for export).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<AnswerFile>,
}

/// One file of a finished answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerFile {
    /// The name the answer gave it (```` ```css style.css ````), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its language (`html`, `css`, `javascript`…).
    pub language: String,
    /// Its text.
    pub content: String,
    /// The file the editor shows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub main: bool,
}
