//! `[store]`: where the gateway keeps links, tokens, sessions and quotas (see [`crate::store`]).

use serde::{Deserialize, Deserializer};

/// `[store]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `postgres://user:password@host:port/database`: one database shared by every gateway that
    /// names it. Unset: the SQLite files `share.database` and `auth.database` of this machine.
    #[serde(deserialize_with = "postgres_url")]
    pub url: Option<String>,
    /// Connections each gateway may hold open to PostgreSQL.
    pub max_connections: u32,
    /// Synced history records a signed-in person may keep (deleted ones do not count).
    pub history_max_records: usize,
    /// Bytes of synced history a signed-in person may keep: bodies, ids and a little per record
    /// (a deleted record keeps no body, so deleting frees room).
    pub history_max_bytes_per_person: usize,
    /// Bytes of synced history a signed-in person may write per minute (after a quiet minute,
    /// that much at once).
    pub history_max_write_bytes_per_minute: usize,
    /// Bytes of one synced record's body (a generation's code, a version).
    pub history_max_record_bytes: usize,
    /// Bytes of one `POST /api/history/push` body.
    pub history_max_request_bytes: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: None,
            max_connections: 8,
            history_max_records: 5_000,
            // Hundreds of typical pages; without it, 5,000 records of the largest size made 2.6 GB
            // per person.
            history_max_bytes_per_person: 64 * 1024 * 1024,
            // A new device's first push of a full history takes minutes, not seconds; a script
            // filling the database takes as long.
            history_max_write_bytes_per_minute: 8 * 1024 * 1024,
            // A generated page is tens of kilobytes; ten times that still leaves room for any
            // realistic one, and a person's whole history stays in the low gigabytes at worst.
            history_max_record_bytes: 512 * 1024,
            history_max_request_bytes: 4 * 1024 * 1024,
        }
    }
}

/// Only PostgreSQL URLs: a typo (`postgre://`, a file path) is caught when the file is read, not
/// at the first request.
fn postgres_url<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let url = String::deserialize(deserializer)?;
    let url = url.trim();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Some(url.to_owned()))
    } else {
        Err(serde::de::Error::custom(
            "store.url must be a PostgreSQL URL such as postgres://flint:PASSWORD@db.example:5432/flint; \
             remove it to keep the SQLite files",
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::Config;

    #[test]
    fn only_postgres_urls_are_accepted() {
        let parse = |text: &str| Config::parse(text, Path::new("flint.toml"));
        assert_eq!(parse("").expect("no section").store.url, None);
        let ok = parse("[store]\nurl = \"postgres://flint@db:5432/flint\"").expect("a URL");
        assert_eq!(ok.store.url.as_deref(), Some("postgres://flint@db:5432/flint"));
        let err = parse("[store]\nurl = \"/var/lib/flint.sqlite3\"").expect_err("a path").to_string();
        assert!(err.contains("store.url must be a PostgreSQL URL"), "{err}");
    }
}
