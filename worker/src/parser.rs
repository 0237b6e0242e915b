//! Incremental parser that splits a model's streamed answer into prose and files.
//!
//! Answers come as markdown with fenced code blocks (```` ```html ````, ```` ```css style.css ````,
//! `~~~js`…) or as a bare HTML document with no fences at all. Text arrives in arbitrary pieces — a
//! fence can be split anywhere, even inside `\r\n` — so the parser keeps only the current unfinished
//! line and processes every complete line exactly once: the cost of an append is proportional to the
//! append, never to the whole answer.
//!
//! While a line is unfinished the parser still says how much of it is certainly content
//! ([`StreamParser::tail`]), so the editor and the preview grow mid-line. A partial line that could
//! still turn out to be a fence is held back until it is complete: text shown once is never retracted.

use crate::names;

/// One file of the answer: a fenced block, or a bare HTML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBlock {
    /// Normalised language: `html`, `css`, `javascript`, or the fence's own word (`python`…);
    /// `plaintext` when the fence named none.
    pub language: String,
    /// The file name the answer gave it, on the fence line (```` ```css style.css ````), the line
    /// of prose before it or its first line (see [`crate::names`]), if any.
    pub name: Option<String>,
    /// Complete lines received so far, each ending in `\n` (`\r\n` is normalised to `\n`).
    pub content: String,
    /// Whether the closing fence (or `</html>` of a bare document) has been seen.
    pub closed: bool,
}

/// What the line being received belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Outside any file.
    Prose,
    /// Inside a fenced block of `files[file]`, closed by `len` or more `ch` characters.
    Fence { file: usize, ch: u8, len: usize },
    /// Inside a bare HTML document, closed after the line holding `</html>`.
    Bare { file: usize },
}

/// Parses one stream's text as it arrives.
#[derive(Debug, Clone)]
pub struct StreamParser {
    files: Vec<FileBlock>,
    prose: String,
    state: State,
    line: String,
    revision: u64,
    /// The name the last line of prose gave, for a fence that names none (see [`crate::names`]).
    label: Option<String>,
}

impl Default for StreamParser {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            prose: String::new(),
            state: State::Prose,
            line: String::new(),
            revision: 0,
            label: None,
        }
    }
}

impl StreamParser {
    /// An empty parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next piece of the answer.
    pub fn push(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut rest = text;
        while let Some(newline) = rest.find('\n') {
            self.line.push_str(&rest[..newline]);
            let line = std::mem::take(&mut self.line);
            self.process_line(&line);
            // Reuse the allocation for the next line.
            self.line = line;
            self.line.clear();
            rest = &rest[newline + 1..];
        }
        self.line.push_str(rest);
        if self.state == State::Prose && starts_bare_document(&self.line, false) {
            // Open the document now rather than at the end of its first line, so a minified
            // one-line page still previews while it streams.
            self.open_file("html", None);
            let file = self.files.len() - 1;
            self.state = State::Bare { file };
        }
        if !matches!(self.state, State::Prose) {
            self.revision += 1;
        }
    }

    /// Ends the stream: the unfinished line counts as complete.
    pub fn finish(&mut self) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line);
        }
    }

    /// The files seen so far, in order of appearance.
    pub fn files(&self) -> &[FileBlock] {
        &self.files
    }

    /// Text outside files so far (complete lines only).
    pub fn prose(&self) -> &str {
        &self.prose
    }

    /// Grows whenever a file's visible text may have changed; compare to skip rebuilding previews.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The main file: the first HTML file, else the first file of any kind, in its last version (a
    /// file written again under the same name replaces the earlier one, as a project's build reads
    /// it); `None` while the answer is prose only.
    pub fn main_file(&self) -> Option<usize> {
        if let Some(html) = self.files.iter().position(|f| f.language == "html") {
            return Some(html);
        }
        let first = self.files.first()?;
        match &first.name {
            Some(name) => self.files.iter().rposition(|f| f.name.as_ref() == Some(name)),
            None => Some(0),
        }
    }

    /// The part of the unfinished line that certainly belongs to `target` (a file index, or `None`
    /// for prose): empty while the line could still become a fence or the start of a document.
    pub fn tail(&self, target: Option<usize>) -> &str {
        let line = self.line.strip_suffix('\r').unwrap_or(&self.line);
        match (self.state, target) {
            (State::Fence { file, ch, len }, Some(t)) if file == t => {
                if could_close_fence(line, ch, len) {
                    ""
                } else {
                    line
                }
            }
            (State::Bare { file }, Some(t)) if file == t => line,
            (State::Prose, None) => {
                if could_open_something(line) {
                    ""
                } else {
                    line
                }
            }
            _ => "",
        }
    }

    /// The visible text of `target` (a file index, or `None` for prose): complete lines plus the
    /// certain part of the unfinished line. Returned in two parts to avoid copying.
    pub fn visible(&self, target: Option<usize>) -> (&str, &str) {
        let committed = match target {
            Some(i) => self.files.get(i).map_or("", |f| f.content.as_str()),
            None => self.prose.as_str(),
        };
        (committed, self.tail(target))
    }

    fn open_file(&mut self, language: &str, name: Option<String>) {
        self.label = None;
        self.files.push(FileBlock {
            language: language.to_owned(),
            name,
            content: String::new(),
            closed: false,
        });
        self.revision += 1;
    }

    fn process_line(&mut self, raw: &str) {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        match self.state {
            State::Prose => {
                if let Some(fence) = parse_opening_fence(line) {
                    let (mut language, mut name) = names::fence_info(fence.info);
                    if name.is_none() {
                        name = named(&mut language, self.label.take());
                    }
                    self.open_file(&language, name);
                    self.state = State::Fence { file: self.files.len() - 1, ch: fence.ch, len: fence.len };
                } else if starts_bare_document(line, true) {
                    self.open_file("html", None);
                    let file = self.files.len() - 1;
                    self.state = State::Bare { file };
                    self.process_line(line);
                } else {
                    if !line.trim().is_empty() {
                        self.label = names::label_path(line);
                    }
                    self.prose.push_str(line);
                    self.prose.push('\n');
                }
            }
            State::Fence { file, ch, len } => {
                if is_closing_fence(line, ch, len) {
                    self.files[file].closed = true;
                    self.state = State::Prose;
                } else {
                    let block = &mut self.files[file];
                    if block.name.is_none() && block.content.is_empty() {
                        // A block that named nothing may name itself on its first line; the line
                        // stays part of the file.
                        block.name = named(&mut block.language, names::comment_path(line));
                    }
                    push_line(&mut block.content, line);
                }
                self.revision += 1;
            }
            State::Bare { file } => {
                push_line(&mut self.files[file].content, line);
                if find_ascii_ci(line, "</html>").is_some() {
                    self.files[file].closed = true;
                    self.state = State::Prose;
                }
                self.revision += 1;
            }
        }
    }
}

/// `path`, if it suits a block in `language`; a block whose fence named no language takes its name's.
fn named(language: &mut String, path: Option<String>) -> Option<String> {
    let path = path.filter(|path| names::suits(language, path))?;
    if language == "plaintext" {
        *language = names::language_of(&path);
    }
    Some(path)
}

fn push_line(content: &mut String, line: &str) {
    content.push_str(line);
    content.push('\n');
}

/// An opening fence line's parts.
struct OpeningFence<'a> {
    ch: u8,
    len: usize,
    info: &'a str,
}

/// Leading spaces and tabs are allowed before fences: models indent them inside lists.
fn strip_indent(line: &str) -> &str {
    line.trim_start_matches([' ', '\t'])
}

fn fence_run(s: &str, ch: u8) -> usize {
    s.bytes().take_while(|&b| b == ch).count()
}

fn parse_opening_fence(line: &str) -> Option<OpeningFence<'_>> {
    let s = strip_indent(line);
    let ch = *s.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = fence_run(s, ch);
    if len < 3 {
        return None;
    }
    let info = s[len..].trim();
    // CommonMark: a backtick fence's info string cannot contain backticks (that is inline code).
    if ch == b'`' && info.contains('`') {
        return None;
    }
    Some(OpeningFence { ch, len, info })
}

fn is_closing_fence(line: &str, ch: u8, len: usize) -> bool {
    let s = strip_indent(line);
    let run = fence_run(s, ch);
    run >= len && s[run..].trim().is_empty()
}

/// Whether an unfinished line inside a fence could still become its closing fence.
fn could_close_fence(line: &str, ch: u8, len: usize) -> bool {
    let s = strip_indent(line);
    let run = fence_run(s, ch);
    let rest = &s[run..];
    if rest.is_empty() {
        return true;
    }
    run >= len && rest.trim().is_empty()
}

/// Whether an unfinished prose line could still become a fence or the start of a bare document.
fn could_open_something(line: &str) -> bool {
    let s = strip_indent(line);
    match s.as_bytes().first() {
        None => true,
        Some(b'`' | b'~') => true,
        Some(b'<') => could_start_bare_document(s),
        Some(_) => false,
    }
}

const DOCTYPE: &str = "<!doctype";
const HTML_TAG: &str = "<html";

fn could_start_bare_document(s: &str) -> bool {
    let n = s.len().min(DOCTYPE.len());
    let m = s.len().min(HTML_TAG.len());
    s.is_char_boundary(n) && s[..n].eq_ignore_ascii_case(&DOCTYPE[..n])
        || s.is_char_boundary(m) && s[..m].eq_ignore_ascii_case(&HTML_TAG[..m])
}

/// Whether `line` starts an HTML document (`<!DOCTYPE …` or `<html…`). With `complete`, the line
/// has ended, so `<html` alone counts.
fn starts_bare_document(line: &str, complete: bool) -> bool {
    let s = strip_indent(line);
    let b = s.as_bytes();
    if b.len() >= DOCTYPE.len() && b[..DOCTYPE.len()].eq_ignore_ascii_case(DOCTYPE.as_bytes()) {
        return true;
    }
    if b.len() >= HTML_TAG.len() && b[..HTML_TAG.len()].eq_ignore_ascii_case(HTML_TAG.as_bytes()) {
        return match b.get(HTML_TAG.len()) {
            None => complete,
            Some(c) => *c == b'>' || c.is_ascii_whitespace(),
        };
    }
    false
}

/// Byte offset of the first ASCII-case-insensitive occurrence of `needle` (ASCII) in `hay`.
pub fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    if n.is_empty() || h.len() < n.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// Byte offset of the last ASCII-case-insensitive occurrence of `needle` (ASCII) in `hay`.
pub fn rfind_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    if n.is_empty() || h.len() < n.len() {
        return None;
    }
    (0..=h.len() - n.len()).rev().find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
