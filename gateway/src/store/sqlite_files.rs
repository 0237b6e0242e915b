//! The SQLite files under [`super::SqliteStore`]: opening one (its folder made, its migrations
//! applied, auth made private), and running blocking work on it off the async threads.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::Connection;

use crate::store::StoreError;

/// The share file's schema changes in order; `PRAGMA user_version` records how many were applied,
/// so a file made by an older gateway is brought up to date when opened.
pub const LINK_MIGRATIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS shares (
        id TEXT PRIMARY KEY,
        link TEXT NOT NULL,
        created_at INTEGER NOT NULL
    ) STRICT;",
    // Owners and expiry (issue 12). Rows already stored keep a NULL owner: nobody can delete them
    // through the API and they count against no quota, but they get an expiry when opened.
    // The salt makes an owner's hash useless outside this file: the addresses cannot be recovered
    // by hashing every IPv4 address.
    "ALTER TABLE shares ADD COLUMN owner TEXT;
    ALTER TABLE shares ADD COLUMN expires_at INTEGER;
    CREATE INDEX shares_by_owner ON shares (owner);
    CREATE INDEX shares_by_expiry ON shares (expires_at);
    CREATE TABLE share_salt (salt BLOB NOT NULL) STRICT;
    INSERT INTO share_salt (salt) VALUES (randomblob(32));",
    // Resume on any gateway (issue 30): which gateway holds the session a resume token's hash
    // names, until the session ends or its grace period would have. Kept in both files, since
    // either may be the one open; gateways on one machine share it.
    "CREATE TABLE IF NOT EXISTS resume_owners (
        token_hash TEXT PRIMARY KEY,
        peer TEXT NOT NULL,
        expires_at INTEGER NOT NULL
    ) STRICT;",
    // Pictures kept with a stored link (issue 28), in the link's own row.
    super::share_pictures::SQLITE_MIGRATION,
];

/// The auth file's schema changes in order.
pub const AUTH_MIGRATIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS tokens (
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
    CREATE INDEX IF NOT EXISTS sessions_by_token ON sessions(token_id);",
    // Synced history (issue 13): each signed-in person's records, keyed by their salted hash;
    // `seq` numbers the person's changes so a device pulls only what changed since it last did.
    // Without a share file, owners are keyed with this file's salt, so they survive a restart.
    "CREATE TABLE history (
        owner TEXT NOT NULL,
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        body TEXT NOT NULL,
        revision INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        device TEXT NOT NULL,
        deleted INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (owner, kind, id)
    ) STRICT;
    CREATE INDEX history_by_seq ON history (owner, seq);
    CREATE TABLE history_salt (salt BLOB NOT NULL) STRICT;
    INSERT INTO history_salt (salt) VALUES (randomblob(32));",
    // Each person's synced bytes and write rate (issue 25).
    super::history::SQLITE_USAGE_MIGRATION,
    // Resume on any gateway (issue 30): which gateway holds the session a resume token's hash
    // names, until the session ends or its grace period would have. Kept in both files, since
    // either may be the one open; gateways on one machine share it.
    "CREATE TABLE IF NOT EXISTS resume_owners (
        token_hash TEXT PRIMARY KEY,
        peer TEXT NOT NULL,
        expires_at INTEGER NOT NULL
    ) STRICT;",
];

/// One open file. SQLite is blocking: the connection is used only inside `spawn_blocking`.
pub(super) struct File {
    pub(super) what: &'static str,
    pub(super) path: PathBuf,
    pub(super) conn: Mutex<Connection>,
}

impl File {
    fn open(what: &'static str, path: &Path, migrations: &[&str], private: bool) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Folder {
                what,
                path: dir.into(),
                source,
            })?;
        }
        let db = |source| StoreError::Sqlite { what, path: path.into(), source };
        let mut conn = Connection::open(path).map_err(db)?;
        if private {
            restrict_to_owner(path);
        }
        // The CLI, or a second gateway on the same machine, may write while this one reads.
        conn.busy_timeout(Duration::from_secs(5)).map_err(db)?;
        conn.execute_batch("PRAGMA foreign_keys = ON").map_err(db)?;
        migrate(&mut conn, migrations).map_err(db)?;
        Ok(Self { what, path: path.into(), conn: Mutex::new(conn) })
    }

    /// Runs `work` on the connection off the async threads.
    pub(super) async fn run<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let file = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            // A panic while holding the lock leaves SQLite consistent (every statement is atomic).
            let mut conn = file.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&mut conn).map_err(|source| StoreError::Sqlite {
                what: file.what,
                path: file.path.clone(),
                source,
            })
        })
        .await?
    }
}

/// Applies the `migrations` not yet applied, each in its own transaction, counting them in
/// `PRAGMA user_version`: a file made by an older gateway gains what it lacks and keeps its rows.
fn migrate(conn: &mut Connection, migrations: &[&str]) -> rusqlite::Result<()> {
    let applied: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    for (i, sql) in migrations.iter().enumerate().skip(usize::try_from(applied).unwrap_or(0)) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(())
}

/// A part of the store: not asked for, failed to open (why), or open.
pub(super) enum Part {
    Off(&'static str),
    Failed(String),
    Open(Arc<File>),
}

impl Part {
    pub(super) fn open(
        path: Option<&Path>,
        what: &'static str,
        off: &'static str,
        migrations: &[&str],
        private: bool,
    ) -> Self {
        match path.map(|path| File::open(what, path, migrations, private)) {
            None => Self::Off(off),
            Some(Ok(file)) => Self::Open(Arc::new(file)),
            Some(Err(err)) => Self::Failed(err.to_string()),
        }
    }

    pub(super) fn get(&self) -> Result<&Arc<File>, StoreError> {
        match self {
            Self::Open(file) => Ok(file),
            Self::Off(why) => Err(StoreError::Unavailable((*why).to_owned())),
            Self::Failed(why) => Err(StoreError::Unavailable(why.clone())),
        }
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
