//! Reviewing a proposed edit: the hunks between the current version and the proposal, each kept or
//! rejected, and the code that results.

use flint_protocol::diff::{DiffHunk, merge};

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

impl Review {
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

    /// Hunk `index` for display.
    pub fn view(&self, index: usize) -> Option<HunkView> {
        let hunk = self.hunks.get(index)?;
        let first = hunk.old.start + 1;
        let place = match hunk.old.len() {
            0 => format!("after line {}", hunk.old.start),
            1 => format!("line {first}"),
            n => format!("lines {first}–{}", first + n - 1),
        };
        Some(HunkView {
            place,
            removed: marked_lines(&self.base, hunk.old_bytes.clone(), &hunk.old_words),
            added: marked_lines(&self.proposal, hunk.new_bytes.clone(), &hunk.new_words),
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
mod tests {
    use super::*;

    /// `old` → `new` where line 2 and line 4 change: two hunks, as the worker's diff gives them.
    fn review() -> Review {
        let base = "a\nb\nc\nd\n".to_owned();
        let proposal = "a\nB b\nc\nD\n".to_owned();
        let hunks = vec![
            DiffHunk {
                old: 1..2,
                new: 1..2,
                old_bytes: 2..4,
                new_bytes: 2..6,
                old_words: vec![],
                new_words: std::iter::once(2..4).collect(),
            },
            DiffHunk { old: 3..4, new: 3..4, old_bytes: 6..8, new_bytes: 8..10, ..Default::default() },
        ];
        Review::new(base, proposal, hunks)
    }

    #[test]
    fn keeping_some_hunks_gives_exactly_those_changes() {
        let mut r = review();
        assert_eq!(r.result(), r.proposal);
        r.set(1, false);
        assert_eq!(r.result(), "a\nB b\nc\nd\n");
        assert_eq!(r.kept(), 1);
        r.set_all(false);
        assert_eq!(r.result(), r.base);
        r.set(7, true);
        assert_eq!(r.kept(), 0);
    }

    #[test]
    fn an_edit_scoped_to_a_picked_element_keeps_only_the_hunks_inside_it() {
        // Hunks change line 2 and line 4 (1-based); the element spans lines 2–3.
        let mut r = review();
        assert_eq!(r.keep_only_within((2, 3)), 1);
        assert_eq!(r.accepted, [true, false]);
        assert_eq!(r.result(), "a\nB b\nc\nd\n");
        let mut r = review();
        assert_eq!(r.keep_only_within((1, 4)), 0, "both inside");
        let mut r = review();
        assert_eq!(r.keep_only_within((3, 3)), 2, "neither inside");
        let mut r = review();
        r.hunks[1].old = 2..2;
        assert_eq!(r.keep_only_within((2, 3)), 0, "an insertion between the element's lines is inside");
        let mut r = review();
        r.hunks[1].old = 3..3;
        assert_eq!(r.keep_only_within((2, 3)), 1, "an insertion after its last line is not");
    }

    #[test]
    fn a_hunk_is_found_in_the_result_whatever_is_kept_before_it() {
        let mut r = review();
        r.hunks[0].new = 1..3;
        assert_eq!(r.line_in_result(1), 5, "the first hunk adds a line");
        r.set(0, false);
        assert_eq!(r.line_in_result(1), 4);
        assert_eq!(r.line_in_result(9), 1);
    }

    #[test]
    fn hunks_that_do_not_fit_leave_the_base() {
        let mut r = review();
        r.hunks[1].new_bytes = 8..99;
        assert_eq!(r.result(), r.base);
    }

    #[test]
    fn a_hunk_is_shown_with_its_changed_words() {
        let r = review();
        let v = r.view(0).unwrap();
        assert_eq!(v.place, "line 2");
        assert_eq!(v.removed, vec![vec![("b".to_owned(), true)]]);
        assert_eq!(v.added, vec![vec![("B ".to_owned(), true), ("b".to_owned(), false)]]);
        assert!(r.view(2).is_none());
    }
}
