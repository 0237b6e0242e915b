//! The inference engine: one OS thread owns the model and one llama.cpp context, and decodes every
//! running stream together, one `llama_batch` per step.
//!
//! Each stream is a llama.cpp sequence in a shared (unified) KV cache. A step gathers the next token
//! of every generating stream plus a slice of any new stream's prompt, decodes them in one call, and
//! samples one token per stream with that stream's own sampler. New requests join between steps;
//! finished and cancelled streams leave and their KV cells are freed. A stream whose receiver was
//! dropped is noticed before the next step, so at most one more token is decoded for it.
//!
//! Sequence 0 is a prompt cache holding a fixed prefix (the rendered system prompt, set once with
//! [`Engine::set_prompt_prefix`]): a prompt that starts the same way shares those KV cells instead of
//! recomputing them (in a unified cache a copy only tags cells, so it is free), which is most of the
//! time to first token for a short request. The prefix is fixed on purpose: llama.cpp's float
//! results depend on where in the cache a sequence's cells lie and on what else is in the batch, so
//! a cache that changed with every request would make the same seeded request give different text.
//! With a fixed prefix, a request that arrives while the engine is idle always finds the cache in
//! the same state, and the same seed and prompt give the same text. Alongside other streams the
//! batch differs and the text may differ after some tokens.
//!
//! No tab may stall another's stream or grow the gateway's memory without bound, so a request
//! passes three gates:
//! 1. [`Engine::submit`], on the caller's thread, refuses at once a prompt that cannot fit by its
//!    bytes or spells too many special tokens ([`super::prompt_limits`]), and a request beyond the
//!    bounds on waiting requests ([`super::queue`]);
//! 2. the engine thread tokenizes waiting prompts between decode steps, at most
//!    [`TOKENIZE_BUDGET`](super::setup::TOKENIZE_BUDGET) bytes a step (or one larger prompt), skipping requests whose tab has
//!    gone;
//! 3. it gives free sequences to the tabs running the fewest, in turns among equals
//!    ([`super::admission`]).
//!
//! Tokenizing stays on this thread on purpose. On another thread it would run beside the decode,
//! and llama.cpp's CPU threads (one per core) wait for each other at every graph node by
//! spinning: a third busy thread on the same cores stretched decode steps to seconds (see
//! `tests/local_abuse.rs`). Here a slow prompt delays the other streams by its own tokenizing time,
//! once, and the next step runs at full speed.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token_type::LlamaTokenAttr;

use super::prompt_limits::PromptLimits;
use super::queue::Queue;
use super::scheduler::{Command, Request, Scheduler};
use super::sequence::Job;
use super::setup::PREFILL_CHUNK;
use super::{backend, gguf};
use crate::provider::ProviderError;

pub use super::setup::{EngineConfig, EngineStats};

/// What the engine learned when it loaded the model.
#[derive(Debug, Clone)]
pub struct LoadedModel {
    /// GGUF metadata (name, chat template, trained context).
    pub gguf: gguf::GgufInfo,
    /// Text of the beginning-of-sequence token, for chat templates.
    pub bos: String,
    /// Text of the end-of-sequence token, for chat templates.
    pub eos: String,
    /// The longest token text in bytes, when every prompt byte lies in one token's text (byte-level
    /// BPE, SentencePiece); see [`super::prompt_limits`].
    pub longest_token_bytes: Option<usize>,
    /// Texts the tokenizer turns into special tokens (`<|im_start|>` …).
    pub markers: Vec<String>,
}

/// Why the engine could not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// The file failed validation.
    #[error(transparent)]
    File(#[from] gguf::GgufError),
    /// llama.cpp refused the file or the context.
    #[error("{0}")]
    Load(String),
}

/// Handle to the engine thread; dropping it ends the thread after the running streams are told.
pub struct Engine {
    jobs: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
    loaded: LoadedModel,
    stats: Arc<EngineStats>,
    limits: PromptLimits,
    queue: Queue,
}

impl Engine {
    /// Validates the file, loads the model on a new thread and waits until it is ready.
    pub fn start(config: EngineConfig) -> Result<Self, EngineError> {
        let info = gguf::inspect(&config.model_path)?;
        let (jobs, job_rx) = std::sync::mpsc::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let stats = Arc::new(EngineStats::default());
        let queue = Queue::new(config.waiting);
        let context_window = config.context_window;
        let thread_stats = stats.clone();
        let thread = std::thread::Builder::new()
            .name("flint-local-engine".into())
            .spawn(move || run(config, info, ready_tx, job_rx, thread_stats))
            .map_err(|e| EngineError::Load(format!("cannot start the engine thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(loaded)) => {
                let limits =
                    PromptLimits::new(context_window, loaded.longest_token_bytes, loaded.markers.clone());
                Ok(Self { jobs: Some(jobs), thread: Some(thread), loaded, stats, limits, queue })
            }
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err(EngineError::Load("the engine thread stopped while loading the model".into()))
            }
        }
    }

    /// What was loaded.
    pub fn loaded(&self) -> &LoadedModel {
        &self.loaded
    }

    /// Live counters.
    pub fn stats(&self) -> &Arc<EngineStats> {
        &self.stats
    }

    /// Queues a generation, or says at once why it may not wait: a prompt that cannot fit
    /// ([`ProviderError::PromptTooLarge`]) or a full queue ([`ProviderError::RateLimited`]). Cheap:
    /// the prompt is scanned, not tokenized.
    pub fn submit(&self, job: Job) -> Result<(), ProviderError> {
        self.limits.check(&job.prompt)?;
        let place = self.queue.enter(job.client, job.prompt.len())?;
        let stopped = || {
            ProviderError::ModelUnavailable(
                "the local model's engine has stopped; see the gateway log".into(),
            )
        };
        let jobs = self.jobs.as_ref().ok_or_else(stopped)?;
        // On failure the request, and with it its place in the queue, is dropped.
        jobs.send(Command::Generate(Request { job, place })).map_err(|_| stopped())
    }

    /// The limits a prompt is checked against before it is queued.
    pub fn prompt_limits(&self) -> &PromptLimits {
        &self.limits
    }

    /// Requests and prompt bytes waiting for a sequence, all tabs together.
    pub fn waiting(&self) -> (usize, usize) {
        self.queue.total()
    }
}

impl Engine {
    /// Sets the prompt prefix kept in the cache (see the module docs) and waits until it is
    /// decoded, which also warms llama.cpp up so the first request is not the slow one.
    pub fn set_prompt_prefix(&self, text: String) {
        let Some(jobs) = &self.jobs else { return };
        let (done, wait) = std::sync::mpsc::channel();
        if jobs.send(Command::SetPrefix(text, done)).is_ok() {
            let _ = wait.recv();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The engine thread: load, report, then serve until every [`Engine`] handle is gone.
fn run(
    config: EngineConfig,
    info: gguf::GgufInfo,
    ready: Sender<Result<LoadedModel, EngineError>>,
    jobs: Receiver<Command>,
    stats: Arc<EngineStats>,
) {
    let backend = match backend() {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(EngineError::Load(e)));
            return;
        }
    };
    let path = config.model_path.display().to_string();
    let model = match LlamaModel::load_from_file(backend, &config.model_path, &LlamaModelParams::default()) {
        Ok(m) => m,
        Err(e) => {
            let _ = ready.send(Err(EngineError::Load(format!("llama.cpp could not load {path}: {e}"))));
            return;
        }
    };
    let n_batch = (PREFILL_CHUNK + config.max_parallel).max(512);
    let threads = i32::try_from(config.threads.max(1)).unwrap_or(1);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(config.kv_tokens.max(config.context_window)))
        .with_n_batch(n_batch as u32)
        .with_n_ubatch(n_batch as u32)
        .with_n_seq_max(config.max_parallel as u32 + 1)
        .with_kv_unified(true)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(EngineError::Load(format!(
                "llama.cpp could not create a context for {path}: {e}"
            ))));
            return;
        }
    };
    let vocab = model.vocab();
    let text = |t: LlamaToken| String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned();
    let (longest_token_bytes, markers) = vocabulary_bounds(&model, info.tokenizer.as_deref());
    let loaded = LoadedModel {
        gguf: info,
        bos: text(vocab.bos()),
        eos: text(vocab.eos()),
        longest_token_bytes,
        markers,
    };
    let bos = loaded.bos.clone();
    if ready.send(Ok(loaded)).is_err() {
        return;
    }
    Scheduler::new(&model, n_batch, bos, config, stats).serve(&mut ctx, &jobs);
}

/// What [`super::prompt_limits`] needs from the vocabulary: the longest token text in bytes, and
/// the texts the tokenizer matches as special tokens (control, user-defined and unknown tokens, as
/// llama.cpp's `cache_special_tokens`).
///
/// The byte bound holds only where every prompt byte lies in one token's text: byte-level BPE
/// (`gpt2`) and SentencePiece (`llama`). WordPiece or Unigram vocabularies may fold a whole unknown
/// word, or a run of spaces, into one token; they get no byte bound.
fn vocabulary_bounds(model: &LlamaModel, tokenizer: Option<&str>) -> (Option<usize>, Vec<String>) {
    let vocab = model.vocab();
    let mut piece = Vec::new();
    let mut longest = 0;
    let mut markers = Vec::new();
    let special = LlamaTokenAttr::Control | LlamaTokenAttr::UserDefined | LlamaTokenAttr::Unknown;
    for token in vocab.tokens() {
        piece.clear();
        vocab.token_to_piece_into(token, &mut piece, true, None);
        longest = longest.max(piece.len());
        if vocab.attr(token).intersects(special)
            && let Some(text) = vocab.text(token).and_then(|t| t.to_str().ok())
        {
            markers.push(text.to_owned());
        }
    }
    // SentencePiece without byte fallback turns an unknown character (up to 4 bytes) into one
    // token whose text may be shorter.
    let bounded = matches!(tokenizer, Some("gpt2" | "llama"));
    (bounded.then_some(longest.max(4)), markers)
}
