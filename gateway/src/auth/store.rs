//! Access tokens and sign-in sessions in SQLite, both kept only as SHA-256 hashes.
//!
//! Both are 32 random bytes, so a plain hash is enough: there is nothing to guess from it, and no
//! slow password hash is needed. Someone who reads the file learns the tokens' names and when they
//! were made, and cannot sign in with anything in it.
//!
//! Its own file (`auth.database`) rather than the share links' one: `PRAGMA user_version` numbers
//! one migration list per file, credentials deserve their own permissions and backups, and a
//! deployment that keeps no links (`share.enabled = false`) still needs tokens.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

/// Schema changes in order; `PRAGMA user_version` records how many have been applied.
const MIGRATIONS: &[&str] = &["CREATE TABLE IF NOT EXISTS tokens (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE IF NOT EXISTS sessions (
        hash TEXT PRIMARY KEY,
        token_id INTEGER NOT NULL REFERENCES tokens(id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX IF NOT EXISTS sessions_by_token ON sessions(token_id);"];

/// What an access token looks like before its random part, so a leaked one is recognisable.
pub const TOKEN_PREFIX: &str = "flint_";

/// Why the store cannot do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum AuthStoreError {
    /// Opening, migrating, reading or writing the database failed.
    #[error("auth database {path}: {source}")]
    Database {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The database's folder could not be created.
    #[error("auth database folder {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No randomness for a new secret.
    #[error("no randomness for a new secret: {0}")]
    Random(String),
    /// A token of this name exists.
    #[error("a token named {0:?} exists already; revoke it first or choose another name")]
    NameTaken(String),
    /// The name cannot name a person.
    #[error(
        "{0:?} cannot name a token: use 1 to 64 letters, digits and . _ @ + - (a person's name or address)"
    )]
    BadName(String),
    /// No token has this name.
    #[error("no token is named {0:?}")]
    NoSuchToken(String),
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

/// A sign-in: the person's token name and the session secret for their cookie (shown once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// The name of the token signed in with.
    pub name: String,
    /// The cookie's value; only its hash is stored.
    pub secret: String,
}

/// The SQLite store of tokens and sessions.
pub struct AuthStore {
    path: PathBuf,
    // SQLite is blocking: used from `spawn_blocking` or the CLI, never held across an await.
    conn: Mutex<Connection>,
}

impl AuthStore {
    /// Opens (or creates, readable by its owner only) the database at `path` and migrates it.
    pub fn open(path: &Path) -> Result<Self, AuthStoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|source| AuthStoreError::Folder { path: dir.into(), source })?;
        }
        let db = |source| AuthStoreError::Database { path: path.into(), source };
        let mut conn = Connection::open(path).map_err(db)?;
        restrict_to_owner(path);
        // The CLI may write while the gateway reads.
        conn.busy_timeout(Duration::from_secs(5)).map_err(db)?;
        conn.execute_batch("PRAGMA foreign_keys = ON").map_err(db)?;
        crate::sqlite::migrate(&mut conn, MIGRATIONS).map_err(db)?;
        Ok(Self { path: path.into(), conn: Mutex::new(conn) })
    }

    /// Makes a token for `name` and returns it: the only time it exists in clear.
    pub fn create_token(&self, name: &str, now: i64) -> Result<String, AuthStoreError> {
        if !valid_name(name) {
            return Err(AuthStoreError::BadName(name.to_owned()));
        }
        let token = format!("{TOKEN_PREFIX}{}", secret()?);
        let inserted = self
            .conn()
            .execute(
                "INSERT INTO tokens (name, hash, created_at) VALUES (?1, ?2, ?3) ON CONFLICT(name) DO NOTHING",
                params![name, hash(&token), now],
            )
            .map_err(|source| self.error(source))?;
        if inserted == 0 {
            return Err(AuthStoreError::NameTaken(name.to_owned()));
        }
        Ok(token)
    }

    /// Every token, by name, with its sessions still valid at `now`.
    pub fn list_tokens(&self, now: i64) -> Result<Vec<TokenInfo>, AuthStoreError> {
        let conn = self.conn();
        let mut query = conn
            .prepare(
                "SELECT t.name, t.created_at, COUNT(s.hash) FROM tokens t
                 LEFT JOIN sessions s ON s.token_id = t.id AND s.expires_at > ?1
                 GROUP BY t.id ORDER BY t.name",
            )
            .map_err(|source| self.error(source))?;
        let rows = query
            .query_map([now], |row| {
                Ok(TokenInfo { name: row.get(0)?, created_at: row.get(1)?, sessions: row.get(2)? })
            })
            .map_err(|source| self.error(source))?;
        rows.collect::<Result<_, _>>().map_err(|source| self.error(source))
    }

    /// Deletes the token `name` and every session signed in with it; answers how many sessions
    /// ended.
    pub fn revoke_token(&self, name: &str) -> Result<u64, AuthStoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|source| self.error(source))?;
        let id: Option<i64> = tx
            .query_row("SELECT id FROM tokens WHERE name = ?1", [name], |row| row.get(0))
            .optional()
            .map_err(|source| self.error(source))?;
        let Some(id) = id else { return Err(AuthStoreError::NoSuchToken(name.to_owned())) };
        let ended = tx
            .execute("DELETE FROM sessions WHERE token_id = ?1", [id])
            .map_err(|source| self.error(source))?;
        tx.execute("DELETE FROM tokens WHERE id = ?1", [id]).map_err(|source| self.error(source))?;
        tx.commit().map_err(|source| self.error(source))?;
        Ok(ended as u64)
    }

    /// Exchanges `token` for a session lasting `lifetime` from `now`; `None` for a token that is
    /// not (or no longer) issued. Sessions expired by `now` are cleared on the way.
    pub fn sign_in(
        &self,
        token: &str,
        now: i64,
        lifetime: Duration,
    ) -> Result<Option<NewSession>, AuthStoreError> {
        let conn = self.conn();
        let found: Option<(i64, String)> = conn
            .query_row("SELECT id, name FROM tokens WHERE hash = ?1", [hash(token.trim())], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()
            .map_err(|source| self.error(source))?;
        let Some((id, name)) = found else { return Ok(None) };
        conn.execute("DELETE FROM sessions WHERE expires_at <= ?1", [now])
            .map_err(|source| self.error(source))?;
        let secret = secret()?;
        let expires = now.saturating_add(i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX));
        conn.execute(
            "INSERT INTO sessions (hash, token_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)",
            params![hash(&secret), id, now, expires],
        )
        .map_err(|source| self.error(source))?;
        Ok(Some(NewSession { name, secret }))
    }

    /// The token name of the session `secret` when it is still valid at `now`. The join with
    /// `tokens` means a revoked token's sessions fail even if a row were left behind.
    pub fn session(&self, secret: &str, now: i64) -> Result<Option<String>, AuthStoreError> {
        self.conn()
            .query_row(
                "SELECT t.name FROM sessions s JOIN tokens t ON t.id = s.token_id
                 WHERE s.hash = ?1 AND s.expires_at > ?2",
                params![hash(secret), now],
                |row| row.get(0),
            )
            .optional()
            .map_err(|source| self.error(source))
    }

    /// Ends the session `secret` (signing out); nothing happens for an unknown one.
    pub fn sign_out(&self, secret: &str) -> Result<(), AuthStoreError> {
        self.conn()
            .execute("DELETE FROM sessions WHERE hash = ?1", [hash(secret)])
            .map(drop)
            .map_err(|source| self.error(source))
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite consistent (every statement is atomic).
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn error(&self, source: rusqlite::Error) -> AuthStoreError {
        AuthStoreError::Database { path: self.path.clone(), source }
    }
}

/// Credentials need not be world-readable even hashed; failing to restrict is not fatal.
fn restrict_to_owner(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if let Err(err) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
            tracing::warn!(path = %path.display(), error = %err, "cannot make the auth database private");
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// 32 random bytes, base64url without padding (43 characters).
fn secret() -> Result<String, AuthStoreError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| AuthStoreError::Random(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The stored form of a token or session secret: SHA-256, hex.
pub fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Token names become [`crate::person::Person::User`] names in logs and limits: printable, short.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b'+' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    fn temp_db(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("flint-auth-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("auth.sqlite3")
    }

    #[test]
    fn a_token_signs_in_until_the_session_expires() {
        let store = AuthStore::open(&temp_db("expiry")).expect("open");
        let token = store.create_token("ada", 1_000).expect("create");
        assert!(token.starts_with(TOKEN_PREFIX) && token.len() == TOKEN_PREFIX.len() + 43, "{token}");
        let session = store.sign_in(&token, 1_000, DAY).expect("sign in").expect("a valid token");
        assert_eq!(session.name, "ada");
        assert_eq!(store.session(&session.secret, 1_000 + 86_399).expect("read").as_deref(), Some("ada"));
        assert_eq!(store.session(&session.secret, 1_000 + 86_400).expect("read"), None, "expired");
        assert_eq!(store.sign_in("flint_wrong", 1_000, DAY).expect("sign in"), None);
    }

    #[test]
    fn revoking_ends_the_tokens_sessions_and_names_are_unique() {
        let store = AuthStore::open(&temp_db("revoke")).expect("open");
        let token = store.create_token("ada", 0).expect("create");
        assert!(matches!(store.create_token("ada", 0), Err(AuthStoreError::NameTaken(_))));
        let a = store.sign_in(&token, 0, DAY).expect("sign in").expect("valid");
        let b = store.sign_in(&token, 0, DAY).expect("sign in").expect("valid");
        assert_ne!(a.secret, b.secret);
        assert_eq!(store.list_tokens(1).expect("list")[0].sessions, 2);
        assert_eq!(store.revoke_token("ada").expect("revoke"), 2);
        assert_eq!(store.session(&a.secret, 1).expect("read"), None);
        assert_eq!(store.sign_in(&token, 1, DAY).expect("sign in"), None, "a revoked token signs in no more");
        assert!(matches!(store.revoke_token("ada"), Err(AuthStoreError::NoSuchToken(_))));
        assert!(store.list_tokens(1).expect("list").is_empty());
    }

    #[test]
    fn names_are_short_and_printable() {
        let store = AuthStore::open(&temp_db("names")).expect("open");
        for bad in ["", "a b", "a\nb", "ünï", &"x".repeat(65)] {
            assert!(matches!(store.create_token(bad, 0), Err(AuthStoreError::BadName(_))), "{bad:?}");
        }
        store.create_token("ada.lovelace+flint@example.org", 0).expect("an address is a name");
    }

    #[test]
    fn signing_out_ends_only_that_session() {
        let store = AuthStore::open(&temp_db("signout")).expect("open");
        let token = store.create_token("ada", 0).expect("create");
        let a = store.sign_in(&token, 0, DAY).expect("sign in").expect("valid");
        let b = store.sign_in(&token, 0, DAY).expect("sign in").expect("valid");
        store.sign_out(&a.secret).expect("sign out");
        assert_eq!(store.session(&a.secret, 1).expect("read"), None);
        assert_eq!(store.session(&b.secret, 1).expect("read").as_deref(), Some("ada"));
    }
}
