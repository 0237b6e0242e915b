//! Hunks of a line diff, as the worker computes them and the page reviews them, and applying a
//! chosen subset of them. The diff itself is computed in the worker (`flint_worker::diff`); a
//! project's hunks are per file ([`files`]).

use std::ops::Range;

use serde::{Deserialize, Serialize};

mod files;
pub use files::*;

/// One change: old lines replaced by new lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffHunk {
    /// Lines of the old text (0-based, end exclusive); empty for a pure insertion.
    pub old: Range<usize>,
    /// Lines of the new text; empty for a pure deletion.
    pub new: Range<usize>,
    /// The same lines as bytes of the old text (line breaks included).
    pub old_bytes: Range<usize>,
    /// The same lines as bytes of the new text.
    pub new_bytes: Range<usize>,
    /// Changed words within the old lines (bytes of the old text, sorted, not touching). Empty when
    /// one side is empty or the hunk is large: then the whole hunk is the change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub old_words: Vec<Range<usize>>,
    /// Changed words within the new lines (bytes of the new text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_words: Vec<Range<usize>>,
    /// In a project, the one file the hunk changes (its path and its own lines); `None` for a
    /// page or a single file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<HunkFile>,
}

/// `old` with the hunks (computed from `old` to `new`) whose entry in `accepted` is `true` applied;
/// missing entries count as not accepted. Accepting none gives `old`, all gives `new`. `None` when
/// the hunks do not belong to these texts (out of order, out of range or not on char boundaries).
pub fn merge(old: &str, new: &str, hunks: &[DiffHunk], accepted: &[bool]) -> Option<String> {
    let mut out = String::with_capacity(old.len().max(new.len()));
    let mut at = 0;
    for (i, hunk) in hunks.iter().enumerate() {
        out.push_str(old.get(at..hunk.old_bytes.start)?);
        let side = if accepted.get(i).copied().unwrap_or(false) {
            new.get(hunk.new_bytes.clone())?
        } else {
            old.get(hunk.old_bytes.clone())?
        };
        out.push_str(side);
        at = hunk.old_bytes.end;
    }
    out.push_str(old.get(at..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "a\nb\nc\n" -> "a\nB\nc\nd\n": line 1 changed, line 3 added.
    fn hunks() -> Vec<DiffHunk> {
        vec![
            DiffHunk { old: 1..2, new: 1..2, old_bytes: 2..4, new_bytes: 2..4, ..DiffHunk::default() },
            DiffHunk { old: 3..3, new: 3..4, old_bytes: 6..6, new_bytes: 6..8, ..DiffHunk::default() },
        ]
    }

    #[test]
    fn merge_applies_the_accepted_hunks_only() {
        let (old, new) = ("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(merge(old, new, &hunks(), &[]).as_deref(), Some(old));
        assert_eq!(merge(old, new, &hunks(), &[true, true]).as_deref(), Some(new));
        assert_eq!(merge(old, new, &hunks(), &[true]).as_deref(), Some("a\nB\nc\n"));
        assert_eq!(merge(old, new, &hunks(), &[false, true]).as_deref(), Some("a\nb\nc\nd\n"));
        assert_eq!(merge("", "", &[], &[true]).as_deref(), Some(""));
    }

    #[test]
    fn hunks_that_do_not_fit_the_texts_give_none() {
        let (old, new) = ("a\nb\nc\n", "a\nB\nc\nd\n");
        let mut out_of_range = hunks();
        out_of_range[1].new_bytes = 6..80;
        assert_eq!(merge(old, new, &out_of_range, &[true, true]), None);
        let mut backwards = hunks();
        backwards.reverse();
        assert_eq!(merge(old, new, &backwards, &[]), None, "hunks out of order");
        assert_eq!(merge("a\n", new, &hunks(), &[]), None, "hunks of a longer old text");
        let split_char = [DiffHunk { old_bytes: 1..1, new_bytes: 0..1, ..DiffHunk::default() }];
        assert_eq!(merge("é", "x", &split_char, &[true]), None, "not on a char boundary");
    }
}
