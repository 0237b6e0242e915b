//! Flint's web worker.
//!
//! The page forwards every stream's text here ([`flint_protocol::worker::WorkerRequest`]); the worker
//! splits it into prose and files ([`parser`]), builds the preview document ([`document`]) and hands
//! back at most one [`flint_protocol::worker::ParsedUpdate`] per stream per display frame
//! ([`session`]). Everything but [`glue`] is plain Rust, tested natively; [`glue`] binds it to the
//! worker's `postMessage` and timers.
//!
//! Text work for follow-up requests lives here too: token counts ([`tokens`]) and the context
//! budget they feed ([`budget`]), search/replace edits parsed and applied while an answer streams
//! ([`edits`]), and line diffs with partial acceptance ([`diff`]).

pub mod budget;
pub mod diff;
pub mod document;
pub mod edits;
pub mod parser;
pub mod session;
pub mod tokens;

#[cfg(target_arch = "wasm32")]
pub mod glue;
