//! Synced history in the SQLite auth file (see [`super::history`]).

use std::collections::HashMap;
use std::sync::Arc;

use flint_protocol::sync::HistoryRecord;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::StoreError;
use super::history::{
    HistoryQuota, HistoryRefused, Positioned, Row, Usage, check, columns, distinct_keys, from_row, plan,
};
use super::sqlite_files::File;

const COLUMNS: &str = "kind, id, body, revision, updated_at, device, deleted, seq";

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get::<_, i64>(6)? != 0,
        row.get(7)?,
    ))
}

pub(super) async fn push(
    file: &Arc<File>,
    owner: &str,
    records: &[HistoryRecord],
    quota: HistoryQuota,
    now_ms: i64,
) -> Result<Result<Vec<HistoryRecord>, HistoryRefused>, StoreError> {
    let (owner, records) = (owner.to_owned(), records.to_vec());
    file.run(move |conn| {
        // One writer at a time: counting, numbering and writing cannot interleave with another
        // gateway's push on the same file.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut stored = HashMap::new();
        for (kind, id) in distinct_keys(&records) {
            let row = tx
                .query_row(
                    &format!("SELECT {COLUMNS} FROM history WHERE owner = ?1 AND kind = ?2 AND id = ?3"),
                    params![owner, kind.as_str(), id],
                    read_row,
                )
                .optional()?;
            if let Some(found) = row.and_then(from_row) {
                stored.insert((kind, id.to_owned()), found.record);
            }
        }
        let plan = plan(&records, stored);
        let usage = tx
            .query_row(
                "SELECT records, bytes, write_until FROM history_usage WHERE owner = ?1",
                [&owner],
                |r| Ok(Usage { records: r.get(0)?, bytes: r.get(1)?, write_until: r.get(2)? }),
            )
            .optional()?
            .unwrap_or_default();
        let usage = match check(usage, &plan, quota, now_ms) {
            Ok(usage) => usage,
            Err(refused) => return Ok(Err(refused)),
        };
        let mut seq: i64 =
            tx.query_row("SELECT COALESCE(MAX(seq), 0) FROM history WHERE owner = ?1", [&owner], |r| {
                r.get(0)
            })?;
        for record in &plan.writes {
            seq += 1;
            let (body, revision, updated_at) = columns(record);
            tx.execute(
                "INSERT INTO history (owner, kind, id, body, revision, updated_at, device, deleted, seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (owner, kind, id) DO UPDATE SET body = excluded.body,
                   revision = excluded.revision, updated_at = excluded.updated_at,
                   device = excluded.device, deleted = excluded.deleted, seq = excluded.seq",
                params![
                    owner,
                    record.kind.as_str(),
                    record.id,
                    body,
                    revision,
                    updated_at,
                    record.device,
                    i64::from(record.deleted),
                    seq
                ],
            )?;
        }
        if !plan.writes.is_empty() {
            tx.execute(
                "INSERT INTO history_usage (owner, records, bytes, write_until) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (owner) DO UPDATE SET records = excluded.records, bytes = excluded.bytes,
                   write_until = excluded.write_until",
                params![owner, usage.records, usage.bytes, usage.write_until],
            )?;
        }
        tx.commit()?;
        Ok(Ok(plan.kept))
    })
    .await
}

pub(super) async fn pull(
    file: &Arc<File>,
    owner: &str,
    since: u64,
    limit: usize,
) -> Result<Vec<Positioned>, StoreError> {
    let owner = owner.to_owned();
    let since = i64::try_from(since).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    file.run(move |conn| {
        let mut query = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM history WHERE owner = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
        ))?;
        let rows = query.query_map(params![owner, since, limit], read_row)?;
        rows.filter_map(|row| row.map(from_row).transpose()).collect::<rusqlite::Result<Vec<_>>>()
    })
    .await
}
