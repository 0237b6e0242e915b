//! Messages between the page and Flint's web worker: one typed pair, checked on receipt.
//!
//! The worker holds the tab's gateway connection ([`WorkerRequest::Connect`], `Start`, `Cancel`,
//! `UseKey`) and parses each stream's text into files as it arrives; it hands back at most one
//! message per display frame, [`WorkerResponse::Lanes`], with each stream's frames, text count and
//! [`ParsedUpdate`] ([`LaneUpdate`]). A stream reset with a `base` file is an edit: the worker
//! applies the answer's search/replace blocks to it as they complete and, at the end, diffs the
//! result against the base for review. The page also tells the worker what the next request will
//! hold ([`BudgetRequest`]); the worker counts it against the model's window and answers with a
//! [`BudgetReport`].

use std::ops::Range;

use serde::{Deserialize, Serialize};

pub use crate::Tokenizer;
use crate::{Secret, ServerMessage, StartRequest, StreamId};

mod lanes;
mod likeness;

pub use crate::diff::DiffHunk;
pub use crate::project::AnswerFile;
pub use lanes::{
    ConnectSettings, ConnectionReport, ConnectionState, LaneEvent, LaneUpdate, frame_is_final, frame_stream,
};
pub use likeness::{LikenessReport, RgbaImage};

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
        /// The current file, when the answer is an edit of it: search/replace blocks are applied to
        /// it as they complete, and the updates carry the edited file and an [`EditReport`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<String>,
    },
    /// The stream ended; send the final parse at once.
    Finish {
        /// The stream.
        stream: StreamId,
    },
    /// What the next request holds (parts left `None` are unchanged since the last one); answered
    /// with [`WorkerResponse::Budget`].
    Budget(BudgetRequest),
    /// Connect to the gateway and stay connected (sent once, first).
    Connect(ConnectSettings),
    /// Start a generation (its id chosen by the page); frames wait for the connection.
    Start(StartRequest),
    /// Stop a generation.
    Cancel {
        /// The stream.
        stream: StreamId,
    },
    /// Use the person's own key for a provider (`None`: the gateway's), on every connection. The
    /// worker passes it to the gateway only, and never logs it.
    UseKey {
        /// The provider.
        provider: String,
        /// The key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<Secret>,
    },
    /// The browser went online or offline.
    Online {
        /// Whether it is online now.
        online: bool,
    },
    /// The packages the gateway serves to previews: what a project's bare imports resolve to.
    Packages(PreviewPackages),
    /// Build the preview page of a project's files (code edited by hand, a version, a shared
    /// link): answered with [`WorkerResponse::Page`] of the same `id`.
    Page {
        /// Chosen by the page, echoed in the answer.
        id: u32,
        /// The project's files.
        files: Vec<AnswerFile>,
        /// The packages to build it with instead of the gateway's (an export that runs offline
        /// maps them to `data:` URLs).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        packages: Option<PreviewPackages>,
    },
    /// The warm page a React answer's preview can be made ready with before the answer exists
    /// (React, React DOM's client and the JSX runtime loaded, nothing mounted): answered with
    /// [`WorkerResponse::Page`] of the same `id`, without a page when the gateway has no React.
    WarmPage {
        /// Chosen by the page, echoed in the answer.
        id: u32,
    },
    /// How close a page, drawn at the mock's width, is to the mock ([`WorkerResponse::Likeness`]).
    Likeness {
        /// Chosen by the page, echoed in the answer.
        job: u32,
        /// The picture the person gave.
        mock: RgbaImage,
        /// The page as drawn.
        page: RgbaImage,
    },
}

/// The vendored modules previews may import: the gateway's `/vendor/manifest.json` (its other
/// fields are the gateway's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviewPackages {
    /// Bare specifier → the module's URL path (`react` → `/vendor/react@19.3.1/react.js`).
    #[serde(default)]
    pub imports: std::collections::BTreeMap<String, String>,
    /// The Tailwind browser script's URL path, when it was built.
    #[serde(default)]
    pub tailwind: Option<String>,
    /// Each vendored package's version (`react` → `19.3.1`), as npm installed it.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub packages: std::collections::BTreeMap<String, String>,
}

/// The parts of the next request, as the page will send them, and the model it goes to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetRequest {
    /// Chosen by the page, echoed in the report: a report for an older revision is stale.
    pub revision: u32,
    /// The model's context window in tokens.
    pub window: u32,
    /// Tokens kept free for the answer.
    pub reserved_output: u32,
    /// How the model counts tokens.
    pub tokenizer: Tokenizer,
    /// The system prompt (without the goal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The pinned goal (empty: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The current file sent with an edit (empty: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Earlier turns carried by "continue thread", oldest first; each is one prompt and its answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<String>>,
    /// The new prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// How full the context will be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Zone {
    /// 0–30 % of the room for input.
    #[default]
    Sharp,
    /// 30–60 %.
    SomeDrift,
    /// 60–80 %.
    DriftLikely,
    /// 80–100 %, or over.
    AboutToOverflow,
}

/// The worker's count of a [`BudgetRequest`] and its plan: what is sent, what is left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetReport {
    /// The request's revision.
    pub revision: u32,
    /// The model's context window.
    pub window: u32,
    /// Tokens kept free for the answer.
    pub reserved_output: u32,
    /// Counted with the model's own tokenizer; `false`: an estimate.
    pub exact: bool,
    /// Tokens of the system prompt (with each message's framing).
    pub system: u32,
    /// Tokens of the pinned goal.
    pub goal: u32,
    /// Tokens of the current file.
    pub file: u32,
    /// Tokens of each history turn, oldest first.
    pub history: Vec<u32>,
    /// Tokens of the new prompt.
    pub prompt: u32,
    /// The oldest turns left out so that the rest fits: `history[..dropped]`. All of them when
    /// the request does not fit.
    pub dropped: u32,
    /// Tokens the request sends.
    pub total: u32,
    /// Whether it fits; when not, it must not be sent.
    pub fits: bool,
    /// `total` as a percentage of the room for input (window minus reserved output).
    pub percent: u32,
    /// How full the context is.
    pub zone: Zone,
}

/// From the worker to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerResponse {
    /// The worker's wasm is initialised; requests posted before this are lost.
    Ready,
    /// The count and plan for the latest [`WorkerRequest::Budget`].
    Budget(BudgetReport),
    /// The connection's state changed.
    Connection(ConnectionReport),
    /// A gateway frame about the connection, not a stream (greeting without its resume token,
    /// quota, an error about a frame).
    Gateway {
        /// The frame (a field of its own: it carries its own `type`).
        frame: ServerMessage,
    },
    /// News of the streams that have some, one entry per stream (at most one message per display
    /// frame).
    Lanes {
        /// The streams' updates.
        lanes: Vec<LaneUpdate>,
    },
    /// The page asked for with [`WorkerRequest::Page`].
    Page {
        /// The request's id.
        id: u32,
        /// The page, when the files build.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        page: Option<String>,
        /// Why they do not (`App.tsx:3:5: …` each).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        problems: Vec<String>,
        /// What the build found, when the files build.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shape: Option<crate::project::ProjectShape>,
    },
    /// The answer to [`WorkerRequest::Likeness`].
    Likeness(LikenessReport),
}

/// A stream's parse since the previous update.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParsedUpdate {
    /// The stream.
    pub stream: StreamId,
    /// Line edits to make to the editor's code, in order, before appending (an edit stream's
    /// blocks as they apply, instead of the whole file again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code_edits: Vec<LineEdit>,
    /// Text to append to the editor's code (the answer's main file).
    pub code_append: String,
    /// When true, clear the editor before appending (the main file changed).
    pub code_reset: bool,
    /// Language of the main file (`html`, `css`, `javascript`, `markdown`…).
    pub language: String,
    /// The whole HTML document to preview, when it changed; CSS and JS files are inlined into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// The preview is a built project (a React app) that runs as it streams: each one is run,
    /// not morphed, since it is nothing without its scripts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
    /// Why the project's latest text does not build (`App.tsx:3:5: …` each), when that changed;
    /// empty once it builds again. The preview keeps its last good page meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<String>>,
    /// True on the stream's last update.
    pub done: bool,
    /// Every file of the answer, on the last update only (for export).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<AnswerFile>,
    /// Tokens of the answer so far (counted as it streams, recounted in full on the last update).
    #[serde(default)]
    pub answer_tokens: u32,
    /// For a stream with a `base`: what the answer did to it (when it changed, and on the last
    /// update).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<EditReport>,
}

/// Lines `start..end` (0-based) of the text, as it is after the edits before this one, replaced by
/// `text` (whole lines, or nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineEdit {
    /// The first line replaced.
    pub start: u32,
    /// The line after the last one replaced (`start` for a pure insertion).
    pub end: u32,
    /// The lines put there.
    pub text: String,
}

/// `text` with `edits` made in order, as the page's editor makes them (lines counted by `\n`, line
/// breaks kept); `None` when an edit starts past the end. The reference for what the worker sends.
pub fn apply_line_edits(text: &str, edits: &[LineEdit]) -> Option<String> {
    let mut text = text.to_owned();
    for edit in edits {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let start = edit.start as usize;
        let end = (edit.end as usize).min(lines.len());
        if start > end {
            return None;
        }
        text = [lines[..start].concat(), edit.text.clone(), lines[end..].concat()].concat();
    }
    Some(text)
}

/// What an answer did to its base file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditReport {
    /// What kind of answer it is (so far).
    pub kind: EditKind,
    /// Blocks applied.
    pub applied: u32,
    /// Blocks that did not apply, in answer order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedEdit>,
    /// On the last update: the hunks from the base to the edited file, for review.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hunks: Vec<DiffHunk>,
}

/// How an answer changes its base file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    /// Search/replace blocks, applied to the base.
    #[default]
    Edits,
    /// A whole new file, which replaces the base.
    WholeFile,
    /// Neither: only prose; the base is unchanged.
    Prose,
}

/// A search/replace block that did not apply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedEdit {
    /// Its number in the answer, from 1.
    pub block: u32,
    /// Why, as a sentence for the person ("its SEARCH lines are not in the file").
    pub reason: String,
    /// The start of its SEARCH text, to recognise it.
    pub search: String,
    /// Where in the answer it is (bytes), to show it.
    pub at: Range<usize>,
}

#[cfg(test)]
mod tests;
