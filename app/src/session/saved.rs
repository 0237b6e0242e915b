//! The saved session: one record, written whole (one IndexedDB put), read back on start-up, and what
//! start-up puts back from it.

use serde::{Deserialize, Serialize};

use crate::run::StreamStatus;
use crate::versions::Versions;

/// The record's format. A record of another version is ignored rather than misread.
pub const SESSION_VERSION: u32 = 1;

/// Everything kept across a reload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSession {
    /// [`SESSION_VERSION`] when written.
    pub version: u32,
    /// The prompt box's text.
    #[serde(default)]
    pub prompt: Option<String>,
    /// The model the person picked (not the default the page fell back to).
    #[serde(default)]
    pub model: Option<String>,
    /// The last generation started on this page.
    #[serde(default)]
    pub generation: Option<SavedGeneration>,
    /// How many variations a prompt fans out into, when the person changed it.
    #[serde(default)]
    pub variations: Option<u8>,
    /// The pinned goal.
    #[serde(default)]
    pub goal: Option<String>,
    /// The versions of the code and the one shown.
    #[serde(default)]
    pub versions: Option<Versions>,
}

impl Default for SavedSession {
    fn default() -> Self {
        Self {
            version: SESSION_VERSION,
            prompt: None,
            model: None,
            generation: None,
            variations: None,
            goal: None,
            versions: None,
        }
    }
}

/// One generation as far as it got; also one entry of the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedGeneration {
    /// Its history key: when it started (ms since the epoch). `None`: not in the history (the
    /// person deleted it there; it stays on screen).
    #[serde(default)]
    pub id: Option<u64>,
    /// The prompt it ran.
    pub prompt: String,
    /// The model it ran on.
    pub model: String,
    /// The editor's code when last saved (the parsed main file, not the raw streamed answer, so it
    /// goes straight back into the editor).
    pub code: String,
    /// Where it stood when last saved.
    pub status: SavedStatus,
}

/// A generation's status as saved; `Streaming` after a reload means the reload cut it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SavedStatus {
    /// Text was still arriving.
    Streaming,
    /// The answer was complete.
    Done,
    /// The person stopped it.
    Cancelled,
    /// It failed.
    Error,
}

impl SavedStatus {
    /// The saved form of a generation's status; `None` for [`StreamStatus::Idle`] (no generation).
    pub fn from_stream(status: StreamStatus) -> Option<Self> {
        match status {
            StreamStatus::Idle => None,
            StreamStatus::Streaming => Some(Self::Streaming),
            StreamStatus::Done => Some(Self::Done),
            StreamStatus::Cancelled => Some(Self::Cancelled),
            StreamStatus::Error => Some(Self::Error),
        }
    }
}

impl SavedGeneration {
    /// The record as stored in the history (JSON).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a generation of strings serializes")
    }
}

/// The history's records, newest first; records that cannot be read are left out.
pub fn history_entries(records: &[String]) -> Vec<SavedGeneration> {
    let mut entries: Vec<SavedGeneration> = records
        .iter()
        .filter_map(|json| serde_json::from_str::<SavedGeneration>(json).ok())
        .filter(|g| g.id.is_some())
        .collect();
    entries.sort_by_key(|g| std::cmp::Reverse(g.id));
    entries
}

/// The first line of `prompt`, at most `max` characters (with `…` when cut).
pub fn summary(prompt: &str, max: usize) -> String {
    let line = prompt.trim().lines().next().unwrap_or_default();
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Why a stored record was not restored.
#[derive(Debug, thiserror::Error)]
pub enum SavedError {
    /// Not a session record at all.
    #[error("the saved session is malformed: {0}")]
    Malformed(#[from] serde_json::Error),
    /// Written by another version of Flint.
    #[error("the saved session has format version {0}, this Flint reads {SESSION_VERSION}")]
    Version(u32),
}

impl SavedSession {
    /// The record as stored (JSON).
    pub fn to_json(&self) -> String {
        // Only strings, options and a unit enum: serializing cannot fail.
        serde_json::to_string(self).expect("a session of strings serializes")
    }

    /// Reads a stored record, checking its version before its fields.
    pub fn from_json(json: &str) -> Result<Self, SavedError> {
        #[derive(Deserialize)]
        struct Versioned {
            version: u32,
        }
        let Versioned { version } = serde_json::from_str(json)?;
        if version != SESSION_VERSION {
            return Err(SavedError::Version(version));
        }
        Ok(serde_json::from_str(json)?)
    }
}

/// The notice shown after a session was restored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoredNotice {
    /// The prompt, model and last answer came back.
    Restored,
    /// As [`Self::Restored`], but the answer was still streaming when the page went away.
    CutOff,
}

impl RestoredNotice {
    /// The sentence shown.
    pub fn text(self) -> &'static str {
        match self {
            Self::Restored => "Restored your last session",
            Self::CutOff => "Restored your last session — the answer was cut off by the reload",
        }
    }
}

/// What start-up puts back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restore {
    /// For the prompt box.
    pub prompt: Option<String>,
    /// To pick, when still usable.
    pub model: Option<String>,
    /// For the editor.
    pub code: Option<String>,
    /// For the variations control.
    pub variations: Option<u8>,
    /// The pinned goal.
    pub goal: Option<String>,
    /// The versions list.
    pub versions: Option<Versions>,
    /// What to tell the person; `None` when nothing came back.
    pub notice: Option<RestoredNotice>,
}

/// What to restore from `saved`. A shared link the page was opened with wins: it chose the prompt,
/// the model and the code, so only the versions come back (the link's code joins them).
pub fn restore(saved: &SavedSession, opened_shared_link: bool) -> Restore {
    let versions = saved.versions.clone().filter(|v| !v.list().is_empty());
    if opened_shared_link {
        // The versions stay reachable: the link's code joins them rather than replacing them.
        return Restore { versions, ..Restore::default() };
    }
    let generation = saved.generation.as_ref();
    let prompt = saved.prompt.clone().or_else(|| generation.map(|g| g.prompt.clone()));
    let saved_code = generation.map(|g| g.code.clone()).filter(|c| !c.trim().is_empty());
    // The version the person had selected, unless the editor held code of no version (typed by
    // hand, or a cut-off answer): that is what they saw last.
    let code = match (versions.as_ref().and_then(Versions::current), saved_code) {
        (Some(_), Some(code)) if versions.iter().flat_map(|v| v.list()).all(|v| v.code != code) => Some(code),
        (Some(current), _) => Some(current.code.clone()),
        (None, code) => code,
    };
    let notice = match generation {
        Some(g) if g.status == SavedStatus::Streaming => Some(RestoredNotice::CutOff),
        _ if prompt.is_some() || code.is_some() || saved.model.is_some() => Some(RestoredNotice::Restored),
        _ => None,
    };
    Restore {
        prompt,
        model: saved.model.clone(),
        code,
        variations: saved.variations,
        goal: saved.goal.clone().filter(|g| !g.is_empty()),
        versions,
        notice,
    }
}

/// The message shown when the browser will not keep the session.
pub fn storage_problem(detail: &str) -> String {
    format!("Flint can't save your work in this browser ({detail}): it will be lost on reload.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generation(status: SavedStatus, code: &str) -> SavedGeneration {
        SavedGeneration {
            id: Some(1),
            prompt: "a clock".into(),
            model: "m/x".into(),
            code: code.into(),
            status,
        }
    }

    #[test]
    fn history_is_newest_first_and_skips_unreadable_records() {
        let mut old = generation(SavedStatus::Done, "<p>1</p>");
        old.id = Some(100);
        let mut new = generation(SavedStatus::Cancelled, "<p>2</p>");
        new.id = Some(200);
        let records =
            [old.to_json(), "{broken".to_owned(), new.to_json(), r#"{"prompt":"no id"}"#.to_owned()];
        assert_eq!(history_entries(&records), [new, old]);
    }

    #[test]
    fn a_generation_saved_before_the_history_existed_reads_without_an_id() {
        let json = r#"{"version":1,"generation":{"prompt":"p","model":"m","code":"c","status":"done"}}"#;
        let saved = SavedSession::from_json(json).expect("an older record still reads");
        assert_eq!(saved.generation.map(|g| g.id), Some(None));
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(summary("  a clock\nwith hands", 80), "a clock");
        assert_eq!(summary("abcdef", 4), "abc…");
        assert_eq!(summary("äöüß", 4), "äöüß");
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let saved = SavedSession {
            prompt: Some("a clock — ✓".into()),
            model: Some("groq/llama".into()),
            generation: Some(generation(SavedStatus::Cancelled, "<p>\"hi\"</p>")),
            ..SavedSession::default()
        };
        let json = saved.to_json();
        assert!(json.contains(r#""status":"cancelled""#), "{json}");
        assert_eq!(SavedSession::from_json(&json).expect("reads back"), saved);
    }

    #[test]
    fn missing_fields_are_empty_and_unknown_ones_ignored() {
        let saved = SavedSession::from_json(r#"{"version":1,"later":true}"#).expect("reads");
        assert_eq!(saved, SavedSession::default());
    }

    #[test]
    fn other_versions_and_garbage_are_refused() {
        assert!(matches!(
            SavedSession::from_json(r#"{"version":2,"prompt":7}"#),
            Err(SavedError::Version(2))
        ));
        assert!(matches!(SavedSession::from_json("not json"), Err(SavedError::Malformed(_))));
        assert!(matches!(
            SavedSession::from_json(r#"{"version":1,"prompt":7}"#),
            Err(SavedError::Malformed(_))
        ));
    }

    #[test]
    fn statuses_map_to_saved_ones() {
        assert_eq!(SavedStatus::from_stream(StreamStatus::Idle), None);
        assert_eq!(SavedStatus::from_stream(StreamStatus::Streaming), Some(SavedStatus::Streaming));
        assert_eq!(SavedStatus::from_stream(StreamStatus::Error), Some(SavedStatus::Error));
    }

    #[test]
    fn a_stream_cut_off_by_the_reload_says_so() {
        let saved = SavedSession {
            prompt: Some("a timer".into()),
            model: Some("m/x".into()),
            generation: Some(generation(SavedStatus::Streaming, "<button")),
            ..SavedSession::default()
        };
        let restored = restore(&saved, false);
        assert_eq!(restored.prompt.as_deref(), Some("a timer"));
        assert_eq!(restored.model.as_deref(), Some("m/x"));
        assert_eq!(restored.code.as_deref(), Some("<button"));
        assert_eq!(restored.notice, Some(RestoredNotice::CutOff));
        assert!(RestoredNotice::CutOff.text().contains("cut off by the reload"));
    }

    #[test]
    fn a_finished_answer_or_a_draft_is_restored_quietly() {
        let done = SavedSession {
            generation: Some(generation(SavedStatus::Done, "<p>")),
            ..SavedSession::default()
        };
        let restored = restore(&done, false);
        assert_eq!(restored.prompt.as_deref(), Some("a clock"), "the generation's prompt fills in");
        assert_eq!(restored.notice, Some(RestoredNotice::Restored));

        let draft = SavedSession { prompt: Some("draft".into()), ..SavedSession::default() };
        assert_eq!(restore(&draft, false).notice, Some(RestoredNotice::Restored));
        assert_eq!(restore(&draft, false).code, None);
    }

    #[test]
    fn blank_code_is_not_restored_and_an_empty_record_says_nothing() {
        let blank = SavedSession {
            generation: Some(generation(SavedStatus::Error, " \n")),
            ..SavedSession::default()
        };
        assert_eq!(restore(&blank, false).code, None);
        assert_eq!(restore(&SavedSession::default(), false), Restore::default());
    }

    #[test]
    fn the_variations_count_comes_back() {
        let saved = SavedSession { variations: Some(6), ..SavedSession::default() };
        let read = SavedSession::from_json(&saved.to_json()).expect("reads back");
        assert_eq!(restore(&read, false).variations, Some(6));
        assert_eq!(restore(&read, true).variations, None, "a shared link chose its own");
    }

    #[test]
    fn a_shared_link_wins_over_the_saved_session() {
        let saved = SavedSession {
            prompt: Some("mine".into()),
            generation: Some(generation(SavedStatus::Streaming, "<p>")),
            ..SavedSession::default()
        };
        assert_eq!(restore(&saved, true), Restore::default());
    }

    #[test]
    fn the_storage_problem_says_what_is_at_stake() {
        let text = storage_problem("QuotaExceededError");
        assert!(text.contains("(QuotaExceededError)") && text.contains("lost on reload"), "{text}");
    }

    #[test]
    fn the_selected_version_comes_back_unless_the_editor_held_other_code() {
        let mut versions = Versions::default();
        versions.push("<p>1</p>".into(), "one", "m", 1, crate::versions::Origin::Generated);
        versions.push("<p>2</p>".into(), "two", "m", 2, crate::versions::Origin::Edited);
        versions.select(0);
        let mut saved = SavedSession {
            generation: Some(generation(SavedStatus::Done, "<p>2</p>")),
            versions: Some(versions),
            ..SavedSession::default()
        };
        let plan = restore(&saved, false);
        assert_eq!(plan.code.as_deref(), Some("<p>1</p>"), "v1 was selected");
        assert_eq!(plan.versions.map(|v| v.list().len()), Some(2));
        saved.generation = Some(generation(SavedStatus::Done, "<p>1</p> typed"));
        assert_eq!(restore(&saved, false).code.as_deref(), Some("<p>1</p> typed"), "hand edits are kept");
        let linked = restore(&saved, true);
        assert_eq!(
            (linked.code, linked.versions.map(|v| v.list().len())),
            (None, Some(2)),
            "a link keeps them"
        );
    }
}
