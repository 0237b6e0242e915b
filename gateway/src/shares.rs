//! Stored short links: a shared prompt kept in SQLite under an unguessable id, for links too long
//! to paste into a chat app. `POST /api/share` stores a link (the text a `#p=` fragment carries)
//! and answers its id; `GET /s/<id>` sends the browser to `/#p=<link>`, so the app opens it exactly
//! as it opens a fragment link. Only links that decode are stored, trimmed: the store never holds
//! junk. A stored link becomes a `Location` header, so `/s/<id>` checks it again before sending
//! it: a row from an older gateway (which stored links untrimmed) or edited by hand must never
//! break the response or add headers to it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::http::header::{HeaderValue, LOCATION};
use axum::response::{IntoResponse, Response};
use flint_protocol::share::decode;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::AppState;
use crate::error::AppError;

/// Schema changes in order; `PRAGMA user_version` records how many have been applied, so a
/// database made by an older gateway is brought up to date when opened.
const MIGRATIONS: &[&str] = &["CREATE TABLE IF NOT EXISTS shares (
        id TEXT PRIMARY KEY,
        link TEXT NOT NULL,
        created_at INTEGER NOT NULL
    ) STRICT;"];

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

/// The SQLite store of shared links.
pub struct ShareStore {
    path: PathBuf,
    // SQLite is blocking: the connection is only used inside `spawn_blocking`, never across an await.
    conn: Mutex<Connection>,
}

impl ShareStore {
    /// Opens (or creates) the database at `path` and applies pending migrations.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Folder { path: dir.into(), source })?;
        }
        let db = |source| StoreError::Database { path: path.into(), source };
        let mut conn = Connection::open(path).map_err(db)?;
        migrate(&mut conn).map_err(db)?;
        Ok(Self { path: path.into(), conn: Mutex::new(conn) })
    }

    /// Stores `link` and returns its new id (128 random bits, hex).
    pub fn put(&self, link: &str) -> Result<String, StoreError> {
        let id = new_id()?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        self.conn()
            .execute("INSERT INTO shares (id, link, created_at) VALUES (?1, ?2, ?3)", params![id, link, now])
            .map_err(|source| self.error(source))?;
        Ok(id)
    }

    /// The link stored under `id`, if any.
    pub fn get(&self, id: &str) -> Result<Option<String>, StoreError> {
        self.conn()
            .query_row("SELECT link FROM shares WHERE id = ?1", [id], |row| row.get(0))
            .optional()
            .map_err(|source| self.error(source))
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite consistent (every statement is atomic).
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn error(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Database { path: self.path.clone(), source }
    }
}

fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    let applied: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(usize::try_from(applied).unwrap_or(0)) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(())
}

fn new_id() -> Result<String, StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether an id could have come from [`new_id`]; anything else is not looked up.
fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `POST /api/share` body.
#[derive(Debug, Deserialize)]
pub struct ShareRequest {
    /// The encoded link, as after `#p=`.
    pub link: String,
}

/// `POST /api/share` answer.
#[derive(Debug, Serialize, Deserialize)]
pub struct ShareCreated {
    /// The new id.
    pub id: String,
    /// The path to share (`/s/<id>`).
    pub path: String,
}

/// The store as the gateway has it: switched off, unavailable (why), or open.
pub type Shares = Option<Result<Arc<ShareStore>, String>>;

/// Opens the store the configuration asks for, logging why when it cannot.
pub fn open_configured(enabled: bool, path: &Path) -> Shares {
    if !enabled {
        return None;
    }
    Some(ShareStore::open(path).map(Arc::new).map_err(|err| {
        tracing::error!("stored share links are unavailable: {err}");
        err.to_string()
    }))
}

fn store(state: &AppState) -> Result<Arc<ShareStore>, AppError> {
    match state.shares() {
        None => Err(AppError::SharesOff),
        Some(Err(_)) => Err(AppError::SharesUnavailable),
        Some(Ok(store)) => Ok(store.clone()),
    }
}

/// `POST /api/share`: stores a link that decodes and is within `share.max_link_bytes`.
pub async fn create(
    State(state): State<AppState>,
    Json(request): Json<ShareRequest>,
) -> Result<Response, AppError> {
    let store = store(&state)?;
    let limit = state.share_limit();
    // Pasted links often carry a line end; stored with it, it would end up in the redirect.
    let link = request.link.trim().to_owned();
    if link.len() > limit {
        return Err(AppError::LinkTooLarge(limit));
    }
    decode(&link).map_err(|err| AppError::BadLink(err.to_string()))?;
    let id = tokio::task::spawn_blocking(move || store.put(&link)).await??;
    Ok(Json(ShareCreated { path: format!("/s/{id}"), id }).into_response())
}

/// `GET /s/<id>`: sends the browser to the app with the stored link in the fragment.
pub async fn open(State(state): State<AppState>, UrlPath(id): UrlPath<String>) -> Result<Response, AppError> {
    let store = store(&state)?;
    if !valid_id(&id) {
        return Err(AppError::ShareNotFound);
    }
    let key = id.clone();
    let link = tokio::task::spawn_blocking(move || store.get(&key)).await??;
    let link = link.ok_or(AppError::ShareNotFound)?;
    let Some(location) = location(&link) else {
        tracing::warn!(id = %id, "a stored share link is damaged and cannot be opened");
        return Err(AppError::BadLink(DAMAGED.to_owned()));
    };
    Ok((StatusCode::SEE_OTHER, [(LOCATION, location)]).into_response())
}

/// What `/s/<id>` answers for a stored link that cannot be opened.
const DAMAGED: &str =
    "the shared prompt stored at this address is damaged and cannot be opened; ask for a new link";

/// The redirect to the app for a stored link, if it is a link: one that decodes, trimmed as new
/// ones are. Decoding admits only the characters of a link, and the header value is built without
/// panicking, so no stored bytes can end the header or start another.
fn location(link: &str) -> Option<HeaderValue> {
    let link = link.trim();
    decode(link).ok()?;
    HeaderValue::from_str(&format!("/#p={link}")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_db(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("flint-shares-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("nested/shares.sqlite3")
    }

    #[test]
    fn links_survive_reopening() {
        let path = temp_db("reopen");
        let id = ShareStore::open(&path).expect("open").put("v1.abc").expect("put");
        assert!(valid_id(&id), "{id}");
        let again = ShareStore::open(&path).expect("reopen");
        assert_eq!(again.get(&id).expect("get").as_deref(), Some("v1.abc"));
        assert_eq!(again.get(&"0".repeat(32)).expect("get"), None);
    }

    #[test]
    fn ids_differ_and_are_not_guessable_shapes() {
        let store = ShareStore::open(&temp_db("ids")).expect("open");
        let a = store.put("v1.a").expect("put");
        let b = store.put("v1.a").expect("put");
        assert_ne!(a, b, "the same link shared twice gets two ids");
        assert!(!valid_id("../etc/passwd") && !valid_id("1") && !valid_id(&"g".repeat(32)));
    }

    #[test]
    fn migrations_run_once() {
        let path = temp_db("migrate");
        drop(ShareStore::open(&path).expect("first"));
        let store = ShareStore::open(&path).expect("second open must not re-create the table");
        let version: i64 = store.conn().query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version");
        assert_eq!(version, MIGRATIONS.len() as i64);
    }

    #[test]
    fn only_stored_links_that_decode_become_a_location() {
        let link = flint_protocol::share::encode(&flint_protocol::share::SharedPrompt::new("a page"));
        let expected = HeaderValue::from_str(&format!("/#p={link}")).expect("a header value");
        assert_eq!(location(&format!("{link}\r\n")), Some(expected), "older rows were stored untrimmed");
        for damaged in [format!("{link}\r\nSet-Cookie: a=b"), format!("{link}\u{0}"), "v1.\t".to_owned()] {
            assert_eq!(location(&damaged), None, "{damaged:?}");
        }
    }

    #[test]
    fn a_folder_that_cannot_exist_is_reported() {
        let file = temp_db("blocked");
        std::fs::create_dir_all(file.parent().and_then(Path::parent).expect("parent")).expect("dir");
        // A plain file where the folder should be.
        std::fs::write(file.parent().expect("parent"), b"").expect("file");
        let err = ShareStore::open(&file).err().expect("must fail");
        assert!(err.to_string().contains("share database folder"), "{err}");
    }
}
