//! The engine thread's loop: admits requests, builds each step's batch, samples, and frees
//! sequences. See [`super::engine`] for the design.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::admission::{self, Turns};
use super::queue::Place;
use super::sequence::{Job, Sequence, Step};
use super::setup::{EngineConfig, EngineStats, PREFILL_CHUNK, TOKENIZE_BUDGET};
use crate::provider::{ProviderError, ProviderEvent};

/// The prompt-cache sequence.
const CACHE_SEQ: i32 = 0;

/// A submitted generation, holding its place in the waiting queue until a sequence takes it.
pub(super) struct Request {
    pub(super) job: Job,
    pub(super) place: Place,
}

/// What the engine thread is asked to do.
pub(super) enum Command {
    /// Run a generation.
    Generate(Request),
    /// Keep this prefix in the prompt cache; the sender is told once it is decoded.
    SetPrefix(String, Sender<()>),
}

/// The engine thread's state; it borrows the model, which lives on that thread's stack.
pub(super) struct Scheduler<'m> {
    model: &'m LlamaModel,
    batch: LlamaBatch<'static>,
    pending: VecDeque<Request>,
    /// Whose turn it is among connections running as many sequences.
    turns: Turns,
    active: Vec<Sequence>,
    free_ids: Vec<i32>,
    /// Tokens whose KV cells sequence 0 holds.
    cache: Vec<LlamaToken>,
    /// The text to keep in sequence 0.
    prefix_text: Option<String>,
    /// Whether sequence 0 holds `prefix_text` (or failed to and should not be retried).
    prefix_ready: bool,
    /// Told when the prefix is in place.
    prefix_done: Option<Sender<()>>,
    /// BOS text, to avoid adding a second BOS to templates that print one.
    bos: String,
    config: EngineConfig,
    stats: Arc<EngineStats>,
}

impl<'m> Scheduler<'m> {
    pub(super) fn new(
        model: &'m LlamaModel,
        n_batch: usize,
        bos: String,
        config: EngineConfig,
        stats: Arc<EngineStats>,
    ) -> Self {
        Self {
            model,
            batch: LlamaBatch::new(n_batch, 1),
            pending: VecDeque::new(),
            turns: Turns::default(),
            active: Vec::new(),
            free_ids: (1..=config.max_parallel as i32).rev().collect(),
            cache: Vec::new(),
            prefix_text: None,
            prefix_ready: false,
            prefix_done: None,
            bos,
            config,
            stats,
        }
    }

    /// Serves commands until every sender is gone.
    pub(super) fn serve(&mut self, ctx: &mut LlamaContext<'_>, jobs: &Receiver<Command>) {
        let mut open = true;
        loop {
            self.warm_prefix(ctx);
            if self.active.is_empty() && self.pending.is_empty() {
                // Idle: block instead of spinning.
                match jobs.recv() {
                    Ok(command) => self.take(command),
                    Err(_) => return,
                }
            }
            while open {
                match jobs.try_recv() {
                    Ok(command) => self.take(command),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => open = false,
                }
            }
            if !open {
                self.shut_down(ctx);
                return;
            }
            self.drop_cancelled(ctx);
            self.warm_prefix(ctx);
            self.admit(ctx);
            if self.active.is_empty() {
                continue;
            }
            self.step(ctx);
        }
    }

    fn take(&mut self, command: Command) {
        match command {
            Command::Generate(request) => self.pending.push_back(request),
            Command::SetPrefix(text, done) => {
                self.prefix_text = Some(text);
                self.prefix_ready = false;
                self.prefix_done = Some(done);
            }
        }
    }

    /// Frees the sequences whose streams were dropped.
    fn drop_cancelled(&mut self, ctx: &mut LlamaContext<'_>) {
        self.pending.retain(|request| !request.job.events.is_closed());
        let mut i = 0;
        while i < self.active.len() {
            if self.active[i].cancelled() {
                let seq = self.active.swap_remove(i);
                self.release(ctx, seq.id);
            } else {
                i += 1;
            }
        }
    }

    fn release(&mut self, ctx: &mut LlamaContext<'_>, id: i32) {
        let _ = ctx.clear_kv_cache_seq(u32::try_from(id).ok(), None, None);
        self.free_ids.push(id);
    }

    /// Moves waiting jobs into free sequences, fairly between connections (see [`admission`]).
    ///
    /// Their prompts are tokenized here, which holds up every running stream's next token, so a
    /// round tokenizes at most [`TOKENIZE_BUDGET`] bytes, or one larger prompt; the rest wait for
    /// the next step. A prompt is not cut short once begun, so the budget is checked before it.
    fn admit(&mut self, ctx: &mut LlamaContext<'_>) {
        let mut tokenized = 0;
        while let Some(id) = self.free_ids.last().copied() {
            let Some(at) = self.next_pending_at() else { return };
            let bytes = self.pending[at].job.prompt.len();
            if tokenized > 0 && tokenized + bytes > TOKENIZE_BUDGET {
                return;
            }
            let Some(Request { job, place }) = self.take_pending(at) else { return };
            // Taken out of the queue, admitted or refused below: its room there is free.
            drop(place);
            if job.events.is_closed() {
                // The tab closed or cancelled while this waited, maybe during the tokenizing
                // just before: nobody would read the answer.
                continue;
            }
            let vocab = self.model.vocab();
            // Templates that want a BOS usually print it; add one only when the model asks for it
            // and the text has none.
            let add_bos =
                vocab.should_add_bos() && (self.bos.is_empty() || !job.prompt.starts_with(&self.bos));
            self.stats.prompts_tokenized.fetch_add(1, Ordering::Relaxed);
            tokenized += bytes.max(1);
            let tokens = vocab.tokenize(job.prompt.as_bytes(), add_bos, true);
            let window = self.config.context_window as usize;
            if tokens.is_empty() || tokens.len() >= window {
                let _ = job.events.send(Err(ProviderError::PromptTooLarge(format!(
                    "the prompt is {} tokens; the local model's context holds {window} tokens per \
                     stream, prompt and answer together",
                    tokens.len()
                ))));
                continue;
            }
            self.free_ids.pop();
            // Reuse the cached prefix; at least the last prompt token is decoded, for its logits.
            let shared = common_prefix(&self.cache, &tokens).min(tokens.len() - 1);
            if shared > 0 {
                let _ = ctx.copy_kv_cache_seq(CACHE_SEQ, id, Some(0), u32::try_from(shared).ok());
                self.stats.prompt_tokens_cached.fetch_add(shared as u64, Ordering::Relaxed);
            }
            let started = ProviderEvent::Started { model: job.model_label.clone() };
            let seq = Sequence::new(id, tokens, shared, job);
            if seq.send(Ok(started)) {
                self.active.push(seq);
            } else {
                self.release(ctx, id);
            }
        }
    }

    /// Where in `pending` the job is that gets the next free sequence.
    fn next_pending_at(&self) -> Option<usize> {
        let running: Vec<_> = self.active.iter().map(|seq| seq.client).collect();
        let waiting = self.pending.iter().map(|request| request.job.client);
        admission::next_job(waiting, &running, &self.turns)
    }

    /// Takes the job at `at` out of `pending`, for its connection's turn.
    fn take_pending(&mut self, at: usize) -> Option<Request> {
        let request = self.pending.remove(at)?;
        let waiting: Vec<_> = self.pending.iter().map(|request| request.job.client).collect();
        self.turns.took(request.job.client, &waiting);
        Some(request)
    }

    /// One decode: the next token of every generating stream plus prompt slices of new ones.
    fn step(&mut self, ctx: &mut LlamaContext<'_>) {
        self.batch.clear();
        let before: Vec<usize> = self.active.iter().map(|s| s.n_past).collect();
        let mut budget = PREFILL_CHUNK;
        for seq in &mut self.active {
            seq.logits_at = None;
            if let Some(token) = seq.next {
                let at = self.batch.n_tokens();
                if self.batch.add(token, seq.n_past as i32, &[seq.id], true).is_err() {
                    continue;
                }
                seq.logits_at = Some(at);
                seq.n_past += 1;
            } else if seq.prefilling() && budget > 0 {
                let end = (seq.n_past + budget).min(seq.prompt.len());
                for pos in seq.n_past..end {
                    let last = pos + 1 == seq.prompt.len();
                    let at = self.batch.n_tokens();
                    if self.batch.add(seq.prompt[pos], pos as i32, &[seq.id], last).is_err() {
                        break;
                    }
                    if last {
                        seq.logits_at = Some(at);
                    }
                    seq.n_past = pos + 1;
                    budget -= 1;
                }
            }
        }
        if self.batch.n_tokens() == 0 {
            return;
        }
        if let Err(e) = ctx.decode(&mut self.batch) {
            // Nothing of this batch stays in the cache (one micro-batch): rewind the positions.
            for (seq, n_past) in self.active.iter_mut().zip(before) {
                seq.n_past = n_past;
                seq.logits_at = None;
            }
            self.decode_failed(ctx, &e.to_string());
            return;
        }
        self.stats.steps.fetch_add(1, Ordering::Relaxed);

        let window = self.config.context_window as usize;
        let mut i = 0;
        while i < self.active.len() {
            let seq = &mut self.active[i];
            let had_logits = seq.logits_at.is_some();
            let step = seq.sample(ctx, self.model, window);
            if had_logits {
                self.stats.tokens_generated.fetch_add(1, Ordering::Relaxed);
            }
            if step == Step::Done {
                let seq = self.active.swap_remove(i);
                self.release(ctx, seq.id);
            } else {
                i += 1;
            }
        }
    }

    /// Decodes the prompt prefix into the cache sequence. Only while no stream runs, after
    /// clearing the whole cache, so the cells it takes are always the same.
    fn warm_prefix(&mut self, ctx: &mut LlamaContext<'_>) {
        if self.prefix_ready || !self.active.is_empty() {
            return;
        }
        if let Some(text) = self.prefix_text.clone() {
            self.prefix_ready = true;
            self.decode_prefix(ctx, &text);
        }
        if let Some(done) = self.prefix_done.take() {
            let _ = done.send(());
        }
    }

    fn decode_prefix(&mut self, ctx: &mut LlamaContext<'_>, text: &str) {
        ctx.clear_kv_cache();
        self.cache.clear();
        let tokens = self.model.vocab().tokenize(text.as_bytes(), false, true);
        if tokens.is_empty() || tokens.len() >= self.config.context_window as usize {
            return;
        }
        self.batch.clear();
        for (pos, token) in tokens.iter().enumerate() {
            if self.batch.add(*token, pos as i32, &[CACHE_SEQ], pos + 1 == tokens.len()).is_err() {
                tracing::warn!(tokens = tokens.len(), "the prompt prefix is too long to cache");
                return;
            }
        }
        match ctx.decode(&mut self.batch) {
            Ok(()) => self.cache = tokens,
            Err(e) => {
                tracing::warn!("could not cache the prompt prefix: {e}");
                ctx.clear_kv_cache();
            }
        }
    }

    /// A failed decode (usually: the shared KV cache is full). The largest stream is stopped with an
    /// error so the others can go on; the cache sequence is emptied first.
    fn decode_failed(&mut self, ctx: &mut LlamaContext<'_>, reason: &str) {
        tracing::warn!(streams = self.active.len(), "local decode failed: {reason}");
        if !self.cache.is_empty() {
            // Freeing the prompt cache may be enough; the next step retries. It is rebuilt the next
            // time the engine is idle.
            let _ = ctx.clear_kv_cache_seq(Some(CACHE_SEQ as u32), None, None);
            self.cache.clear();
            self.prefix_ready = false;
            return;
        }
        let Some(victim) = (0..self.active.len()).max_by_key(|&i| self.active[i].n_past) else { return };
        let seq = self.active.swap_remove(victim);
        seq.send(Err(ProviderError::Interrupted(format!(
            "the local model ran out of memory for {} concurrent streams ({reason}); \
             retry, or raise kv_tokens in flint.toml",
            self.active.len() + 1
        ))));
        self.release(ctx, seq.id);
    }

    /// The gateway is going away: tell every stream.
    fn shut_down(&mut self, ctx: &mut LlamaContext<'_>) {
        for seq in std::mem::take(&mut self.active) {
            seq.send(Err(ProviderError::Interrupted("the gateway is shutting down".into())));
            self.release(ctx, seq.id);
        }
        for request in self.pending.drain(..) {
            let shutting_down = ProviderError::Interrupted("the gateway is shutting down".into());
            let _ = request.job.events.send(Err(shutting_down));
        }
    }
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
