//! Versions of the code: every finished, accepted or promoted version is kept with its prompt, model
//! and time (v1…vN). Selecting an older one shows it, and the next change branches from it: versions
//! are never rewritten, each knows the one it came from.

use flint_protocol::picture::with_description;
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
    /// The pictures its prompt had, as its model took them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pictures: Option<FromPictures>,
}

/// The pictures a version's prompt had. The pictures themselves stay with the session and the
/// history (they are large); a version keeps what its model was told, so its thread can tell the
/// next edit what the picture showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FromPictures {
    /// How many pictures there were.
    pub count: usize,
    /// The description the model got in their place; none when it saw them.
    pub description: Option<Described>,
}

/// A picture description as a code model that does not see got it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Described {
    /// The description (as the person left it after editing).
    pub text: String,
    /// The vision model that wrote it.
    pub by: String,
}

impl FromPictures {
    /// `from 1 picture, described by cloud/gpt-4o` or `from 2 pictures the model saw`.
    pub fn label(&self) -> String {
        let plural = if self.count == 1 { "" } else { "s" };
        match &self.description {
            Some(d) => format!("from {} picture{plural}, described by {}", self.count, d.by),
            None => format!("from {} picture{plural} the model saw", self.count),
        }
    }
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

    /// Keeps `code` as a new version, child of the current one (opened code starts a tree of its
    /// own, or selects the version that already holds it), and makes it current; returns its
    /// index. Code equal to the current version's is not kept twice.
    pub fn push(&mut self, code: String, prompt: &str, model: &str, at_ms: u64, origin: Origin) -> usize {
        // Opening code that is already a version (from the history, say) selects that version.
        if origin == Origin::Opened
            && let Some(i) = self.list.iter().position(|v| v.code == code)
        {
            self.current = Some(i);
            return i;
        }
        let parent = if origin == Origin::Opened { None } else { self.current };
        self.push_from(parent, code, prompt, model, at_ms, origin)
    }

    /// [`push`](Self::push) with an explicit parent (the version an answer started from, which may
    /// no longer be current).
    pub fn push_from(
        &mut self,
        parent: Option<usize>,
        code: String,
        prompt: &str,
        model: &str,
        at_ms: u64,
        origin: Origin,
    ) -> usize {
        if let Some(i) = self.current
            && self.list.get(i).is_some_and(|v| v.code == code)
        {
            return i;
        }
        let parent = parent.filter(|&p| p < self.list.len());
        self.list.push(Version {
            code,
            prompt: prompt.trim().to_owned(),
            model: model.to_owned(),
            at_ms,
            parent,
            origin,
            pictures: None,
        });
        let index = self.list.len() - 1;
        self.current = Some(index);
        index
    }

    /// Puts `earlier` (a restored record) before these versions: their indices shift, and the
    /// current version stays current (or `earlier`'s, when these are none). A record with indices
    /// out of range is mended: a bad parent is dropped, a bad current is the last version.
    pub fn adopt(&mut self, earlier: Versions) {
        let mut list = earlier.list;
        let offset = list.len();
        for (i, v) in list.iter_mut().enumerate() {
            v.parent = v.parent.filter(|&p| p < i);
        }
        let earlier_current = earlier.current.filter(|&c| c < offset).or(offset.checked_sub(1));
        for mut v in self.list.drain(..) {
            v.parent = v.parent.map(|p| p + offset);
            list.push(v);
        }
        self.current = self.current.map(|c| c + offset).or(earlier_current);
        self.list = list;
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

    /// Records what version `index`'s prompt had of pictures, unless it has a record already (a
    /// version is never rewritten: the same code kept again keeps its first story).
    pub fn note_pictures(&mut self, index: usize, pictures: Option<FromPictures>) {
        if let Some(version) = self.list.get_mut(index)
            && version.pictures.is_none()
        {
            version.pictures = pictures;
        }
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
                // A described picture was part of what the model was asked: the next edit hears it too.
                let prompt = match version.pictures.as_ref().and_then(|p| p.description.as_ref()) {
                    Some(d) => with_description(&version.prompt, &d.text, &d.by),
                    None => version.prompt.clone(),
                };
                turns.push(Turn { prompt, code: version.code.clone() });
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

    #[test]
    fn opened_code_starts_its_own_tree() {
        let mut v = Versions::default();
        push(&mut v, "a", "one");
        v.push("x".into(), "", "", 2, Origin::Opened);
        assert_eq!(v.list()[1].parent, None);
        assert!(v.thread().is_empty(), "the thread stops at opened code");
        assert_eq!(v.push("a".into(), "", "", 3, Origin::Opened), 0, "opening a kept version selects it");
        assert_eq!((v.list().len(), v.current_index()), (2, Some(0)));
    }

    #[test]
    fn restored_versions_go_first_and_bad_records_are_mended() {
        let mut saved = Versions::default();
        push(&mut saved, "a", "one");
        push(&mut saved, "b", "two");
        let mut now = Versions::default();
        now.push("link".into(), "", "", 3, Origin::Opened);
        push(&mut now, "link2", "three");
        now.adopt(saved.clone());
        let codes: Vec<&str> = now.list().iter().map(|v| v.code.as_str()).collect();
        assert_eq!(codes, ["a", "b", "link", "link2"]);
        assert_eq!((now.current_index(), now.list()[3].parent), (Some(3), Some(2)));
        let mut empty = Versions::default();
        empty.adopt(saved);
        assert_eq!(empty.current_index(), Some(1));
        let bad = r#"{"list":[{"code":"a","prompt":"p","model":"m","at_ms":1,"parent":5,"origin":"generated"}],"current":7}"#;
        let mut mended = Versions::default();
        mended.adopt(serde_json::from_str(bad).unwrap());
        assert_eq!((mended.current_index(), mended.list()[0].parent), (Some(0), None));
        assert_eq!(mended.current().unwrap().code, "a");
    }

    #[test]
    fn a_described_picture_travels_with_its_version_and_into_the_thread() {
        let mut v = Versions::default();
        let described = FromPictures {
            count: 1,
            description: Some(Described { text: "A blue header".into(), by: "cloud/eye".into() }),
        };
        let first = push(&mut v, "a", "build this");
        v.note_pictures(first, Some(described.clone()));
        v.note_pictures(first, None);
        assert_eq!(v.list()[0].pictures, Some(described), "a version's story is not rewritten");
        push(&mut v, "b", "make it red");
        let thread = v.thread();
        assert!(thread[0].prompt.starts_with("build this\n\n"));
        assert!(thread[0].prompt.contains("<picture-description>\nA blue header\n</picture-description>"));
        assert_eq!(thread[1].prompt, "make it red");
        let back: Versions = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        assert_eq!(back, v, "the description is saved with the versions");
        let old: Versions = serde_json::from_str(
            r#"{"list":[{"code":"a","prompt":"p","model":"m","at_ms":1,"parent":null,"origin":"generated"}],"current":0}"#,
        )
        .unwrap();
        assert_eq!(old.list()[0].pictures, None, "versions saved before pictures still open");
        assert_eq!(v.list()[0].pictures.as_ref().unwrap().label(), "from 1 picture, described by cloud/eye");
    }
}
