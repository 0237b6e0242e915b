//! One generation inside the engine: its llama.cpp sequence id, where it is in its prompt, its
//! sampler, and the channel its tokens go out on.

use flint_protocol::FinishReason;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::UnboundedSender;

use super::code_end::CodeEnd;
use super::repeats::LoopWatch;
use crate::provider::{ClientId, ProviderError, ProviderEvent};

/// Where a provider stream's events go.
pub type EventSender = UnboundedSender<Result<ProviderEvent, ProviderError>>;

/// Candidates kept before top-p and temperature (llama.cpp's default).
const TOP_K: i32 = 40;

/// How to pick each token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 picks the most likely token (greedy); above 0 samples.
    pub temperature: f32,
    /// Nucleus threshold (1 = off).
    pub top_p: f32,
    /// Seed of the sampler's random generator.
    pub seed: u32,
}

impl Sampling {
    /// A fresh sampler chain for one stream, so streams never share random state.
    pub fn sampler(&self) -> LlamaSampler {
        if self.temperature <= 0.0 {
            return LlamaSampler::greedy();
        }
        // Top-k first: it keeps the 40 likeliest tokens with a partial sort, so top-p sorts 40
        // candidates instead of the whole vocabulary (49k for SmolLM2), a few ms per token.
        let mut chain = vec![LlamaSampler::top_k(TOP_K)];
        if self.top_p < 1.0 {
            chain.push(LlamaSampler::top_p(self.top_p, 1));
        }
        chain.push(LlamaSampler::temp(self.temperature));
        chain.push(LlamaSampler::dist(self.seed));
        LlamaSampler::chain_simple(chain)
    }
}

/// A generation request for the engine thread.
pub struct Job {
    /// The connection that asked; free sequences are shared fairly between connections.
    pub client: ClientId,
    /// The rendered prompt (chat template applied), including any `preamble`.
    pub prompt: String,
    /// The answer's beginning that is already part of the prompt; sent with the first generated
    /// token, so time to first token stays the model's.
    pub preamble: String,
    /// Where to end the answer early, if anywhere: when its code is complete (read after the
    /// `preamble`). Small models often go on after their page (a second page, prose) until
    /// `max_tokens`.
    pub stop: Option<CodeEnd>,
    /// Upper bound on generated tokens.
    pub max_tokens: u32,
    /// Token choice.
    pub sampling: Sampling,
    /// Model name reported in `Started`.
    pub model_label: String,
    /// Where events go; a closed channel means the stream was dropped (cancelled).
    pub events: EventSender,
}

/// A running generation.
pub struct Sequence {
    /// llama.cpp sequence id (1..=max_parallel; 0 is the prompt cache).
    pub id: i32,
    /// The connection it runs for.
    pub client: ClientId,
    /// Prompt tokens.
    pub prompt: Vec<LlamaToken>,
    /// Tokens already in the KV cache for this sequence (prompt and generated).
    pub n_past: usize,
    /// The last sampled token, fed back at the next step.
    pub next: Option<LlamaToken>,
    /// Index in the current batch whose logits belong to this sequence.
    pub logits_at: Option<i32>,
    /// Generated tokens so far.
    pub generated: u32,
    /// Upper bound on generated tokens.
    pub max_tokens: u32,
    sampler: LlamaSampler,
    events: EventSender,
    pending_utf8: Vec<u8>,
    piece: Vec<u8>,
    /// Text still to send in front of the first generated text (empty once sent).
    preamble: String,
    stop: Option<CodeEnd>,
    /// Ends the answer when it has become a loop ([`LoopWatch`]).
    repeats: LoopWatch,
}

/// What happened after a sampled token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Keep decoding.
    Continue,
    /// The stream is over (finished or its receiver is gone); free the sequence.
    Done,
}

impl Sequence {
    /// A sequence whose first `cached` prompt tokens are already in the KV cache.
    pub fn new(id: i32, prompt: Vec<LlamaToken>, cached: usize, job: Job) -> Self {
        Self {
            id,
            client: job.client,
            prompt,
            n_past: cached,
            next: None,
            logits_at: None,
            generated: 0,
            max_tokens: job.max_tokens,
            sampler: job.sampling.sampler(),
            events: job.events,
            pending_utf8: Vec::new(),
            piece: Vec::with_capacity(32),
            preamble: job.preamble,
            stop: job.stop,
            repeats: LoopWatch::default(),
        }
    }

    /// Whether prompt tokens remain to be decoded.
    pub fn prefilling(&self) -> bool {
        self.n_past < self.prompt.len()
    }

    /// Whether the stream's receiver was dropped: the client cancelled.
    pub fn cancelled(&self) -> bool {
        self.events.is_closed()
    }

    /// Sends an event; `false` when the receiver is gone.
    pub fn send(&self, event: Result<ProviderEvent, ProviderError>) -> bool {
        self.events.send(event).is_ok()
    }

    /// Samples this sequence's next token from the batch just decoded and streams its text.
    pub fn sample(
        &mut self,
        ctx: &llama_cpp_2::context::LlamaContext<'_>,
        model: &LlamaModel,
        context_window: usize,
    ) -> Step {
        let Some(at) = self.logits_at.take() else { return Step::Continue };
        let token = self.sampler.sample(ctx, at);
        let vocab = model.vocab();
        if vocab.is_eog(token) {
            return self.finish(FinishReason::Stop);
        }
        self.generated += 1;
        self.next = Some(token);
        self.piece.clear();
        vocab.token_to_piece_into(token, &mut self.piece, false, None);
        self.pending_utf8.extend_from_slice(&self.piece);
        if let Some(text) = take_utf8(&mut self.pending_utf8) {
            let (mut text, stop) = self.apply_stop(text);
            if !self.preamble.is_empty() {
                text.insert_str(0, &std::mem::take(&mut self.preamble));
            }
            let looping = self.repeats.push(&text);
            if !text.is_empty() && !self.send(Ok(ProviderEvent::Delta(text))) {
                return Step::Done;
            }
            if stop {
                return self.finish(FinishReason::Stop);
            }
            if looping {
                return self.looped();
            }
        }
        // The next step feeds `token` back, which needs one more cell in the stream's window.
        if self.generated >= self.max_tokens || self.n_past >= context_window {
            return self.finish(FinishReason::Length);
        }
        Step::Continue
    }

    /// Cuts `chunk` where the code is complete, with what closes it, if it completes there.
    fn apply_stop(&mut self, mut chunk: String) -> (String, bool) {
        let Some(end) = self.stop.as_mut().and_then(|reader| reader.push(&chunk)) else {
            return (chunk, false);
        };
        chunk.truncate(end.keep);
        chunk.push_str(end.then);
        (chunk, true)
    }

    /// The answer became a loop: usage, then an interruption that says so (the text is kept).
    fn looped(&mut self) -> Step {
        self.send(Ok(ProviderEvent::Usage {
            prompt_tokens: u32::try_from(self.prompt.len()).ok(),
            completion_tokens: self.generated,
        }));
        self.send(Err(ProviderError::Interrupted(format!(
            "The embedded model began writing the same text over and over after {} tokens, so it was \
             stopped there. Run it again, or choose a bigger model.",
            self.generated
        ))));
        Step::Done
    }

    /// Sends usage and the finish event.
    pub fn finish(&mut self, reason: FinishReason) -> Step {
        let mut rest = std::mem::take(&mut self.preamble);
        rest.push_str(&String::from_utf8_lossy(&self.pending_utf8));
        self.pending_utf8.clear();
        if !rest.is_empty() {
            self.send(Ok(ProviderEvent::Delta(rest)));
        }
        self.send(Ok(ProviderEvent::Usage {
            prompt_tokens: u32::try_from(self.prompt.len()).ok(),
            completion_tokens: self.generated,
        }));
        self.send(Ok(ProviderEvent::Finished(reason)));
        Step::Done
    }
}

/// Takes the longest complete UTF-8 text from the front of `buf`; a token can end inside a
/// multi-byte character, whose rest comes with the next token. Invalid bytes become U+FFFD.
fn take_utf8(buf: &mut Vec<u8>) -> Option<String> {
    let mut valid = 0;
    while valid < buf.len() {
        match std::str::from_utf8(&buf[valid..]) {
            Ok(_) => valid = buf.len(),
            Err(e) => match e.error_len() {
                Some(bad) => valid += e.valid_up_to() + bad,
                None => {
                    valid += e.valid_up_to();
                    break;
                }
            },
        }
    }
    if valid == 0 {
        return None;
    }
    let text = String::from_utf8_lossy(&buf[..valid]).into_owned();
    buf.drain(..valid);
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::take_utf8;

    #[test]
    fn split_characters_wait_for_their_rest() {
        let euro = "€".as_bytes();
        let mut buf = vec![b'a', euro[0], euro[1]];
        assert_eq!(take_utf8(&mut buf).as_deref(), Some("a"));
        assert_eq!(take_utf8(&mut buf), None);
        buf.push(euro[2]);
        assert_eq!(take_utf8(&mut buf).as_deref(), Some("€"));
        assert!(buf.is_empty());
    }

    #[test]
    fn invalid_bytes_do_not_stall_the_stream() {
        let mut buf = vec![0xff, b'a'];
        assert_eq!(take_utf8(&mut buf).as_deref(), Some("\u{fffd}a"));
    }
}
