//! History that follows a signed-in person (issue 13): `POST /api/history/push` keeps the records a
//! device changed, `GET /api/history?since=<cursor>` answers what changed since a device last
//! asked. The exchange and the rule which copy wins are the protocol's ([`flint_protocol::sync`]);
//! the records live in the store ([`crate::store`]), per person, keyed by the person's salted hash.
//!
//! Only a signed-in person ([`Person::User`]) syncs: an address is shared by a household and
//! changes, so anonymous requests get a 403 saying how to sign in (or to export instead). The
//! routes sit under `/api/`, so [`crate::access::guard`] (own origin only) and [`crate::auth::check`]
//! (who is asking) run first, as for every other route.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Query, Request, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use flint_protocol::sync::{HistoryRecord, PullAnswer, PushAnswer, PushRequest};
use serde::Deserialize;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::AppState;
use crate::config::StoreConfig;
use crate::error::body_refused;
use crate::person::{Person, Who};
use crate::store::{HistoryQuota, HistoryRefused, StoreError, person_key};

/// Most records one pull answers; a device pulls again from the cursor for the rest.
const PAGE: usize = 500;
/// Longest record id and device id accepted: ids are times and random hex, far shorter.
const MAX_ID_BYTES: usize = 128;

/// What synced history may hold (`[store] history_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryLimits {
    /// Records per person.
    pub max_records: usize,
    /// Bytes of one record's body.
    pub max_record_bytes: usize,
    /// Bytes of one push.
    pub max_request_bytes: usize,
    /// Bytes kept per person.
    pub max_bytes_per_person: usize,
    /// Bytes written per person per minute.
    pub max_write_bytes_per_minute: usize,
}

impl HistoryLimits {
    /// What the store checks in the push's own transaction.
    pub fn quota(&self) -> HistoryQuota {
        HistoryQuota {
            max_records: self.max_records,
            max_bytes: self.max_bytes_per_person,
            write_bytes_per_minute: self.max_write_bytes_per_minute,
        }
    }
}

impl From<&StoreConfig> for HistoryLimits {
    fn from(config: &StoreConfig) -> Self {
        Self {
            max_records: config.history_max_records,
            max_record_bytes: config.history_max_record_bytes,
            max_request_bytes: config.history_max_request_bytes,
            max_bytes_per_person: config.history_max_bytes_per_person,
            max_write_bytes_per_minute: config.history_max_write_bytes_per_minute,
        }
    }
}

/// Why a history request is refused.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Anonymous: nobody to keep the history for.
    #[error("history sync needs a signed-in person")]
    NotSignedIn,
    /// This gateway keeps no history (SQLite without an auth file).
    #[error("history sync is off: {0}")]
    Off(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The push is larger than `store.history_max_request_bytes`.
    #[error("the push is larger than {0} bytes")]
    RequestTooLarge(usize),
    /// One record's body is larger than `store.history_max_record_bytes`.
    #[error("record {id} is larger than {limit} bytes")]
    RecordTooLarge {
        /// The record.
        id: String,
        /// The limit.
        limit: usize,
    },
    /// The person would keep more than `store.history_max_records`.
    #[error("the person would keep more than {0} records")]
    TooManyRecords(usize),
    /// The person would keep more than `store.history_max_bytes_per_person`.
    #[error("the person would keep more than {0} bytes")]
    TooManyBytes(usize),
    /// The person writes faster than `store.history_max_write_bytes_per_minute`.
    #[error("the person writes more than {limit} bytes a minute")]
    TooFast {
        /// The limit.
        limit: usize,
        /// When the push would be taken.
        retry_after_ms: u64,
    },
    /// Not a push, or a record that cannot be kept (the sentence says which).
    #[error("{0}")]
    Bad(String),
}

impl IntoResponse for HistoryError {
    fn into_response(self) -> Response {
        let (status, sentence) = match &self {
            Self::NotSignedIn => (
                StatusCode::FORBIDDEN,
                "your history syncs only when you are signed in to this Flint; sign in at /signin, or move \
                 it with History's Export and Import"
                    .to_owned(),
            ),
            Self::Off(_) => (
                StatusCode::NOT_FOUND,
                "this Flint does not keep history for you; move it between browsers with History's Export \
                 and Import"
                    .to_owned(),
            ),
            Self::Store(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "this Flint cannot sync your history right now; it stays in this browser and is sent \
                 later (details are in the gateway's log)"
                    .to_owned(),
            ),
            Self::RequestTooLarge(limit) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "this push is larger than the {limit} bytes this Flint takes at once; send fewer records"
                ),
            ),
            Self::RecordTooLarge { id, limit } => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "history entry {id} is larger than the {limit} bytes this Flint syncs per entry \
                     (store.history_max_record_bytes); it stays in this browser only: export it to keep a copy"
                ),
            ),
            Self::TooManyRecords(limit) => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "your synced history holds {limit} entries, the most this Flint keeps per person \
                     (store.history_max_records); delete entries you no longer need so new ones sync"
                ),
            ),
            Self::TooManyBytes(limit) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "these changes would take your synced history past {}, the most this Flint keeps per \
                     person (store.history_max_bytes_per_person); delete entries you no longer need (export \
                     them first to keep a copy) so new ones sync",
                    mib(*limit)
                ),
            ),
            Self::TooFast { limit, retry_after_ms } => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "your history is syncing faster than the {} a minute this Flint takes per person \
                     (store.history_max_write_bytes_per_minute); the rest syncs by itself in about {} s",
                    mib(*limit),
                    retry_after_ms.div_ceil(1000)
                ),
            ),
            Self::Bad(why) => (StatusCode::BAD_REQUEST, why.clone()),
        };
        if status.is_server_error() {
            tracing::error!(error = %self, "history request failed");
        }
        let mut response = (status, sentence).into_response();
        if let Self::TooFast { retry_after_ms, .. } = self {
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(retry_after_ms.div_ceil(1000)));
        }
        response
    }
}

impl From<HistoryRefused> for HistoryError {
    fn from(refused: HistoryRefused) -> Self {
        match refused {
            HistoryRefused::Records(limit) => Self::TooManyRecords(limit),
            HistoryRefused::Bytes(limit) => Self::TooManyBytes(limit),
            HistoryRefused::Rate { limit, retry_after_ms } => Self::TooFast { limit, retry_after_ms },
        }
    }
}

/// `bytes` as a person reads it: "64 MiB", or the bytes when under a MiB.
fn mib(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else {
        format!("{bytes} bytes")
    }
}

/// Whether `person` may sync history here: signed in, on a gateway that keeps it. The socket's
/// `Hello` says so, so that a page which may not never asks (and never logs a refusal).
pub fn may_sync(state: &AppState, person: &Person) -> bool {
    person.signed_in() && state.store().history_problem().is_none()
}

/// The store's key for `person`, who must be signed in and have somewhere to keep history.
async fn owner(state: &AppState, person: &Person) -> Result<String, HistoryError> {
    if !person.signed_in() {
        return Err(HistoryError::NotSignedIn);
    }
    if let Some(problem) = state.store().history_problem() {
        return Err(HistoryError::Off(problem));
    }
    Ok(person_key(&state.store().salt().await?, person))
}

/// Checks what a push holds before anything is written: the whole push is refused for one bad
/// record, so the device hears about it while every record is still queued.
pub fn check_push(body: &[u8], limits: HistoryLimits) -> Result<Vec<HistoryRecord>, HistoryError> {
    if body.len() > limits.max_request_bytes {
        return Err(HistoryError::RequestTooLarge(limits.max_request_bytes));
    }
    let push: PushRequest = serde_json::from_slice(body).map_err(|err| {
        HistoryError::Bad(format!(
            "this is not a history push ({err}); reload Flint to get the current version"
        ))
    })?;
    let mut records = push.records;
    for record in &mut records {
        // A deletion is kept without its body, so a deleted entry of any size may be deleted.
        if record.deleted {
            record.body = serde_json::Value::Null;
        }
        if record.id.is_empty() || record.id.len() > MAX_ID_BYTES || record.device.len() > MAX_ID_BYTES {
            return Err(HistoryError::Bad(format!(
                "a history entry's id and device must be 1 to {MAX_ID_BYTES} bytes; reload Flint"
            )));
        }
        if record.body_bytes() > limits.max_record_bytes {
            return Err(HistoryError::RecordTooLarge {
                id: record.id.clone(),
                limit: limits.max_record_bytes,
            });
        }
    }
    Ok(records)
}

/// `POST /api/history/push`'s body, refused in Flint's words ([`body_refused`]) when it passes the
/// route's limit before the handler's own check can say so.
pub struct PushBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for PushBody {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        Bytes::from_request(request, state).await.map(Self).map_err(|rejection| {
            let too_large = "this part of the history is larger than this Flint takes in one request: send it \
                             in smaller parts";
            body_refused(rejection.status(), &rejection.body_text(), too_large)
        })
    }
}

/// `POST /api/history/push`: keeps each record that is newer than the stored copy; answers the
/// copy kept for each.
pub async fn push(
    State(state): State<AppState>,
    Who(person): Who,
    PushBody(body): PushBody,
) -> Result<Response, HistoryError> {
    let owner = owner(&state, &person).await?;
    let limits = state.history_limits();
    let records = check_push(&body, limits)?;
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let now_ms = i64::try_from(now_ms).unwrap_or(i64::MAX);
    let kept = state.store().push_history(&owner, &records, limits.quota(), now_ms).await??;
    Ok(Json(PushAnswer { kept }).into_response())
}

/// `GET /api/history` query.
#[derive(Debug, Deserialize)]
pub struct Since {
    /// The cursor of the last pull; absent: from the start.
    #[serde(default)]
    since: Option<String>,
}

/// `GET /api/history?since=<cursor>`: what changed after the cursor, a page at a time.
pub async fn pull(
    State(state): State<AppState>,
    Who(person): Who,
    Query(Since { since }): Query<Since>,
) -> Result<Response, HistoryError> {
    let owner = owner(&state, &person).await?;
    let since = match since.as_deref().map(str::trim) {
        None | Some("") => 0,
        Some(text) => text.parse::<u64>().map_err(|_| {
            HistoryError::Bad(format!("since must be a cursor a previous pull answered, not {text:?}"))
        })?,
    };
    let rows = state.store().pull_history(&owner, since, PAGE).await?;
    let full = rows.len() == PAGE;
    // A page is bounded by bytes as well as records, so an answer is never larger than a push.
    let (mut bytes, mut cursor, mut records) = (0usize, since, Vec::new());
    let mut cut = false;
    for row in rows {
        bytes = bytes.saturating_add(row.record.body_bytes());
        if !records.is_empty() && bytes > state.history_limits().max_request_bytes {
            cut = true;
            break;
        }
        cursor = row.seq;
        records.push(row.record);
    }
    Ok(Json(PullAnswer { records, cursor, more: full || cut }).into_response())
}
