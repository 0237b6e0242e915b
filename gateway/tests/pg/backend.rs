//! The two stores a conformance test runs against: SQLite files in a fresh folder, or a fresh
//! database in the shared throwaway PostgreSQL cluster. `conformance!` turns each listed test body
//! into one test per backend, so both stores meet the same contract.

// Not every test file that includes `pg` runs conformance tests.
#![allow(unused_imports, unused_macros)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use flint_gateway::store::{PgStore, SqliteStore, Store};

use super::Cluster;

/// One backend's database, opened as often as a test likes (as a second gateway would).
pub enum Backend {
    /// The two SQLite files; their folder does not exist yet (opening makes it).
    Sqlite { links: PathBuf, auth: PathBuf },
    /// A fresh database; the cluster lives while a test holds it.
    Postgres { url: String, _cluster: Arc<Cluster> },
}

impl Backend {
    /// Files under a folder of their own, named after `tag`.
    pub fn sqlite(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "flint-store-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Self::Sqlite { links: dir.join("nested/shares.sqlite3"), auth: dir.join("auth.sqlite3") }
    }

    /// A fresh database in the shared cluster.
    pub fn postgres() -> Self {
        let cluster = Cluster::shared();
        Self::Postgres { url: cluster.fresh_database(), _cluster: cluster }
    }

    /// The store, as a gateway opens it.
    pub fn open(&self) -> Arc<dyn Store> {
        match self {
            Self::Sqlite { links, auth } => Arc::new(SqliteStore::open(Some(links), Some(auth))),
            Self::Postgres { url, .. } => Arc::new(PgStore::new(url, 4)),
        }
    }
}

/// `conformance!(a, b)`: tests `sqlite::a`, `postgres::a`, … each calling the async body `a` with
/// a fresh [`Backend`] of its kind (`Backend` must be in scope where it is used).
macro_rules! conformance {
    ($($body:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $body() {
                super::$body(super::Backend::sqlite(stringify!($body))).await;
            })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $body() {
                super::$body(super::Backend::postgres()).await;
            })*
        }
    };
}
pub(crate) use conformance;
