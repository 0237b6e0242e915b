//! What a prompt may be before the embedded model tokenizes it.
//!
//! Tokenizing happens on the engine thread, between two decode steps of every running stream, and
//! reads every byte: about 2.7 MB/s on 2 cores, so a 2 MB prompt (`server.max_frame_bytes`) held
//! up every other tab's stream for 0.75 s before it was refused. Two prompts are refused here
//! instead, on the caller's thread, for the price of a comparison and a scan:
//!
//! - **Too many bytes to fit.** In a byte-level BPE or SentencePiece vocabulary every byte of the
//!   prompt lies in exactly one token's text (the template's markers included, as they are parsed
//!   as special tokens), so a prompt of `n` bytes has at least `n / longest` tokens, `longest`
//!   being the vocabulary's longest token text in bytes. A prompt is refused from `context_window`
//!   tokens on (no room is left to answer), so one over `(context_window - 1) × longest` bytes
//!   certainly is. For SmolLM2 `longest` is 81 (a newline and 80 spaces): 663,471 bytes at 8,192
//!   tokens. Loose for ordinary text (about 4 bytes a token), but certain.
//! - **Too many chat markers.** Text that spells a special token (`<|im_start|>` and the like) is
//!   turned into that token, and llama.cpp's tokenizer takes time quadratic in how many there are:
//!   650 kB of `<|im_start|>` took 56 s (on a loaded machine) while under the byte bound. A
//!   conversation uses two or three per message, so [`MAX_MARKERS`] is far above any real prompt.

use crate::provider::ProviderError;

/// Special-token texts a prompt may contain. Tokenizing this many costs about 20 ms.
pub const MAX_MARKERS: usize = 1024;

/// Why a prompt is refused before it is tokenized. The messages say what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptRefused {
    /// It cannot fit the context, whatever its tokens.
    #[error(
        "the prompt is {bytes} bytes, more than the {limit} bytes that can fit the local model's \
         context of {context_window} tokens per stream, prompt and answer together; shorten the code \
         or the conversation, or raise context_window in flint.toml"
    )]
    Bytes {
        /// The prompt's bytes.
        bytes: usize,
        /// The most that can fit.
        limit: usize,
        /// The context, in tokens.
        context_window: u32,
    },
    /// It spells too many special tokens.
    #[error(
        "the prompt contains more than {limit} chat markers such as {example} (the local model's \
         special tokens); remove them from the code or the conversation"
    )]
    Markers {
        /// The bound.
        limit: usize,
        /// One of the markers found.
        example: String,
    },
}

impl From<PromptRefused> for ProviderError {
    fn from(refused: PromptRefused) -> Self {
        ProviderError::PromptTooLarge(refused.to_string())
    }
}

/// The checks, set up from the loaded model.
#[derive(Debug, Clone, Default)]
pub struct PromptLimits {
    context_window: u32,
    byte_limit: Option<usize>,
    markers: Vec<String>,
}

impl PromptLimits {
    /// Limits for a context of `context_window` tokens. `longest_token_bytes` is the longest token
    /// text, when the vocabulary bounds bytes per token (else no byte bound); `markers` are the
    /// special-token texts the tokenizer looks for.
    pub fn new(context_window: u32, longest_token_bytes: Option<usize>, markers: Vec<String>) -> Self {
        let byte_limit =
            longest_token_bytes.map(|longest| (context_window.max(1) as usize - 1).saturating_mul(longest));
        let markers = markers.into_iter().filter(|m| !m.is_empty()).collect();
        Self { context_window, byte_limit, markers }
    }

    /// The byte bound, if the vocabulary gives one.
    pub fn byte_limit(&self) -> Option<usize> {
        self.byte_limit
    }

    /// Refuses a prompt that cannot fit by its bytes alone, or that spells too many markers.
    pub fn check(&self, prompt: &str) -> Result<(), PromptRefused> {
        let bytes = prompt.len();
        if let Some(limit) = self.byte_limit.filter(|&limit| bytes > limit) {
            return Err(PromptRefused::Bytes { bytes, limit, context_window: self.context_window });
        }
        let mut found = 0;
        for marker in &self.markers {
            // Stops counting once over the bound: an attack is refused without a full count.
            found += prompt.matches(marker.as_str()).take(MAX_MARKERS + 1 - found).count();
            if found > MAX_MARKERS {
                return Err(PromptRefused::Markers { limit: MAX_MARKERS, example: marker.clone() });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_MARKERS, PromptLimits, PromptRefused};

    fn smollm2() -> PromptLimits {
        PromptLimits::new(8192, Some(81), vec!["<|im_start|>".into(), "<|im_end|>".into()])
    }

    #[test]
    fn the_byte_bound_is_the_window_less_one_token_times_the_longest_token() {
        let limits = smollm2();
        assert_eq!(limits.byte_limit(), Some(8191 * 81));
        assert_eq!(limits.check(&" ".repeat(8191 * 81)), Ok(()), "80-space tokens could still fit");
        let refused = limits.check(&" ".repeat(8191 * 81 + 1)).expect_err("cannot fit");
        assert_eq!(refused, PromptRefused::Bytes { bytes: 663_472, limit: 663_471, context_window: 8192 });
        let message = refused.to_string();
        assert!(message.contains("663471 bytes") && message.contains("8192 tokens"), "{message}");
    }

    #[test]
    fn without_a_vocabulary_bound_only_markers_are_checked() {
        let limits = PromptLimits::new(8192, None, Vec::new());
        assert_eq!(limits.byte_limit(), None);
        assert_eq!(limits.check(&"x".repeat(3 << 20)), Ok(()));
    }

    #[test]
    fn a_conversation_is_far_under_the_marker_bound() {
        let turn = "<|im_start|>user\nmake it blue<|im_end|>\n<|im_start|>assistant\nok<|im_end|>\n";
        assert_eq!(smollm2().check(&turn.repeat(200)), Ok(()));
    }

    #[test]
    fn a_prompt_spelling_many_markers_is_refused() {
        let limits = smollm2();
        let at_bound = "<|im_start|>".repeat(MAX_MARKERS / 2) + &"<|im_end|>".repeat(MAX_MARKERS / 2);
        assert_eq!(limits.check(&at_bound), Ok(()));
        let over = at_bound + "<|im_end|>";
        let refused = limits.check(&over).expect_err("one marker too many");
        assert_eq!(refused, PromptRefused::Markers { limit: MAX_MARKERS, example: "<|im_end|>".into() });
        assert!(refused.to_string().contains("1024"), "{refused}");
    }
}
