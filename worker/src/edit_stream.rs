//! An answer that edits a file: a stream reset with a `base`.
//!
//! While the answer streams, its search/replace blocks ([`crate::edits`]) are applied to the base as
//! each one completes, so the editor and the preview show the base with the edits so far. The
//! answer's kind ([`EditKind`]) is decided line by line as [`answer_kind`] would on the whole
//! answer: a `<<<<<<< SEARCH` line makes it [`EditKind::Edits`]; without one, a whole page makes it
//! [`EditKind::WholeFile`] once the page has a line (so that a ```` ```html ```` fence opening a
//! block does not flash an empty page) and, for an HTML base, once it is a whole document (a snippet
//! does not replace the page); anything else is [`EditKind::Prose`]. The session shows a
//! whole-file answer as it shows any stream; this module only decides and reports.

use flint_protocol::language::{code_language, is_react_module};
use flint_protocol::project::sections;
use flint_protocol::worker::{AnswerFile, EditKind, EditReport, FailedEdit, LineEdit};

use crate::document::file_preview;
use crate::edits::{AnswerKind, BlockParser, EditBlock, EditedFile, Outcome, answer_kind};
use crate::parser::{StreamParser, find_ascii_ci};

/// Longest start of a SEARCH text quoted in a [`FailedEdit`], in characters.
const SEARCH_QUOTE_CHARS: usize = 80;

/// One edit stream's state.
#[derive(Debug, Clone)]
pub struct EditStream {
    file: EditedFile,
    blocks: BlockParser,
    language: &'static str,
    /// The base with the blocks applied so far.
    text: String,
    /// Grows whenever `text` changes.
    revision: u64,
    /// The line edits from `text` at revision `line_edits_from` to now; `None` when a change could
    /// not be put as line edits (the editor then gets the whole text).
    line_edits: Option<Vec<LineEdit>>,
    line_edits_from: u64,
    /// Blocks met so far, applied or not (the next one's number is this plus one).
    numbered: u32,
    applied: u32,
    failed: Vec<FailedEdit>,
    /// Bytes of the answer whose lines were checked for the kind.
    scanned: usize,
    /// Search/replace blocks met (their spans in the answer are the block parser's).
    blocks_met: usize,
    /// The base is a project (`flint_protocol::project`): a file the answer writes whole replaces
    /// that file, or joins the project.
    project: bool,
    /// The answer's files already merged into the project.
    merged: usize,
    seen_search: bool,
    seen_page: bool,
    kind: EditKind,
    /// Grows whenever the [`report`](Self::report) changes.
    report_revision: u64,
}

impl EditStream {
    /// An edit of `base`, before any answer.
    pub fn new(base: String) -> Self {
        let project = sections(&base).is_some();
        // A project's text is its files in fences: Markdown is how it reads while an edit streams.
        let language = if project { "markdown" } else { code_language(&base) };
        Self {
            text: base.clone(),
            file: EditedFile::new(base),
            blocks: BlockParser::new(),
            language,
            revision: 0,
            line_edits: Some(Vec::new()),
            line_edits_from: 0,
            numbered: 0,
            applied: 0,
            failed: Vec::new(),
            scanned: 0,
            blocks_met: 0,
            project,
            merged: 0,
            seen_search: false,
            seen_page: false,
            kind: EditKind::Prose,
            report_revision: 0,
        }
    }

    /// Takes the next `chunk` of the answer; `answer` is the whole answer so far (ending with
    /// `chunk`) and `parser` has parsed it.
    pub fn push(&mut self, chunk: &str, answer: &str, parser: &StreamParser) {
        for block in self.blocks.push(chunk) {
            self.apply_block(&block);
        }
        self.merge_files(parser, false);
        // Only the chunk can hold a new line break: looking for it in the whole unscanned rest would
        // make a long minified line quadratic.
        if let Some(i) = chunk.rfind('\n') {
            let end = answer.len().saturating_sub(chunk.len()) + i + 1;
            if let Some(lines) = answer.get(self.scanned..end) {
                self.scan(lines);
                self.scanned = end;
            }
        }
        self.update_kind(parser);
    }

    /// Ends the answer: the last line counts, and a block left open is reported, not applied.
    pub fn finish(&mut self, answer: &str, parser: &StreamParser) {
        let finish = self.blocks.finish();
        for block in &finish.blocks {
            self.apply_block(block);
        }
        self.merge_files(parser, true);
        if let Some(block) = finish.unfinished {
            self.numbered += 1;
            self.failed.push(FailedEdit {
                block: self.numbered,
                reason: "the answer ended inside this block".to_owned(),
                search: quote(&block.search),
                at: finish.unfinished_at.unwrap_or_default(),
            });
            self.report_revision += 1;
        }
        if let Some(rest) = answer.get(self.scanned..).filter(|r| !r.is_empty()) {
            self.scan(rest);
            self.scanned = answer.len();
        }
        self.update_kind(parser);
    }

    /// What the answer is so far.
    pub fn kind(&self) -> EditKind {
        self.kind
    }

    /// The base file as the model saw it.
    pub fn base(&self) -> &str {
        self.file.original()
    }

    /// The base with the blocks applied so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Grows whenever [`text`](Self::text) changes.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The base's language (`html` when it looks like HTML).
    pub fn language(&self) -> &'static str {
        self.language
    }

    /// The preview page of [`text`](Self::text), when the base's language has one.
    pub fn preview(&self) -> Option<String> {
        file_preview(self.language, &self.text)
    }

    /// The report so far, without hunks (those are computed once, at the end).
    pub fn report(&self) -> EditReport {
        EditReport { kind: self.kind, applied: self.applied, failed: self.failed.clone(), hunks: Vec::new() }
    }

    /// Grows whenever [`report`](Self::report) changes.
    pub fn report_revision(&self) -> u64 {
        self.report_revision
    }

    /// The edited file at the end of the answer: a whole-file answer's main file (with the base's
    /// line breaks, so that only changed lines differ), else the base with the blocks applied.
    pub fn final_text(&self, parser: &StreamParser) -> String {
        match (self.kind, main_content(parser)) {
            (EditKind::WholeFile, Some(content)) if crlf(self.base()) => content.replace('\n', "\r\n"),
            (EditKind::WholeFile, Some(content)) => content.to_owned(),
            _ => self.text.clone(),
        }
    }

    /// The line edits that turn the text at revision `since` into the current text, when they are
    /// known; from here on, edits are counted from now.
    pub fn take_line_edits(&mut self, since: u64) -> Option<Vec<LineEdit>> {
        let edits = self.line_edits.replace(Vec::new()).filter(|_| self.line_edits_from == since);
        self.line_edits_from = self.revision;
        edits
    }

    /// The one file of an edit or prose answer, for export (a whole-file answer lists the parser's).
    pub fn answer_file(&self) -> AnswerFile {
        AnswerFile { name: None, language: self.language.to_owned(), content: self.text.clone(), main: true }
    }

    fn apply_block(&mut self, block: &EditBlock) {
        let at = self.blocks.spans().get(self.blocks_met).cloned().unwrap_or_default();
        self.blocks_met += 1;
        self.apply(block, at);
    }

    /// In a project, each file the answer wrote whole (a fenced block named by its path, that is
    /// not itself search/replace blocks) replaces that file or joins the project, as a block whose
    /// SEARCH is the file's text. `all`: the answer ended, an unclosed last file counts.
    fn merge_files(&mut self, parser: &StreamParser, all: bool) {
        if !self.project {
            return;
        }
        let files = parser.files();
        while let Some(file) = files.get(self.merged).filter(|f| f.closed || all) {
            self.merged += 1;
            let Some(path) = file.name.as_deref() else { continue };
            if file.content.trim().is_empty() || answer_kind(&file.content) == AnswerKind::Edits {
                continue;
            }
            let search = self.file.project_file(path).unwrap_or_default();
            let block = EditBlock { search, replace: file.content.clone(), file: Some(path.to_owned()) };
            self.seen_search = true;
            self.apply(&block, 0..0);
        }
    }

    fn apply(&mut self, block: &EditBlock, at: std::ops::Range<usize>) {
        self.numbered += 1;
        let reason = match self.file.apply(block) {
            Outcome::Applied(applied) => {
                self.applied += 1;
                let text = self.file.text();
                if text != self.text {
                    let edit = line_edit(&self.text, applied.range, applied.text);
                    match (self.line_edits.as_mut(), edit) {
                        (Some(edits), Some(edit)) => edits.push(edit),
                        _ => self.line_edits = None,
                    }
                    self.text = text;
                    self.revision += 1;
                }
                None
            }
            Outcome::NotFound => Some("its SEARCH lines are not in the file".to_owned()),
            Outcome::Ambiguous { matches } => {
                Some(format!("its SEARCH lines match {matches} places; nothing was changed"))
            }
            Outcome::Overlaps { block } => {
                Some(format!("it overlaps block {}, which already changed those lines", block + 1))
            }
        };
        if let Some(reason) = reason {
            self.failed.push(FailedEdit { block: self.numbered, reason, search: quote(&block.search), at });
        }
        self.report_revision += 1;
    }

    /// Notes what complete `lines` of the answer say about its kind. A React component answered
    /// whole (a ```` ```tsx ```` fence) replaces a component as an HTML page replaces a page.
    fn scan(&mut self, lines: &str) {
        match answer_kind(lines) {
            AnswerKind::Edits => self.seen_search = true,
            AnswerKind::WholeFile => self.seen_page = true,
            AnswerKind::Prose if !self.project && is_react_module(self.base()) => {
                let module_fence = lines.lines().any(|line| {
                    let info = line.trim_start().strip_prefix("```").unwrap_or_default();
                    let word = info.split_whitespace().next().unwrap_or_default();
                    matches!(word, "tsx" | "jsx" | "ts" | "typescript" | "js" | "javascript")
                });
                self.seen_page |= module_fence;
            }
            AnswerKind::Prose => {}
        }
    }

    fn update_kind(&mut self, parser: &StreamParser) {
        let kind = if self.seen_search {
            EditKind::Edits
        } else if self.seen_page && main_content(parser).is_some_and(|c| self.replaces_base(c)) {
            EditKind::WholeFile
        } else {
            EditKind::Prose
        };
        if kind != self.kind {
            self.kind = kind;
            self.report_revision += 1;
        }
    }
}

/// `range` of `before` replaced by `text` as a [`LineEdit`]; `None` when the range does not start a
/// line (an append to a last line without a line break).
fn line_edit(before: &str, mut range: std::ops::Range<usize>, mut text: String) -> Option<LineEdit> {
    let head = before.get(..range.start)?;
    if !head.is_empty() && !head.ends_with('\n') {
        return None;
    }
    // A replacement stops before its last line's break: take the break in, on both sides.
    let tail = before.get(range.end..)?;
    let line_break = if tail.starts_with("\r\n") {
        "\r\n"
    } else if tail.starts_with('\n') {
        "\n"
    } else {
        ""
    };
    if !range.is_empty() && !before[..range.end].ends_with('\n') {
        range.end += line_break.len();
        text.push_str(line_break);
    }
    // Whole lines in, whole lines out (or up to the end of the file).
    if !text.is_empty() && !text.ends_with('\n') && range.end != before.len() {
        return None;
    }
    let removed = before.get(range)?;
    let mut lines = memchr::memchr_iter(b'\n', removed.as_bytes()).count();
    if !removed.is_empty() && !removed.ends_with('\n') {
        lines += 1;
    }
    let start = u32::try_from(memchr::memchr_iter(b'\n', head.as_bytes()).count()).ok()?;
    Some(LineEdit { start, end: start + u32::try_from(lines).ok()?, text })
}

/// Whether `text`'s first line break is CRLF (as [`EditedFile`] decides).
fn crlf(text: &str) -> bool {
    text.find('\n').is_some_and(|i| text[..i].ends_with('\r'))
}

/// The complete lines of the parser's main file.
impl EditStream {
    /// Whether `content` (the answer's main file so far) can stand in for the base: not empty and,
    /// for a page, a whole document. An ```` ```html ```` snippet ("change it to this button") must
    /// not replace the page.
    fn replaces_base(&self, content: &str) -> bool {
        if content.trim().is_empty() {
            return false;
        }
        code_language(self.base()) != "html"
            || find_ascii_ci(content, "<!doctype").is_some()
            || find_ascii_ci(content, "<html").is_some()
    }
}

fn main_content(parser: &StreamParser) -> Option<&str> {
    parser.main_file().and_then(|i| parser.files().get(i)).map(|f| f.content.as_str())
}

/// The start of a SEARCH text, to recognise its block by: blank lines skipped, at most
/// [`SEARCH_QUOTE_CHARS`] characters, `…` when cut.
fn quote(search: &str) -> String {
    let text = search.trim_start_matches(['\n', '\r', ' ', '\t']).trim_end();
    match text.char_indices().nth(SEARCH_QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", text[..cut].trim_end()),
        None => text.to_owned(),
    }
}

#[cfg(test)]
#[path = "edit_stream_tests.rs"]
mod tests;
