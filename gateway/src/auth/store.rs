//! Access tokens and sign-in sessions, both kept in the [`Store`] only as SHA-256 hashes.
//!
//! Both are 32 random bytes, so a plain hash is enough: there is nothing to guess from it, and no
//! slow password hash is needed. Someone who reads the database learns the tokens' names and when
//! they were made, and cannot sign in with anything in it. With SQLite they live in their own file
//! (`auth.database`); with `[store] url` in the shared PostgreSQL database, so a token made once
//! signs in through every gateway.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::store::{self, SqliteStore, Store, StoreError};

pub use crate::store::TokenInfo;

/// What an access token looks like before its random part, so a leaked one is recognisable.
pub const TOKEN_PREFIX: &str = "flint_";

/// Why the store cannot do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum AuthStoreError {
    /// The database failed (the reason).
    #[error(transparent)]
    Store(#[from] StoreError),
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

/// A sign-in: the person's token name and the session secret for their cookie (shown once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// The name of the token signed in with.
    pub name: String,
    /// The cookie's value; only its hash is stored.
    pub secret: String,
}

/// Tokens and sessions in the gateway's store.
#[derive(Clone)]
pub struct AuthStore {
    store: Arc<dyn Store>,
}

impl AuthStore {
    /// Tokens and sessions kept in `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// The SQLite file at `path` alone (opened, made private and migrated now).
    pub fn open(path: &Path) -> Result<Self, AuthStoreError> {
        let sqlite = SqliteStore::open(None, Some(path));
        if let Some(problem) = sqlite.auth_problem() {
            return Err(StoreError::Unavailable(problem).into());
        }
        Ok(Self::new(Arc::new(sqlite)))
    }

    /// The store `config` names (`[store] url`, else `auth.database`), ready: as the CLI needs.
    pub async fn open_configured(config: &Config) -> Result<Self, AuthStoreError> {
        let store: Arc<dyn Store> = match &config.store.url {
            Some(_) => store::open(config),
            None => return Self::open(&config.auth.database),
        };
        store.ready().await?;
        Ok(Self::new(store))
    }

    /// Makes a token for `name` and returns it: the only time it exists in clear.
    pub async fn create_token(&self, name: &str, now: i64) -> Result<String, AuthStoreError> {
        if !valid_name(name) {
            return Err(AuthStoreError::BadName(name.to_owned()));
        }
        let token = format!("{TOKEN_PREFIX}{}", secret()?);
        if !self.store.insert_token(name, &hash(&token), now).await? {
            return Err(AuthStoreError::NameTaken(name.to_owned()));
        }
        Ok(token)
    }

    /// Every token, by name, with its sessions still valid at `now`.
    pub async fn list_tokens(&self, now: i64) -> Result<Vec<TokenInfo>, AuthStoreError> {
        Ok(self.store.list_tokens(now).await?)
    }

    /// Deletes the token `name` and every session signed in with it; answers how many sessions
    /// ended.
    pub async fn revoke_token(&self, name: &str) -> Result<u64, AuthStoreError> {
        self.store.revoke_token(name).await?.ok_or_else(|| AuthStoreError::NoSuchToken(name.to_owned()))
    }

    /// Exchanges `token` for a session lasting `lifetime` from `now`; `None` for a token that is
    /// not (or no longer) issued. Sessions expired by `now` are cleared on the way.
    pub async fn sign_in(
        &self,
        token: &str,
        now: i64,
        lifetime: Duration,
    ) -> Result<Option<NewSession>, AuthStoreError> {
        let secret = secret()?;
        let expires = now.saturating_add(i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX));
        let name = self.store.open_session(&hash(token.trim()), &hash(&secret), now, expires).await?;
        Ok(name.map(|name| NewSession { name, secret }))
    }

    /// The token name of the session `secret` when it is still valid at `now`. A revoked token's
    /// sessions fail even if a row were left behind.
    pub async fn session(&self, secret: &str, now: i64) -> Result<Option<String>, AuthStoreError> {
        Ok(self.store.session(&hash(secret), now).await?)
    }

    /// The same as [`Self::session`] for a session known by its stored hash (what an open
    /// socket keeps of its sign-in, rather than the secret).
    pub async fn session_of_hash(
        &self,
        session_hash: &str,
        now: i64,
    ) -> Result<Option<String>, AuthStoreError> {
        Ok(self.store.session(session_hash, now).await?)
    }

    /// Ends the session `secret` (signing out); nothing happens for an unknown one.
    pub async fn sign_out(&self, secret: &str) -> Result<(), AuthStoreError> {
        Ok(self.store.close_session(&hash(secret)).await?)
    }
}

/// 32 random bytes, base64url without padding (43 characters).
fn secret() -> Result<String, StoreError> {
    Ok(URL_SAFE_NO_PAD.encode(store::random::<32>()?))
}

/// The stored form of a token or session secret: SHA-256, hex.
pub fn hash(secret: &str) -> String {
    store::hex(&Sha256::digest(secret.as_bytes()))
}

/// Token names become [`crate::person::Person::User`] names in logs and limits: printable, short.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b'+' | b'-'))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    fn temp_db(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("flint-auth-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("auth.sqlite3")
    }

    #[tokio::test]
    async fn a_token_signs_in_until_the_session_expires() {
        let store = AuthStore::open(&temp_db("expiry")).expect("open");
        let token = store.create_token("ada", 1_000).await.expect("create");
        assert!(token.starts_with(TOKEN_PREFIX) && token.len() == TOKEN_PREFIX.len() + 43, "{token}");
        let session = store.sign_in(&token, 1_000, DAY).await.expect("sign in").expect("a valid token");
        assert_eq!(session.name, "ada");
        assert_eq!(
            store.session(&session.secret, 1_000 + 86_399).await.expect("read").as_deref(),
            Some("ada")
        );
        assert_eq!(store.session(&session.secret, 1_000 + 86_400).await.expect("read"), None, "expired");
        assert_eq!(store.sign_in("flint_wrong", 1_000, DAY).await.expect("sign in"), None);
    }

    #[tokio::test]
    async fn revoking_ends_the_tokens_sessions_and_names_are_unique() {
        let store = AuthStore::open(&temp_db("revoke")).expect("open");
        let token = store.create_token("ada", 0).await.expect("create");
        assert!(matches!(store.create_token("ada", 0).await, Err(AuthStoreError::NameTaken(_))));
        let a = store.sign_in(&token, 0, DAY).await.expect("sign in").expect("valid");
        let b = store.sign_in(&token, 0, DAY).await.expect("sign in").expect("valid");
        assert_ne!(a.secret, b.secret);
        assert_eq!(store.list_tokens(1).await.expect("list")[0].sessions, 2);
        assert_eq!(store.revoke_token("ada").await.expect("revoke"), 2);
        assert_eq!(store.session(&a.secret, 1).await.expect("read"), None);
        assert_eq!(
            store.sign_in(&token, 1, DAY).await.expect("sign in"),
            None,
            "a revoked token signs in no more"
        );
        assert!(matches!(store.revoke_token("ada").await, Err(AuthStoreError::NoSuchToken(_))));
        assert!(store.list_tokens(1).await.expect("list").is_empty());
    }

    #[tokio::test]
    async fn names_are_short_and_printable() {
        let store = AuthStore::open(&temp_db("names")).expect("open");
        for bad in ["", "a b", "a\nb", "ünï", &"x".repeat(65)] {
            assert!(matches!(store.create_token(bad, 0).await, Err(AuthStoreError::BadName(_))), "{bad:?}");
        }
        store.create_token("ada.lovelace+flint@example.org", 0).await.expect("an address is a name");
    }

    #[tokio::test]
    async fn signing_out_ends_only_that_session() {
        let store = AuthStore::open(&temp_db("signout")).expect("open");
        let token = store.create_token("ada", 0).await.expect("create");
        let a = store.sign_in(&token, 0, DAY).await.expect("sign in").expect("valid");
        let b = store.sign_in(&token, 0, DAY).await.expect("sign in").expect("valid");
        store.sign_out(&a.secret).await.expect("sign out");
        assert_eq!(store.session(&a.secret, 1).await.expect("read"), None);
        assert_eq!(store.session(&b.secret, 1).await.expect("read").as_deref(), Some("ada"));
    }
}
