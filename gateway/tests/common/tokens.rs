//! A gateway that asks for access tokens, with its store and a token: the set-up of the sign-in
//! tests (`auth.rs`) and the sign-out tests (`signout.rs`).

use std::path::PathBuf;

use flint_gateway::auth::store::AuthStore;
use flint_gateway::config::{AuthMode, Config};

use super::{Gateway, start_with};

/// Seconds since the epoch, as the store counts them.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The auth database of the test `tag` (one per test process and tag).
pub fn database(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-auth-{tag}-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir.join("auth.sqlite3")
}

/// A gateway asking for tokens, its store (the same file, as `flint-gateway token` opens it) and
/// a token for "ada".
pub async fn with_tokens(tag: &str, configure: impl FnOnce(&mut Config)) -> (Gateway, AuthStore, String) {
    let db = database(tag);
    let _ = std::fs::remove_file(&db);
    let gw = start_with(|config| {
        config.auth.mode = AuthMode::Tokens;
        config.auth.database = db.clone();
        configure(config);
    })
    .await;
    let store = AuthStore::open(&db).expect("the gateway's store opens");
    let token = store.create_token("ada", now()).await.expect("a token");
    (gw, store, token)
}

/// An HTTP client that shows redirects rather than following them (sign-in answers with one).
pub fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}
