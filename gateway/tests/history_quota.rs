//! Synced history's room per person (issue 25): a byte quota and a write rate checked in the
//! push's own transaction, deletions that free room, and older databases counted when migrated;
//! the same test bodies against SQLite and a throwaway PostgreSQL ([`pg`]).

mod pg;

use std::sync::Arc;

use flint_gateway::store::{
    AUTH_MIGRATIONS, HistoryQuota, HistoryRefused, POSTGRES_MIGRATIONS, PgStore, SqliteStore, Store,
    stored_bytes,
};
use flint_protocol::sync::{HistoryRecord, RecordKind};
use pg::backend::{Backend, conformance};

/// A record whose body is `bytes` long as JSON.
fn page(id: &str, revision: u64, bytes: usize) -> HistoryRecord {
    let text = "x".repeat(bytes.saturating_sub(11));
    let record = HistoryRecord {
        id: id.into(),
        kind: RecordKind::Generation,
        body: serde_json::json!({ "code": text }),
        revision,
        updated_at: 1_000 + revision,
        device: "d".into(),
        deleted: false,
    };
    assert_eq!(record.body_bytes(), bytes.max(11));
    record
}

fn deleted(record: &HistoryRecord) -> HistoryRecord {
    // Sent with its body, as a careless client might: it must be kept without it.
    HistoryRecord { revision: record.revision + 1, deleted: true, ..record.clone() }
}

/// Room for `n` pages of 1,000 bytes (ids of one byte), any number of records, no rate.
fn room_for(n: usize) -> HistoryQuota {
    HistoryQuota {
        max_records: 1_000,
        max_bytes: n * stored_bytes(&page("1", 1, 1_000)),
        write_bytes_per_minute: usize::MAX,
    }
}

async fn deleting_frees_room_for_records_and_bytes(backend: Backend) {
    let store = backend.open();
    let (a, b, c) = (page("a", 1, 1_000), page("b", 1, 1_000), page("c", 1, 1_000));
    // Two pages and a deletion's row.
    let quota = HistoryQuota { max_bytes: room_for(2).max_bytes + stored_bytes(&deleted(&a)), ..room_for(2) };
    store.push_history("p", &[a.clone(), b], quota, 0).await.expect("db").expect("two fit");
    let refused = store.push_history("p", std::slice::from_ref(&c), quota, 0).await.expect("db");
    assert_eq!(refused, Err(HistoryRefused::Bytes(quota.max_bytes)));
    let kept = store.push_history("p", &[deleted(&a)], quota, 0).await.expect("db").expect("deleting");
    assert!(kept[0].deleted && kept[0].body.is_null(), "kept without its body: {:?}", kept[0]);
    store.push_history("p", &[c], quota, 0).await.expect("db").expect("the deletion made room");
    let pulled = store.pull_history("p", 0, 10).await.expect("pull");
    let tombstone = pulled.iter().find(|p| p.record.id == "a").expect("the deletion is kept");
    assert!(tombstone.record.deleted && tombstone.record.body.is_null());
    // The record count frees up on deleting too (it used to count deletions).
    let two = HistoryQuota { max_records: 2, max_bytes: usize::MAX, ..quota };
    let d = page("d", 1, 100);
    assert_eq!(
        store.push_history("p", std::slice::from_ref(&d), two, 0).await.expect("db"),
        Err(HistoryRefused::Records(2))
    );
    store.push_history("p", &[deleted(&page("b", 1, 1_000))], two, 0).await.expect("db").expect("delete");
    store.push_history("p", &[d], two, 0).await.expect("db").expect("room for one more");
}

async fn the_byte_quota_counts_edits_and_refuses_a_push_whole(backend: Backend) {
    let store = backend.open();
    let quota = room_for(3);
    store.push_history("p", &[page("a", 1, 1_000)], quota, 0).await.expect("db").expect("fits");
    // An edit costs the difference: a bigger copy of "a" plus two pages is one page too many.
    let batch = [page("b", 1, 1_000), page("a", 2, 2_000), page("c", 1, 10)];
    assert_eq!(
        store.push_history("p", &batch, quota, 0).await.expect("db"),
        Err(HistoryRefused::Bytes(quota.max_bytes))
    );
    let pulled = store.pull_history("p", 0, 10).await.expect("pull");
    assert_eq!(pulled.len(), 1, "nothing of a refused push is kept");
    assert_eq!(pulled[0].record.revision, 1);
    let smaller = [page("b", 1, 1_000), page("a", 2, 500), page("c", 1, 10)];
    store.push_history("p", &smaller, quota, 0).await.expect("db").expect("fits after the edit");
    store.push_history("q", &[page("a", 1, 1_000)], room_for(1), 0).await.expect("db").expect("q's own");
}

async fn the_write_rate_is_one_per_person_across_gateways(backend: Backend) {
    let (one, two) = (backend.open(), backend.open());
    let size = stored_bytes(&page("0", 1, 1_000));
    let quota = HistoryQuota { write_bytes_per_minute: 3 * size, ..room_for(100) };
    for (i, store) in [&one, &two, &one].into_iter().enumerate() {
        let pushed = store.push_history("p", &[page(&i.to_string(), 1, 1_000)], quota, 5_000).await;
        pushed.expect("db").expect("a minute's allowance");
    }
    let refused = two.push_history("p", &[page("3", 1, 1_000)], quota, 5_000).await.expect("db");
    assert_eq!(refused, Err(HistoryRefused::Rate { limit: 3 * size, retry_after_ms: 20_000 }));
    two.push_history("q", &[page("3", 1, 1_000)], quota, 5_000).await.expect("db").expect("another person");
    two.push_history("p", &[page("3", 1, 1_000)], quota, 25_000).await.expect("db").expect("when told");
}

async fn concurrent_pushes_never_pass_the_byte_quota(backend: Backend) {
    let (a, b) = (backend.open(), backend.open());
    a.ready().await.expect("ready");
    b.ready().await.expect("ready");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..12 {
        let store = if i % 2 == 0 { Arc::clone(&a) } else { Arc::clone(&b) };
        tasks.spawn(async move {
            let one = [page(&format!("{i:x}"), 1, 1_000)];
            store.push_history("p", &one, room_for(5), 0).await.expect("db").is_ok()
        });
    }
    let kept = tasks.join_all().await.into_iter().filter(|ok| *ok).count();
    assert_eq!(kept, 5, "exactly the room for five");
    assert_eq!(a.pull_history("p", 0, 100).await.expect("pull").len(), 5);
}

conformance!(
    deleting_frees_room_for_records_and_bytes,
    the_byte_quota_counts_edits_and_refuses_a_push_whole,
    the_write_rate_is_one_per_person_across_gateways,
    concurrent_pushes_never_pass_the_byte_quota,
);

/// What an older gateway left: a live page of 10,000 bytes and a deletion that kept its
/// 50,000-byte body. Counted when migrated, the page leaves room for one more of 1,000 bytes
/// under a 12,000-byte quota, and the deletion takes none.
async fn an_older_database_is_counted_when_migrated(store: Arc<dyn Store>) {
    let quota = HistoryQuota { max_records: 100, max_bytes: 12_000, write_bytes_per_minute: usize::MAX };
    store.push_history("p", &[page("3", 1, 1_000)], quota, 0).await.expect("db").expect("room for one");
    assert_eq!(
        store.push_history("p", &[page("4", 1, 1_000)], quota, 0).await.expect("db"),
        Err(HistoryRefused::Bytes(12_000)),
        "the page kept before counts"
    );
    let pulled = store.pull_history("p", 0, 10).await.expect("pull");
    let old = pulled.iter().find(|p| p.record.id == "2").expect("the old deletion");
    assert!(old.record.deleted && old.record.body.is_null(), "its body is gone: {:?}", old.record);
}

/// The rows of [`an_older_database_is_counted_when_migrated`], in either database's SQL.
fn old_rows() -> [(&'static str, String, bool, i64); 2] {
    let body = |n| page("x", 1, n).body.to_string();
    [("1", body(10_000), false, 1), ("2", body(50_000), true, 2)]
}

#[tokio::test]
async fn sqlite_an_older_database_is_counted_when_migrated() {
    let Backend::Sqlite { auth, .. } = Backend::sqlite("migrate") else { unreachable!() };
    std::fs::create_dir_all(auth.parent().expect("a folder")).expect("the folder");
    let conn = rusqlite::Connection::open(&auth).expect("open");
    for sql in &AUTH_MIGRATIONS[..2] {
        conn.execute_batch(sql).expect("an older schema");
    }
    conn.execute_batch("PRAGMA user_version = 2").expect("version");
    for (id, body, deleted, seq) in old_rows() {
        conn.execute(
            "INSERT INTO history (owner, kind, id, body, revision, updated_at, device, deleted, seq)
             VALUES ('p', 'generation', ?1, ?2, 1, 1, 'd', ?3, ?4)",
            rusqlite::params![id, body, i64::from(deleted), seq],
        )
        .expect("an old row");
    }
    drop(conn);
    an_older_database_is_counted_when_migrated(Arc::new(SqliteStore::open(None, Some(&auth)))).await;
}

#[tokio::test]
async fn postgres_an_older_database_is_counted_when_migrated() {
    let Backend::Postgres { url, _cluster } = Backend::postgres() else { unreachable!() };
    let pool = sqlx::PgPool::connect(&url).await.expect("connect");
    sqlx::raw_sql("CREATE TABLE flint_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
        .execute(&pool)
        .await
        .expect("schema table");
    for (i, sql) in POSTGRES_MIGRATIONS[..2].iter().enumerate() {
        sqlx::raw_sql(*sql).execute(&pool).await.expect("an older schema");
        sqlx::query("INSERT INTO flint_schema (version) VALUES ($1)")
            .bind(i32::try_from(i + 1).expect("small"))
            .execute(&pool)
            .await
            .expect("version");
    }
    for (id, body, deleted, seq) in old_rows() {
        sqlx::query(
            "INSERT INTO history (owner, kind, id, body, revision, updated_at, device, deleted, seq)
             VALUES ('p', 'generation', $1, $2, 1, 1, 'd', $3, $4)",
        )
        .bind(id)
        .bind(body)
        .bind(deleted)
        .bind(seq)
        .execute(&pool)
        .await
        .expect("an old row");
    }
    pool.close().await;
    an_older_database_is_counted_when_migrated(Arc::new(PgStore::new(&url, 2))).await;
}
