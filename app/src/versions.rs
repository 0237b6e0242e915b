//! Versions of the code: every finished, accepted or promoted version is kept with its prompt, model
//! and time (v1…vN). Selecting an older one shows it, and the next change branches from it: versions
//! are never rewritten, each knows the one it came from.

use flint_protocol::prompt::Turn;
use serde::{Deserialize, Serialize};

/// How a version came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A whole page generated from a prompt.
    Generated,
    /// Edits of its parent, reviewed and accepted (all or some).
    Edited,
    /// A variation or compared model, promoted.
    Promoted,
    /// The person's own changes in the editor.
    HandEdit,
    /// Code opened from a link, the history or a saved session.
    Opened,
}

impl Origin {
    /// How the person sees it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Generated => "generated",
            Self::Edited => "edited",
            Self::Promoted => "promoted",
            Self::HandEdit => "edited by hand",
            Self::Opened => "opened",
        }
    }
}

/// One kept version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    /// The code (the main file).
    pub code: String,
    /// The prompt that led to it (empty for code typed or opened).
    pub prompt: String,
    /// The model that wrote it (empty when none did).
    pub model: String,
    /// When it was kept (ms since the epoch).
    pub at_ms: u64,
    /// The version it came from (an index), if any.
    pub parent: Option<usize>,
    /// How it came to be.
    pub origin: Origin,
}

/// Every version of this session, and the one shown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Versions {
    list: Vec<Version>,
    current: Option<usize>,
}

impl Versions {
    /// All versions, oldest first (v1 is index 0).
    pub fn list(&self) -> &[Version] {
        &self.list
    }

    /// The index of the version shown.
    pub fn current_index(&self) -> Option<usize> {
        self.current
    }

    /// The version shown.
    pub fn current(&self) -> Option<&Version> {
        self.list.get(self.current?)
    }

    /// Keeps `code` as a new version, child of the current one, and makes it current; returns its
    /// index. Code equal to the current version's is not kept twice.
    pub fn push(&mut self, code: String, prompt: &str, model: &str, at_ms: u64, origin: Origin) -> usize {
        if let Some(i) = self.current
            && self.list[i].code == code
        {
            return i;
        }
        self.list.push(Version {
            code,
            prompt: prompt.trim().to_owned(),
            model: model.to_owned(),
            at_ms,
            parent: self.current,
            origin,
        });
        let index = self.list.len() - 1;
        self.current = Some(index);
        index
    }

    /// Makes version `index` current; `None` when there is no such version.
    pub fn select(&mut self, index: usize) -> Option<&Version> {
        let version = self.list.get(index)?;
        self.current = Some(index);
        Some(version)
    }

    /// The version's parent, when it is not the version just before it (a branch).
    pub fn branched_from(&self, index: usize) -> Option<usize> {
        let parent = self.list.get(index)?.parent?;
        (parent + 1 != index).then_some(parent)
    }

    /// The turns that led to the current version, oldest first: each prompted ancestor (itself
    /// included) with its code. What "continue thread" carries.
    pub fn thread(&self) -> Vec<Turn> {
        let mut turns = Vec::new();
        let mut at = self.current;
        // Parents always come before their children, so this ends; the bound guards a bad record.
        while let Some(i) = at.filter(|_| turns.len() <= self.list.len()) {
            let Some(version) = self.list.get(i) else { break };
            if !version.prompt.is_empty() {
                turns.push(Turn { prompt: version.prompt.clone(), code: version.code.clone() });
            }
            at = version.parent.filter(|&p| p < i);
        }
        turns.reverse();
        turns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(v: &mut Versions, code: &str, prompt: &str) -> usize {
        v.push(code.into(), prompt, "m", 1, Origin::Generated)
    }

    #[test]
    fn versions_are_numbered_in_order_and_the_newest_is_current() {
        let mut v = Versions::default();
        assert_eq!(v.current(), None);
        assert_eq!(push(&mut v, "a", "one"), 0);
        assert_eq!(push(&mut v, "b", "two"), 1);
        assert_eq!(v.current().unwrap().code, "b");
        assert_eq!(v.list()[1].parent, Some(0));
    }

    #[test]
    fn the_same_code_is_not_kept_twice_in_a_row() {
        let mut v = Versions::default();
        push(&mut v, "a", "one");
        assert_eq!(push(&mut v, "a", "again"), 0);
        assert_eq!(v.list().len(), 1);
    }

    #[test]
    fn selecting_an_old_version_branches_from_it() {
        let mut v = Versions::default();
        push(&mut v, "a", "one");
        push(&mut v, "b", "two");
        push(&mut v, "c", "three");
        assert_eq!(v.select(0).unwrap().code, "a");
        assert!(v.select(9).is_none());
        assert_eq!(v.current_index(), Some(0));
        assert_eq!(push(&mut v, "d", "four"), 3);
        assert_eq!(v.branched_from(3), Some(0));
        assert_eq!(v.branched_from(1), None);
        // The thread follows the branch, not the list.
        let prompts: Vec<String> = v.thread().into_iter().map(|t| t.prompt).collect();
        assert_eq!(prompts, ["one", "four"]);
    }

    #[test]
    fn the_thread_skips_versions_without_a_prompt() {
        let mut v = Versions::default();
        push(&mut v, "a", "one");
        v.push("a2".into(), "", "", 2, Origin::HandEdit);
        push(&mut v, "b", "two");
        let turns = v.thread();
        assert_eq!(turns.len(), 2);
        assert_eq!((turns[0].code.as_str(), turns[1].code.as_str()), ("a", "b"));
    }

    #[test]
    fn versions_survive_a_round_trip_and_a_bad_parent_cannot_loop() {
        let mut v = Versions::default();
        push(&mut v, "a", "one");
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Versions>(&json).unwrap(), v);
        let looped = r#"{"list":[{"code":"a","prompt":"p","model":"m","at_ms":1,"parent":0,"origin":"generated"}],"current":0}"#;
        let v: Versions = serde_json::from_str(looped).unwrap();
        assert_eq!(v.thread().len(), 1);
    }
}
