//! The pictures kept with a stored link (issue 28): a `pictures` column of `shares`, so deleting
//! the link or its expiry removes them in the same statement, and an owner's quota counts them
//! with the link. Here, the migrations that add the column and the reads of it per backend.

use rusqlite::{Connection, OptionalExtension};
use sqlx::postgres::PgPool;

use super::Lookup;

/// The SQLite share file's migration: JSON text, NULL for a link without pictures.
pub(super) const SQLITE_MIGRATION: &str = "ALTER TABLE shares ADD COLUMN pictures TEXT;";

/// The PostgreSQL migration, the same column.
pub(super) const POSTGRES_MIGRATION: &str = "ALTER TABLE shares ADD COLUMN pictures TEXT;";

/// SQLite: the bytes an owner's live links take, pictures included.
pub(super) const SQLITE_OWNER_USAGE: &str = "SELECT COUNT(*), \
     COALESCE(SUM(LENGTH(CAST(link AS BLOB)) + COALESCE(LENGTH(CAST(pictures AS BLOB)), 0)), 0) \
     FROM shares WHERE owner = ?1";

/// PostgreSQL: the same.
pub(super) const POSTGRES_OWNER_USAGE: &str = "SELECT COUNT(*), \
     COALESCE(SUM(octet_length(link) + COALESCE(octet_length(pictures), 0)), 0)::BIGINT \
     FROM shares WHERE owner = $1";

/// What a row's pictures and expiry make of a lookup at `now`: `Expired` when it passed, so the
/// caller deletes it.
fn lookup(row: Option<(Option<String>, Option<i64>)>, now: i64) -> Lookup<String> {
    match row {
        None | Some((None, _)) => Lookup::Missing,
        Some((_, Some(expires_at))) if expires_at <= now => Lookup::Expired,
        Some((Some(pictures), _)) => Lookup::Found(pictures),
    }
}

/// SQLite: the pictures of `id` at `now`; an expired link is deleted.
pub(super) fn sqlite_get(conn: &mut Connection, id: &str, now: i64) -> rusqlite::Result<Lookup<String>> {
    let row = conn
        .query_row("SELECT pictures, expires_at FROM shares WHERE id = ?1", [id], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    let found = lookup(row, now);
    if found == Lookup::Expired {
        conn.execute("DELETE FROM shares WHERE id = ?1", [id])?;
    }
    Ok(found)
}

/// PostgreSQL: the same.
pub(super) async fn pg_get(pool: &PgPool, id: &str, now: i64) -> Result<Lookup<String>, sqlx::Error> {
    let row: Option<(Option<String>, Option<i64>)> =
        sqlx::query_as("SELECT pictures, expires_at FROM shares WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await?;
    let found = lookup(row, now);
    if found == Lookup::Expired {
        sqlx::query("DELETE FROM shares WHERE id = $1").bind(id).execute(pool).await?;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_without_pictures_is_missing_and_expiry_wins_over_pictures() {
        assert_eq!(lookup(None, 5), Lookup::Missing);
        assert_eq!(lookup(Some((None, None)), 5), Lookup::Missing);
        assert_eq!(lookup(Some((Some("[]".into()), Some(5))), 5), Lookup::Expired);
        assert_eq!(lookup(Some((Some("[]".into()), Some(6))), 5), Lookup::Found("[]".into()));
        assert_eq!(lookup(Some((Some("[]".into()), None)), 5), Lookup::Found("[]".into()));
    }
}
