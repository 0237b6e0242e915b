//! Targeted edits: search/replace blocks in a model's answer, parsed while it streams and applied to
//! the current file.
//!
//! # The format (what the system prompt asks for)
//!
//! ```text
//! <<<<<<< SEARCH
//! lines copied exactly from the current file
//! =======
//! the lines that replace them
//! >>>>>>> REPLACE
//! ```
//!
//! - Each marker stands alone on its line: `<<<<<<< SEARCH`, `=======`, `>>>>>>> REPLACE`. Between 5
//!   and 9 marker characters are accepted, as are whitespace around the marker and a `\r` line end.
//! - SEARCH and REPLACE hold whole lines. SEARCH must match whole lines of the file: first exactly,
//!   then line by line ignoring differences in whitespace (indentation, tabs vs spaces, runs of
//!   spaces, trailing spaces, CRLF vs LF; ASCII whitespace only). A whitespace-tolerant match
//!   re-indents the replacement from the model's indentation to the file's.
//! - An empty REPLACE deletes the matched lines. An empty SEARCH appends REPLACE at the end of the
//!   file (so an empty file can be filled with one block).
//! - Blocks may sit inside or outside a ```` ``` ```` fence; all other text is prose and ignored.
//!   Inside a block a fence line is content.
//! - In a project (several files, see `flint_protocol::project`), a block names its file: the last
//!   line of prose before it that is a path (`components/Button.tsx`, `` `App.tsx`: ``, a fence
//!   ```` ```tsx App.tsx ````) names the file of every block after it until another does. Its
//!   SEARCH is looked for in that file only; an empty SEARCH appends to it, or adds the file when
//!   the project has none of that path. A name the project lacks with a SEARCH is looked for in
//!   every file. In a single file names are not needed and ignored.
//! - Every block is matched against the file as it was **before the answer** (the file the model
//!   saw), so blocks do not depend on one another. A block that does not apply is reported: its
//!   SEARCH text is missing ([`Outcome::NotFound`]), occurs more than once ([`Outcome::Ambiguous`]:
//!   we do not guess) or overlaps lines an earlier block of the answer replaced
//!   ([`Outcome::Overlaps`]).
//!
//! An answer without blocks that holds a whole page is a whole-file replacement: see
//! [`answer_kind`].

use std::ops::Range;

use crate::names;

/// One search/replace block. Both texts are whole lines, each ended by `\n` (no `\r`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditBlock {
    /// Lines to find; empty: append at the end of the file.
    pub search: String,
    /// Lines to put in their place; empty: delete them.
    pub replace: String,
    /// The file it names, if any (see the [module docs](self)).
    pub file: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Prose,
    Search,
    Replace,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Search,
    Divider,
    Replace,
}

fn marker(line: &str) -> Option<Marker> {
    let line = line.trim();
    let first = line.chars().next()?;
    let run = line.len() - line.trim_start_matches(first).len();
    if !(5..=9).contains(&run) {
        return None;
    }
    let rest = line[run..].trim_start();
    match (first, rest) {
        ('<', "SEARCH") => Some(Marker::Search),
        ('=', "") => Some(Marker::Divider),
        ('>', "REPLACE") => Some(Marker::Replace),
        _ => None,
    }
}

/// Finds search/replace blocks in an answer as it streams in.
///
/// Feed it the answer's text in chunks of any size; each block comes out of the [`push`](Self::push)
/// that delivers the end of its `>>>>>>> REPLACE` line, so edits can be applied while the model
/// is still writing.
#[derive(Debug, Clone, Default)]
pub struct BlockParser {
    /// The current line, until its `\n` arrives.
    line: String,
    state: State,
    block: EditBlock,
    malformed: usize,
    /// Bytes of the answer in complete lines so far: where `line` starts.
    consumed: usize,
    /// Where the current block's `<<<<<<< SEARCH` line starts.
    block_start: usize,
    /// Where each completed block lies in the answer.
    spans: Vec<Range<usize>>,
    /// The file the last path line named: the next block's.
    file: Option<String>,
}

/// What remained when the stream ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Finish {
    /// Blocks completed by the last line.
    pub blocks: Vec<EditBlock>,
    /// A block whose `>>>>>>> REPLACE` never came (applying it is the caller's choice; the default is
    /// to report it and not apply it).
    pub unfinished: Option<EditBlock>,
    /// Where the unfinished block lies in the answer: from its `<<<<<<< SEARCH` line to the end.
    pub unfinished_at: Option<Range<usize>>,
}

impl BlockParser {
    /// A parser at the start of an answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next piece of the answer; returns the blocks it completed.
    pub fn push(&mut self, chunk: &str) -> Vec<EditBlock> {
        let mut done = Vec::new();
        let mut rest = chunk;
        while let Some(end) = rest.find('\n') {
            let (piece, tail) = rest.split_at(end + 1);
            rest = tail;
            let start = self.consumed;
            self.consumed += self.line.len() + piece.len();
            let at = start..self.consumed;
            if self.line.is_empty() {
                self.take_line(&piece[..end], at, &mut done);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.push_str(&piece[..end]);
                self.take_line(&line, at, &mut done);
                line.clear();
                self.line = line;
            }
        }
        self.line.push_str(rest);
        done
    }

    /// Ends the answer: the last line counts even without a `\n`.
    pub fn finish(&mut self) -> Finish {
        let mut blocks = Vec::new();
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            let start = self.consumed;
            self.consumed += line.len();
            self.take_line(&line, start..self.consumed, &mut blocks);
        }
        let (unfinished, unfinished_at) = match std::mem::take(&mut self.state) {
            State::Prose => (None, None),
            State::Search | State::Replace => {
                (Some(std::mem::take(&mut self.block)), Some(self.block_start..self.consumed))
            }
        };
        Finish { blocks, unfinished, unfinished_at }
    }

    /// Blocks abandoned because a new `<<<<<<< SEARCH` began before they were complete.
    pub fn malformed(&self) -> usize {
        self.malformed
    }

    /// Where each completed block lies in the answer (bytes, from the start of its
    /// `<<<<<<< SEARCH` line to the end of its `>>>>>>> REPLACE` line), in order: `spans()[i]` is
    /// the `i`-th block returned.
    pub fn spans(&self) -> &[Range<usize>] {
        &self.spans
    }

    fn take_line(&mut self, line: &str, at: Range<usize>, done: &mut Vec<EditBlock>) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let marker = if line.len() <= 40 { marker(line) } else { None };
        match (self.state, marker) {
            (State::Prose, Some(Marker::Search)) => {
                self.state = State::Search;
                self.block_start = at.start;
                self.block.file.clone_from(&self.file);
            }
            (State::Prose, _) => {
                if let Some(path) = path_line(line) {
                    self.file = Some(path);
                }
            }
            (State::Search | State::Replace, Some(Marker::Search)) => {
                self.malformed += 1;
                self.block = EditBlock { file: self.file.clone(), ..EditBlock::default() };
                self.state = State::Search;
                self.block_start = at.start;
            }
            (State::Search, Some(Marker::Divider)) => self.state = State::Replace,
            (State::Replace, Some(Marker::Replace)) => {
                done.push(std::mem::take(&mut self.block));
                self.spans.push(self.block_start..at.end);
                self.state = State::Prose;
            }
            (State::Search, _) => push_line(&mut self.block.search, line),
            (State::Replace, _) => push_line(&mut self.block.replace, line),
        }
    }
}

/// The path a line of prose names, if it is only that (a fence ```` ```tsx App.tsx ```` too): the
/// one reading of names, [`crate::names`].
fn path_line(line: &str) -> Option<String> {
    match line.trim().strip_prefix("```") {
        Some(info) => names::fence_info(info).1,
        None => names::label_path(line),
    }
}

fn push_line(text: &mut String, line: &str) {
    text.push_str(line);
    text.push('\n');
}

/// Parses a complete answer: its blocks, and a trailing unfinished one if any.
pub fn parse_blocks(answer: &str) -> Finish {
    let mut parser = BlockParser::new();
    let mut blocks = parser.push(answer);
    let mut finish = parser.finish();
    blocks.append(&mut finish.blocks);
    finish.blocks = blocks;
    finish
}

/// What an answer does to the current file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// It has search/replace blocks: apply them.
    Edits,
    /// No blocks, but a whole page (an ```` ```html ```` fence, `<!DOCTYPE html>` or `<html>`): it
    /// replaces the file.
    WholeFile,
    /// Neither: leave the file alone.
    Prose,
}

/// Tells whether `answer` (complete or still streaming) edits the file, replaces it or neither.
pub fn answer_kind(answer: &str) -> AnswerKind {
    let mut whole = false;
    for line in answer.lines() {
        if marker(line) == Some(Marker::Search) {
            return AnswerKind::Edits;
        }
        let line = line.trim_start();
        let head = line.get(..14).unwrap_or(line);
        whole = whole
            || head.eq_ignore_ascii_case("<!doctype html")
            || head.get(..5).is_some_and(|h| h.eq_ignore_ascii_case("<html"))
            || line.strip_prefix("```").is_some_and(|info| matches!(info.trim(), "html" | "htm"));
    }
    if whole { AnswerKind::WholeFile } else { AnswerKind::Prose }
}

mod apply;
mod line_hash;
#[cfg(test)]
use apply::split_lines;
pub use apply::{Applied, EditedFile, Outcome, apply_edits};

#[cfg(test)]
#[path = "edits/project_tests.rs"]
mod project_tests;
#[cfg(test)]
#[path = "edits_tests.rs"]
mod tests;
