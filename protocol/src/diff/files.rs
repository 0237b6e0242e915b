//! A project's review is per file: the hunks between two project texts
//! ([`crate::project`]: files fenced by path, one text) come from diffing each file alone, so a
//! hunk never reads across two files, never shows or changes a fence line, and carries its
//! file's path and lines. A file only one side has is one hunk that adds or removes it whole,
//! fences and the blank line between files included, so that applying any subset of the hunks
//! (with [`super::merge`]) leaves every file fenced and every file not touched byte-equal.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::DiffHunk;
use crate::project::{Section, sections};

/// What a hunk does to its file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    /// Changes lines of a file both versions have.
    #[default]
    Edited,
    /// Adds the whole file.
    Added,
    /// Removes the whole file.
    Removed,
}

/// The file of a project that one hunk changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HunkFile {
    /// The file's path in the project (`components/Header.tsx`).
    pub path: String,
    /// Whether the hunk edits, adds or removes the file.
    pub change: FileChange,
    /// The hunk's lines in the file's old content (0-based, end exclusive; empty for an added file).
    pub old: Range<usize>,
    /// The hunk's lines in the file's new content (empty for a removed file).
    pub new: Range<usize>,
    /// The bytes of the old text a reader is shown: the hunk's, less fences and blank lines
    /// between files.
    pub old_shown: Range<usize>,
    /// The bytes of the new text a reader is shown.
    pub new_shown: Range<usize>,
}

/// Byte offset of each line of `text` (as `split_inclusive('\n')` cuts it), and its length last.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        at += line.len();
        starts.push(at);
    }
    starts
}

/// One side of the diff: a project's text, its lines and files.
struct Side<'a> {
    text: &'a str,
    starts: Vec<usize>,
    files: Vec<Section>,
}

impl<'a> Side<'a> {
    fn new(text: &'a str) -> Option<Self> {
        let files = sections(text)?;
        // Two files of one path cannot be told apart: such a text is reviewed whole.
        let unique = files.iter().enumerate().all(|(i, f)| files[..i].iter().all(|g| g.path != f.path));
        unique.then(|| Self { text, starts: line_starts(text), files })
    }

    fn find(&self, path: &str) -> Option<&Section> {
        self.files.iter().find(|f| f.path == path)
    }

    fn bytes(&self, lines: &Range<usize>) -> Range<usize> {
        self.starts[lines.start]..self.starts[lines.end]
    }

    /// The opening and closing fence lines of `file`.
    fn fences(&self, file: &Section) -> (&'a str, &'a str) {
        let line = |i: usize| self.text.get(self.starts[i]..self.starts[i + 1]).unwrap_or_default();
        (line(file.lines.start - 1), line(file.lines.end))
    }

    /// The lines a whole file takes, fences included, with the blank lines that part it from the
    /// file before it; a `leading` file (every file before it goes too) takes those after it
    /// instead, so that whichever of them go, what is left still starts with a fence. Never
    /// before `from` (where the last such file ended).
    fn whole(&self, index: usize, leading: bool, from: usize) -> Range<usize> {
        let file = &self.files[index];
        let (start, end) = match index.checked_sub(1).and_then(|i| self.files.get(i)) {
            Some(before) if !leading => (before.lines.end + 1, file.lines.end + 1),
            _ => {
                let next = self.files.get(index + 1).map_or(file.lines.end + 1, |f| f.lines.start - 1);
                (file.lines.start - 1, next)
            }
        };
        start.max(from)..end.max(from)
    }

    /// Where a file that follows `after` (a file of this side, or none: the start) begins.
    fn after(&self, after: Option<&Section>) -> usize {
        after.map_or(0, |f| f.lines.end + 1)
    }
}

/// The hunks from project `old` to project `new`, each file diffed alone by `diff_file` (a line
/// diff of two texts), in the old text's order (a file added goes after the file it follows in
/// `new`); `None` when either text is not a project (or names a file twice): then the texts are
/// diffed whole, as a page is.
pub fn project_hunks(
    old: &str,
    new: &str,
    diff_file: impl Fn(&str, &str) -> Vec<DiffHunk>,
) -> Option<Vec<DiffHunk>> {
    let (before, after) = (Side::new(old)?, Side::new(new)?);
    let mut hunks = Vec::new();
    let (mut removed_from, mut leading) = (0, true);
    for (i, file) in before.files.iter().enumerate() {
        let Some(kept) = after.find(&file.path) else {
            let lines = before.whole(i, leading, removed_from);
            removed_from = lines.end;
            // In the new text, where the file would have been: after the last earlier file kept.
            let previous = before.files[..i].iter().rev().find_map(|f| after.find(&f.path));
            let at = after.after(previous);
            let shown = before.bytes(&file.lines);
            hunks.push(DiffHunk {
                old_bytes: before.bytes(&lines),
                new_bytes: after.starts[at]..after.starts[at],
                old: lines,
                new: at..at,
                file: Some(HunkFile {
                    path: file.path.clone(),
                    change: FileChange::Removed,
                    old: 0..file.lines.len(),
                    new: 0..0,
                    old_shown: shown,
                    new_shown: after.starts[at]..after.starts[at],
                }),
                ..DiffHunk::default()
            });
            continue;
        };
        leading = false;
        if before.fences(file) != after.fences(kept) {
            // A fence that changed (its language, or its length for a file that now holds
            // backticks) goes with the whole file, so that no choice leaves it unbalanced.
            let old_lines = file.lines.start - 1..file.lines.end + 1;
            let new_lines = kept.lines.start - 1..kept.lines.end + 1;
            hunks.push(DiffHunk {
                old_bytes: before.bytes(&old_lines),
                new_bytes: after.bytes(&new_lines),
                old: old_lines,
                new: new_lines,
                file: Some(HunkFile {
                    path: file.path.clone(),
                    change: FileChange::Edited,
                    old: 0..file.lines.len(),
                    new: 0..kept.lines.len(),
                    old_shown: before.bytes(&file.lines),
                    new_shown: after.bytes(&kept.lines),
                }),
                ..DiffHunk::default()
            });
            continue;
        }
        let (old_at, new_at) = (before.bytes(&file.lines), after.bytes(&kept.lines));
        let shift = |r: &Range<usize>, by: usize| r.start + by..r.end + by;
        for hunk in diff_file(&old[old_at.clone()], &new[new_at.clone()]) {
            let old_bytes = shift(&hunk.old_bytes, old_at.start);
            let new_bytes = shift(&hunk.new_bytes, new_at.start);
            hunks.push(DiffHunk {
                old: shift(&hunk.old, file.lines.start),
                new: shift(&hunk.new, kept.lines.start),
                old_words: hunk.old_words.iter().map(|w| shift(w, old_at.start)).collect(),
                new_words: hunk.new_words.iter().map(|w| shift(w, new_at.start)).collect(),
                file: Some(HunkFile {
                    path: file.path.clone(),
                    change: FileChange::Edited,
                    old: hunk.old,
                    new: hunk.new,
                    old_shown: old_bytes.clone(),
                    new_shown: new_bytes.clone(),
                }),
                old_bytes,
                new_bytes,
            });
        }
    }
    let (mut added_from, mut leading) = (0, true);
    for (j, file) in after.files.iter().enumerate() {
        if before.find(&file.path).is_some() {
            leading = false;
            continue;
        }
        let lines = after.whole(j, leading, added_from);
        added_from = lines.end;
        // In the old text, after the file it follows in the new one (the start when none does).
        let previous = after.files[..j].iter().rev().find_map(|f| before.find(&f.path));
        let at = before.after(previous);
        let empty = before.starts[at]..before.starts[at];
        hunks.push(DiffHunk {
            new_bytes: after.bytes(&lines),
            new: lines,
            old_bytes: empty.clone(),
            old: at..at,
            file: Some(HunkFile {
                path: file.path.clone(),
                change: FileChange::Added,
                old: 0..0,
                new: 0..file.lines.len(),
                old_shown: empty,
                new_shown: after.bytes(&file.lines),
            }),
            ..DiffHunk::default()
        });
    }
    // In the old text's order; a file added where one was removed goes before it, and stable
    // sorting keeps added files in their order.
    hunks.sort_by_key(|h| (h.old_bytes.start, !h.old_bytes.is_empty()));
    Some(hunks)
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
