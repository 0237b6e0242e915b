//! Synced history in PostgreSQL (see [`super::history`]): one person's pushes, through any
//! gateway, take the same advisory lock, so counting, numbering and writing never interleave
//! (and two gateways cannot both fit a push into the room left for one).

use std::collections::HashMap;

use flint_protocol::sync::HistoryRecord;
use sqlx::postgres::PgPool;

use super::StoreError;
use super::history::{
    HistoryQuota, HistoryRefused, Positioned, Row, Usage, check, columns, distinct_keys, from_row, plan,
};

/// A [`Row`]'s columns (sqlx takes only fixed SQL, so each query spells them out).
macro_rules! row_columns {
    () => {
        "kind, id, body, revision, updated_at, device, deleted, seq"
    };
}

/// Lock keys are the owner's hash in its own namespace: never the key a link quota takes.
const LOCK_SQL: &str = "SELECT pg_advisory_xact_lock(hashtext('history:' || $1))";

pub(super) async fn push(
    pool: &PgPool,
    owner: &str,
    records: &[HistoryRecord],
    quota: HistoryQuota,
    now_ms: i64,
) -> Result<Result<Vec<HistoryRecord>, HistoryRefused>, StoreError> {
    let mut tx = pool.begin().await?;
    // Held to the commit: a second gateway's push for this person waits here, then reads the
    // usage this one wrote, so two pushes can never both fit the room left for one. (Not
    // `SELECT … FOR UPDATE` on the usage row: before a person's first push there is no row to lock.)
    sqlx::query(LOCK_SQL).bind(owner).execute(&mut *tx).await?;
    let mut stored = HashMap::new();
    for (kind, id) in distinct_keys(records) {
        let row: Option<Row> = sqlx::query_as(concat!(
            "SELECT ",
            row_columns!(),
            " FROM history WHERE owner = $1 AND kind = $2 AND id = $3"
        ))
        .bind(owner)
        .bind(kind.as_str())
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(found) = row.and_then(from_row) {
            stored.insert((kind, id.to_owned()), found.record);
        }
    }
    let plan = plan(records, stored);
    let usage: Option<(i64, i64, i64)> =
        sqlx::query_as("SELECT records, bytes, write_until FROM history_usage WHERE owner = $1")
            .bind(owner)
            .fetch_optional(&mut *tx)
            .await?;
    let usage =
        usage.map(|(records, bytes, write_until)| Usage { records, bytes, write_until }).unwrap_or_default();
    let usage = match check(usage, &plan, quota, now_ms) {
        Ok(usage) => usage,
        Err(refused) => return Ok(Err(refused)),
    };
    let mut seq: i64 =
        sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0)::BIGINT FROM history WHERE owner = $1")
            .bind(owner)
            .fetch_one(&mut *tx)
            .await?;
    for record in &plan.writes {
        seq += 1;
        let (body, revision, updated_at) = columns(record);
        sqlx::query(
            "INSERT INTO history (owner, kind, id, body, revision, updated_at, device, deleted, seq)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (owner, kind, id) DO UPDATE SET body = EXCLUDED.body,
               revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at,
               device = EXCLUDED.device, deleted = EXCLUDED.deleted, seq = EXCLUDED.seq",
        )
        .bind(owner)
        .bind(record.kind.as_str())
        .bind(&record.id)
        .bind(body)
        .bind(revision)
        .bind(updated_at)
        .bind(&record.device)
        .bind(record.deleted)
        .bind(seq)
        .execute(&mut *tx)
        .await?;
    }
    if !plan.writes.is_empty() {
        sqlx::query(
            "INSERT INTO history_usage (owner, records, bytes, write_until) VALUES ($1, $2, $3, $4)
             ON CONFLICT (owner) DO UPDATE SET records = EXCLUDED.records, bytes = EXCLUDED.bytes,
               write_until = EXCLUDED.write_until",
        )
        .bind(owner)
        .bind(usage.records)
        .bind(usage.bytes)
        .bind(usage.write_until)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(Ok(plan.kept))
}

pub(super) async fn pull(
    pool: &PgPool,
    owner: &str,
    since: u64,
    limit: usize,
) -> Result<Vec<Positioned>, StoreError> {
    let rows: Vec<Row> = sqlx::query_as(concat!(
        "SELECT ",
        row_columns!(),
        " FROM history WHERE owner = $1 AND seq > $2 ORDER BY seq LIMIT $3"
    ))
    .bind(owner)
    .bind(i64::try_from(since).unwrap_or(i64::MAX))
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().filter_map(from_row).collect())
}
