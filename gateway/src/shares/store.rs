//! The SQLite store of stored links: who stored each one (a salted hash, never the address), when
//! it expires, and the per-person quotas checked before a link is kept.

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sha2::{Digest, Sha256};

use super::Clock;
use crate::config::ShareConfig;
use crate::person::Person;

/// Schema changes in order; `PRAGMA user_version` records how many have been applied, so a
/// database made by an older gateway is brought up to date when opened.
pub(super) const MIGRATIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS shares (
        id TEXT PRIMARY KEY,
        link TEXT NOT NULL,
        created_at INTEGER NOT NULL
    ) STRICT;",
    // Owners and expiry (issue 12). Rows already stored keep a NULL owner: nobody can delete them
    // through the API and they count against no quota, but they get an expiry when opened (below).
    // The salt makes an owner's hash useless outside this file: the addresses cannot be recovered
    // by hashing every IPv4 address.
    "ALTER TABLE shares ADD COLUMN owner TEXT;
    ALTER TABLE shares ADD COLUMN expires_at INTEGER;
    CREATE INDEX shares_by_owner ON shares (owner);
    CREATE INDEX shares_by_expiry ON shares (expires_at);
    CREATE TABLE share_salt (salt BLOB NOT NULL) STRICT;
    INSERT INTO share_salt (salt) VALUES (randomblob(32));",
];

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Opening, migrating, reading or writing the database failed.
    #[error("share database {path}: {source}")]
    Database {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The database's folder could not be created.
    #[error("share database folder {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No randomness for a new id.
    #[error("no random id: {0}")]
    Random(String),
}

/// A per-person limit a new link would pass.
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

/// What is stored under an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The link.
    Found(String),
    /// It expired; it has now been deleted.
    Expired,
    /// Nothing (never stored, deleted, or cleaned up after expiring).
    Missing,
}

/// The SQLite store of shared links.
pub struct ShareStore {
    path: PathBuf,
    // SQLite is blocking: the connection is only used inside `spawn_blocking`, never across an await.
    conn: Mutex<Connection>,
    salt: Vec<u8>,
    max_links: usize,
    max_bytes: usize,
    /// Seconds a link is kept; `None`: until deleted.
    ttl: Option<i64>,
    clock: Clock,
}

impl ShareStore {
    /// Opens (or creates) `config.database`, applies pending migrations, dates links stored before
    /// expiry existed and deletes expired ones.
    pub fn open(config: &ShareConfig) -> Result<Self, StoreError> {
        let path = config.database.as_path();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Folder { path: dir.into(), source })?;
        }
        let db = |source| StoreError::Database { path: path.into(), source };
        let mut conn = Connection::open(path).map_err(db)?;
        crate::sqlite::migrate(&mut conn, MIGRATIONS).map_err(db)?;
        let salt = conn.query_row("SELECT salt FROM share_salt", [], |row| row.get(0)).map_err(db)?;
        let ttl = (config.ttl_days > 0).then(|| i64::from(config.ttl_days) * 86_400);
        let store = Self {
            path: path.into(),
            conn: Mutex::new(conn),
            salt,
            max_links: config.max_links_per_person,
            max_bytes: config.max_bytes_per_person,
            ttl,
            clock: config.clock.clone(),
        };
        let now = store.clock.now();
        if let Some(ttl) = store.ttl {
            // Links from before owners and expiry had none: they get a full term from now rather
            // than vanishing on the upgrade because of their age.
            store
                .conn()
                .execute(
                    "UPDATE shares SET expires_at = ?1 WHERE owner IS NULL AND expires_at IS NULL",
                    [now.saturating_add(ttl)],
                )
                .map_err(db)?;
        }
        store.remove_expired()?;
        Ok(store)
    }

    /// Stores `link` for `owner` and returns its new id, unless that would pass one of the
    /// owner's quotas. Expired links are deleted first, so they count against nobody.
    pub fn put(&self, owner: &Person, link: &str) -> Result<Result<Stored, Quota>, StoreError> {
        let id = new_id()?;
        let owner = self.owner_key(owner);
        let now = self.clock.now();
        let expires_at = self.ttl.map(|ttl| now.saturating_add(ttl));
        let mut conn = self.conn();
        // Kept even when this link is refused: expired links must not hold anyone's quota.
        conn.execute("DELETE FROM shares WHERE expires_at <= ?1", [now])
            .map_err(|source| self.error(source))?;
        // Counting and inserting in one transaction, so a second gateway on the same file cannot
        // slip a link in between.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|source| self.error(source))?;
        let (links, bytes): (i64, i64) = tx
            .query_row(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(CAST(link AS BLOB))), 0) FROM shares WHERE owner = ?1",
                [&owner],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(|source| self.error(source))?;
        let (links, bytes) = (usize::try_from(links).unwrap_or(0), usize::try_from(bytes).unwrap_or(0));
        if links >= self.max_links {
            return Ok(Err(Quota::Links(self.max_links)));
        }
        if bytes.saturating_add(link.len()) > self.max_bytes {
            return Ok(Err(Quota::Bytes(self.max_bytes)));
        }
        tx.execute(
            "INSERT INTO shares (id, link, created_at, owner, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, link, now, owner, expires_at],
        )
        .map_err(|source| self.error(source))?;
        tx.commit().map_err(|source| self.error(source))?;
        Ok(Ok(Stored { id, expires_at }))
    }

    /// The link stored under `id`; one past its expiry is deleted and reported as expired.
    pub fn get(&self, id: &str) -> Result<Lookup, StoreError> {
        let conn = self.conn();
        let row: Option<(String, Option<i64>)> = conn
            .query_row("SELECT link, expires_at FROM shares WHERE id = ?1", [id], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()
            .map_err(|source| self.error(source))?;
        match row {
            None => Ok(Lookup::Missing),
            Some((_, Some(expires_at))) if expires_at <= self.clock.now() => {
                conn.execute("DELETE FROM shares WHERE id = ?1", [id])
                    .map_err(|source| self.error(source))?;
                Ok(Lookup::Expired)
            }
            Some((link, _)) => Ok(Lookup::Found(link)),
        }
    }

    /// Deletes the link `id` if `owner` stored it; whether it did.
    pub fn delete(&self, owner: &Person, id: &str) -> Result<bool, StoreError> {
        let owner = self.owner_key(owner);
        let deleted = self
            .conn()
            .execute("DELETE FROM shares WHERE id = ?1 AND owner = ?2", [id, owner.as_str()])
            .map_err(|source| self.error(source))?;
        Ok(deleted > 0)
    }

    /// Deletes every expired link; how many.
    pub fn remove_expired(&self) -> Result<usize, StoreError> {
        self.conn()
            .execute("DELETE FROM shares WHERE expires_at <= ?1", [self.clock.now()])
            .map_err(|source| self.error(source))
    }

    /// What a link's owner is stored as: a salted hash of the account name or of the address, so
    /// the file names nobody. IPv6 is keyed by its /64, which one household or server usually
    /// holds whole; per address, a quota would be one of 2^64.
    fn owner_key(&self, person: &Person) -> String {
        let mut hash = Sha256::new();
        hash.update(&self.salt);
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
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    pub(super) fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite consistent (every statement is atomic).
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn error(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Database { path: self.path.clone(), source }
    }
}

fn new_id() -> Result<String, StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether an id could have come from [`new_id`]; anything else is not looked up.
pub(super) fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn temp_db(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("flint-shares-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("nested/shares.sqlite3")
    }

    fn config(path: &Path, configure: impl FnOnce(&mut ShareConfig)) -> ShareConfig {
        let mut config = ShareConfig { database: path.into(), ..ShareConfig::default() };
        configure(&mut config);
        config
    }

    fn open(path: &Path) -> ShareStore {
        ShareStore::open(&config(path, |_| {})).expect("open")
    }

    fn ada() -> Person {
        Person::User("ada".into())
    }

    fn put(store: &ShareStore, person: &Person, link: &str) -> Result<Stored, Quota> {
        store.put(person, link).expect("the database works")
    }

    #[test]
    fn links_survive_reopening() {
        let path = temp_db("reopen");
        let id = put(&open(&path), &ada(), "v1.abc").expect("stored").id;
        assert!(valid_id(&id), "{id}");
        let again = open(&path);
        assert_eq!(again.get(&id).expect("get"), Lookup::Found("v1.abc".into()));
        assert_eq!(again.get(&"0".repeat(32)).expect("get"), Lookup::Missing);
    }

    #[test]
    fn ids_differ_and_are_not_guessable_shapes() {
        let store = open(&temp_db("ids"));
        let a = put(&store, &ada(), "v1.a").expect("stored").id;
        let b = put(&store, &ada(), "v1.a").expect("stored").id;
        assert_ne!(a, b, "the same link shared twice gets two ids");
        assert!(!valid_id("../etc/passwd") && !valid_id("1") && !valid_id(&"g".repeat(32)));
    }

    #[test]
    fn migrations_run_once() {
        let path = temp_db("migrate");
        drop(open(&path));
        let store =
            ShareStore::open(&config(&path, |_| {})).expect("second open must not re-create the table");
        let version: i64 = store.conn().query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version");
        assert_eq!(version, MIGRATIONS.len() as i64);
        let salts: i64 =
            store.conn().query_row("SELECT COUNT(*) FROM share_salt", [], |r| r.get(0)).expect("salt");
        assert_eq!(salts, 1, "one salt, made once: a second would change every owner's key");
    }

    #[test]
    fn owners_are_stored_as_salted_hashes_and_ipv6_by_its_64() {
        let store = open(&temp_db("owners"));
        let here = Person::Anonymous("203.0.113.9".parse().expect("ip"));
        let key = store.owner_key(&here);
        assert_eq!(key.len(), 64);
        assert!(!key.contains("203"), "{key}");
        assert_ne!(
            key,
            open(&temp_db("owners-other-salt")).owner_key(&here),
            "each database has its own salt"
        );
        let mapped = Person::Anonymous("::ffff:203.0.113.9".parse().expect("ip"));
        assert_eq!(store.owner_key(&mapped), key, "an IPv4 address seen through IPv6 is the same person");
        let a = Person::Anonymous("2001:db8:1:2::1".parse().expect("ip"));
        let b = Person::Anonymous("2001:db8:1:2:ffff::9".parse().expect("ip"));
        let c = Person::Anonymous("2001:db8:1:3::1".parse().expect("ip"));
        assert_eq!(store.owner_key(&a), store.owner_key(&b), "one /64 is one person");
        assert_ne!(store.owner_key(&a), store.owner_key(&c));
        assert_ne!(store.owner_key(&ada()), store.owner_key(&Person::User("bob".into())));
    }

    #[test]
    fn quotas_count_live_links_only() {
        let clock = Clock::manual(1_000);
        let store = ShareStore::open(&config(&temp_db("live"), |c| {
            c.max_links_per_person = 1;
            c.ttl_days = 1;
            c.clock = clock.clone();
        }))
        .expect("open");
        put(&store, &ada(), "v1.a").expect("the first");
        assert_eq!(put(&store, &ada(), "v1.b"), Err(Quota::Links(1)));
        clock.advance(86_400);
        assert!(put(&store, &ada(), "v1.b").is_ok(), "an expired link no longer counts");
    }

    #[test]
    fn a_folder_that_cannot_exist_is_reported() {
        let file = temp_db("blocked");
        std::fs::create_dir_all(file.parent().and_then(Path::parent).expect("parent")).expect("dir");
        // A plain file where the folder should be.
        std::fs::write(file.parent().expect("parent"), b"").expect("file");
        let err = ShareStore::open(&config(&file, |_| {})).err().expect("must fail");
        assert!(err.to_string().contains("share database folder"), "{err}");
    }
}
