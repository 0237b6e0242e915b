//! Flint's browser app (Leptos, client-side rendered, built from the root `index.html` by `cargo xtask` or Trunk).
//!
//! The page starts a web worker that holds the one WebSocket to the gateway and parses streamed
//! answers into files ([`gateway::use_gateway`], [`interop::worker`]), a Monaco editor and a sandboxed live preview
//! ([`interop`]). A [`generation`] decides what one answer does (sans-IO), [`run::Runner`] carries
//! it out, and the [`workspace`] holds the current code; [`session`] keeps the work across reloads
//! (IndexedDB); [`components`] render it.
//! Logic that does not need a browser lives in plain modules ([`gateway`], [`metrics`],
//! [`console`], [`export`], [`models`], [`prompt`], [`share`], [`session::saved`], [`variations`]) tested natively
//! with `cargo test -p flint-app`.

pub mod app;
pub mod backup;
pub mod budget;
pub mod components;
pub mod console;
pub mod context;
pub mod draft;
pub mod export;
pub mod fix;
pub mod gateway;
pub mod generation;
pub mod interop;
pub mod judge;
pub mod launch;
pub mod meter;
pub mod metrics;
pub mod models;
pub mod pick;
pub mod pictures;
pub mod profiles;
pub mod project;
pub mod prompt;
pub mod review;
pub mod run;
pub mod session;
pub mod share;
pub mod sync;
pub mod variations;
pub mod versions;
pub mod workspace;

pub use app::App;
