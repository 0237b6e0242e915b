//! Where the gateway keeps what must outlive a request: stored links, access tokens and sign-in
//! sessions, and each person's generated tokens today.
//!
//! One trait, [`Store`], two backends: [`SqliteStore`] (the embedded default for one machine: two
//! files, quotas in memory as before) and [`PgStore`] (`[store] url = "postgres://…"`: one
//! database shared by every gateway behind a load balancer, quotas included). Both apply their
//! versioned migrations when opened. The policy (hashing secrets and owners, quotas, expiry) lives
//! above, in [`crate::shares`], [`crate::auth::store`] and [`crate::limits`], so both backends
//! obey the same rules and are checked by the same tests (`tests/store.rs`).
//!
//! This module sits below every user of the store: it imports nothing of theirs but [`Person`].

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use flint_protocol::sync::HistoryRecord;

use crate::config::Config;
use crate::person::Person;

mod history;
mod history_pg;
mod history_sqlite;
mod postgres;
mod postgres_schema;
mod share_pictures;
mod sqlite;
mod sqlite_files;

pub use history::{HistoryQuota, HistoryRefused, Positioned, stored_bytes};

pub use postgres::PgStore;
pub use postgres_schema::MIGRATIONS as POSTGRES_MIGRATIONS;
pub use sqlite::SqliteStore;
pub use sqlite_files::{AUTH_MIGRATIONS, LINK_MIGRATIONS};

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Opening, migrating, reading or writing an SQLite file failed.
    #[error("{what} {path}: {source}")]
    Sqlite {
        /// Which file ("share database", "auth database").
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// An SQLite file's folder could not be created.
    #[error("{what} folder {path}: {source}")]
    Folder {
        /// Which file.
        what: &'static str,
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// PostgreSQL refused or could not be reached.
    #[error("PostgreSQL store: {0}")]
    Postgres(#[from] sqlx::Error),
    /// This part of the store was never opened, or failed to open (the reason).
    #[error("{0}")]
    Unavailable(String),
    /// No randomness for a new id or secret.
    #[error("no randomness: {0}")]
    Random(String),
    /// A blocking SQLite task panicked or was cancelled.
    #[error("a store task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// A per-person limit on stored links a new one would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    /// `share.max_links_per_person` (the limit).
    Links(usize),
    /// `share.max_bytes_per_person` (the limit).
    Bytes(usize),
}

/// A link just stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Its id (128 random bits, hex).
    pub id: String,
    /// When it expires (Unix seconds); `None`: kept until deleted.
    pub expires_at: Option<i64>,
}

/// A stored link as `/s/<id>` needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The encoded link.
    pub link: String,
    /// Whether pictures are stored with it (`GET /api/share/<id>/pictures`).
    pub pictures: bool,
}

/// What is stored under an id: a [`Kept`] link, or (for [`Store::get_pictures`]) its pictures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<T = Kept> {
    /// The link, or what was asked of it.
    Found(T),
    /// It expired; it has now been deleted.
    Expired,
    /// Nothing (never stored, deleted, or cleaned up after expiring).
    Missing,
}

/// A link to keep, with the owner's quotas it must fit.
#[derive(Debug, Clone)]
pub struct NewLink<'a> {
    /// The new id.
    pub id: &'a str,
    /// The encoded link.
    pub link: &'a str,
    /// The owner's key ([`person_key`]).
    pub owner: &'a str,
    /// Unix seconds.
    pub now: i64,
    /// When it expires; `None`: kept until deleted.
    pub expires_at: Option<i64>,
    /// Links the owner may keep.
    pub max_links: usize,
    /// Bytes of links the owner may keep (their pictures included).
    pub max_bytes: usize,
    /// The pictures kept with it, as stored (JSON of [`flint_protocol::stored_link::StoredPictures`]).
    pub pictures: Option<&'a str>,
}

impl NewLink<'_> {
    /// The bytes it takes against the owner's `max_bytes`: the link's and the pictures' text.
    pub fn bytes(&self) -> usize {
        self.link.len().saturating_add(self.pictures.map_or(0, str::len))
    }
}

/// A token as `token list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// Who it was given to.
    pub name: String,
    /// When it was made, in Unix seconds.
    pub created_at: i64,
    /// Sessions signed in with it that have not expired.
    pub sessions: i64,
}

/// The gateway's durable state. Secrets arrive hashed and owners keyed: a backend stores what it
/// is given and enforces only what must be atomic (a link quota, a session's token existing).
#[async_trait]
pub trait Store: Send + Sync {
    /// What it is, for the log ("PostgreSQL at host:port/db", "SQLite files").
    fn describe(&self) -> String;

    /// Connects and applies pending migrations; later calls are cheap. Every other method does it
    /// first, so calling it at start only makes a broken store known before the first request.
    async fn ready(&self) -> Result<(), StoreError>;

    /// Whether counts kept here are seen by every gateway on this store (PostgreSQL), rather than
    /// by this process only (SQLite keeps the day's quotas in memory, as before).
    fn shared(&self) -> bool;

    /// Why stored links cannot be kept at all (a file that failed to open, a bad URL), known
    /// without asking the database.
    fn link_problem(&self) -> Option<String>;

    /// Why tokens and sessions cannot be kept at all, as for links.
    fn auth_problem(&self) -> Option<String>;

    /// The database's own random salt for [`person_key`], made once with the database.
    async fn salt(&self) -> Result<Vec<u8>, StoreError>;

    /// Keeps `link` unless the owner's live links would pass a quota, counting and inserting at
    /// once so two gateways cannot both slip one in. Deletes expired links first.
    async fn put_link(&self, link: NewLink<'_>) -> Result<Result<(), Quota>, StoreError>;

    /// The link under `id`; one past its expiry at `now` is deleted and reported as such.
    async fn get_link(&self, id: &str, now: i64) -> Result<Lookup, StoreError>;

    /// The pictures stored with the link `id`, as stored; [`Lookup::Missing`] also when it has
    /// none. Expiry as for [`Store::get_link`].
    async fn get_pictures(&self, id: &str, now: i64) -> Result<Lookup<String>, StoreError>;

    /// Deletes the link `id` if `owner` stored it; whether it did.
    async fn delete_link(&self, owner: &str, id: &str) -> Result<bool, StoreError>;

    /// Gives links without owner or expiry (stored before either existed) `expires_at`, when
    /// given, then deletes every link expired at `now`; how many were deleted.
    async fn expire_links(&self, now: i64, undated_expire_at: Option<i64>) -> Result<usize, StoreError>;

    /// Adds a token; `false` when the name is taken.
    async fn insert_token(&self, name: &str, hash: &str, now: i64) -> Result<bool, StoreError>;

    /// Every token, by name, with its sessions still valid at `now`.
    async fn list_tokens(&self, now: i64) -> Result<Vec<TokenInfo>, StoreError>;

    /// Deletes the token `name` and its sessions; how many sessions ended, `None` if no such token.
    async fn revoke_token(&self, name: &str) -> Result<Option<u64>, StoreError>;

    /// A session `session_hash` for the token hashed `token_hash`, until `expires_at`; the
    /// token's name, or `None` when no token has that hash. Clears sessions expired at `now`.
    async fn open_session(
        &self,
        token_hash: &str,
        session_hash: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<Option<String>, StoreError>;

    /// The token name of the session `session_hash` valid at `now`.
    async fn session(&self, session_hash: &str, now: i64) -> Result<Option<String>, StoreError>;

    /// Ends a session; nothing happens for an unknown one.
    async fn close_session(&self, session_hash: &str) -> Result<(), StoreError>;

    /// Adds `tokens` to what `person` generated (or holds for answers still running) on `day`
    /// (days since the epoch, UTC), in one atomic step; the new total. Negative `tokens` give back
    /// (a reservation an answer did not use); the total never goes below 0. Days before yesterday
    /// are forgotten.
    async fn add_tokens(&self, person: &str, day: i64, tokens: i64) -> Result<u64, StoreError>;

    /// What `person` generated on `day`.
    async fn tokens_used(&self, person: &str, day: i64) -> Result<u64, StoreError>;

    /// Why synced history cannot be kept at all, as for links.
    fn history_problem(&self) -> Option<String>;

    /// Keeps each of `records` for `owner` that [`flint_protocol::sync::newer`] prefers to the
    /// stored copy (a deletion without its body), in one transaction; answers, in order, the copy
    /// now kept for each. Refused whole, changing nothing, when it would take the owner past a
    /// limit of `quota`, or write faster than it allows at `now_ms` (ms since the epoch).
    async fn push_history(
        &self,
        owner: &str,
        records: &[HistoryRecord],
        quota: HistoryQuota,
        now_ms: i64,
    ) -> Result<Result<Vec<HistoryRecord>, HistoryRefused>, StoreError>;

    /// The owner's records changed after position `since`, oldest change first, at most `limit`.
    async fn pull_history(
        &self,
        owner: &str,
        since: u64,
        limit: usize,
    ) -> Result<Vec<Positioned>, StoreError>;

    /// Records that this gateway, reachable by other gateways at `peer`, holds the session a
    /// resume token hashed `token_hash` names, until `expires_at` (Unix seconds); replaces any
    /// earlier entry. Deletes entries expired at `now`.
    async fn put_resume_owner(
        &self,
        token_hash: &str,
        peer: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError>;

    /// The peer address of the gateway holding the session `token_hash` names, if one does at `now`.
    async fn resume_owner(&self, token_hash: &str, now: i64) -> Result<Option<String>, StoreError>;

    /// The session `token_hash` names ended, or moved: no gateway holds it under that hash any more.
    async fn drop_resume_owner(&self, token_hash: &str) -> Result<(), StoreError>;
}

/// The store `config` asks for: PostgreSQL with `[store] url`, else the SQLite files the enabled
/// features need (the share file when links are on, the auth file with `auth.mode = "tokens"`).
pub fn open(config: &Config) -> Arc<dyn Store> {
    match &config.store.url {
        Some(url) => Arc::new(PgStore::new(url, config.store.max_connections)),
        None => {
            let links =
                config.share.stored_links_on(config.server.listen).then_some(config.share.database.as_path());
            // The auth file also keeps synced history, which a person signed in through a proxy
            // has too; nobody is signed in with `mode = "none"`, so that needs no file.
            let auth =
                (config.auth.mode != crate::config::AuthMode::None).then_some(config.auth.database.as_path());
            Arc::new(SqliteStore::open(links, auth))
        }
    }
}

/// What an owner or a person is stored as: a salted hash of the account name or of the address,
/// so the database names nobody. IPv6 is keyed by its /64, which one household or server usually
/// holds whole; per address, a quota would be one of 2^64.
pub fn person_key(salt: &[u8], person: &Person) -> String {
    let mut hash = Sha256::new();
    hash.update(salt);
    match person {
        Person::User(name) => {
            hash.update(b"user\0");
            hash.update(name.as_bytes());
        }
        Person::Anonymous(ip) => {
            hash.update(b"address\0");
            match ip.to_canonical() {
                IpAddr::V4(v4) => hash.update(v4.octets()),
                IpAddr::V6(v6) => hash.update(&v6.octets()[..8]),
            }
        }
    }
    hex(&hash.finalize())
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `N` random bytes.
pub(crate) fn random<const N: usize>() -> Result<[u8; N], StoreError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Random(e.to_string()))?;
    Ok(bytes)
}
