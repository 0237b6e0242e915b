//! What one person may use: open tabs, running generations, starts per minute and generated tokens
//! per day, kept per [`Person`] (not per socket, so more tabs buy nothing).
//!
//! Every refusal is a sentence naming the setting, with when to retry. Tabs, running streams and
//! starts per minute live in memory, per gateway: a socket and its streams live on one gateway, so
//! each gateway holds its own share of them (see DEPLOY.md). Tokens per day are counted in the
//! [`Store`]: with PostgreSQL one count for every gateway on it, with SQLite in this process.
//!
//! The daily quota holds however many streams start at once and however they end: a start
//! reserves what it may cost (its `max_tokens`, capped to what is left) with one atomic addition,
//! the stream is cut where its reservation ends, and its permit gives back what it did not
//! generate when it ends — done, failed, cancelled, or its task aborted with its tab
//! ([`StreamPermit`]). So the day's count includes what running streams may still write, and the
//! total passes the quota by no more than one answer's rounding (a provider's count against the
//! gateway's).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio::sync::OnceCell;
use tokio_util::task::TaskTracker;

use crate::config::{LimitsConfig, PersonLimits};
use crate::person::Person;
use crate::store::{SqliteStore, Store, StoreError, person_key};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// Why a person may not do more now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What to tell them.
    pub message: String,
    /// When trying again makes sense.
    pub retry_after: Option<Duration>,
}

/// Tokens generated today and the daily quota, for the page's meter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaStatus {
    /// Generated today (UTC).
    pub used: u64,
    /// The day's quota.
    pub limit: u64,
    /// Until the quota is renewed.
    pub resets_in: Duration,
}

/// Per-person counts on this gateway.
#[derive(Debug, Default)]
struct Counts {
    sockets: u32,
    streams: u32,
}

/// The limits of every person; shared by all connections.
pub struct Limits {
    signed_in: PersonLimits,
    anonymous: PersonLimits,
    /// Listening on loopback: anyone is the machine's owner and gets `signed_in`'s limits.
    loopback: bool,
    counts: Mutex<HashMap<Person, Counts>>,
    signed_in_starts: Option<DefaultKeyedRateLimiter<Person>>,
    anonymous_starts: Option<DefaultKeyedRateLimiter<Person>>,
    /// The wall clock, for the day the token quota counts (tests move it).
    now: fn() -> SystemTime,
    /// Where the day's tokens are counted.
    store: Arc<dyn Store>,
    /// The store's salt, so people are counted under a key that names nobody.
    salt: OnceCell<Vec<u8>>,
    /// Every stream permit and settlement under way, which the process waits for before it
    /// exits ([`Limits::settled`]).
    settling: TaskTracker,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("signed_in", &self.signed_in)
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

impl Limits {
    /// Limits as configured, the day's tokens in this process; `loopback` when the gateway
    /// listens only on loopback.
    pub fn new(config: &LimitsConfig, loopback: bool) -> Arc<Self> {
        Self::with_clock(config, loopback, SystemTime::now)
    }

    /// The same with another wall clock.
    pub fn with_clock(config: &LimitsConfig, loopback: bool, now: fn() -> SystemTime) -> Arc<Self> {
        Self::with_store(config, loopback, now, Arc::new(SqliteStore::memory()))
    }

    /// Limits counting the day's tokens in `store`.
    pub fn with_store(
        config: &LimitsConfig,
        loopback: bool,
        now: fn() -> SystemTime,
        store: Arc<dyn Store>,
    ) -> Arc<Self> {
        let starts = |limits: &PersonLimits| {
            NonZeroU32::new(limits.starts_per_minute).map(|n| RateLimiter::dashmap(Quota::per_minute(n)))
        };
        Arc::new(Self {
            signed_in: config.signed_in,
            anonymous: config.anonymous,
            loopback,
            counts: Mutex::new(HashMap::new()),
            signed_in_starts: starts(&config.signed_in),
            anonymous_starts: starts(&config.anonymous),
            now,
            store,
            salt: OnceCell::new(),
            settling: TaskTracker::new(),
        })
    }

    fn of(&self, person: &Person) -> (&PersonLimits, Option<&DefaultKeyedRateLimiter<Person>>, &'static str) {
        match person {
            Person::Anonymous(_) if !self.loopback => {
                (&self.anonymous, self.anonymous_starts.as_ref(), "limits.anonymous")
            }
            _ => (&self.signed_in, self.signed_in_starts.as_ref(), "limits.signed_in"),
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<Person, Counts>> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new tab for `person`, held until the guard is dropped.
    pub fn open_socket(self: &Arc<Self>, person: &Person) -> Result<SocketGuard, Refusal> {
        let (limits, _, section) = self.of(person);
        let mut counts = self.counts();
        let entry = counts.entry(person.clone()).or_default();
        if limits.sockets > 0 && entry.sockets >= limits.sockets {
            let message = format!(
                "{} already has {} Flint tabs open, the most this gateway allows ({section}.sockets); close one",
                whom(person),
                entry.sockets
            );
            return Err(Refusal { message, retry_after: Some(Duration::from_secs(10)) });
        }
        entry.sockets += 1;
        Ok(SocketGuard { limits: Arc::clone(self), person: person.clone() })
    }

    /// A new generation for `person` of `parts` requests (more than one with auto-continue) of at
    /// most `max_tokens` each: within their running streams, their starts per minute and their
    /// tokens today. With a daily quota, what it may cost is reserved in the store at once,
    /// capped to what is left ([`StreamPermit::limit`]), so starts that run together cannot pass
    /// the quota; the permit settles the difference when the stream ends, however it ends.
    pub async fn start_stream(
        self: &Arc<Self>,
        person: &Person,
        max_tokens: u32,
        parts: u32,
        image_tokens: u32,
    ) -> Result<StreamPermit, Refusal> {
        let (limits, _, section) = self.of(person);
        let quota = limits.tokens_per_day;
        let day = self.day();
        if limits.streams > 0 {
            let running = self.counts().get(person).map_or(0, |c| c.streams);
            if running >= limits.streams {
                return Err(too_many_streams(person, running, section));
            }
        }
        // A spent quota is refused before the start is counted against the rate: its sentence is
        // the one that helps (a wait of seconds would not), and it costs no start.
        let key = if quota > 0 {
            let key = self.key(person).await.map_err(cannot_check)?;
            let used = self.store.tokens_used(&key, day).await.map_err(cannot_check)?;
            if used >= quota {
                return Err(self.spent(person, quota, section));
            }
            Some(key)
        } else {
            None
        };
        let mut permit = self.admit(person, true, day)?;
        if let Some(key) = key {
            // A reservation that finds the quota taken meanwhile (another tab, another gateway)
            // is refused after the start was counted: rare, and never more than the quota.
            // Images go with every part: reserved first, charged whatever the answer.
            let images = u64::from(image_tokens) * u64::from(parts.max(1));
            let want = u64::from(max_tokens.max(1)) * u64::from(parts.max(1)) + images;
            let reserved = self.reserve(&key, day, want, quota).await.map_err(cannot_check)?;
            permit.reserved = reserved.held;
            if reserved.granted <= images {
                return Err(self.spent(person, quota, section));
            }
            permit.images = image_tokens;
            let limit = u32::try_from(reserved.granted - images).unwrap_or(u32::MAX);
            permit.limit = Some(limit);
            // A provider may hold text back and hand it out as one more event at the end of each
            // request (the key scrubber, the embedded model's stop strings): not cut for that.
            permit.cut = Some(limit.saturating_add(parts.max(1)));
        }
        Ok(permit)
    }

    /// A generation on the person's own key: outside the operator's daily quota (the tokens are
    /// not the operator's to count), but within their running streams and starts per minute,
    /// which hold the gateway's memory and time whoever's key pays.
    pub fn start_stream_own_key(self: &Arc<Self>, person: &Person) -> Result<StreamPermit, Refusal> {
        self.admit(person, false, self.day())
    }

    /// Counts a start against the person's running streams and starts per minute.
    fn admit(self: &Arc<Self>, person: &Person, counted: bool, day: i64) -> Result<StreamPermit, Refusal> {
        let (limits, starts, section) = self.of(person);
        let mut counts = self.counts();
        let entry = counts.entry(person.clone()).or_default();
        // Checked again: another tab may have started one while the quota was read.
        if limits.streams > 0 && entry.streams >= limits.streams {
            return Err(too_many_streams(person, entry.streams, section));
        }
        if let Some(starts) = starts
            && let Err(not_until) = starts.check_key(person)
        {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            let message = format!(
                "{} started {} generations in the last minute, the most this gateway allows \
                 ({section}.starts_per_minute); try again in {} s",
                whom(person),
                limits.starts_per_minute,
                wait.as_secs().max(1)
            );
            return Err(Refusal { message, retry_after: Some(wait) });
        }
        entry.streams += 1;
        Ok(StreamPermit {
            limits: Arc::clone(self),
            person: person.clone(),
            day,
            reserved: 0,
            limit: None,
            cut: None,
            generated: 0,
            reported: None,
            images: 0,
            settled: !counted,
            used: None,
            _held: self.settling.token(),
        })
    }

    /// Reserves up to `want` of `key`'s tokens on `day` within `quota`: one atomic addition of
    /// the whole `want`, whose answer says what was there before it (so two starts on two
    /// gateways each see the other's), then what passed the quota given back at once.
    async fn reserve(&self, key: &str, day: i64, want: u64, quota: u64) -> Result<Reserved, StoreError> {
        let want_signed = i64::try_from(want).unwrap_or(i64::MAX);
        let total = self.store.add_tokens(key, day, want_signed).await?;
        let before = total.saturating_sub(want);
        let granted = want.min(quota.saturating_sub(before));
        let excess = want - granted;
        if excess == 0 {
            return Ok(Reserved { granted, held: want });
        }
        match self.store.add_tokens(key, day, -i64::try_from(excess).unwrap_or(i64::MAX)).await {
            Ok(_) => Ok(Reserved { granted, held: granted }),
            Err(err) => {
                // Still held: the stream's settlement gives it back with the rest.
                tracing::error!(error = %err, excess, "giving back an unused reservation failed");
                Ok(Reserved { granted, held: want })
            }
        }
    }

    fn spent(&self, person: &Person, quota: u64, section: &str) -> Refusal {
        let message = format!(
            "{} used today's {quota} generated tokens, counting what running generations may still \
             write ({section}.tokens_per_day); the quota renews at midnight UTC",
            whom(person),
        );
        Refusal { message, retry_after: Some(self.until_tomorrow()) }
    }

    /// Waits, up to `patience`, until every stream's tokens are counted: the permits still held
    /// (their streams are ending) and the settlements under way. For the end of the process, so a
    /// gateway that stops charges what its last streams generated.
    pub async fn settled(&self, patience: Duration) -> bool {
        self.settling.close();
        tokio::time::timeout(patience, self.settling.wait()).await.is_ok()
    }

    /// Today's token quota and use, when `person` has one (and the store answers).
    pub async fn quota(&self, person: &Person) -> Option<QuotaStatus> {
        let (limits, _, _) = self.of(person);
        if limits.tokens_per_day == 0 {
            return None;
        }
        match self.used_today(person).await {
            Ok(used) => Some(self.status(used, limits.tokens_per_day)),
            Err(err) => {
                tracing::error!(error = %err, "reading today's token quota failed");
                None
            }
        }
    }

    fn status(&self, used: u64, limit: u64) -> QuotaStatus {
        QuotaStatus { used, limit, resets_in: self.until_tomorrow() }
    }

    /// The key `person`'s tokens are counted under.
    async fn key(&self, person: &Person) -> Result<String, StoreError> {
        let salt = self.salt.get_or_try_init(|| self.store.salt()).await?;
        Ok(person_key(salt, person))
    }

    async fn used_today(&self, person: &Person) -> Result<u64, StoreError> {
        let key = self.key(person).await?;
        self.store.tokens_used(&key, self.day()).await
    }

    fn day(&self) -> i64 {
        let days = (self.now)().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() / DAY.as_secs();
        i64::try_from(days).unwrap_or(i64::MAX)
    }

    fn until_tomorrow(&self) -> Duration {
        let since = (self.now)().duration_since(UNIX_EPOCH).unwrap_or_default();
        DAY - Duration::from_secs(since.as_secs() % DAY.as_secs())
    }

    /// Forgets people with nothing open, so the map stays as small as the set of people active
    /// now (the day's tokens are the store's, which forgets past days itself).
    pub fn prune(&self) {
        self.counts().retain(|_, c| c.sockets > 0 || c.streams > 0);
        for starts in [&self.signed_in_starts, &self.anonymous_starts].into_iter().flatten() {
            starts.retain_recent();
        }
    }
}

fn too_many_streams(person: &Person, running: u32, section: &str) -> Refusal {
    let message = format!(
        "{} already runs {running} generations, the most this gateway allows at once ({section}.streams); \
         wait for one to finish or cancel one",
        whom(person)
    );
    Refusal { message, retry_after: Some(Duration::from_secs(2)) }
}

fn whom(person: &Person) -> String {
    match person {
        Person::User(name) => name.clone(),
        Person::Anonymous(ip) if ip.is_loopback() => "this machine".into(),
        Person::Anonymous(ip) => format!("your address ({ip})"),
    }
}

/// An open tab, counted until dropped.
#[derive(Debug)]
pub struct SocketGuard {
    limits: Arc<Limits>,
    person: Person,
}

impl Drop for SocketGuard {
    fn drop(&mut self) {
        if let Some(c) = self.limits.counts().get_mut(&self.person) {
            c.sockets = c.sockets.saturating_sub(1);
        }
    }
}

/// What a reservation got: `granted` of what was asked, and `held` in the store for it (more than
/// `granted` only when giving the rest back failed).
struct Reserved {
    granted: u64,
    held: u64,
}

fn cannot_check(err: StoreError) -> Refusal {
    tracing::error!(error = %err, "reading or reserving today's token quota failed");
    Refusal {
        message: "this Flint cannot check today's token quota right now (details are in its log); try \
                  again in a minute"
            .to_owned(),
        retry_after: Some(Duration::from_secs(60)),
    }
}

#[path = "limits_permit.rs"]
mod permit;
pub use permit::StreamPermit;

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
