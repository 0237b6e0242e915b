//! Errors of the plain HTTP routes: the cause goes to the log, the client gets a short sentence.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::store::StoreError;

/// A failed HTTP request.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Reading a file of the built app failed.
    #[error("reading the built app failed: {0}")]
    Io(#[from] std::io::Error),
    /// `share.enabled = false`.
    #[error("stored share links are switched off")]
    SharesOff,
    /// The share database could not be opened at start (the reason is in the log).
    #[error("the share database is unavailable")]
    SharesUnavailable,
    /// Reading or writing the share database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A blocking task panicked or was cancelled.
    #[error("a background task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The link to store does not decode.
    #[error("{0}")]
    BadLink(String),
    /// The link to store is longer than `share.max_link_bytes`.
    #[error("the link is longer than {0} bytes")]
    LinkTooLarge(usize),
    /// No stored link has this id.
    #[error("no shared link has this id")]
    ShareNotFound,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let (status, message) = match &self {
            Self::Io(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the gateway could not read the built app; details are in its log".to_owned(),
            ),
            Self::SharesOff => (
                StatusCode::NOT_FOUND,
                "this Flint does not store shared links; share the long link instead".to_owned(),
            ),
            Self::SharesUnavailable | Self::Store(_) | Self::Task(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "this Flint cannot store shared links right now; share the long link instead (details are \
                 in the gateway's log)"
                    .to_owned(),
            ),
            Self::BadLink(why) => (StatusCode::BAD_REQUEST, why.clone()),
            Self::LinkTooLarge(limit) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "this shared prompt is larger than this Flint stores ({limit} bytes); share it without the code"
                ),
            ),
            Self::ShareNotFound => (
                StatusCode::NOT_FOUND,
                "no shared prompt has this address: check that the link was copied whole".to_owned(),
            ),
        };
        if status.is_server_error() {
            tracing::error!(error = %self, "request failed");
        }
        (status, message).into_response()
    }
}

/// A request body axum refused before the handler saw it, answered in a sentence (axum's own words,
/// "length limit exceeded" or "Failed to deserialize the JSON body…", say nothing a person can act
/// on): `too_large` for a body past the route's limit; otherwise what went wrong, in axum's detail,
/// and what to do.
pub fn body_refused(status: StatusCode, detail: &str, too_large: &str) -> Response {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return (status, too_large.to_owned()).into_response();
    }
    let message = format!(
        "this request is not what Flint's app sends here ({detail}); reload the page so that the app is this \
         gateway's own version"
    );
    (status, message).into_response()
}
