//! What a [`Generation`](super::Generation) asks its driver to do, and the few plain types both share.

use flint_protocol::StartRequest;
use flint_protocol::StreamId;
use flint_protocol::worker::{AnswerFile, EditReport, LineEdit, WorkerRequest};

use crate::metrics::LiveMetrics;
use crate::review::Review;
use crate::variations::RaceTimes;
use crate::versions::{FromPictures, Origin};

/// Where a generation stands (the `stream-status` text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamStatus {
    /// Nothing has run yet.
    #[default]
    Idle,
    /// Text is arriving.
    Streaming,
    /// The answer is complete.
    Done,
    /// The user stopped it.
    Cancelled,
    /// It failed; see the error message.
    Error,
}

impl StreamStatus {
    /// What the status pill says: the [label](Self::label), or, for a stream still waiting for
    /// its provider (`queued`: the number ahead of it), how long the wait is.
    pub fn text(self, queued: Option<u32>) -> String {
        match (self, queued) {
            (Self::Streaming, Some(0)) => "queued · next".to_owned(),
            (Self::Streaming, Some(ahead)) => format!("queued · {ahead} ahead"),
            _ => self.label().to_owned(),
        }
    }

    /// The word shown (end-to-end tests match on it).
    pub fn label(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Streaming => "streaming",
            Self::Done => "done",
            Self::Cancelled => "cancelled",
            Self::Error => "error",
        }
    }
}

/// Where a generation shows its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The editor and the main preview: a single run. Its code streams into the editor.
    Editor,
    /// A tile of its own (a variation, a compared model): previews only, its code kept whole.
    Tile,
}

/// A change to the code the editor (and the workspace) holds, as the answer streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeChange {
    /// Clear it for a new file in `language` (a Monaco language id).
    Reset(String),
    /// Append text.
    Append(String),
    /// Replace lines, in order (an edit answer's blocks as they apply).
    EditLines(Vec<LineEdit>),
    /// A stream starts writing: read-only until [`Self::Finish`].
    Begin,
    /// The stream stopped writing: editable again.
    Finish,
    /// Replace it whole with finished code (an edit's base while its proposal is reviewed).
    Replace(String),
    /// The finished answer is a project: the code becomes all its files
    /// ([`flint_protocol::project::bundle`]); the editor goes on showing the main file.
    Project(String),
}

/// A change to the generation's preview (the main one for [`Surface::Editor`], else its tile's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreviewChange {
    /// A new answer starts: its first snapshot replaces the last page.
    Begin,
    /// A partial document (scripts do not run).
    Snapshot(String),
    /// A streaming project's page, built from text that compiles: it runs (it is nothing without
    /// its scripts), replacing the last one once it is on screen; not checked.
    Live(String),
    /// The complete document; the driver calls
    /// [`Generation::page_shown`](super::Generation::page_shown) once it is on screen.
    Run(String),
    /// A finished React project's page: as [`Self::Run`], but a frame made ready with React, in
    /// which nothing of this answer ran, may take it (a swap, not a fresh frame's start).
    RunApp(String),
}

/// A figure the generation's display shows (the page's status for a single run, its tile's else).
#[derive(Debug, Clone, PartialEq)]
pub enum Display {
    /// Its status.
    Status(StreamStatus),
    /// While it waits for its provider: how many start before it.
    Queued(Option<u32>),
    /// The model that serves it (`provider/model`).
    ServedBy(String),
    /// Why it failed (or what an edit did wrong); `None` clears it.
    Error(Option<String>),
    /// Its timing and token counts.
    Metrics(LiveMetrics),
    /// Tokens of the answer so far.
    AnswerTokens(u32),
    /// What the edit did to its file so far (hunks left out: those go to the review).
    Edit(Option<EditReport>),
    /// The finished answer's files (what Export offers).
    Files(Vec<AnswerFile>),
    /// The finished answer's preview document (its CSS and JS inlined).
    Document(Option<String>),
    /// A tile's note on its edits that did not apply.
    Note(Option<String>),
    /// A tile's race times.
    Race(RaceTimes),
    /// Why the finished project does not build (`App.tsx:3:5: …` each); the preview keeps the
    /// last page that did.
    Problems(Vec<String>),
    /// What the model thought so far (never code); `None` clears it.
    Thinking(Option<super::thinking::Thought>),
    /// The provider has sent nothing for a while: the sentence; `None` clears it.
    Stalled(Option<String>),
}

/// What the observer (the saved session) hears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A generation started, or a tile's code became the current version.
    Started {
        /// The model.
        model: String,
        /// The prompt.
        prompt: String,
    },
    /// Streamed code reached the editor.
    Streamed,
    /// The generation stopped streaming with this status.
    Ended(StreamStatus),
}

/// One thing for the driver to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Start this stream on the gateway; the driver hands the id back with
    /// [`Generation::started`](super::Generation::started).
    StartStream(StartRequest),
    /// Stop this stream on the gateway.
    CancelStream(StreamId),
    /// Send this to the parser worker.
    Worker(WorkerRequest),
    /// Change the editor's code (single runs only).
    Code(CodeChange),
    /// Change the preview.
    Preview(PreviewChange),
    /// Show a figure.
    Show(Display),
    /// Keep `code` as a new version, child of version `parent`.
    KeepVersion {
        /// The code.
        code: String,
        /// The version it came from.
        parent: Option<usize>,
        /// The prompt.
        prompt: String,
        /// The model.
        model: String,
        /// How it came to be.
        origin: Origin,
        /// The pictures its prompt had, as its model took them.
        pictures: Option<FromPictures>,
    },
    /// Offer this edit for review.
    Propose(Review),
    /// Make `code` the current code: editor, workspace and main preview (as `page`, its files
    /// inlined, or the code itself); `files` are what Export offers. `run`: its scripts run even
    /// if the page was held still.
    ShowVersion {
        /// The code.
        code: String,
        /// The page with its files inlined.
        page: Option<String>,
        /// The answer's files.
        files: Vec<AnswerFile>,
        /// The person picked it: it runs.
        run: bool,
    },
    /// A stopped edit changes nothing: the code it started from comes back in the workspace at
    /// once and in the editor and the preview after the stop has painted (they are the slow part).
    Restore(String),
    /// Tell the observer.
    Notify(Notice),
    /// Add a finished stream's cost to the session's.
    Spent(Option<(f64, bool)>),
}
