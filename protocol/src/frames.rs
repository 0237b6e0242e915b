//! Messages between the page and the preview's sandboxed frames (runtime, final, check and pick
//! frames: `public/preview.html`), over the MessagePort each frame is given.
//!
//! These types are the one definition. The frames and the page are JavaScript, so each side holds a
//! table of the messages it receives — what a frame is sent ([`ToFrame`], in
//! `public/preview-messages.js`) and what a frame sends ([`FromFrame`], in `app/js/frame_messages.js`)
//! — and drops anything that does not fit it, with a console warning. The tests below derive both
//! tables from these types and fail when a JavaScript table differs: change a message here, run
//! `cargo test -p flint-protocol frames`, and paste the table it prints.
//!
//! Any realm may drive a preview's port (the page today; the web worker once the stream moves
//! there): the runtime frame keeps no state but the text it was sent, and every message it needs is
//! here.

use serde::{Deserialize, Serialize};

/// To a frame. `Connect` is the one message posted to a frame's window (it carries the port);
/// every other goes over the port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "flint", rename_all = "snake_case")]
pub enum ToFrame {
    /// Hands the frame its port (on the frame's first load only).
    Connect,
    /// A runtime frame: the answer's whole text so far, shown inert (scripts never run).
    Snapshot {
        /// The partial document.
        html: String,
    },
    /// A runtime frame: more of the answer's text, after the `at` UTF-16 units it already has. A
    /// frame whose text is not `at` long answers `applied` with `resync`, and shows nothing new.
    Append {
        /// The length of the text the frame has (UTF-16 units).
        at: u64,
        /// The text that follows it.
        text: String,
    },
    /// A final frame: the complete document, written with its scripts.
    Run {
        /// The document.
        doc: String,
    },
    /// A final frame running a streaming project's page: the next page of the same answer. Its
    /// modules (under keys the frame has not mapped: the worker versions a streaming build's keys)
    /// join the frame's import map, its styles replace the last page's and its app is mounted
    /// afresh, React staying loaded. Answered with [`FromFrame::Swapped`].
    Swap {
        /// The document.
        doc: String,
    },
    /// A check frame: the complete document, run hidden and judged.
    Check {
        /// The document.
        doc: String,
        /// What to look for (`judge::vocabulary`'s list).
        expect: Vec<CheckExpect>,
    },
    /// A picture frame (laid out `width` CSS px wide): the complete document, run hidden and drawn
    /// to pixels for the likeness check; answered with [`FromFrame::Pixels`].
    Picture {
        /// The document.
        doc: String,
        /// The width to draw it at, in CSS px (the mock's width).
        width: u32,
        /// The most of its height drawn, in CSS px; a taller page is cut there (its height is
        /// still reported).
        max_height: u32,
    },
    /// A final frame: pick mode on or off.
    Pick {
        /// Whether the next click picks an element.
        on: bool,
    },
    /// A final frame that loaded again: is the page that got the port still there?
    Ping {
        /// Echoed in the `pong`.
        id: u32,
    },
}

/// One thing a check frame looks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckExpect {
    /// The vocabulary term's id, echoed in the results.
    pub id: String,
    /// Elements that show the term.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Whether the page should change by itself (a clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticks: Option<bool>,
}

/// One step of a picked element's path: the child at `index` of its parent, a `tag`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PickStep {
    /// Its index among its parent's element children.
    pub index: u32,
    /// Its local name.
    pub tag: String,
}

/// From a frame. What a final or check frame says is the page's word (it shares that realm):
/// typed here, still judged by the reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "flint", rename_all = "snake_case")]
pub enum FromFrame {
    /// The frame took its port.
    Ready,
    /// A runtime frame showed a snapshot or an append.
    Applied {
        /// What the update and its layout cost (ms): the app paces updates by it.
        ms: f64,
        /// The page was morphed whole (not appended to).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        whole: Option<bool>,
        /// The append did not follow the frame's text: send the whole text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resync: Option<bool>,
    },
    /// A line of the page's console (or the runtime's own error).
    Console {
        /// `log`, `info`, `warn` or `error` (anything else reads as `log`).
        level: String,
        /// The line.
        text: String,
    },
    /// A final page is parsed.
    Loaded,
    /// The answer to a `swap`: the new page is mounted (`ok`), or the frame could not take it (a
    /// module key it maps to another URL, an import map it cannot extend, a module that failed to
    /// load) and nothing on it changed, so the page runs in a fresh frame.
    Swapped {
        /// Whether the page was swapped in.
        ok: bool,
    },
    /// A final page is leaving (it reloads or navigates).
    Gone,
    /// The answer to a `ping`.
    Pong {
        /// The ping's id.
        id: u32,
    },
    /// Pick mode's answer: the element clicked, or cancelled.
    Picked {
        /// The steps from `<body>` down to the element.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<Vec<PickStep>>,
        /// The element's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Where a React project's JSX wrote the element (or its nearest HTML ancestor):
        /// `path:start:end`, its file and byte range (the worker's `data-flint-src`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        src: Option<String>,
        /// Escape was pressed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cancelled: Option<bool>,
    },
    /// A check frame's report, or why the checks stopped.
    Checked {
        /// Each check's outcome (read by `judge::report`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        results: Option<Vec<serde_json::Value>>,
        /// The page's text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// How long loading and judging took (ms).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ms: Option<f64>,
        /// Why the checks stopped.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed: Option<String>,
    },
    /// A picture frame's drawing of its page, or why there is none. The page's word like any other:
    /// the app checks its size against what it asked for ([`PIXELS_WIDTH_MAX`]).
    Pixels {
        /// Pixels across (the asked width scaled down to at most [`PIXELS_WIDTH_MAX`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        width: Option<u32>,
        /// Pixels down (the drawn height, scaled like the width).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        height: Option<u32>,
        /// The page's whole height at the asked width, in CSS px (may exceed what was drawn).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        page_height: Option<u32>,
        /// `width × height` RGBA8 pixels, rows top to bottom, in base64.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rgba: Option<String>,
        /// How long drawing took (ms).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ms: Option<f64>,
        /// Why there is no drawing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed: Option<String>,
    },
}

/// Widest drawing a picture frame sends back (px): the likeness check compares a 64-cell grid, so
/// five pixels a cell is plenty, and a page comes back in hundreds of KB rather than megabytes.
/// `public/preview-pixels.js` and `app/js/picture.js` hold the same number.
pub const PIXELS_WIDTH_MAX: u32 = 320;

/// Tallest drawing a picture frame sends back (px): eight widths of [`PIXELS_WIDTH_MAX`], about
/// eight screens of a phone mock or five of a desktop one.
pub const PIXELS_HEIGHT_MAX: u32 = 8 * PIXELS_WIDTH_MAX;

#[cfg(test)]
#[path = "frames_tests.rs"]
mod tests;
