//! Flint's web worker.
//!
//! The page forwards every stream's text here ([`flint_protocol::worker::WorkerRequest`]); the worker
//! splits it into prose and files ([`parser`]), builds the preview document ([`document`]) and hands
//! back at most one [`flint_protocol::worker::ParsedUpdate`] per stream per display frame
//! ([`session`]). Everything but [`glue`] is plain Rust, tested natively; [`glue`] binds it to the
//! worker's `postMessage` and timers.
//!
//! A stream started with a `base` file is an edit of it ([`edit_stream`]): the answer's
//! search/replace blocks ([`edits`]) are applied as each completes, the editor and the preview show
//! the edited file, and the last update carries the line diff from the base ([`diff`]) for review.
//! An answer that is a whole page instead streams like any other; one that is only prose leaves the
//! base alone.
//!
//! Every update carries the answer's token count ([`tokens`]). The page also describes its next
//! request (system prompt, goal, file, history, prompt); the worker keeps each part's count, counts
//! only what changed, and answers with the [`budget`]: what fits in the model's window and which
//! old turns to leave out. Counts are estimates until the exact o200k counter, built just after the
//! worker says it is ready, takes over.

pub mod backoff;
pub mod budget;
pub mod diff;
pub mod document;
pub mod edit_stream;
pub mod edits;
pub mod lanes;
pub mod likeness;
#[cfg(target_arch = "wasm32")]
mod link;
pub mod names;
pub mod parser;
pub mod project;
pub mod project_page;
pub mod project_warm;
pub mod session;
mod stream_state;
pub mod streams;
pub mod tokens;

#[cfg(target_arch = "wasm32")]
pub mod glue;
