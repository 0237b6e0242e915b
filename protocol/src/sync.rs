//! History that follows a signed-in person: `POST /api/history/push` and `GET /api/history?since=`.
//!
//! Every history entry (a generation, a version, a session) is one [`HistoryRecord`] with a
//! `revision`. A device that changes a record sets its revision to the one it last saw plus one
//! and pushes it; the server keeps, per record, whichever copy [`newer`] prefers and answers with
//! what it kept, so a device that lost a race learns the winner at once. The same rule runs on
//! both sides (the app merges pulled records with it too), so every device converges on the same
//! copy whatever order the pushes and pulls arrive in: last writer wins, per record.
//!
//! Pulls are paged by a cursor the server hands out: the position of the last change the answer
//! holds. Positions only grow, per person, so asking "since" the last cursor never misses a change.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// What a record is in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// One generation of the history (the app's `SavedGeneration`, as in the export file).
    Generation,
    /// One version of the code.
    Version,
    /// A saved session.
    Session,
}

impl RecordKind {
    /// Its name in JSON and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Generation => "generation",
            Self::Version => "version",
            Self::Session => "session",
        }
    }

    /// The kind named `name`, as [`RecordKind::as_str`] writes it.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Generation, Self::Version, Self::Session].into_iter().find(|k| k.as_str() == name)
    }
}

/// One synced history entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRecord {
    /// Unique within the person's history and kind (a generation's is when it started).
    pub id: String,
    /// What it is.
    pub kind: RecordKind,
    /// The entry itself, in the shape the app saves it (`null` once deleted).
    #[serde(default)]
    pub body: serde_json::Value,
    /// The revision this copy is: the one its device last saw, plus one.
    pub revision: u64,
    /// When its device changed it (ms since the epoch); breaks ties between equal revisions.
    pub updated_at: u64,
    /// The device that changed it (random, per browser); breaks ties between equal times.
    #[serde(default)]
    pub device: String,
    /// Deleted: kept as a tombstone so the deletion reaches the other devices.
    #[serde(default)]
    pub deleted: bool,
}

impl HistoryRecord {
    /// The key two copies of one record share.
    pub fn key(&self) -> (RecordKind, &str) {
        (self.kind, self.id.as_str())
    }

    /// Bytes the body takes as JSON: what the per-record limit counts.
    pub fn body_bytes(&self) -> usize {
        if self.body.is_null() { 0 } else { self.body.to_string().len() }
    }
}

/// Whether `candidate` should replace `kept` (two copies of one record): a higher revision wins;
/// between equal revisions the later change, then a deletion, then the greater device id, so two
/// devices that decide independently decide the same. Identical copies do not replace each other.
pub fn newer(candidate: &HistoryRecord, kept: &HistoryRecord) -> bool {
    order(candidate, kept) == Ordering::Greater
}

fn order(a: &HistoryRecord, b: &HistoryRecord) -> Ordering {
    (a.revision, a.updated_at, a.deleted, a.device.as_str())
        .cmp(&(b.revision, b.updated_at, b.deleted, b.device.as_str()))
        // Same revision, time, flag and device but different bodies (a device that reused a
        // revision): compare the bodies, so both sides still pick the same one.
        .then_with(|| a.body.to_string().cmp(&b.body.to_string()))
}

/// `POST /api/history/push` body: records changed on a device since it last pushed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushRequest {
    /// The changed records, each with its new revision.
    pub records: Vec<HistoryRecord>,
}

/// `POST /api/history/push` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushAnswer {
    /// For each pushed record, in order, the copy the server now keeps: the pushed one, or a newer
    /// one another device pushed first (which the device should take instead).
    pub kept: Vec<HistoryRecord>,
}

/// `GET /api/history?since=<cursor>` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullAnswer {
    /// Records changed after `since`, oldest change first.
    pub records: Vec<HistoryRecord>,
    /// Where the next pull starts: the last change included (or `since` when none).
    pub cursor: u64,
    /// More changes wait: pull again from `cursor`.
    #[serde(default)]
    pub more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(revision: u64, updated_at: u64, device: &str, deleted: bool) -> HistoryRecord {
        HistoryRecord {
            id: "1".into(),
            kind: RecordKind::Generation,
            body: serde_json::json!({"prompt": device}),
            revision,
            updated_at,
            device: device.into(),
            deleted,
        }
    }

    #[test]
    fn a_higher_revision_wins_whatever_its_time() {
        let (old, new) = (record(3, 9_000, "a", false), record(4, 1_000, "b", false));
        assert!(newer(&new, &old));
        assert!(!newer(&old, &new), "an older revision never replaces a newer one");
    }

    #[test]
    fn ties_are_decided_the_same_on_every_side() {
        let (a, b) = (record(2, 5, "a", false), record(2, 5, "b", false));
        assert!(newer(&b, &a) && !newer(&a, &b));
        let (early, late) = (record(2, 4, "z", false), record(2, 5, "a", false));
        assert!(newer(&late, &early) && !newer(&early, &late));
        let (edit, delete) = (record(2, 5, "a", false), record(2, 5, "a", true));
        assert!(newer(&delete, &edit), "a deletion wins over an edit of the same revision and time");
        assert!(!newer(&a, &a.clone()), "a copy does not replace itself");
    }

    #[test]
    fn records_read_back_as_written() {
        let json = serde_json::to_string(&record(1, 2, "d", true)).expect("serializes");
        assert!(json.contains(r#""kind":"generation""#), "{json}");
        assert_eq!(serde_json::from_str::<HistoryRecord>(&json).expect("parses"), record(1, 2, "d", true));
        assert_eq!(RecordKind::parse("version"), Some(RecordKind::Version));
        assert_eq!(RecordKind::parse("other"), None);
    }
}
