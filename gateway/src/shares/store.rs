//! The policy of stored links over the [`Store`]: who stored each one (a salted hash, never the
//! address), when it expires, and the per-person quotas checked before a link is kept.

use std::sync::Arc;

use tokio::sync::OnceCell;

use super::Clock;
use crate::config::ShareConfig;
use crate::person::Person;
use crate::store::{Lookup, NewLink, Quota, Store, StoreError, Stored, person_key};

/// Stored links in the gateway's store.
pub struct ShareStore {
    store: Arc<dyn Store>,
    max_links: usize,
    max_bytes: usize,
    /// Seconds a link is kept; `None`: until deleted.
    ttl: Option<i64>,
    clock: Clock,
    /// The database's salt, read (after the start-up clean-up) on first use.
    salt: OnceCell<Vec<u8>>,
}

impl ShareStore {
    /// Stored links as `config` says, in `store`.
    pub fn new(config: &ShareConfig, store: Arc<dyn Store>) -> Self {
        Self {
            store,
            max_links: config.max_links_per_person,
            max_bytes: config.max_bytes_per_person,
            ttl: (config.ttl_days > 0).then(|| i64::from(config.ttl_days) * 86_400),
            clock: config.clock.clone(),
            salt: OnceCell::new(),
        }
    }

    /// Dates links stored before expiry existed, deletes expired ones and reads the salt; once.
    pub async fn prepare(&self) -> Result<&[u8], StoreError> {
        let salt = self
            .salt
            .get_or_try_init(|| async {
                let now = self.clock.now();
                // Links from before owners and expiry had none: they get a full term from now
                // rather than vanishing on the upgrade because of their age.
                let undated = self.ttl.map(|ttl| now.saturating_add(ttl));
                self.store.expire_links(now, undated).await?;
                self.store.salt().await
            })
            .await?;
        Ok(salt)
    }

    /// Stores `link` for `owner` and returns its new id, unless that would pass one of the
    /// owner's quotas. Expired links are deleted first, so they count against nobody.
    pub async fn put(&self, owner: &Person, link: &str) -> Result<Result<Stored, Quota>, StoreError> {
        self.put_with(owner, link, None).await
    }

    /// [`ShareStore::put`] with `pictures` (as stored: checked JSON) kept beside the link and
    /// counted against the owner's bytes with it.
    pub async fn put_with(
        &self,
        owner: &Person,
        link: &str,
        pictures: Option<&str>,
    ) -> Result<Result<Stored, Quota>, StoreError> {
        let owner = self.owner_key(owner).await?;
        let id = crate::store::hex(&crate::store::random::<16>()?);
        let now = self.clock.now();
        let expires_at = self.ttl.map(|ttl| now.saturating_add(ttl));
        let new = NewLink {
            id: &id,
            link,
            owner: &owner,
            now,
            expires_at,
            max_links: self.max_links,
            max_bytes: self.max_bytes,
            pictures,
        };
        Ok(self.store.put_link(new).await?.map(|()| Stored { id, expires_at }))
    }

    /// The link stored under `id`; one past its expiry is deleted and reported as expired.
    pub async fn get(&self, id: &str) -> Result<Lookup, StoreError> {
        self.prepare().await?;
        self.store.get_link(id, self.clock.now()).await
    }

    /// The pictures stored with the link `id` (as stored), as [`ShareStore::get`] finds links.
    pub async fn get_pictures(&self, id: &str) -> Result<Lookup<String>, StoreError> {
        self.prepare().await?;
        self.store.get_pictures(id, self.clock.now()).await
    }

    /// Deletes the link `id` if `owner` stored it; whether it did.
    pub async fn delete(&self, owner: &Person, id: &str) -> Result<bool, StoreError> {
        let owner = self.owner_key(owner).await?;
        self.store.delete_link(&owner, id).await
    }

    /// Deletes every expired link; how many.
    pub async fn remove_expired(&self) -> Result<usize, StoreError> {
        self.prepare().await?;
        self.store.expire_links(self.clock.now(), None).await
    }

    /// What a link's owner is stored as ([`person_key`] with this database's salt).
    pub async fn owner_key(&self, person: &Person) -> Result<String, StoreError> {
        Ok(person_key(self.prepare().await?, person))
    }
}

/// Whether an id could have been made by [`ShareStore::put`]; anything else is not looked up.
pub(super) fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}
