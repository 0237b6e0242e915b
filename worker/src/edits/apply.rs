//! Applying search/replace blocks to a file: exact matches first, then whole lines ignoring
//! whitespace, every block matched against the file as it was before the answer.

use std::borrow::Cow;
use std::ops::Range;

use flint_protocol::project::{Section, sections};

use super::EditBlock;
use super::line_hash::{LooseBytes, hash_exact, hash_loose};

/// What became of one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Applied; the file changed as described.
    Applied(Applied),
    /// The SEARCH lines are not in the file, not even ignoring whitespace.
    NotFound,
    /// The SEARCH lines occur `matches` times; nothing was changed.
    Ambiguous {
        /// How many places matched (at least 2).
        matches: usize,
    },
    /// The SEARCH lines overlap lines that block number `block` (0-based, in the order blocks were
    /// applied) already replaced; nothing was changed.
    Overlaps {
        /// The earlier block.
        block: usize,
    },
}

/// One applied block, as an edit of the text as it was just before it (what an editor's
/// `applyEdits` wants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The bytes replaced, in the text before this block (always on line boundaries, so on char
    /// boundaries).
    pub range: Range<usize>,
    /// The text put there.
    pub text: String,
    /// `false` when the match needed the whitespace-tolerant comparison.
    pub exact: bool,
}

/// A file's lines: `start..content` is the text, `content..end` its line break (empty on a last
/// line without one).
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    content: usize,
    end: usize,
}

/// An applied block, in the original file's coordinates.
#[derive(Debug, Clone)]
struct Edit {
    block: usize,
    range: Range<usize>,
    text: String,
}

/// A file and the blocks applied to it so far.
///
/// Blocks are matched against the original file (see the [module docs](self)), by comparing
/// per-line hashes: one pass over the file when it is loaded, then each block costs a scan of one
/// integer per line, whatever the file's size.
#[derive(Debug, Clone)]
pub struct EditedFile {
    original: String,
    /// The file's line break, used for replacement text: `\r\n` if its first one is.
    newline: &'static str,
    lines: Vec<Line>,
    exact: Vec<u64>,
    /// Whitespace-insensitive hashes, computed when a block first needs them.
    loose: Vec<u64>,
    /// Sorted by position; ranges do not overlap.
    edits: Vec<Edit>,
    blocks: usize,
    /// A project's files, by line (empty for a single file): where a block naming one applies.
    sections: Vec<Section>,
}

impl EditedFile {
    /// Loads `original`, the file as the model saw it.
    pub fn new(original: impl Into<String>) -> Self {
        let original = original.into();
        let mut lines = Vec::new();
        let mut start = 0;
        for piece in split_lines(&original) {
            let end = start + piece.len();
            let text = piece.strip_suffix('\n').map_or(piece, |p| p.strip_suffix('\r').unwrap_or(p));
            lines.push(Line { start, content: start + text.len(), end });
            start = end;
        }
        let exact = lines.iter().map(|l| hash_exact(&original[l.start..l.content])).collect();
        let newline = match lines.first() {
            Some(l) if original[l.content..l.end] == *"\r\n" => "\r\n",
            _ => "\n",
        };
        let sections = sections(&original).unwrap_or_default();
        Self { original, newline, lines, exact, loose: Vec::new(), edits: Vec::new(), blocks: 0, sections }
    }

    /// The file before any block.
    pub fn original(&self) -> &str {
        &self.original
    }

    /// The file with every applied block.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.original.len());
        let mut at = 0;
        for edit in &self.edits {
            out.push_str(&self.original[at..edit.range.start]);
            out.push_str(&edit.text);
            at = edit.range.end;
        }
        out.push_str(&self.original[at..]);
        out
    }

    /// Applies the next block of the answer, or says why not.
    pub fn apply(&mut self, block: &EditBlock) -> Outcome {
        let index = self.blocks;
        self.blocks += 1;
        let search: Vec<&str> = block.search.lines().collect();
        let replace: Vec<&str> = block.replace.lines().collect();
        let named = block.file.as_deref().filter(|_| !self.sections.is_empty());
        let section = named.and_then(|path| self.section(path));
        let (range, text, exact) = if search.is_empty() {
            match (named, section) {
                // The end of the named file: before its closing fence.
                (_, Some(lines)) => {
                    let at = self.lines[lines.end].start;
                    (at..at, replace.iter().map(|l| format!("{l}{}", self.newline)).collect(), true)
                }
                (Some(path), None) => {
                    let text = flint_protocol::project::new_section(path, &block.replace);
                    (self.original.len()..self.original.len(), text, true)
                }
                (None, None) => (self.original.len()..self.original.len(), self.appended(&replace), true),
            }
        } else {
            let within = section.unwrap_or(0..self.lines.len());
            let (first, exact) = match self.find(&search, within) {
                Ok(found) => found,
                Err(outcome) => return outcome,
            };
            let replace = if exact {
                replace.into_iter().map(Cow::Borrowed).collect()
            } else {
                self.reindent(first, &search, replace)
            };
            let (range, text) = self.replacement(first..first + search.len(), &replace);
            (range, text, exact)
        };
        if let Some(other) = self.edits.iter().find(|e| overlaps(&e.range, &range)) {
            return Outcome::Overlaps { block: other.block };
        }
        let at = self.edits.partition_point(|e| (e.range.start, e.range.end) <= (range.start, range.end));
        let shift: isize =
            self.edits[..at].iter().map(|e| e.text.len() as isize - e.range.len() as isize).sum();
        let start = range.start.saturating_add_signed(shift);
        let applied = Applied { range: start..start + range.len(), text: text.clone(), exact };
        self.edits.insert(at, Edit { block: index, range, text });
        Outcome::Applied(applied)
    }

    /// The text of the project's file `path` names, as the model saw it (see [`Self::section`]).
    pub fn project_file(&self, path: &str) -> Option<String> {
        let lines = self.section(path)?;
        let (start, end) = match (self.lines.get(lines.start), self.lines.get(lines.end)) {
            (Some(first), Some(fence)) if !lines.is_empty() => (first.start, fence.start),
            _ => return Some(String::new()),
        };
        Some(self.original[start..end].to_owned())
    }

    /// The lines of the project file `path` names: that path, or the one file whose path ends with
    /// it or that it ends with (a model may add or drop a `src/`).
    fn section(&self, path: &str) -> Option<Range<usize>> {
        let path = path.trim_start_matches("./");
        if let Some(exact) = self.sections.iter().find(|s| s.path == path) {
            return Some(exact.lines.clone());
        }
        let near =
            |s: &&Section| s.path.ends_with(&format!("/{path}")) || path.ends_with(&format!("/{}", s.path));
        let mut found = self.sections.iter().filter(near);
        match (found.next(), found.next()) {
            (Some(one), None) => Some(one.lines.clone()),
            _ => None,
        }
    }

    /// The first line of the unique match of `search` among the lines `within`, and whether it is
    /// exact.
    fn find(&mut self, search: &[&str], within: Range<usize>) -> Result<(usize, bool), Outcome> {
        let hashes: Vec<u64> = search.iter().map(|l| hash_exact(l)).collect();
        let eq = |line: &str, want: &str| line == want;
        match self.matches(&self.exact[..within.end], within.start, &hashes, search, eq) {
            (0, _) => {}
            (1, first) => return Ok((first, true)),
            (n, _) => return Err(Outcome::Ambiguous { matches: n }),
        }
        if self.loose.is_empty() && !self.lines.is_empty() {
            self.loose = self.lines.iter().map(|l| hash_loose(&self.original[l.start..l.content])).collect();
        }
        let hashes: Vec<u64> = search.iter().map(|l| hash_loose(l)).collect();
        let eq = |line: &str, want: &str| LooseBytes::new(line).eq(LooseBytes::new(want));
        match self.matches(&self.loose[..within.end], within.start, &hashes, search, eq) {
            (0, _) => Err(Outcome::NotFound),
            (1, first) => Ok((first, false)),
            (n, _) => Err(Outcome::Ambiguous { matches: n }),
        }
    }

    /// How many places from line `from` on `search` matches (by `hashes` against `table`,
    /// confirmed by `eq`), and the first one.
    fn matches(
        &self,
        table: &[u64],
        from: usize,
        hashes: &[u64],
        search: &[&str],
        eq: impl Fn(&str, &str) -> bool,
    ) -> (usize, usize) {
        let (mut count, mut first) = (0, 0);
        let Some(last_start) = table.len().checked_sub(hashes.len()) else { return (0, 0) };
        for i in from..=last_start {
            if table[i] == hashes[0]
                && table[i..i + hashes.len()] == *hashes
                && search.iter().enumerate().all(|(j, want)| eq(self.line(i + j), want))
            {
                if count == 0 {
                    first = i;
                }
                count += 1;
            }
        }
        (count, first)
    }

    fn line(&self, i: usize) -> &str {
        let l = self.lines[i];
        &self.original[l.start..l.content]
    }

    /// The byte range and new text that replace `lines` with `replace`.
    fn replacement(&self, lines: Range<usize>, replace: &[Cow<'_, str>]) -> (Range<usize>, String) {
        let first = self.lines[lines.start];
        let last = self.lines[lines.end - 1];
        if replace.is_empty() {
            // Delete the lines with their line breaks; a last line without one takes the break
            // before it instead.
            let start = if last.content == last.end && lines.start > 0 {
                self.lines[lines.start - 1].content
            } else {
                first.start
            };
            return (start..last.end, String::new());
        }
        (first.start..last.content, replace.join(self.newline))
    }

    /// The text an empty SEARCH appends.
    fn appended(&self, replace: &[&str]) -> String {
        let mut text = String::new();
        if !self.original.is_empty() && !self.original.ends_with('\n') {
            text.push_str(self.newline);
        }
        for line in replace {
            text.push_str(line);
            text.push_str(self.newline);
        }
        text
    }

    /// `replace` with the model's indentation turned into the file's, judged on the first line of
    /// the match that has any text: tabs for spaces (or the reverse) when one is a whole multiple of
    /// the other, else the model's leading whitespace swapped for the file's.
    fn reindent<'a>(&self, first: usize, search: &[&str], replace: Vec<&'a str>) -> Vec<Cow<'a, str>> {
        let mut out: Vec<Cow<'a, str>> = replace.into_iter().map(Cow::Borrowed).collect();
        let Some(j) = search.iter().position(|l| !l.trim().is_empty()) else { return out };
        let (theirs, ours) = (indent(search[j]), indent(self.line(first + j)));
        if theirs == ours {
            return out;
        }
        let only = |s: &str, c: char| !s.is_empty() && s.chars().all(|x| x == c);
        // Columns per tab, and whether the file indents with tabs.
        let units = match (theirs.len(), ours.len()) {
            (t, o) if only(theirs, ' ') && only(ours, '\t') && t % o == 0 => Some((t / o, true)),
            (t, o) if only(theirs, '\t') && only(ours, ' ') && o % t == 0 => Some((o / t, false)),
            _ => None,
        };
        for line in out.iter_mut().filter(|l| !l.trim().is_empty()) {
            let lead = indent(line);
            let new_lead = match units {
                Some((tab, to_tabs)) => {
                    let cols: usize = lead.chars().map(|c| if c == '\t' { tab } else { 1 }).sum();
                    if to_tabs {
                        format!("{}{}", "\t".repeat(cols / tab), " ".repeat(cols % tab))
                    } else {
                        " ".repeat(cols)
                    }
                }
                None => match lead.strip_prefix(theirs) {
                    Some(rest) => format!("{ours}{rest}"),
                    None => continue,
                },
            };
            *line = Cow::Owned(format!("{new_lead}{}", &line[lead.len()..]));
        }
        out
    }
}

/// The leading whitespace of `line`.
fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Whether an edit of `b` conflicts with an applied edit of `a`: they share bytes, or one inserts
/// strictly inside the other. Touching ranges and insertions at the same point do not conflict.
fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    if a.is_empty() || b.is_empty() {
        let (point, other) = if a.is_empty() { (a.start, b) } else { (b.start, a) };
        other.start < point && point < other.end
    } else {
        a.start < b.end && b.start < a.end
    }
}

/// The lines of `text`, each with its `\n` (the last one may have none): `split_inclusive('\n')`, but
/// with `memchr`, which is several times faster at finding the breaks.
pub(super) fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1).chain([text.len()]);
    ends.filter_map(move |end| {
        // Every cut follows a '\n', so it is a char boundary; `get` keeps that unchecked claim safe.
        let line = text.get(start..end).filter(|l| !l.is_empty());
        start = end;
        line
    })
}

/// Applies `blocks` in order to `original`: the new text and each block's outcome.
pub fn apply_edits(original: &str, blocks: &[EditBlock]) -> (String, Vec<Outcome>) {
    let mut file = EditedFile::new(original);
    let outcomes = blocks.iter().map(|b| file.apply(b)).collect();
    (file.text(), outcomes)
}
