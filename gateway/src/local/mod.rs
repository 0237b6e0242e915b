//! The embedded llama.cpp model: GGUF validation, chat templates, and the batching engine behind the
//! `local` provider ([`crate::providers::local`]).
//!
//! Only built with the `local` cargo feature (on by default).

use std::sync::OnceLock;

use llama_cpp_2::llama_backend::LlamaBackend;

mod admission;
pub mod code_end;
pub mod engine;
pub mod gguf;
pub mod model_file;
pub mod prompt_limits;
pub mod queue;
pub mod repeats;
mod scheduler;
pub mod sequence;
mod setup;
pub mod template;

/// llama.cpp's process-wide backend. llama.cpp may be initialised once per process, and both the
/// engine and the benchmark's bare decode loop need it.
pub fn backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp logs every tensor at load; route it to `tracing` (debug) instead of stderr.
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| format!("llama.cpp backend failed to start: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// CPU threads to decode with when the configuration names none: one per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
