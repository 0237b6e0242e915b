//! What the engine is set up with and what it counts: below both the engine's handle
//! (`engine.rs`) and its thread's loop (`scheduler.rs`), so that neither imports the other for them.

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;

use super::queue::WaitingLimits;

/// Prompt tokens decoded per step at most, so a long new prompt delays the other streams' next
/// token by a bounded amount instead of by its whole length.
pub(crate) const PREFILL_CHUNK: usize = 256;

/// Prompt bytes tokenized between two decode steps at most, beyond the first prompt: about 25 ms
/// of ordinary text, less than a step, so a burst of variations starts together while a pile of
/// large prompts is tokenized one between each step of the running streams.
pub(crate) const TOKENIZE_BUDGET: usize = 64 << 10;

/// How the engine is set up.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The GGUF file.
    pub model_path: PathBuf,
    /// Tokens one stream may hold (prompt + answer).
    pub context_window: u32,
    /// KV cache cells shared by all streams.
    pub kv_tokens: u32,
    /// CPU threads for decoding.
    pub threads: usize,
    /// Streams decoded together; more wait their turn.
    pub max_parallel: usize,
    /// Bounds on the requests waiting for a sequence.
    pub waiting: WaitingLimits,
}

/// Counters shared with the engine thread, for tests and benchmarks.
#[derive(Debug, Default)]
pub struct EngineStats {
    /// Tokens sampled, all streams together.
    pub tokens_generated: AtomicU64,
    /// `llama_decode` calls.
    pub steps: AtomicU64,
    /// Prompt tokens taken from the prompt cache instead of decoded.
    pub prompt_tokens_cached: AtomicU64,
    /// Prompts of requests tokenized (admitted or refused after counting).
    pub prompts_tokenized: AtomicU64,
}
