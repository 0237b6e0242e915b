//! The history as one file: exported from one browser, imported in another (or the same one after
//! its storage was cleared). Plain and tested natively; the History panel reads and writes the
//! store and the file.
//!
//! The file is versioned. Each version ever written has a fixture in `tests/fixtures/` that must keep
//! importing: a person's backup is only worth something if a later Flint still reads it.

use serde::{Deserialize, Serialize};

use crate::session::saved::{SavedGeneration, pictures_over_cap};
use crate::share::civil_date;

/// What the file says it is, so a wrong file gets a sentence instead of a parse error.
pub const FORMAT: &str = "flint-history";

/// The version this Flint writes; it reads every version up to it.
pub const BACKUP_VERSION: u32 = 1;

/// The largest file read: far above any real history (a generation is tens of kilobytes), small
/// enough that a wrong file (a video) is refused before it is read whole.
pub const MAX_BACKUP_BYTES: u64 = 64 << 20;

/// The file's first fields, read before the rest so the version decides how to read it.
#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    format: String,
    #[serde(default)]
    version: u32,
}

/// Version 1: the history's generations as saved in IndexedDB.
#[derive(Serialize, Deserialize)]
struct V1 {
    format: String,
    version: u32,
    /// When it was exported (ms since the epoch).
    exported_at: u64,
    /// Every generation, newest first. Kept as JSON values so that one entry a later Flint cannot
    /// read does not cost the others.
    generations: Vec<serde_json::Value>,
}

/// The file for `entries` (the history, newest first), exported at `now_ms`.
pub fn export_file(entries: &[SavedGeneration], now_ms: u64) -> String {
    let generations = entries.iter().filter_map(|g| serde_json::to_value(g).ok()).collect();
    let file = V1 { format: FORMAT.into(), version: BACKUP_VERSION, exported_at: now_ms, generations };
    serde_json::to_string_pretty(&file).expect("strings and numbers serialize")
}

/// The file's name: `flint-history-2026-11-23.json` (the date in UTC).
pub fn file_name(now_ms: u64) -> String {
    let days = (now_ms / 86_400_000) as i64;
    let (y, m, d) = civil_date(days);
    format!("flint-history-{y:04}-{m:02}-{d:02}.json")
}

/// Why a file could not be imported, in words the person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackupError {
    /// Not JSON, or JSON of something else.
    #[error("This is not a Flint history file: choose the file that History's \"Export\" saved.")]
    NotABackup,
    /// Written by a newer Flint.
    #[error("This history was exported by a newer Flint (format {0}); open it with that version.")]
    TooNew(u32),
    /// Larger than any history.
    #[error("This file is {0} MB: a Flint history file is far smaller. Choose the exported file.")]
    TooLarge(u64),
}

/// What an import found: the generations to add and how many entries could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// Readable generations that have a history key, newest first.
    pub generations: Vec<SavedGeneration>,
    /// Entries left out because they could not be read.
    pub unreadable: usize,
}

/// Reads a history file of any version this Flint knows.
pub fn import_file(text: &str) -> Result<Imported, BackupError> {
    let header: Header = serde_json::from_str(text).map_err(|_| BackupError::NotABackup)?;
    if header.format != FORMAT {
        return Err(BackupError::NotABackup);
    }
    match header.version {
        1 => {
            let file: V1 = serde_json::from_str(text).map_err(|_| BackupError::NotABackup)?;
            let total = file.generations.len();
            let mut generations: Vec<SavedGeneration> = file
                .generations
                .into_iter()
                .filter_map(|v| serde_json::from_value::<SavedGeneration>(v).ok())
                .filter(|g| g.id.is_some())
                .collect();
            let unreadable = total - generations.len();
            generations.sort_by_key(|g| std::cmp::Reverse(g.id));
            Ok(Imported { generations, unreadable })
        }
        0 => Err(BackupError::NotABackup),
        newer => Err(BackupError::TooNew(newer)),
    }
}

/// The generations of `imported` not already in the history (`existing` keys): an entry's key is
/// when it started, so the same key is the same generation, and the copy here wins.
pub fn to_add(imported: Imported, existing: &[u64]) -> (Vec<SavedGeneration>, usize) {
    let (new, known): (Vec<_>, Vec<_>) =
        imported.generations.into_iter().partition(|g| g.id.is_some_and(|id| !existing.contains(&id)));
    (new, known.len())
}

/// What an import writes so that the history's pictures stay within `cap` bytes
/// ([`crate::session::saved::HISTORY_PICTURE_BYTES`], as after a run): the `new` entries, and the
/// `existing` ones that let their pictures go, the oldest first (the newest of all keeps its
/// pictures); and how many let them go. Prompts and code always stay.
pub fn capped_import(
    existing: &[SavedGeneration],
    new: Vec<SavedGeneration>,
    cap: usize,
) -> (Vec<SavedGeneration>, usize) {
    let all: Vec<SavedGeneration> = existing.iter().cloned().chain(new.iter().cloned()).collect();
    let over: Vec<Option<u64>> = pictures_over_cap(&all, cap).into_iter().map(|g| g.id).collect();
    let let_go = over.len();
    let strip = |g: SavedGeneration| if over.contains(&g.id) { g.without_pictures() } else { g };
    let existing = existing.iter().filter(|g| over.contains(&g.id)).cloned();
    (new.into_iter().map(strip).chain(existing.map(SavedGeneration::without_pictures)).collect(), let_go)
}

/// What the panel says after an import.
pub fn import_summary(added: usize, already: usize, unreadable: usize) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut text = format!("Imported {added} generation{}", plural(added));
    if already > 0 {
        text.push_str(&format!("; {already} already here"));
    }
    if unreadable > 0 {
        text.push_str(&format!("; {unreadable} could not be read and were left out"));
    }
    text.push('.');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::saved::SavedStatus;

    fn picture(bytes: usize) -> flint_protocol::image::ImageData {
        flint_protocol::image::ImageData {
            media_type: flint_protocol::image::ImageType::Png,
            data: "A".repeat(bytes),
            width: 10,
            height: 10,
        }
    }

    #[test]
    fn an_entry_syncs_its_pictures_only_when_they_fit_a_synced_record() {
        let mut entry = generation(1, "a page like this");
        let pictures = |bytes| crate::pictures::SavedPictures {
            images: vec![("a.png".into(), picture(bytes))],
            ..Default::default()
        };
        entry.pictures = Some(pictures(1_000));
        assert!(entry.clone().for_sync().pictures.is_some(), "small pictures sync");
        entry.pictures = Some(pictures(crate::session::saved::SYNC_PICTURE_BYTES + 1));
        let synced = entry.clone().for_sync();
        assert!(synced.pictures.is_none(), "large pictures stay in this browser");
        assert_eq!((synced.prompt, synced.code), (entry.prompt, entry.code), "the rest syncs");
    }

    fn generation(id: u64, prompt: &str) -> SavedGeneration {
        SavedGeneration {
            id: Some(id),
            prompt: prompt.into(),
            model: "local/smollm2".into(),
            code: format!("<p>{prompt}</p>"),
            status: SavedStatus::Done,
            pictures: None,
        }
    }

    #[test]
    fn an_import_past_the_picture_cap_lets_the_oldest_pictures_go_never_the_newest() {
        let with = |id, bytes| {
            let mut g = generation(id, "a page like this");
            g.pictures = Some(crate::pictures::SavedPictures {
                images: vec![("a.png".into(), picture(bytes))],
                ..Default::default()
            });
            g
        };
        let existing = vec![with(20, 40), with(40, 40)];
        // Under the cap: the new entries as they are, nothing else rewritten.
        let (write, let_go) = capped_import(&existing, vec![with(10, 10)], 100);
        assert_eq!((write.len(), let_go), (1, 0));
        assert!(write[0].pictures.is_some());
        // Past it: the oldest (new id 10, then existing 20) let theirs go; 40 and the newest keep them.
        let (write, let_go) = capped_import(&existing, vec![with(10, 40), with(50, 40)], 100);
        assert_eq!(let_go, 2);
        let kept: Vec<(Option<u64>, bool)> = write.iter().map(|g| (g.id, g.pictures.is_some())).collect();
        assert_eq!(kept, vec![(Some(10), false), (Some(50), true), (Some(20), false)]);
        assert!(write.iter().all(|g| !g.prompt.is_empty() && !g.code.is_empty()), "prompt and code stay");
    }

    #[test]
    fn an_export_imports_whole() {
        let mut with_picture = generation(2_000, "a counter");
        with_picture.pictures = Some(crate::pictures::SavedPictures {
            images: vec![("mock.png".into(), picture(10))],
            description: Some(("cloud/gpt-4o".into(), "Layout: a header".into())),
            held: false,
        });
        let history = vec![with_picture, generation(1_000, "a clock")];
        let file = export_file(&history, 1_763_900_000_000);
        let imported = import_file(&file).unwrap();
        assert_eq!(imported, Imported { generations: history, unreadable: 0 });
    }

    /// Every version ever written keeps importing (add a fixture when `BACKUP_VERSION` changes).
    #[test]
    fn the_version_1_fixture_keeps_importing() {
        let imported = import_file(include_str!("../../tests/fixtures/history-v1.json")).unwrap();
        assert_eq!(imported.unreadable, 1, "the fixture holds one entry from a later Flint");
        let prompts: Vec<&str> = imported.generations.iter().map(|g| g.prompt.as_str()).collect();
        assert_eq!(prompts, ["a button that counts clicks", "a clock"]);
        assert_eq!(imported.generations[0].status, SavedStatus::Cancelled);
        assert!(imported.generations[1].code.contains("setInterval"));
    }

    #[test]
    fn wrong_files_say_what_to_choose() {
        assert_eq!(import_file("not json"), Err(BackupError::NotABackup));
        assert_eq!(import_file(r#"{"version": 1, "prompt": "x"}"#), Err(BackupError::NotABackup));
        assert_eq!(import_file(r#"{"format": "flint-history", "version": 9}"#), Err(BackupError::TooNew(9)));
        assert!(BackupError::TooNew(9).to_string().contains("newer Flint"));
    }

    #[test]
    fn generations_already_here_are_not_added_twice() {
        let imported = Imported { generations: vec![generation(3, "c"), generation(2, "b")], unreadable: 0 };
        let (new, already) = to_add(imported, &[2, 7]);
        assert_eq!(new.iter().map(|g| g.id).collect::<Vec<_>>(), [Some(3)]);
        assert_eq!(already, 1);
        assert_eq!(import_summary(1, 1, 0), "Imported 1 generation; 1 already here.");
        assert_eq!(import_summary(3, 0, 2), "Imported 3 generations; 2 could not be read and were left out.");
    }

    #[test]
    fn the_file_is_named_by_its_day() {
        assert_eq!(file_name(0), "flint-history-1970-01-01.json");
        assert_eq!(file_name(1_795_392_000_000), "flint-history-2026-11-23.json");
        assert_eq!(file_name(951_782_400_000), "flint-history-2000-02-29.json");
    }
}
