//! The sync's memory, sans IO: which records this browser changed and has not yet had accepted
//! (the offline queue), the revision last known of each, and where the last pull ended. The driver
//! ([`super::hook`]) shows it the local history, sends what it asks for, and hands back the answers;
//! it answers with the records to write into the local history.
//!
//! Changes are found by comparing the history with what was last synced (a fingerprint per entry),
//! so every way an entry changes (a generation saved, an edit, an import, a delete) is seen
//! without each one telling the sync. The whole state is one small JSON value (no bodies: those
//! stay in the history), saved after every step so a reload keeps the queue.

use std::collections::{BTreeMap, BTreeSet};

use flint_protocol::sync::{HistoryRecord, PullAnswer, PushAnswer, RecordKind, newer};
use serde::{Deserialize, Serialize};

/// Most records one push carries, so a push stays well under the gateway's request limit.
pub const PUSH_BATCH: usize = 20;

/// What is known of one record: enough to decide which copy wins, without its body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Its revision.
    pub revision: u64,
    /// When it was changed (ms since the epoch).
    pub updated_at: u64,
    /// The device that changed it.
    pub device: String,
    /// Deleted.
    pub deleted: bool,
    /// The local entry's fingerprint when this stamp was made (0 for a deletion).
    pub print: u64,
}

/// The sync's state for one browser.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncState {
    /// This browser's id (random), the tie-breaker between equal times.
    pub device: String,
    /// Where the next pull starts.
    pub cursor: u64,
    /// The last known stamp of each record, by [`key`].
    known: BTreeMap<String, Stamp>,
    /// Records changed here that the server has not yet accepted, by [`key`].
    waiting: BTreeSet<String>,
}

/// A record's key in the state: `generation:1763900000000`.
pub fn key(kind: RecordKind, id: &str) -> String {
    format!("{}:{id}", kind.as_str())
}

fn split(key: &str) -> Option<(RecordKind, &str)> {
    let (kind, id) = key.split_once(':')?;
    Some((RecordKind::parse(kind)?, id))
}

/// A stable fingerprint of an entry's JSON (FNV-1a): equal texts, equal prints, in every build.
pub fn fingerprint(json: &str) -> u64 {
    json.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

impl SyncState {
    /// A fresh state for the device `device`.
    pub fn new(device: impl Into<String>) -> Self {
        Self { device: device.into(), cursor: 0, known: BTreeMap::new(), waiting: BTreeSet::new() }
    }

    /// The saved state, or `None` when it does not read (a fresh one then pulls everything again).
    pub fn from_json(json: &str) -> Option<Self> {
        serde_json::from_str(json).ok()
    }

    /// The state as saved.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("strings and numbers serialize")
    }

    /// How many records wait to be sent.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Queues what changed in the local history of `kind` since it was last synced: `local` holds
    /// each entry's id and JSON. An entry new or different is an edit; a known entry no longer
    /// there was deleted. Call it only with a history that was read: an unreadable one is not empty.
    pub fn scan(&mut self, kind: RecordKind, local: &[(String, String)], now: u64) {
        let here: BTreeMap<String, u64> =
            local.iter().map(|(id, json)| (key(kind, id), fingerprint(json))).collect();
        for (key, print) in &here {
            if self.known.get(key).is_none_or(|s| s.deleted || s.print != *print) {
                self.stamp(key, now, false, *print);
            }
        }
        let gone: Vec<String> = self
            .known
            .iter()
            .filter(|(k, s)| {
                !s.deleted && split(k).is_some_and(|(kd, _)| kd == kind) && !here.contains_key(*k)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            self.stamp(&key, now, true, 0);
        }
    }

    /// A new revision of `key`, made here.
    fn stamp(&mut self, key: &str, now: u64, deleted: bool, print: u64) {
        let revision = self.known.get(key).map_or(0, |s| s.revision) + 1;
        let stamp = Stamp { revision, updated_at: now, device: self.device.clone(), deleted, print };
        self.known.insert(key.to_owned(), stamp);
        self.waiting.insert(key.to_owned());
    }

    /// The next records to push (at most [`PUSH_BATCH`]); `body` gives a waiting entry's JSON
    /// from the local history. An entry that vanished meanwhile is left for the next scan.
    /// Deletions go first and alone: a gateway whose room for this person is full refuses a push
    /// that adds, and the deletions made to free room must not be refused with it.
    pub fn next_push(
        &self,
        body: impl Fn(RecordKind, &str) -> Option<serde_json::Value>,
    ) -> Vec<HistoryRecord> {
        let deletions = self.waiting.iter().any(|key| self.known.get(key).is_some_and(|s| s.deleted));
        let mut batch = Vec::new();
        for key in &self.waiting {
            let (Some((kind, id)), Some(stamp)) = (split(key), self.known.get(key)) else { continue };
            if stamp.deleted != deletions {
                continue;
            }
            let body = if stamp.deleted { Some(serde_json::Value::Null) } else { body(kind, id) };
            let Some(body) = body else { continue };
            batch.push(record(kind, id, stamp, body));
            if batch.len() == PUSH_BATCH {
                break;
            }
        }
        batch
    }

    /// Takes the answer to pushing `sent`; returns the records to write into the local history (a
    /// newer copy another device pushed first). A record changed again while the push was in
    /// flight stays queued, with a revision above the one the server kept, so the later edit wins.
    pub fn pushed(&mut self, sent: &[HistoryRecord], answer: &PushAnswer) -> Vec<HistoryRecord> {
        let mut apply = Vec::new();
        for (sent, kept) in sent.iter().zip(&answer.kept) {
            let key = key(sent.kind, &sent.id);
            let Some(current) = self.known.get(&key).cloned() else { continue };
            let unchanged = current.revision == sent.revision && current.updated_at == sent.updated_at;
            if !unchanged {
                if kept.revision >= current.revision
                    && let Some(stamp) = self.known.get_mut(&key)
                {
                    stamp.revision = kept.revision + 1;
                }
                continue;
            }
            self.waiting.remove(&key);
            if kept != sent {
                apply.push(kept.clone());
                self.take(kept);
            }
        }
        apply
    }

    /// Takes a pull's answer; returns the records to write into the local history. A pulled
    /// record replaces a queued local change only when it is newer by [`newer`]; otherwise the
    /// local one stays queued, and wins when pushed.
    pub fn pulled(&mut self, answer: &PullAnswer) -> Vec<HistoryRecord> {
        let mut apply = Vec::new();
        for remote in &answer.records {
            let key = key(remote.kind, &remote.id);
            let wins = match self.known.get(&key) {
                None => true,
                Some(local) => newer(
                    &without_body(remote),
                    &record(remote.kind, &remote.id, local, serde_json::Value::Null),
                ),
            };
            if wins {
                self.waiting.remove(&key);
                self.take(remote);
                apply.push(remote.clone());
            }
        }
        self.cursor = self.cursor.max(answer.cursor);
        apply
    }

    /// Records `remote` as the known copy (it is about to be written locally).
    fn take(&mut self, remote: &HistoryRecord) {
        let print = if remote.deleted { 0 } else { fingerprint(&remote.body.to_string()) };
        let stamp = Stamp {
            revision: remote.revision,
            updated_at: remote.updated_at,
            device: remote.device.clone(),
            deleted: remote.deleted,
            print,
        };
        self.known.insert(key(remote.kind, &remote.id), stamp);
    }
}

fn record(kind: RecordKind, id: &str, stamp: &Stamp, body: serde_json::Value) -> HistoryRecord {
    HistoryRecord {
        id: id.to_owned(),
        kind,
        body,
        revision: stamp.revision,
        updated_at: stamp.updated_at,
        device: stamp.device.clone(),
        deleted: stamp.deleted,
    }
}

fn without_body(record: &HistoryRecord) -> HistoryRecord {
    HistoryRecord { body: serde_json::Value::Null, ..record.clone() }
}
