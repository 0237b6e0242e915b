//! Synced history in the store: what both backends share (the row shape and the decision which copy
//! of a record to keep), so SQLite and PostgreSQL keep the same copies and refuse the same pushes.
//!
//! Each person's records are numbered by a position (`seq`) that grows with every change kept, per
//! person, under a per-person write lock: a pull "since" a position sees every later change, and
//! none can be committed behind a reader's back with a smaller number.

use flint_protocol::sync::{HistoryRecord, RecordKind, newer};

/// One row as both backends read it: `(kind, id, body, revision, updated_at, device, deleted, seq)`.
pub(super) type Row = (String, String, String, i64, i64, String, bool, i64);

/// A pushed batch would take the person past `store.history_max_records` (the limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyRecords(pub usize);

/// A record as stored, with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Positioned {
    /// Where the change stands in the person's history (grows with every change).
    pub seq: u64,
    /// The record.
    pub record: HistoryRecord,
}

/// The row's record; a row that does not read (edited by hand, a kind from a later gateway) is
/// left out rather than failing the whole pull.
pub(super) fn from_row(row: Row) -> Option<Positioned> {
    let (kind, id, body, revision, updated_at, device, deleted, seq) = row;
    Some(Positioned {
        seq: u64::try_from(seq).ok()?,
        record: HistoryRecord {
            id,
            kind: RecordKind::parse(&kind)?,
            body: serde_json::from_str(&body).ok()?,
            revision: u64::try_from(revision).ok()?,
            updated_at: u64::try_from(updated_at).ok()?,
            device,
            deleted,
        },
    })
}

/// The values a record is written with: (body JSON, revision, updated_at), clamped to the
/// database's signed integers.
pub(super) fn columns(record: &HistoryRecord) -> (String, i64, i64) {
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    (record.body.to_string(), clamp(record.revision), clamp(record.updated_at))
}

/// Whether `pushed` replaces what is stored (`None`: nothing yet).
pub(super) fn replaces(pushed: &HistoryRecord, stored: Option<&HistoryRecord>) -> bool {
    stored.is_none_or(|stored| newer(pushed, stored))
}

/// Whether adding `new_keys` records the person does not have yet to the `held` they keep would
/// pass `max`.
pub(super) fn over_limit(held: i64, new_keys: usize, max: usize) -> Option<TooManyRecords> {
    let held = usize::try_from(held).unwrap_or(0);
    (new_keys > 0 && held.saturating_add(new_keys) > max).then_some(TooManyRecords(max))
}

/// The distinct keys of `records` (a batch may hold one record twice).
pub(super) fn distinct_keys(records: &[HistoryRecord]) -> Vec<(RecordKind, &str)> {
    let mut keys: Vec<_> = records.iter().map(HistoryRecord::key).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}
