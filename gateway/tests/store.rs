//! The store's conformance suite: the same test bodies against SQLite and against a real
//! PostgreSQL (a throwaway cluster, [`pg`]), through the policies the gateway uses (stored links,
//! tokens and sessions, the day's token quota).

mod pg;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use flint_gateway::auth::store::{AuthStore, AuthStoreError, TOKEN_PREFIX};
use flint_gateway::config::ShareConfig;
use flint_gateway::person::Person;
use flint_gateway::shares::{Clock, Kept, Lookup, Quota, ShareStore};
use flint_gateway::store::{HistoryQuota, HistoryRefused, PgStore, SqliteStore, Store, person_key};
use flint_protocol::sync::{HistoryRecord, RecordKind};
use pg::backend::{Backend, conformance};

const DAY: Duration = Duration::from_secs(86_400);

fn shares(store: Arc<dyn Store>, configure: impl FnOnce(&mut ShareConfig)) -> ShareStore {
    let mut config = ShareConfig::default();
    configure(&mut config);
    ShareStore::new(&config, store)
}

fn ada() -> Person {
    Person::User("ada".into())
}

fn address(ip: &str) -> Person {
    Person::Anonymous(ip.parse::<IpAddr>().expect("an address"))
}

async fn links_survive_reopening_under_fresh_ids(backend: Backend) {
    let store = shares(backend.open(), |_| {});
    let a = store.put(&ada(), "v1.abc").await.expect("db").expect("stored").id;
    let b = store.put(&ada(), "v1.abc").await.expect("db").expect("stored").id;
    assert_ne!(a, b, "the same link shared twice gets two ids");
    assert!(a.len() == 32 && a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
    let again = shares(backend.open(), |_| {});
    assert_eq!(
        again.get(&a).await.expect("get"),
        Lookup::Found(Kept { link: "v1.abc".into(), pictures: false })
    );
    assert_eq!(again.get(&"0".repeat(32)).await.expect("get"), Lookup::Missing);
}

async fn link_quotas_count_live_links_and_bytes(backend: Backend) {
    let clock = Clock::manual(1_000);
    let store = shares(backend.open(), |c| {
        c.max_links_per_person = 1;
        c.ttl_days = 1;
        c.clock = clock.clone();
    });
    store.put(&ada(), "v1.a").await.expect("db").expect("the first");
    assert_eq!(store.put(&ada(), "v1.b").await.expect("db").err(), Some(Quota::Links(1)));
    store.put(&address("203.0.113.9"), "v1.b").await.expect("db").expect("another person");
    clock.advance(86_400);
    assert!(store.put(&ada(), "v1.b").await.expect("db").is_ok(), "an expired link no longer counts");
    let bytes = shares(backend.open(), |c| c.max_bytes_per_person = 10);
    bytes.put(&ada(), "v1.12345").await.expect("db").expect("8 bytes");
    assert_eq!(bytes.put(&ada(), "v1.456").await.expect("db").err(), Some(Quota::Bytes(10)));
}

async fn an_expired_link_is_deleted_and_only_owners_delete(backend: Backend) {
    let clock = Clock::manual(5_000);
    let store = shares(backend.open(), |c| {
        c.ttl_days = 1;
        c.clock = clock.clone();
    });
    let old = store.put(&ada(), "v1.old").await.expect("db").expect("stored");
    assert_eq!(old.expires_at, Some(5_000 + 86_400));
    let kept = store.put(&ada(), "v1.kept").await.expect("db").expect("stored").id;
    assert!(!store.delete(&Person::User("bob".into()), &kept).await.expect("db"), "not bob's");
    assert!(store.delete(&ada(), &kept).await.expect("db"), "ada's");
    assert_eq!(store.get(&kept).await.expect("db"), Lookup::Missing);
    clock.advance(86_400);
    assert_eq!(store.get(&old.id).await.expect("db"), Lookup::Expired);
    assert_eq!(store.get(&old.id).await.expect("db"), Lookup::Missing, "and deleted");
}

/// Pictures kept with a link (issue 28): read back as stored, counted in the owner's bytes, and
/// gone with the link when it is deleted or expires.
async fn pictures_live_and_die_with_their_link(backend: Backend) {
    let clock = Clock::manual(1_000);
    let store = shares(backend.open(), |c| {
        c.max_bytes_per_person = 100;
        c.ttl_days = 1;
        c.clock = clock.clone();
    });
    let pictures = format!("{{\"pictures\":\"{}\"}}", "p".repeat(70));
    let id = store.put_with(&ada(), "v1.abc", Some(&pictures)).await.expect("db").expect("stored").id;
    let found = store.get(&id).await.expect("db");
    assert_eq!(found, Lookup::Found(Kept { link: "v1.abc".into(), pictures: true }));
    assert_eq!(store.get_pictures(&id).await.expect("db"), Lookup::Found(pictures.clone()));
    let plain = store.put(&ada(), "v1.x").await.expect("db").expect("within the bytes").id;
    assert_eq!(store.get_pictures(&plain).await.expect("db"), Lookup::Missing, "a link without pictures");
    let over = store.put_with(&ada(), "v1.y", Some("0123456789")).await.expect("db");
    assert_eq!(over.err(), Some(Quota::Bytes(100)), "the pictures' bytes count against the owner");
    assert!(store.delete(&ada(), &id).await.expect("db"), "the owner deletes it");
    assert_eq!(store.get_pictures(&id).await.expect("db"), Lookup::Missing, "its pictures went with it");
    let later = store.put_with(&ada(), "v1.z", Some(&pictures)).await.expect("db").expect("room again").id;
    clock.advance(86_400);
    assert_eq!(store.get_pictures(&later).await.expect("db"), Lookup::Expired);
    assert_eq!(store.get(&later).await.expect("db"), Lookup::Missing, "expired pictures took the link too");
}

async fn owners_are_salted_hashes_one_salt_per_database(backend: Backend) {
    let first = backend.open().salt().await.expect("salt");
    assert_eq!(first.len(), 32);
    assert_eq!(backend.open().salt().await.expect("salt"), first, "reopening keeps the salt");
    let key = person_key(&first, &address("203.0.113.9"));
    // Hex of a salted hash: the address itself never shows (a bare "203" may, by chance, 1.5% of runs).
    assert!(key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit()) && !key.contains("203.0"), "{key}");
    assert_eq!(person_key(&first, &address("::ffff:203.0.113.9")), key, "one address through IPv6");
    let (a, b) = (address("2001:db8:1:2::1"), address("2001:db8:1:2:ffff::9"));
    assert_eq!(person_key(&first, &a), person_key(&first, &b), "one /64 is one person");
    assert_ne!(person_key(&first, &a), person_key(&first, &address("2001:db8:1:3::1")));
}

async fn a_token_signs_in_until_its_session_expires(backend: Backend) {
    let store = AuthStore::new(backend.open());
    let token = store.create_token("ada", 1_000).await.expect("create");
    assert!(token.starts_with(TOKEN_PREFIX) && token.len() == TOKEN_PREFIX.len() + 43, "{token}");
    let session = store.sign_in(&token, 1_000, DAY).await.expect("db").expect("a valid token");
    assert_eq!(session.name, "ada");
    let other = AuthStore::new(backend.open());
    assert_eq!(other.session(&session.secret, 1_000 + 86_399).await.expect("db").as_deref(), Some("ada"));
    assert_eq!(other.session(&session.secret, 1_000 + 86_400).await.expect("db"), None, "expired");
    assert_eq!(store.sign_in("flint_wrong", 1_000, DAY).await.expect("db"), None);
    for bad in ["", "a b", "a\nb", &"x".repeat(65)] {
        assert!(matches!(store.create_token(bad, 0).await, Err(AuthStoreError::BadName(_))), "{bad:?}");
    }
}

async fn revoking_ends_sessions_and_signing_out_ends_one(backend: Backend) {
    let store = AuthStore::new(backend.open());
    let token = store.create_token("ada", 0).await.expect("create");
    assert!(matches!(store.create_token("ada", 0).await, Err(AuthStoreError::NameTaken(_))));
    let a = store.sign_in(&token, 0, DAY).await.expect("db").expect("valid");
    let b = store.sign_in(&token, 0, DAY).await.expect("db").expect("valid");
    let c = store.sign_in(&token, 0, DAY).await.expect("db").expect("valid");
    assert_ne!(a.secret, b.secret);
    store.sign_out(&c.secret).await.expect("sign out");
    assert_eq!(store.session(&c.secret, 1).await.expect("db"), None);
    assert_eq!(store.session(&b.secret, 1).await.expect("db").as_deref(), Some("ada"));
    assert_eq!(store.list_tokens(1).await.expect("list")[0].sessions, 2);
    assert_eq!(store.revoke_token("ada").await.expect("revoke"), 2);
    assert_eq!(store.session(&a.secret, 1).await.expect("db"), None);
    assert_eq!(store.sign_in(&token, 1, DAY).await.expect("db"), None, "a revoked token signs in no more");
    assert!(matches!(store.revoke_token("ada").await, Err(AuthStoreError::NoSuchToken(_))));
    assert!(store.list_tokens(1).await.expect("list").is_empty());
}

async fn the_days_tokens_add_up_per_person_and_day(backend: Backend) {
    let store = backend.open();
    assert_eq!(store.add_tokens("p", 100, 30).await.expect("add"), 30);
    assert_eq!(store.add_tokens("p", 100, 12).await.expect("add"), 42);
    assert_eq!(store.add_tokens("q", 100, 5).await.expect("add"), 5);
    // What a stream reserved and did not generate is given back, never below zero.
    assert_eq!(store.add_tokens("p", 100, -40).await.expect("give back"), 2);
    assert_eq!(store.add_tokens("q", 100, -9).await.expect("give back"), 0);
    assert_eq!(store.add_tokens("r", 100, -9).await.expect("give back"), 0, "a first count starts at zero");
    assert_eq!(store.add_tokens("p", 100, 40).await.expect("add"), 42);
    assert_eq!(store.tokens_used("p", 101).await.expect("read"), 0, "a new day starts at zero");
    store.add_tokens("p", 102, 1).await.expect("add");
    assert_eq!(store.tokens_used("p", 100).await.expect("read"), 0, "days before yesterday are forgotten");
    // A second gateway on the same database.
    let other = backend.open();
    let expected = if store.shared() { 1 } else { 0 };
    assert_eq!(other.tokens_used("p", 102).await.expect("read"), expected, "shared: {}", store.shared());
}

async fn concurrent_links_never_pass_the_quota(backend: Backend) {
    // Two gateways storing for one person at once: the count and the insert are one step.
    let (a, b) = (Arc::new(shares(backend.open(), |c| c.max_links_per_person = 3)), backend.open());
    let b = Arc::new(shares(b, |c| c.max_links_per_person = 3));
    a.prepare().await.expect("ready");
    b.prepare().await.expect("ready");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..12 {
        let store = if i % 2 == 0 { Arc::clone(&a) } else { Arc::clone(&b) };
        tasks.spawn(async move { store.put(&ada(), &format!("v1.{i}")).await.expect("db").is_ok() });
    }
    let stored = tasks.join_all().await.into_iter().filter(|ok| *ok).count();
    assert_eq!(stored, 3, "exactly max_links_per_person stored");
}

fn record(id: &str, revision: u64, device: &str) -> HistoryRecord {
    HistoryRecord {
        id: id.into(),
        kind: RecordKind::Generation,
        body: serde_json::json!({ "prompt": format!("{id} r{revision} from {device}") }),
        revision,
        updated_at: 1_000 + revision,
        device: device.into(),
        deleted: false,
    }
}

/// Only a record limit: the byte quota and write rate are tested in `history_quota.rs`.
fn records(max_records: usize) -> HistoryQuota {
    HistoryQuota { max_records, max_bytes: usize::MAX, write_bytes_per_minute: usize::MAX }
}

async fn history_keeps_the_newer_copy_and_pulls_by_cursor(backend: Backend) {
    let (a, b) = (backend.open(), backend.open());
    let first = record("1", 1, "laptop");
    assert_eq!(
        a.push_history("p", std::slice::from_ref(&first), records(10), 0).await.expect("db"),
        Ok(vec![first.clone()])
    );
    let edit = record("1", 2, "phone");
    assert_eq!(
        b.push_history("p", std::slice::from_ref(&edit), records(10), 0).await.expect("db"),
        Ok(vec![edit.clone()])
    );
    // The laptop, offline, had edited its revision 1 too, before the phone did: the phone's later
    // edit of the same revision wins, and the server answers it so the laptop takes it.
    let stale = HistoryRecord { updated_at: 500, ..record("1", 2, "z-laptop") };
    assert_eq!(a.push_history("p", &[stale], records(10), 0).await.expect("db"), Ok(vec![edit.clone()]));
    let older = record("1", 1, "laptop");
    assert_eq!(a.push_history("p", &[older], records(10), 0).await.expect("db"), Ok(vec![edit.clone()]));
    let pulled = b.pull_history("p", 0, 100).await.expect("pull");
    assert_eq!(pulled.iter().map(|p| &p.record).collect::<Vec<_>>(), [&edit]);
    let cursor = pulled[0].seq;
    assert!(b.pull_history("p", cursor, 100).await.expect("pull").is_empty(), "nothing after the cursor");
    let gone = HistoryRecord { deleted: true, body: serde_json::Value::Null, ..record("1", 3, "laptop") };
    a.push_history("p", &[gone.clone(), record("2", 1, "laptop")], records(10), 0)
        .await
        .expect("db")
        .expect("kept");
    let later = a.pull_history("p", cursor, 1).await.expect("pull");
    assert_eq!(later.len(), 1, "at most the limit");
    assert_eq!(later[0].record, gone, "the deletion reaches the other devices");
    assert!(later[0].seq > cursor, "positions only grow");
}

async fn history_is_per_owner_and_within_the_record_limit(backend: Backend) {
    let store = backend.open();
    let two = [record("1", 1, "d"), record("2", 1, "d")];
    store.push_history("p", &two, records(2), 0).await.expect("db").expect("within the limit");
    assert_eq!(
        store.push_history("p", &[record("3", 1, "d")], records(2), 0).await.expect("db"),
        Err(HistoryRefused::Records(2))
    );
    assert_eq!(
        store
            .push_history("p", &[record("2", 2, "d"), record("3", 1, "d")], records(2), 0)
            .await
            .expect("db"),
        Err(HistoryRefused::Records(2)),
        "refused whole: nothing of it was kept"
    );
    assert_eq!(store.pull_history("p", 0, 10).await.expect("pull").len(), 2);
    assert!(store.pull_history("p", 0, 10).await.expect("pull").iter().all(|p| p.record.revision == 1));
    store
        .push_history("p", &[record("2", 2, "d")], records(2), 0)
        .await
        .expect("db")
        .expect("editing one kept is fine");
    assert!(store.pull_history("q", 0, 10).await.expect("pull").is_empty(), "another owner sees nothing");
    store
        .push_history("q", &[record("1", 1, "d")], records(2), 0)
        .await
        .expect("db")
        .expect("q has a limit of its own");
}

async fn concurrent_pushes_converge_on_the_highest_revision(backend: Backend) {
    let (a, b) = (backend.open(), backend.open());
    a.ready().await.expect("ready");
    b.ready().await.expect("ready");
    let mut tasks = tokio::task::JoinSet::new();
    for revision in 1..=12 {
        let store = if revision % 2 == 0 { Arc::clone(&a) } else { Arc::clone(&b) };
        tasks.spawn(async move {
            let device = if revision % 2 == 0 { "a" } else { "b" };
            store
                .push_history(
                    "p",
                    &[record("1", revision, device), record("x", revision, device)],
                    records(10),
                    0,
                )
                .await
        });
    }
    for pushed in tasks.join_all().await {
        pushed.expect("db").expect("within the limit");
    }
    let pulled = a.pull_history("p", 0, 100).await.expect("pull");
    assert_eq!(pulled.len(), 2, "one copy per record");
    assert!(pulled.iter().all(|p| p.record.revision == 12), "{pulled:?}");
    assert_ne!(pulled[0].seq, pulled[1].seq);
}

conformance!(
    links_survive_reopening_under_fresh_ids,
    link_quotas_count_live_links_and_bytes,
    an_expired_link_is_deleted_and_only_owners_delete,
    pictures_live_and_die_with_their_link,
    owners_are_salted_hashes_one_salt_per_database,
    a_token_signs_in_until_its_session_expires,
    revoking_ends_sessions_and_signing_out_ends_one,
    the_days_tokens_add_up_per_person_and_day,
    concurrent_links_never_pass_the_quota,
    history_keeps_the_newer_copy_and_pulls_by_cursor,
    history_is_per_owner_and_within_the_record_limit,
    concurrent_pushes_converge_on_the_highest_revision,
);

#[test]
fn sqlite_migrations_run_once_and_make_one_salt() {
    let Backend::Sqlite { links, auth } = Backend::sqlite("migrate") else { unreachable!() };
    drop(SqliteStore::open(Some(&links), Some(&auth)));
    let store = SqliteStore::open(Some(&links), Some(&auth));
    assert!(store.problems().is_empty(), "{:?}", store.problems());
    let (version, salts) = store.link_schema().expect("schema");
    assert_eq!(version, flint_gateway::store::LINK_MIGRATIONS.len() as i64);
    assert_eq!(salts, 1, "one salt, made once: a second would change every owner's key");
}

#[test]
fn an_sqlite_folder_that_cannot_exist_is_reported() {
    let Backend::Sqlite { links, .. } = Backend::sqlite("blocked") else { unreachable!() };
    let folder = links.parent().expect("parent");
    std::fs::create_dir_all(folder.parent().expect("grandparent")).expect("dir");
    std::fs::write(folder, b"").expect("a plain file where the folder should be");
    let problems = SqliteStore::open(Some(&links), None).problems();
    assert!(problems.len() == 1 && problems[0].contains("share database folder"), "{problems:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_gateways_starting_together_migrate_once() {
    let Backend::Postgres { url, _cluster } = Backend::postgres() else { unreachable!() };
    let stores: Vec<PgStore> = (0..4).map(|_| PgStore::new(&url, 2)).collect();
    let readies = futures::future::join_all(stores.iter().map(|s| s.ready())).await;
    for ready in readies {
        ready.expect("every gateway starts: the migration lock lets one migrate and the others wait");
    }
    let salts = futures::future::join_all(stores.iter().map(|s| s.salt())).await;
    let first = salts[0].as_ref().expect("salt").clone();
    assert!(salts.iter().all(|s| s.as_ref().ok() == Some(&first)), "one salt for the database");
    let again = PgStore::new(&url, 1);
    again.ready().await.expect("a restart finds nothing to migrate");
    assert_eq!(
        again.schema_version().await.expect("version"),
        flint_gateway::store::POSTGRES_MIGRATIONS.len() as i64
    );
}

/// Not PostgreSQL: takes each connection and resets it, or closes it before a word.
async fn breaking_listener(reset: bool) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("port");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            // Dropped at the loop's end: closed, or reset when it lingers for nothing.
            if reset {
                socket.set_zero_linger().expect("linger");
            }
        }
    });
    port
}

#[tokio::test]
async fn a_port_that_resets_or_closes_is_the_same_sentence_as_no_server() {
    for reset in [true, false] {
        let port = breaking_listener(reset).await;
        let store = PgStore::new(&format!("postgres://flint:secret-password@127.0.0.1:{port}/flint"), 1);
        let started = std::time::Instant::now();
        let err = store.ready().await.expect_err("no PostgreSQL there").to_string();
        let sentence = format!("PostgreSQL store: no connection to 127.0.0.1:{port}");
        assert!(err.starts_with(&sentence) && err.contains("store.url"), "reset {reset}: {err}");
        assert!(!err.contains("secret-password") && started.elapsed() < Duration::from_secs(15), "{err}");
    }
}

#[tokio::test]
async fn an_unreachable_postgres_is_a_sentence_not_a_hang() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let store = PgStore::new(&format!("postgres://flint:secret-password@127.0.0.1:{port}/flint"), 1);
    let started = std::time::Instant::now();
    let err = store.ready().await.expect_err("nothing listens there").to_string();
    assert!(
        err.starts_with("PostgreSQL store: no connection to 127.0.0.1:") && err.contains("store.url"),
        "{err}"
    );
    assert!(!err.contains("secret-password"), "the password stays out of messages: {err}");
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    assert!(
        store.describe().contains("127.0.0.1") && !store.describe().contains("secret"),
        "{}",
        store.describe()
    );
}
