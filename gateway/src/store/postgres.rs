//! The shared store: one PostgreSQL database for every gateway behind a load balancer, so a link
//! stored through one opens through another, a token made once signs in everywhere, and the day's
//! token quota is one count however many gateways a person's tabs land on.
//!
//! Queries are plain SQL checked at run time (no database is needed to build). Migrations are a
//! numbered list applied at start under an advisory lock, so gateways starting together apply each
//! one once; `flint_schema` records which were applied.

use std::str::FromStr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use tokio::sync::OnceCell;

use flint_protocol::sync::HistoryRecord;

use super::history::{HistoryQuota, HistoryRefused, Positioned};
use super::postgres_schema::migrate;
use super::sqlite::over_quota;
use super::{Kept, Lookup, NewLink, Quota, Store, StoreError, TokenInfo, history_pg, share_pictures};

/// The PostgreSQL store.
pub struct PgStore {
    /// The pool, or why the URL was refused.
    pool: Result<PgPool, String>,
    /// Host, port and database, never the password.
    place: String,
    /// Migrated, with the database's salt.
    salt: OnceCell<Vec<u8>>,
    /// The last day this gateway forgot older days' quotas on: once a day, not at every stream.
    swept_day: AtomicI64,
}

impl PgStore {
    /// A store for `url` with up to `max_connections`; connects (and migrates) on first use or
    /// [`Store::ready`], so a gateway can be built before the database is up.
    pub fn new(url: &str, max_connections: u32) -> Self {
        let options = PgConnectOptions::from_str(url);
        let place = options.as_ref().map_or_else(
            |_| "PostgreSQL (bad URL)".to_owned(),
            |o| format!("PostgreSQL at {}:{}/{}", o.get_host(), o.get_port(), o.get_database().unwrap_or("")),
        );
        let pool = options.map_err(|e| format!("store.url is not a PostgreSQL URL: {e}")).map(|options| {
            PgPoolOptions::new()
                .max_connections(max_connections.max(1))
                // A database that is down answers "unavailable" in seconds, not after a minute.
                .acquire_timeout(Duration::from_secs(5))
                .connect_lazy_with(options)
        });
        Self { pool, place, salt: OnceCell::new(), swept_day: AtomicI64::new(i64::MIN) }
    }

    /// How many migrations the database has had.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        let version: i32 = sqlx::query_scalar("SELECT COALESCE(MAX(version), 0) FROM flint_schema")
            .fetch_one(self.pool().await?)
            .await?;
        Ok(i64::from(version))
    }

    async fn pool(&self) -> Result<&PgPool, StoreError> {
        self.ready().await?;
        self.pool.as_ref().map_err(|why| StoreError::Unavailable(why.clone()))
    }
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

#[async_trait]
impl Store for PgStore {
    fn describe(&self) -> String {
        self.place.clone()
    }

    async fn ready(&self) -> Result<(), StoreError> {
        let pool = self.pool.as_ref().map_err(|why| StoreError::Unavailable(why.clone()))?;
        self.salt
            .get_or_try_init(|| async {
                migrate(pool).await?;
                // The salt is made here rather than in SQL: Rust's randomness is the OS's.
                let fresh = super::random::<32>()?;
                sqlx::query("INSERT INTO store_salt (id, salt) VALUES (1, $1) ON CONFLICT (id) DO NOTHING")
                    .bind(&fresh[..])
                    .execute(pool)
                    .await?;
                let salt: Vec<u8> =
                    sqlx::query_scalar("SELECT salt FROM store_salt WHERE id = 1").fetch_one(pool).await?;
                Ok::<_, StoreError>(salt)
            })
            .await
            .map(drop)
            .map_err(|err| {
                let why = match &err {
                    // sqlx retries a refused connection and then hides why none opened.
                    StoreError::Postgres(sqlx::Error::PoolTimedOut) => "within 5 s".to_owned(),
                    // Something answered and broke the connection: a reset, or a close before
                    // PostgreSQL's first word (another program on the port, a proxy with no server).
                    StoreError::Postgres(sqlx::Error::Io(io)) => format!("({io})"),
                    _ => return err,
                };
                StoreError::Unavailable(format!(
                    "PostgreSQL store: no connection to {} {why}; is it running, and does store.url \
                     name it (host, port, user, password, database)?",
                    self.place.trim_start_matches("PostgreSQL at ")
                ))
            })
    }

    fn shared(&self) -> bool {
        true
    }

    fn link_problem(&self) -> Option<String> {
        self.pool.as_ref().err().cloned()
    }

    fn auth_problem(&self) -> Option<String> {
        self.pool.as_ref().err().cloned()
    }

    async fn salt(&self) -> Result<Vec<u8>, StoreError> {
        self.ready().await?;
        Ok(self.salt.get().cloned().unwrap_or_default())
    }

    async fn put_link(&self, new: NewLink<'_>) -> Result<Result<(), Quota>, StoreError> {
        let pool = self.pool().await?;
        sqlx::query("DELETE FROM shares WHERE expires_at <= $1").bind(new.now).execute(pool).await?;
        let mut tx = pool.begin().await?;
        // One owner's links are counted and added by one gateway at a time.
        sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))").bind(new.owner).execute(&mut *tx).await?;
        let (links, bytes): (i64, i64) =
            sqlx::query_as(share_pictures::POSTGRES_OWNER_USAGE).bind(new.owner).fetch_one(&mut *tx).await?;
        if let Some(quota) = over_quota(links, bytes, new.bytes(), new.max_links, new.max_bytes) {
            return Ok(Err(quota));
        }
        sqlx::query(
            "INSERT INTO shares (id, link, created_at, owner, expires_at, pictures) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(new.id)
        .bind(new.link)
        .bind(new.now)
        .bind(new.owner)
        .bind(new.expires_at)
        .bind(new.pictures)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Ok(()))
    }

    async fn get_link(&self, id: &str, now: i64) -> Result<Lookup, StoreError> {
        let pool = self.pool().await?;
        let row: Option<(String, Option<i64>, bool)> =
            sqlx::query_as("SELECT link, expires_at, pictures IS NOT NULL FROM shares WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await?;
        Ok(match row {
            None => Lookup::Missing,
            Some((_, Some(expires_at), _)) if expires_at <= now => {
                sqlx::query("DELETE FROM shares WHERE id = $1").bind(id).execute(pool).await?;
                Lookup::Expired
            }
            Some((link, _, pictures)) => Lookup::Found(Kept { link, pictures }),
        })
    }

    async fn get_pictures(&self, id: &str, now: i64) -> Result<Lookup<String>, StoreError> {
        Ok(share_pictures::pg_get(self.pool().await?, id, now).await?)
    }

    async fn delete_link(&self, owner: &str, id: &str) -> Result<bool, StoreError> {
        let pool = self.pool().await?;
        let done = sqlx::query("DELETE FROM shares WHERE id = $1 AND owner = $2")
            .bind(id)
            .bind(owner)
            .execute(pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn expire_links(&self, now: i64, undated_expire_at: Option<i64>) -> Result<usize, StoreError> {
        let pool = self.pool().await?;
        if let Some(at) = undated_expire_at {
            sqlx::query("UPDATE shares SET expires_at = $1 WHERE owner IS NULL AND expires_at IS NULL")
                .bind(at)
                .execute(pool)
                .await?;
        }
        let done = sqlx::query("DELETE FROM shares WHERE expires_at <= $1").bind(now).execute(pool).await?;
        Ok(usize::try_from(done.rows_affected()).unwrap_or(usize::MAX))
    }

    async fn insert_token(&self, name: &str, hash: &str, now: i64) -> Result<bool, StoreError> {
        let pool = self.pool().await?;
        let done = sqlx::query(
            "INSERT INTO tokens (name, hash, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(hash)
        .bind(now)
        .execute(pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn list_tokens(&self, now: i64) -> Result<Vec<TokenInfo>, StoreError> {
        let pool = self.pool().await?;
        let rows: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT t.name, t.created_at, COUNT(s.hash) FROM tokens t
             LEFT JOIN sessions s ON s.token_id = t.id AND s.expires_at > $1
             GROUP BY t.id ORDER BY t.name",
        )
        .bind(now)
        .fetch_all(pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(name, created_at, sessions)| TokenInfo { name, created_at, sessions })
            .collect())
    }

    async fn revoke_token(&self, name: &str) -> Result<Option<u64>, StoreError> {
        let pool = self.pool().await?;
        let mut tx = pool.begin().await?;
        let id: Option<i64> = sqlx::query_scalar("SELECT id FROM tokens WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(id) = id else { return Ok(None) };
        let ended =
            sqlx::query("DELETE FROM sessions WHERE token_id = $1").bind(id).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM tokens WHERE id = $1").bind(id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(Some(ended.rows_affected()))
    }

    async fn open_session(
        &self,
        token_hash: &str,
        session_hash: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<Option<String>, StoreError> {
        let pool = self.pool().await?;
        let found: Option<(i64, String)> = sqlx::query_as("SELECT id, name FROM tokens WHERE hash = $1")
            .bind(token_hash)
            .fetch_optional(pool)
            .await?;
        let Some((id, name)) = found else { return Ok(None) };
        sqlx::query("DELETE FROM sessions WHERE expires_at <= $1").bind(now).execute(pool).await?;
        // A token revoked since the lookup makes this insert fail its foreign key: no session.
        sqlx::query("INSERT INTO sessions (hash, token_id, created_at, expires_at) VALUES ($1, $2, $3, $4)")
            .bind(session_hash)
            .bind(id)
            .bind(now)
            .bind(expires_at)
            .execute(pool)
            .await?;
        Ok(Some(name))
    }

    async fn session(&self, session_hash: &str, now: i64) -> Result<Option<String>, StoreError> {
        let pool = self.pool().await?;
        Ok(sqlx::query_scalar(
            "SELECT t.name FROM sessions s JOIN tokens t ON t.id = s.token_id WHERE s.hash = $1 AND s.expires_at > $2",
        )
        .bind(session_hash)
        .bind(now)
        .fetch_optional(pool)
        .await?)
    }

    async fn close_session(&self, session_hash: &str) -> Result<(), StoreError> {
        let pool = self.pool().await?;
        sqlx::query("DELETE FROM sessions WHERE hash = $1").bind(session_hash).execute(pool).await?;
        Ok(())
    }

    async fn add_tokens(&self, person: &str, day: i64, tokens: i64) -> Result<u64, StoreError> {
        let pool = self.pool().await?;
        // One statement: two gateways charging the same person at once both count, and each
        // sees the total its own addition made (a reservation is decided on it).
        let used: i64 = sqlx::query_scalar(
            "INSERT INTO token_use (person, day, tokens) VALUES ($1, $2, GREATEST($3, 0))
             ON CONFLICT (person, day) DO UPDATE SET tokens = GREATEST(token_use.tokens + $3, 0)
             RETURNING tokens",
        )
        .bind(person)
        .bind(day)
        .bind(tokens)
        .fetch_one(pool)
        .await?;
        if self.swept_day.fetch_max(day, Ordering::Relaxed) < day {
            sqlx::query("DELETE FROM token_use WHERE day < $1").bind(day - 1).execute(pool).await?;
        }
        Ok(count(used))
    }

    async fn tokens_used(&self, person: &str, day: i64) -> Result<u64, StoreError> {
        let pool = self.pool().await?;
        let used: Option<i64> =
            sqlx::query_scalar("SELECT tokens FROM token_use WHERE person = $1 AND day = $2")
                .bind(person)
                .bind(day)
                .fetch_optional(pool)
                .await?;
        Ok(used.map_or(0, count))
    }

    fn history_problem(&self) -> Option<String> {
        self.pool.as_ref().err().cloned()
    }

    async fn push_history(
        &self,
        owner: &str,
        records: &[HistoryRecord],
        quota: HistoryQuota,
        now_ms: i64,
    ) -> Result<Result<Vec<HistoryRecord>, HistoryRefused>, StoreError> {
        history_pg::push(self.pool().await?, owner, records, quota, now_ms).await
    }

    async fn pull_history(
        &self,
        owner: &str,
        since: u64,
        limit: usize,
    ) -> Result<Vec<Positioned>, StoreError> {
        history_pg::pull(self.pool().await?, owner, since, limit).await
    }

    async fn put_resume_owner(
        &self,
        token_hash: &str,
        peer: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let pool = self.pool().await?;
        sqlx::query("DELETE FROM resume_owners WHERE expires_at <= $1").bind(now).execute(pool).await?;
        sqlx::query(
            "INSERT INTO resume_owners (token_hash, peer, expires_at) VALUES ($1, $2, $3)
             ON CONFLICT (token_hash) DO UPDATE SET peer = EXCLUDED.peer, expires_at = EXCLUDED.expires_at",
        )
        .bind(token_hash)
        .bind(peer)
        .bind(expires_at)
        .execute(pool)
        .await?;
        Ok(())
    }

    async fn resume_owner(&self, token_hash: &str, now: i64) -> Result<Option<String>, StoreError> {
        let pool = self.pool().await?;
        Ok(sqlx::query_scalar("SELECT peer FROM resume_owners WHERE token_hash = $1 AND expires_at > $2")
            .bind(token_hash)
            .bind(now)
            .fetch_optional(pool)
            .await?)
    }

    async fn drop_resume_owner(&self, token_hash: &str) -> Result<(), StoreError> {
        let pool = self.pool().await?;
        sqlx::query("DELETE FROM resume_owners WHERE token_hash = $1").bind(token_hash).execute(pool).await?;
        Ok(())
    }
}
