//! What the gateway's SQLite files (stored links, sign-in) share: versioned migrations.

use rusqlite::Connection;

/// Applies the `migrations` not yet applied, each in its own transaction, counting them in
/// `PRAGMA user_version`: a file made by an older gateway gains what it lacks and keeps its rows.
pub(crate) fn migrate(conn: &mut Connection, migrations: &[&str]) -> rusqlite::Result<()> {
    let applied: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    for (i, sql) in migrations.iter().enumerate().skip(usize::try_from(applied).unwrap_or(0)) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(())
}
