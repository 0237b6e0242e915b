//! The embedded store for one machine: stored links in one SQLite file (`share.database`), tokens
//! and sessions in another (`auth.database`), and the day's generated tokens in memory.
//!
//! Two files, as before this module existed: `PRAGMA user_version` numbers one migration list per
//! file, credentials deserve their own permissions and backups, and a deployment that keeps no
//! links still needs tokens. A file that cannot be opened makes only its part unavailable.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use flint_protocol::sync::HistoryRecord;

use super::history::{HistoryQuota, HistoryRefused, Positioned};
use super::sqlite_files::{AUTH_MIGRATIONS, LINK_MIGRATIONS, Part};
use super::{Kept, Lookup, NewLink, Quota, Store, StoreError, TokenInfo, history_sqlite, share_pictures};

/// The SQLite store.
pub struct SqliteStore {
    links: Part,
    auth: Part,
    /// The share file's salt; a random one per process without that file.
    salt: Vec<u8>,
    /// Generated tokens per (person, day): one process's view, as before PostgreSQL.
    quotas: Mutex<HashMap<(String, i64), u64>>,
}

impl SqliteStore {
    /// Opens the share file at `links` and the auth file at `auth` (each when given, and made
    /// readable by its owner only for auth), applying pending migrations. A file that fails makes
    /// its part answer [`StoreError::Unavailable`] with the reason; see [`SqliteStore::problems`].
    pub fn open(links: Option<&Path>, auth: Option<&Path>) -> Self {
        let links = Part::open(links, "share database", "stored links are off", LINK_MIGRATIONS, false);
        let auth = Part::open(auth, "auth database", "sign-in with tokens is off", AUTH_MIGRATIONS, true);
        let saved = |part: &Part, sql: &str| match part {
            Part::Open(file) => file
                .conn
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .query_row(sql, [], |row| row.get(0))
                .ok(),
            _ => None,
        };
        // The share file's salt as before; else the auth file's, so synced history keeps its
        // owners across restarts; else one per process (quotas only, in memory anyway).
        let salt = saved(&links, "SELECT salt FROM share_salt")
            .or_else(|| saved(&auth, "SELECT salt FROM history_salt"))
            .or_else(|| super::random::<32>().ok().map(Vec::from))
            .unwrap_or_default();
        Self { links, auth, salt, quotas: Mutex::new(HashMap::new()) }
    }

    /// Nothing on disk: quotas only (for tests of limits).
    pub fn memory() -> Self {
        Self::open(None, None)
    }

    /// Why each file asked for could not be opened.
    pub fn problems(&self) -> Vec<String> {
        [&self.links, &self.auth]
            .into_iter()
            .filter_map(|part| match part {
                Part::Failed(why) => Some(why.clone()),
                _ => None,
            })
            .collect()
    }

    /// The share file's schema version and salts, for the migration tests.
    pub fn link_schema(&self) -> Result<(i64, i64), StoreError> {
        let file = self.links.get()?;
        let conn = file.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let version = conn.query_row("PRAGMA user_version", [], |r| r.get(0));
        let salts = conn.query_row("SELECT COUNT(*) FROM share_salt", [], |r| r.get(0));
        version.and_then(|v| Ok((v, salts?))).map_err(|source| StoreError::Sqlite {
            what: file.what,
            path: file.path.clone(),
            source,
        })
    }

    /// The file resume owners are kept in: the share file when open, else the auth file.
    fn peers(&self) -> Result<&std::sync::Arc<super::sqlite_files::File>, StoreError> {
        self.links.get().or_else(|_| self.auth.get())
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn describe(&self) -> String {
        "SQLite files".to_owned()
    }

    async fn ready(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn shared(&self) -> bool {
        false
    }

    fn link_problem(&self) -> Option<String> {
        self.links.get().err().map(|e| e.to_string())
    }

    fn auth_problem(&self) -> Option<String> {
        self.auth.get().err().map(|e| e.to_string())
    }

    async fn salt(&self) -> Result<Vec<u8>, StoreError> {
        Ok(self.salt.clone())
    }

    async fn put_link(&self, new: NewLink<'_>) -> Result<Result<(), Quota>, StoreError> {
        let len = new.bytes();
        let (id, link, owner) = (new.id.to_owned(), new.link.to_owned(), new.owner.to_owned());
        let pictures = new.pictures.map(str::to_owned);
        let (now, expires_at, max_links, max_bytes) = (new.now, new.expires_at, new.max_links, new.max_bytes);
        self.links
            .get()?
            .run(move |conn| {
                // Kept even when this link is refused: expired links must not hold anyone's quota.
                conn.execute("DELETE FROM shares WHERE expires_at <= ?1", [now])?;
                // Counting and inserting in one write transaction, so a second gateway on the same
                // file cannot slip a link in between.
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let (links, bytes): (i64, i64) =
                    tx.query_row(share_pictures::SQLITE_OWNER_USAGE, [&owner], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })?;
                if let Some(quota) = over_quota(links, bytes, len, max_links, max_bytes) {
                    return Ok(Err(quota));
                }
                tx.execute(
                    "INSERT INTO shares (id, link, created_at, owner, expires_at, pictures) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![id, link, now, owner, expires_at, pictures],
                )?;
                tx.commit()?;
                Ok(Ok(()))
            })
            .await
    }

    async fn get_link(&self, id: &str, now: i64) -> Result<Lookup, StoreError> {
        let id = id.to_owned();
        self.links
            .get()?
            .run(move |conn| {
                let row: Option<(String, Option<i64>, bool)> = conn
                    .query_row(
                        "SELECT link, expires_at, pictures IS NOT NULL FROM shares WHERE id = ?1",
                        [&id],
                        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                    )
                    .optional()?;
                Ok(match row {
                    None => Lookup::Missing,
                    Some((_, Some(expires_at), _)) if expires_at <= now => {
                        conn.execute("DELETE FROM shares WHERE id = ?1", [&id])?;
                        Lookup::Expired
                    }
                    Some((link, _, pictures)) => Lookup::Found(Kept { link, pictures }),
                })
            })
            .await
    }

    async fn get_pictures(&self, id: &str, now: i64) -> Result<Lookup<String>, StoreError> {
        let id = id.to_owned();
        self.links.get()?.run(move |conn| share_pictures::sqlite_get(conn, &id, now)).await
    }

    async fn delete_link(&self, owner: &str, id: &str) -> Result<bool, StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.links
            .get()?
            .run(move |conn| {
                Ok(conn.execute("DELETE FROM shares WHERE id = ?1 AND owner = ?2", [id, owner])? > 0)
            })
            .await
    }

    async fn expire_links(&self, now: i64, undated_expire_at: Option<i64>) -> Result<usize, StoreError> {
        self.links
            .get()?
            .run(move |conn| {
                if let Some(at) = undated_expire_at {
                    conn.execute(
                        "UPDATE shares SET expires_at = ?1 WHERE owner IS NULL AND expires_at IS NULL",
                        [at],
                    )?;
                }
                conn.execute("DELETE FROM shares WHERE expires_at <= ?1", [now])
            })
            .await
    }

    async fn insert_token(&self, name: &str, hash: &str, now: i64) -> Result<bool, StoreError> {
        let (name, hash) = (name.to_owned(), hash.to_owned());
        self.auth
            .get()?
            .run(move |conn| {
                let sql = "INSERT INTO tokens (name, hash, created_at) VALUES (?1, ?2, ?3) ON CONFLICT(name) DO NOTHING";
                Ok(conn.execute(sql, params![name, hash, now])? > 0)
            })
            .await
    }

    async fn list_tokens(&self, now: i64) -> Result<Vec<TokenInfo>, StoreError> {
        self.auth
            .get()?
            .run(move |conn| {
                let mut query = conn.prepare(
                    "SELECT t.name, t.created_at, COUNT(s.hash) FROM tokens t
                     LEFT JOIN sessions s ON s.token_id = t.id AND s.expires_at > ?1
                     GROUP BY t.id ORDER BY t.name",
                )?;
                let rows = query.query_map([now], |row| {
                    Ok(TokenInfo { name: row.get(0)?, created_at: row.get(1)?, sessions: row.get(2)? })
                })?;
                rows.collect()
            })
            .await
    }

    async fn revoke_token(&self, name: &str) -> Result<Option<u64>, StoreError> {
        let name = name.to_owned();
        self.auth
            .get()?
            .run(move |conn| {
                let tx = conn.transaction()?;
                let id: Option<i64> = tx
                    .query_row("SELECT id FROM tokens WHERE name = ?1", [&name], |row| row.get(0))
                    .optional()?;
                let Some(id) = id else { return Ok(None) };
                let ended = tx.execute("DELETE FROM sessions WHERE token_id = ?1", [id])?;
                tx.execute("DELETE FROM tokens WHERE id = ?1", [id])?;
                tx.commit()?;
                Ok(Some(ended as u64))
            })
            .await
    }

    async fn open_session(
        &self,
        token_hash: &str,
        session_hash: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<Option<String>, StoreError> {
        let (token_hash, session_hash) = (token_hash.to_owned(), session_hash.to_owned());
        self.auth
            .get()?
            .run(move |conn| {
                let found: Option<(i64, String)> = conn
                    .query_row("SELECT id, name FROM tokens WHERE hash = ?1", [&token_hash], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })
                    .optional()?;
                let Some((id, name)) = found else { return Ok(None) };
                conn.execute("DELETE FROM sessions WHERE expires_at <= ?1", [now])?;
                conn.execute(
                    "INSERT INTO sessions (hash, token_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)",
                    params![session_hash, id, now, expires_at],
                )?;
                Ok(Some(name))
            })
            .await
    }

    async fn session(&self, session_hash: &str, now: i64) -> Result<Option<String>, StoreError> {
        let session_hash = session_hash.to_owned();
        self.auth
            .get()?
            .run(move |conn| {
                // The join means a revoked token's sessions fail even if a row were left behind.
                conn.query_row(
                    "SELECT t.name FROM sessions s JOIN tokens t ON t.id = s.token_id
                     WHERE s.hash = ?1 AND s.expires_at > ?2",
                    params![session_hash, now],
                    |row| row.get(0),
                )
                .optional()
            })
            .await
    }

    async fn close_session(&self, session_hash: &str) -> Result<(), StoreError> {
        let session_hash = session_hash.to_owned();
        self.auth
            .get()?
            .run(move |conn| conn.execute("DELETE FROM sessions WHERE hash = ?1", [session_hash]).map(drop))
            .await
    }

    async fn add_tokens(&self, person: &str, day: i64, tokens: i64) -> Result<u64, StoreError> {
        let mut quotas = self.quotas.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        quotas.retain(|(_, d), _| *d >= day - 1);
        let used = quotas.entry((person.to_owned(), day)).or_default();
        *used = used.saturating_add_signed(tokens);
        Ok(*used)
    }

    async fn tokens_used(&self, person: &str, day: i64) -> Result<u64, StoreError> {
        let quotas = self.quotas.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        Ok(quotas.get(&(person.to_owned(), day)).copied().unwrap_or(0))
    }

    fn history_problem(&self) -> Option<String> {
        self.auth.get().err().map(|_| match &self.auth {
            Part::Failed(why) => why.clone(),
            _ => "history sync needs sign-in (auth.mode = \"tokens\" or \"proxy\")".to_owned(),
        })
    }

    async fn push_history(
        &self,
        owner: &str,
        records: &[HistoryRecord],
        quota: HistoryQuota,
        now_ms: i64,
    ) -> Result<Result<Vec<HistoryRecord>, HistoryRefused>, StoreError> {
        history_sqlite::push(self.auth.get()?, owner, records, quota, now_ms).await
    }

    async fn pull_history(
        &self,
        owner: &str,
        since: u64,
        limit: usize,
    ) -> Result<Vec<Positioned>, StoreError> {
        history_sqlite::pull(self.auth.get()?, owner, since, limit).await
    }

    async fn put_resume_owner(
        &self,
        token_hash: &str,
        peer: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let (token_hash, peer) = (token_hash.to_owned(), peer.to_owned());
        self.peers()?
            .run(move |conn| {
                conn.execute("DELETE FROM resume_owners WHERE expires_at <= ?1", [now])?;
                conn.execute(
                    "INSERT INTO resume_owners (token_hash, peer, expires_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (token_hash) DO UPDATE SET peer = excluded.peer, expires_at = excluded.expires_at",
                    params![token_hash, peer, expires_at],
                )
                .map(drop)
            })
            .await
    }

    async fn resume_owner(&self, token_hash: &str, now: i64) -> Result<Option<String>, StoreError> {
        let token_hash = token_hash.to_owned();
        self.peers()?
            .run(move |conn| {
                conn.query_row(
                    "SELECT peer FROM resume_owners WHERE token_hash = ?1 AND expires_at > ?2",
                    params![token_hash, now],
                    |row| row.get(0),
                )
                .optional()
            })
            .await
    }

    async fn drop_resume_owner(&self, token_hash: &str) -> Result<(), StoreError> {
        let token_hash = token_hash.to_owned();
        self.peers()?
            .run(move |conn| {
                conn.execute("DELETE FROM resume_owners WHERE token_hash = ?1", [token_hash]).map(drop)
            })
            .await
    }
}

/// The quota a link of `len` bytes would pass, given the owner's `links` and `bytes` kept.
pub(super) fn over_quota(
    links: i64,
    bytes: i64,
    len: usize,
    max_links: usize,
    max_bytes: usize,
) -> Option<Quota> {
    let (links, bytes) = (usize::try_from(links).unwrap_or(0), usize::try_from(bytes).unwrap_or(0));
    if links >= max_links {
        return Some(Quota::Links(max_links));
    }
    (bytes.saturating_add(len) > max_bytes).then_some(Quota::Bytes(max_bytes))
}
