//! Reviewing a proposed edit: the hunks between the current version and the proposal, each kept or
//! rejected, and the code that results. A project's hunks each change one file
//! ([`flint_protocol::diff::project_hunks`]): the review groups them by file.

use flint_protocol::diff::{DiffHunk, FileChange, merge};

/// A proposal under review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// The code the edit started from.
    pub base: String,
    /// The code with every hunk applied.
    pub proposal: String,
    /// The changes, in order.
    pub hunks: Vec<DiffHunk>,
    /// Which hunks are kept (all, at first).
    pub accepted: Vec<bool>,
    /// The prompt that asked for it.
    pub prompt: String,
    /// The model that answered.
    pub model: String,
    /// The version the edit started from (index).
    pub parent: Option<usize>,
}

/// One hunk as the review list shows it: its lines, with the changed words marked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkView {
    /// Where it is: `line 12` or `lines 12–14` of the current version (1-based).
    pub place: String,
    /// Removed lines, as runs of (text, changed).
    pub removed: Vec<Vec<(String, bool)>>,
    /// Added lines, as runs of (text, changed).
    pub added: Vec<Vec<(String, bool)>>,
}

/// The hunks of one file of a project, as the review groups them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileGroup {
    /// The file's path (`components/Header.tsx`).
    pub path: String,
    /// Whether the edit changes, adds or removes the file.
    pub change: FileChange,
    /// Its hunks (indices into [`Review::hunks`]), in order.
    pub hunks: Vec<usize>,
}

impl FileGroup {
    /// The group's heading: the path and what happens to it (`App.tsx · 2 changes`).
    pub fn heading(&self) -> String {
        let what = match (self.change, self.hunks.len()) {
            (FileChange::Added, _) => "new file".to_owned(),
            (FileChange::Removed, _) => "file removed".to_owned(),
            (FileChange::Edited, 1) => "1 change".to_owned(),
            (FileChange::Edited, n) => format!("{n} changes"),
        };
        format!("{} · {what}", self.path)
    }

    /// The accessible names of its "Accept all" and "Reject all" buttons, which say how many
    /// changes of which file they act on.
    pub fn button_names(&self) -> (String, String) {
        let what = match self.hunks.len() {
            1 => format!("the change in {}", self.path),
            n => format!("all {n} changes in {}", self.path),
        };
        (format!("Accept {what}"), format!("Reject {what}"))
    }
}

impl Review {
    /// The hunks grouped by file, in the project's order; empty for a page or a single file
    /// (whose review is one list).
    pub fn files(&self) -> Vec<FileGroup> {
        let mut groups: Vec<FileGroup> = Vec::new();
        for (i, hunk) in self.hunks.iter().enumerate() {
            let Some(file) = &hunk.file else { continue };
            match groups.iter_mut().find(|g| g.path == file.path) {
                Some(group) => group.hunks.push(i),
                None => {
                    groups.push(FileGroup { path: file.path.clone(), change: file.change, hunks: vec![i] })
                }
            }
        }
        groups
    }

    /// Keeps or rejects every hunk of the file at `path`.
    pub fn set_file(&mut self, path: &str, keep: bool) {
        let in_file = self.hunks.iter().map(|h| h.file.as_ref().is_some_and(|f| f.path == path));
        for (kept, _) in self.accepted.iter_mut().zip(in_file).filter(|(_, in_file)| *in_file) {
            *kept = keep;
        }
    }

    /// Unticks every hunk that changes lines outside `lines` (1-based, inclusive, of the base):
    /// an edit scoped to a picked element keeps only what falls inside it. Returns how many.
    pub fn keep_only_within(&mut self, (first, last): (usize, usize)) -> usize {
        let mut outside = 0;
        for (hunk, kept) in self.hunks.iter().zip(self.accepted.iter_mut()) {
            // 0-based, end exclusive; an insertion (empty range) must sit between the first and last line.
            let inside = if hunk.old.is_empty() {
                hunk.old.start >= first && hunk.old.start < last
            } else {
                hunk.old.start + 1 >= first && hunk.old.end <= last
            };
            if !inside {
                *kept = false;
                outside += 1;
            }
        }
        outside
    }

    /// A review of `proposal` against `base`, every hunk kept.
    pub fn new(base: String, proposal: String, hunks: Vec<DiffHunk>) -> Self {
        let accepted = vec![true; hunks.len()];
        Self { base, proposal, hunks, accepted, prompt: String::new(), model: String::new(), parent: None }
    }

    /// The code with the kept hunks only; the base when the hunks do not fit the texts.
    pub fn result(&self) -> String {
        merge(&self.base, &self.proposal, &self.hunks, &self.accepted).unwrap_or_else(|| self.base.clone())
    }

    /// How many hunks are kept.
    pub fn kept(&self) -> usize {
        self.accepted.iter().filter(|&&a| a).count()
    }

    /// Keeps or rejects hunk `index`.
    pub fn set(&mut self, index: usize, keep: bool) {
        if let Some(a) = self.accepted.get_mut(index) {
            *a = keep;
        }
    }

    /// Keeps or rejects every hunk.
    pub fn set_all(&mut self, keep: bool) {
        self.accepted.iter_mut().for_each(|a| *a = keep);
    }

    /// Where hunk `index` starts in [`result`](Self::result) (1-based line): its line in the base,
    /// moved by the kept hunks before it.
    pub fn line_in_result(&self, index: usize) -> usize {
        let Some(hunk) = self.hunks.get(index) else { return 1 };
        let shift: isize = self.hunks[..index]
            .iter()
            .zip(&self.accepted)
            .filter(|&(_, &kept)| kept)
            .map(|(h, _)| h.new.len() as isize - h.old.len() as isize)
            .sum();
        (hunk.old.start as isize + shift).max(0) as usize + 1
    }

    /// Hunk `index` for display: a project's hunk by its file's own lines and without fences.
    pub fn view(&self, index: usize) -> Option<HunkView> {
        let hunk = self.hunks.get(index)?;
        let (lines, old_bytes, new_bytes) = match &hunk.file {
            Some(file) => (file.old.clone(), file.old_shown.clone(), file.new_shown.clone()),
            None => (hunk.old.clone(), hunk.old_bytes.clone(), hunk.new_bytes.clone()),
        };
        let first = lines.start + 1;
        let place = match (hunk.file.as_ref().map(|f| f.change), lines.len()) {
            (Some(FileChange::Added), _) => "new file".to_owned(),
            (Some(FileChange::Removed), _) => "file removed".to_owned(),
            (_, 0) => format!("after line {}", lines.start),
            (_, 1) => format!("line {first}"),
            (_, n) => format!("lines {first}–{}", first + n - 1),
        };
        Some(HunkView {
            place,
            removed: marked_lines(&self.base, old_bytes, &hunk.old_words),
            added: marked_lines(&self.proposal, new_bytes, &hunk.new_words),
        })
    }
}

/// The lines of `text[bytes]`, each cut into runs marked changed where they fall in `words`
/// (all of it when `words` is empty).
fn marked_lines(
    text: &str,
    bytes: std::ops::Range<usize>,
    words: &[std::ops::Range<usize>],
) -> Vec<Vec<(String, bool)>> {
    let Some(slice) = text.get(bytes.clone()) else { return Vec::new() };
    let mut lines = Vec::new();
    let mut start = bytes.start;
    for line in slice.split_inclusive('\n') {
        let end = start + line.len();
        let shown_end = start + line.trim_end_matches(['\n', '\r']).len();
        let mut runs = Vec::new();
        if words.is_empty() {
            runs.push((text[start..shown_end].to_owned(), true));
        } else {
            let mut at = start;
            for w in words.iter().filter(|w| w.end > start && w.start < shown_end) {
                let (ws, we) = (w.start.max(start), w.end.min(shown_end));
                if let (Some(plain), Some(changed)) = (text.get(at..ws), text.get(ws..we)) {
                    if !plain.is_empty() {
                        runs.push((plain.to_owned(), false));
                    }
                    runs.push((changed.to_owned(), true));
                    at = we;
                }
            }
            if let Some(rest) = text.get(at..shown_end).filter(|r| !r.is_empty()) {
                runs.push((rest.to_owned(), false));
            }
        }
        lines.push(runs);
        start = end;
    }
    lines
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
