//! Errors of the plain HTTP routes: the cause goes to the log, the client gets a short sentence.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A failed HTTP request.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Reading a file of the built app failed.
    #[error("reading the built app failed: {0}")]
    Io(#[from] std::io::Error),
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        tracing::error!(error = %self, "request failed");
        let message = match self {
            Self::Io(_) => "the gateway could not read the built app; details are in its log",
        };
        (StatusCode::INTERNAL_SERVER_ERROR, message).into_response()
    }
}
