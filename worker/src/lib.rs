//! Flint's web worker.
//!
//! The page forwards every stream's text here ([`flint_protocol::worker::WorkerRequest`]); the worker
//! splits it into prose and files ([`parser`]), builds the preview document ([`document`]) and hands
//! back at most one [`flint_protocol::worker::ParsedUpdate`] per stream per display frame
//! ([`session`]). Everything but [`glue`] is plain Rust, tested natively; [`glue`] binds it to the
//! worker's `postMessage` and timers.

pub mod document;
pub mod parser;
pub mod session;

#[cfg(target_arch = "wasm32")]
pub mod glue;
