//! Synced history in the store: what both backends share (the row shape, the decision which copy
//! of a record to keep, and what a person may keep and write), so SQLite and PostgreSQL keep the
//! same copies and refuse the same pushes.
//!
//! Each person's records are numbered by a position (`seq`) that grows with every change kept, per
//! person, under a per-person write lock: a pull "since" a position sees every later change, and
//! none can be committed behind a reader's back with a smaller number.
//!
//! What a person holds is kept in one row of `history_usage` (live records, bytes, and how far
//! ahead their writes run), read and written under the same lock as the records: a sum over the
//! person's rows would read every body on every push. A push is worked out first ([`plan`]), then
//! checked against the person's usage ([`check`]), and only then written, so a refused push
//! changes nothing.

use std::collections::HashMap;

use flint_protocol::sync::{HistoryRecord, RecordKind, newer};

/// One row as both backends read it: `(kind, id, body, revision, updated_at, device, deleted, seq)`.
pub(super) type Row = (String, String, String, i64, i64, String, bool, i64);

/// What a row costs beyond its body and ids, roughly: the owner's hash twice (the row and the
/// position index), kind, numbers and the database's own overhead. It makes a deletion (a body-less
/// tombstone) cost a little, so tombstones cannot pile up without bound. The migrations below
/// count with it too: changing it needs a migration that counts again.
pub(super) const ROW_BYTES: usize = 256;

/// How long the write rate's allowance is: `write_bytes_per_minute` may be written at once after
/// a quiet minute.
const WINDOW_MS: i64 = 60_000;

/// SQLite: deleted records lose their bodies, and each person's usage is counted once (issue 25).
pub(super) const SQLITE_USAGE_MIGRATION: &str = "UPDATE history SET body = 'null' WHERE deleted = 1;
    CREATE TABLE history_usage (
        owner TEXT PRIMARY KEY,
        records INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        write_until INTEGER NOT NULL
    ) STRICT;
    INSERT INTO history_usage (owner, records, bytes, write_until)
        SELECT owner, SUM(1 - deleted),
            SUM(CASE WHEN deleted = 1 OR body = 'null' THEN 0 ELSE LENGTH(CAST(body AS BLOB)) END
                + LENGTH(CAST(id AS BLOB)) + LENGTH(CAST(device AS BLOB)) + 256),
            0
        FROM history GROUP BY owner;";

/// PostgreSQL: as [`SQLITE_USAGE_MIGRATION`].
pub(super) const POSTGRES_USAGE_MIGRATION: &str = "UPDATE history SET body = 'null' WHERE deleted;
    CREATE TABLE history_usage (
        owner TEXT PRIMARY KEY,
        records BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        write_until BIGINT NOT NULL
    );
    INSERT INTO history_usage (owner, records, bytes, write_until)
        SELECT owner, COUNT(*) FILTER (WHERE NOT deleted),
            SUM(CASE WHEN deleted OR body = 'null' THEN 0 ELSE octet_length(body) END
                + octet_length(id) + octet_length(device) + 256),
            0
        FROM history GROUP BY owner;";

/// What one person's synced history may hold and how fast it may grow (`[store] history_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryQuota {
    /// Live records (deletions do not count).
    pub max_records: usize,
    /// Bytes of everything kept ([`stored_bytes`] summed).
    pub max_bytes: usize,
    /// Bytes written per minute (a quiet minute's allowance may be written at once).
    pub write_bytes_per_minute: usize,
}

/// Why a push was refused whole (nothing of it was kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryRefused {
    /// It would take the person past `store.history_max_records` (the limit).
    Records(usize),
    /// It would take the person past `store.history_max_bytes_per_person` (the limit).
    Bytes(usize),
    /// The person writes faster than `store.history_max_write_bytes_per_minute`.
    Rate {
        /// The limit.
        limit: usize,
        /// When this push would be taken.
        retry_after_ms: u64,
    },
}

/// A record as stored, with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Positioned {
    /// Where the change stands in the person's history (grows with every change).
    pub seq: u64,
    /// The record.
    pub record: HistoryRecord,
}

/// What one person holds: the row of `history_usage` (all zero before their first push).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Usage {
    /// Live records.
    pub(super) records: i64,
    /// [`stored_bytes`] of every row, tombstones included.
    pub(super) bytes: i64,
    /// Until when (ms since the epoch) the bytes written so far are paid off at the write rate.
    pub(super) write_until: i64,
}

/// A push worked out against what is stored, before anything is written.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// For each pushed record, in order, the copy kept after the push.
    pub(super) kept: Vec<HistoryRecord>,
    /// The records to write, in order.
    pub(super) writes: Vec<HistoryRecord>,
    /// Change in live records.
    records: i64,
    /// Change in stored bytes.
    bytes: i64,
    /// Bytes written, charged to the write rate.
    written: i64,
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
/// database's signed integers. A deletion is kept without its body: the body is what it frees.
pub(super) fn columns(record: &HistoryRecord) -> (String, i64, i64) {
    let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let body = if record.deleted { "null".to_owned() } else { record.body.to_string() };
    (body, clamp(record.revision), clamp(record.updated_at))
}

/// What keeping `record` costs the person: its body (none once deleted), its ids, [`ROW_BYTES`].
pub fn stored_bytes(record: &HistoryRecord) -> usize {
    let body = if record.deleted { 0 } else { record.body_bytes() };
    body + record.id.len() + record.device.len() + ROW_BYTES
}

fn signed(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Works out `records` pushed over `stored` (the current copy of each key the push names): which
/// copies are kept, what is written and what that changes. A batch may name one record twice; the
/// second copy is weighed against the first.
pub(super) fn plan(records: &[HistoryRecord], stored: HashMap<(RecordKind, String), HistoryRecord>) -> Plan {
    let mut latest = stored;
    let mut plan = Plan { kept: Vec::with_capacity(records.len()), ..Plan::default() };
    let live = |r: &HistoryRecord| i64::from(!r.deleted);
    let size = |r: &HistoryRecord| signed(stored_bytes(r));
    for record in records {
        // Weighed as it will be kept: a deletion that still carries its body must not win over
        // the same deletion kept without it, or each resend would be written again.
        let record = if record.deleted {
            HistoryRecord { body: serde_json::Value::Null, ..record.clone() }
        } else {
            record.clone()
        };
        let key = (record.kind, record.id.clone());
        let current = latest.get(&key);
        if let Some(current) = current.filter(|current| !newer(&record, current)) {
            plan.kept.push(current.clone());
            continue;
        }
        plan.records += live(&record) - current.map_or(0, live);
        plan.bytes += size(&record) - current.map_or(0, size);
        plan.written = plan.written.saturating_add(size(&record));
        plan.writes.push(record.clone());
        plan.kept.push(record.clone());
        latest.insert(key, record);
    }
    plan
}

/// The person's usage after `plan`, or why it is refused. A push that does not add records or
/// bytes always passes its quota, so a person over it (a limit lowered since) can still delete.
pub(super) fn check(
    usage: Usage,
    plan: &Plan,
    quota: HistoryQuota,
    now_ms: i64,
) -> Result<Usage, HistoryRefused> {
    let records = usage.records.saturating_add(plan.records);
    if plan.records > 0 && records > signed(quota.max_records) {
        return Err(HistoryRefused::Records(quota.max_records));
    }
    let bytes = usage.bytes.saturating_add(plan.bytes);
    if plan.bytes > 0 && bytes > signed(quota.max_bytes) {
        return Err(HistoryRefused::Bytes(quota.max_bytes));
    }
    if plan.written == 0 {
        return Ok(Usage { records, bytes, ..usage });
    }
    // A GCRA over bytes: each write pushes `write_until` on by the time its bytes take at the
    // rate. Writing is refused while that runs more than a minute ahead, except from a standstill,
    // so one push (bounded by the request limit) always passes, whatever the two limits are.
    let rate = i128::from(signed(quota.write_bytes_per_minute.max(1)));
    let cost = i128::from(plan.written) * i128::from(WINDOW_MS) / rate;
    let cost = i64::try_from(cost).unwrap_or(i64::MAX);
    let start = usage.write_until.max(now_ms);
    let ahead = start - now_ms;
    if ahead > 0 && ahead.saturating_add(cost) > WINDOW_MS {
        let wait = ahead - (WINDOW_MS - cost).max(0);
        return Err(HistoryRefused::Rate {
            limit: quota.write_bytes_per_minute,
            retry_after_ms: u64::try_from(wait).unwrap_or(0).max(1),
        });
    }
    Ok(Usage { records, bytes, write_until: start.saturating_add(cost) })
}

/// The distinct keys of `records` (a batch may hold one record twice).
pub(super) fn distinct_keys(records: &[HistoryRecord]) -> Vec<(RecordKind, &str)> {
    let mut keys: Vec<_> = records.iter().map(HistoryRecord::key).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
