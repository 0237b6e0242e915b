//! The saved session: one record, written whole (one IndexedDB put), read back on start-up, and what
//! start-up puts back from it.

use flint_protocol::prompt::ProjectKind;
use serde::{Deserialize, Serialize};

use crate::pictures::SavedPictures;
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
    /// The profile chosen with the toggle (Spark, Deep…).
    #[serde(default)]
    pub profile: Option<String>,
    /// "Continue cut-off answers".
    #[serde(default)]
    pub auto_continue: Option<bool>,
    /// What the session's generations cost, in millionths of a dollar (integers keep the record
    /// comparable), and whether that is partly estimated.
    #[serde(default)]
    pub spent: Option<(u64, bool)>,
    /// The prompt's pictures and their description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pictures: Option<SavedPictures>,
    /// The project kind picked next to the prompt ([`ProjectKind::key`]; none: Auto). Kept as its
    /// key so that a kind this build does not know reads as Auto instead of losing the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
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
            profile: None,
            auto_continue: None,
            spent: None,
            pictures: None,
            kind: None,
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
    /// The prompt's pictures and their description, when it had any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pictures: Option<SavedPictures>,
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

/// Bytes of pictures (as base64) a history entry may carry to the gateway's synced history: its
/// records are capped (`store.history_max_record_bytes`, 512 KiB by default), so an entry with more
/// syncs without its pictures, which stay in this browser's history and its backups.
pub const SYNC_PICTURE_BYTES: usize = 256 * 1024;

/// Bytes of pictures (as base64) this browser's history keeps in all. Past it, the oldest entries
/// let their pictures go (their prompt and code stay), so pictures never crowd out
/// the history itself in the browser's storage quota.
pub const HISTORY_PICTURE_BYTES: usize = 64 * 1024 * 1024;

impl SavedGeneration {
    /// The record as stored in the history (JSON).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a generation of strings serializes")
    }

    /// The entry as it is synced: without its pictures when they are over [`SYNC_PICTURE_BYTES`].
    pub fn for_sync(mut self) -> Self {
        if self.picture_bytes() > SYNC_PICTURE_BYTES {
            self.pictures = None;
        }
        self
    }

    /// Bytes of its pictures, as base64.
    pub fn picture_bytes(&self) -> usize {
        self.pictures.iter().flat_map(|p| p.images.iter()).map(|(_, image)| image.data.len()).sum()
    }

    /// The entry without its pictures (and so without their description, which describes them).
    pub fn without_pictures(mut self) -> Self {
        self.pictures = None;
        self
    }
}

/// The history entries (any order) that let their pictures go so that the history's pictures come
/// to at most `cap` bytes: the oldest first, never the newest entry.
pub fn pictures_over_cap(entries: &[SavedGeneration], cap: usize) -> Vec<&SavedGeneration> {
    let mut with: Vec<&SavedGeneration> = entries.iter().filter(|g| g.picture_bytes() > 0).collect();
    with.sort_by_key(|g| g.id);
    let mut total: usize = with.iter().map(|g| g.picture_bytes()).sum();
    // The newest (the run that just ended) keeps its pictures whatever their size.
    let Some((_newest, older)) = with.split_last() else { return Vec::new() };
    let mut out = Vec::new();
    for entry in older {
        if total <= cap {
            break;
        }
        total -= entry.picture_bytes();
        out.push(*entry);
    }
    out
}

/// What the person is told when older entries let their pictures go.
pub fn pictures_let_go(count: usize) -> String {
    let entries = if count == 1 { "entry".to_owned() } else { format!("{count} entries") };
    format!(
        "History keeps up to {} MB of pictures: the oldest {entries} with pictures let them go (their \
         prompt and code stay). Export the history first to keep every picture.",
        HISTORY_PICTURE_BYTES / (1024 * 1024)
    )
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
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// The profile to choose again.
    pub profile: Option<String>,
    /// "Continue cut-off answers".
    pub auto_continue: Option<bool>,
    /// The session's cost so far, in dollars.
    pub spent: Option<(f64, bool)>,
    /// The prompt's pictures (not under a shared link: it chose the prompt).
    pub pictures: Option<SavedPictures>,
    /// The project kind picked (not under a shared link: it chose the kind).
    pub kind: Option<ProjectKind>,
    /// What to tell the person; `None` when nothing came back.
    pub notice: Option<RestoredNotice>,
}

/// What to restore from `saved`. A shared link the page was opened with wins: it chose the prompt,
/// the model and the code, so only the versions come back (the link's code joins them).
pub fn restore(saved: &SavedSession, opened_shared_link: bool) -> Restore {
    let versions = saved.versions.clone().filter(|v| !v.list().is_empty());
    // Settings of the page rather than of the work: a link does not replace them.
    let auto_continue = saved.auto_continue;
    let spent = saved.spent.map(|(micros, estimated)| (micros as f64 / 1e6, estimated));
    if opened_shared_link {
        // The versions stay reachable: the link's code joins them rather than replacing them.
        return Restore { versions, auto_continue, spent, ..Restore::default() };
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
        profile: saved.profile.clone(),
        auto_continue,
        spent,
        pictures: saved.pictures.clone(),
        kind: saved.kind.as_deref().and_then(ProjectKind::from_key),
        notice,
    }
}

/// A picked kind as saved: its key ([`SavedSession::kind`] says why not the enum).
pub fn kind_record(kind: Option<ProjectKind>) -> Option<String> {
    kind.map(|k| k.key().to_owned())
}

/// A cost as saved: millionths of a dollar.
pub fn spent_record(spent: Option<(f64, bool)>) -> Option<(u64, bool)> {
    spent.map(|(dollars, estimated)| ((dollars * 1e6).round() as u64, estimated))
}

/// The message shown when the browser will not keep the session.
pub fn storage_problem(detail: &str) -> String {
    format!("Flint can't save your work in this browser ({detail}): it will be lost on reload.")
}

#[cfg(test)]
#[path = "saved_tests.rs"]
mod tests;
