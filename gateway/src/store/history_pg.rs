//! Synced history in PostgreSQL (see [`super::history`]): one person's pushes, through any
//! gateway, take the same advisory lock, so counting, numbering and writing never interleave.

use flint_protocol::sync::HistoryRecord;
use sqlx::postgres::PgPool;

use super::StoreError;
use super::history::{
    Positioned, Row, TooManyRecords, columns, distinct_keys, from_row, over_limit, replaces,
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
    max_records: usize,
) -> Result<Result<Vec<HistoryRecord>, TooManyRecords>, StoreError> {
    let mut tx = pool.begin().await?;
    sqlx::query(LOCK_SQL).bind(owner).execute(&mut *tx).await?;
    let mut new_keys = 0;
    for (kind, id) in distinct_keys(records) {
        let exists: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM history WHERE owner = $1 AND kind = $2 AND id = $3")
                .bind(owner)
                .bind(kind.as_str())
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
        new_keys += usize::from(exists.is_none());
    }
    let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM history WHERE owner = $1")
        .bind(owner)
        .fetch_one(&mut *tx)
        .await?;
    if let Some(refused) = over_limit(held, new_keys, max_records) {
        return Ok(Err(refused));
    }
    let mut seq: i64 =
        sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0)::BIGINT FROM history WHERE owner = $1")
            .bind(owner)
            .fetch_one(&mut *tx)
            .await?;
    let mut kept = Vec::with_capacity(records.len());
    for record in records {
        let row: Option<Row> = sqlx::query_as(concat!(
            "SELECT ",
            row_columns!(),
            " FROM history WHERE owner = $1 AND kind = $2 AND id = $3"
        ))
        .bind(owner)
        .bind(record.kind.as_str())
        .bind(&record.id)
        .fetch_optional(&mut *tx)
        .await?;
        let current = row.and_then(from_row).map(|p| p.record);
        if !replaces(record, current.as_ref()) {
            kept.extend(current);
            continue;
        }
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
        kept.push(record.clone());
    }
    tx.commit().await?;
    Ok(Ok(kept))
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
