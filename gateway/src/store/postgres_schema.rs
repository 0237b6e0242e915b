//! The PostgreSQL store's schema: the numbered migrations and how they are applied at start, under
//! an advisory lock so that gateways starting together apply each one once.

use sqlx::postgres::PgPool;

/// Schema changes in order; never edit one that has shipped, add another.
pub const MIGRATIONS: &[&str] = &[
    "CREATE TABLE shares (
        id TEXT PRIMARY KEY,
        link TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        owner TEXT,
        expires_at BIGINT
    );
    CREATE INDEX shares_by_owner ON shares (owner);
    CREATE INDEX shares_by_expiry ON shares (expires_at);
    CREATE TABLE store_salt (id INTEGER PRIMARY KEY CHECK (id = 1), salt BYTEA NOT NULL);
    CREATE TABLE tokens (
        id BIGSERIAL PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        hash TEXT NOT NULL UNIQUE,
        created_at BIGINT NOT NULL
    );
    CREATE TABLE sessions (
        hash TEXT PRIMARY KEY,
        token_id BIGINT NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX sessions_by_token ON sessions (token_id);
    CREATE TABLE token_use (
        person TEXT NOT NULL,
        day BIGINT NOT NULL,
        tokens BIGINT NOT NULL,
        PRIMARY KEY (person, day)
    );",
    // Synced history (issue 13): see `store::history`.
    "CREATE TABLE history (
        owner TEXT NOT NULL,
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        body TEXT NOT NULL,
        revision BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        device TEXT NOT NULL,
        deleted BOOLEAN NOT NULL,
        seq BIGINT NOT NULL,
        PRIMARY KEY (owner, kind, id)
    );
    CREATE INDEX history_by_seq ON history (owner, seq);",
    // Each person's synced bytes and write rate (issue 25).
    super::history::POSTGRES_USAGE_MIGRATION,
    // Resume on any gateway (issue 30): which gateway holds the session a resume token's hash
    // names, until the session ends or its grace period would have.
    "CREATE TABLE resume_owners (
        token_hash TEXT PRIMARY KEY,
        peer TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    );",
    // Pictures kept with a stored link (issue 28), in the link's own row.
    super::share_pictures::POSTGRES_MIGRATION,
];

/// Held while migrating: any fixed number, the same in every gateway ("flint" in ASCII).
const MIGRATION_LOCK: i64 = 0x0066_6c69_6e74;

/// Applies the migrations not yet applied, all in one transaction under [`MIGRATION_LOCK`].
pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(MIGRATION_LOCK).execute(&mut *tx).await?;
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS flint_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .execute(&mut *tx)
    .await?;
    let applied: i32 =
        sqlx::query_scalar("SELECT COALESCE(MAX(version), 0) FROM flint_schema").fetch_one(&mut *tx).await?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(usize::try_from(applied).unwrap_or(0)) {
        sqlx::raw_sql(*sql).execute(&mut *tx).await?;
        let version = i32::try_from(i + 1).unwrap_or(i32::MAX);
        sqlx::query("INSERT INTO flint_schema (version) VALUES ($1)").bind(version).execute(&mut *tx).await?;
    }
    tx.commit().await
}
