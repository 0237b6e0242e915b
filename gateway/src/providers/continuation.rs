//! Auto-continue: an answer that stops at its length limit is continued by asking the model again,
//! and the continuation joins the same stream, so the browser sees one answer.
//!
//! Each part is a new request to the same provider with the same parameters: the conversation,
//! then the text so far as the `assistant`, then [`CONTINUE_INSTRUCTION`] as the `user`. Only new
//! text goes on, trimmed at its start by a [`Joiner`] (models repeat the end or reopen the code
//! block). Usage is summed over the parts, because each part pays for the whole prompt again.
//! Each part's text is scrubbed of the key by its own stream, which sees only that part; the
//! joined text passes the provider's [`TextScrubber`] too, which reads across the joins, so a key
//! cut between two parts (the end of one released when it stopped) is still recognised.
//! Dropping the stream drops the part being read, which cancels it upstream.

use std::collections::VecDeque;
use std::sync::Arc;

use flint_protocol::{ChatMessage, FinishReason, Role};
use futures::StreamExt;

use super::{EventStream, GenRequest, Provider, ProviderError, ProviderEvent, TextScrubber};

mod join;

pub use join::{Joiner, MIN_OVERLAP_CHARS, WINDOW};

/// What the gateway says, as the person, to ask for the rest of a cut-off answer.
pub const CONTINUE_INSTRUCTION: &str = "Your answer was cut off by the length limit. Continue exactly \
where it stopped, from the very next character: do not repeat any text already written, do not \
start a new code block or reopen the one you were in, and add no comment of your own.";

/// `provider.stream(request)`, continued up to `limit` times while it stops at its length limit.
///
/// The result ends like any provider stream: `Finished` (still `Length` if the last part was cut
/// off too) after one `Usage` summed over the parts, or the error of the part that failed, after
/// the text of the parts before it. `Started` comes once; `Queued` of every part is passed on.
pub fn continuing(provider: Arc<dyn Provider>, request: GenRequest, limit: u8) -> EventStream {
    let upstream = provider.stream(request.clone());
    let scrubber = provider.scrubber(&request);
    let state = Continuing {
        scrubber,
        provider,
        request,
        upstream,
        left: limit,
        text: String::new(),
        joiner: None,
        started: false,
        part: Part::default(),
        total: Total::default(),
        out: VecDeque::new(),
        over: false,
    };
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    }))
}

type Item = Result<ProviderEvent, ProviderError>;

struct Continuing {
    provider: Arc<dyn Provider>,
    /// The request as asked; each part adds two messages to it.
    request: GenRequest,
    /// The part being read.
    upstream: EventStream,
    /// Continuations still allowed.
    left: u8,
    /// Everything passed on so far: the answer, for the next part's `assistant` message.
    text: String,
    /// Trims the start of the part being read; `None` for the first part.
    joiner: Option<Joiner>,
    started: bool,
    part: Part,
    total: Total,
    /// Events decided but not yet handed out.
    out: VecDeque<Item>,
    /// Nothing more will be read.
    over: bool,
    /// Scrubs the key from the joined text; `None` where no key is sent.
    scrubber: Option<Box<dyn TextScrubber>>,
}

/// What the part being read reported.
#[derive(Default)]
struct Part {
    /// Text events, the token count when the upstream reports none.
    chunks: u32,
    usage: Option<(Option<u32>, u32)>,
}

/// Usage summed over the parts that ended.
struct Total {
    /// Whether any part reported usage; if none did, none is reported (the stream counts chunks).
    reported: bool,
    /// Known only if every part reported it.
    prompt_tokens: Option<u32>,
    completion_tokens: u32,
}

impl Default for Total {
    fn default() -> Self {
        Self { reported: false, prompt_tokens: Some(0), completion_tokens: 0 }
    }
}

impl Total {
    fn add(&mut self, part: &Part) {
        self.reported |= part.usage.is_some();
        let (prompt, completion) = part.usage.unwrap_or((None, part.chunks));
        self.prompt_tokens = self.prompt_tokens.zip(prompt).map(|(a, b)| a.saturating_add(b));
        self.completion_tokens = self.completion_tokens.saturating_add(completion);
    }

    fn event(&self) -> Option<ProviderEvent> {
        self.reported.then_some(ProviderEvent::Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
        })
    }
}

impl Continuing {
    async fn next(&mut self) -> Option<Item> {
        loop {
            if let Some(item) = self.out.pop_front() {
                return Some(item);
            }
            if self.over {
                return None;
            }
            match self.upstream.next().await {
                Some(Ok(ProviderEvent::Started { model })) => {
                    // The browser was told once; a later part starting is no news to it.
                    if !self.started {
                        self.started = true;
                        return Some(Ok(ProviderEvent::Started { model }));
                    }
                }
                Some(Ok(
                    passed @ (ProviderEvent::Queued { .. }
                    | ProviderEvent::Reasoning(_)
                    | ProviderEvent::ReasoningTokens(_)
                    | ProviderEvent::Silence { .. }),
                )) => return Some(Ok(passed)),
                Some(Ok(ProviderEvent::Delta(text))) => {
                    self.part.chunks += 1;
                    let text = match &mut self.joiner {
                        Some(joiner) => joiner.push(&text),
                        None => text,
                    };
                    self.pass_on(text);
                }
                Some(Ok(ProviderEvent::Usage { prompt_tokens, completion_tokens })) => {
                    self.part.usage = Some((prompt_tokens, completion_tokens));
                }
                Some(Ok(ProviderEvent::Finished(reason))) => {
                    self.end_part();
                    // An answer cut off before any text (a reasoning model that spent its budget
                    // thinking) is not continued: there is nothing to continue from.
                    if reason == FinishReason::Length && self.left > 0 && !self.text.is_empty() {
                        self.next_part();
                    } else {
                        self.over = true;
                        self.release();
                        self.out.extend(self.total.event().map(Ok));
                        self.out.push_back(Ok(ProviderEvent::Finished(reason)));
                    }
                }
                Some(Err(err)) => {
                    self.end_part();
                    self.over = true;
                    self.release();
                    self.out.push_back(Err(err));
                }
                None => {
                    // Cut short: the stream reports it. What the joiner held back is text too.
                    self.end_part();
                    self.over = true;
                    self.release();
                }
            }
        }
    }

    /// Text for the browser; the next part's `assistant` message is the text before scrubbing
    /// across joins, so it holds what was held back too.
    fn pass_on(&mut self, text: String) {
        if text.is_empty() {
            return;
        }
        self.text.push_str(&text);
        let text = match &mut self.scrubber {
            Some(scrubber) => scrubber.push(text),
            None => Some(text),
        };
        self.out.extend(text.map(|text| Ok(ProviderEvent::Delta(text))));
    }

    /// The answer ended: the text the scrubber held back goes out.
    fn release(&mut self) {
        if let Some(text) = self.scrubber.as_mut().and_then(|s| s.finish()) {
            self.out.push_back(Ok(ProviderEvent::Delta(text)));
        }
    }

    /// The part being read ended: what its joiner held back goes out, its usage is counted.
    fn end_part(&mut self) {
        if let Some(mut joiner) = self.joiner.take() {
            let held = joiner.finish();
            self.pass_on(held);
        }
        self.total.add(&std::mem::take(&mut self.part));
    }

    fn next_part(&mut self) {
        self.left -= 1;
        let mut request = self.request.clone();
        request.messages.push(ChatMessage::new(Role::Assistant, self.text.clone()));
        request.messages.push(ChatMessage::new(Role::User, CONTINUE_INSTRUCTION));
        tracing::debug!(chars = self.text.len(), left = self.left, "answer cut off; asking to continue");
        self.joiner = Some(Joiner::new(&self.text));
        // The finished part goes first, so its provider slot is free for the next one.
        self.upstream = Box::pin(futures::stream::empty());
        self.upstream = self.provider.stream(request);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use flint_protocol::{GenParams, ModelInfo};

    use super::*;
    use crate::providers::redact::Redactor;
    use ProviderEvent::{Delta, Finished, Queued, Started, Usage};

    /// Answers each request with the next script in line, and remembers the requests. With a
    /// key, it scrubs each part's text on its own, as the HTTP providers do.
    struct Scripted {
        parts: Mutex<VecDeque<Vec<ProviderEvent>>>,
        requests: Mutex<Vec<GenRequest>>,
        redactor: Option<Arc<Redactor>>,
    }

    impl Provider for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }

        fn models(&self) -> Vec<ModelInfo> {
            Vec::new()
        }

        fn stream(&self, request: GenRequest) -> EventStream {
            self.requests.lock().expect("not poisoned").push(request);
            let mut part = self.parts.lock().expect("not poisoned").pop_front().unwrap_or_default();
            if let Some(redactor) = &self.redactor {
                let mut scrubber = redactor.stream();
                let mut scrubbed = Vec::new();
                for event in part {
                    match event {
                        Delta(text) => scrubbed.extend(scrubber.push(text).map(Delta)),
                        other => {
                            scrubbed.extend(scrubber.finish().map(Delta));
                            scrubbed.push(other);
                        }
                    }
                }
                part = scrubbed;
            }
            Box::pin(futures::stream::iter(part.into_iter().map(Ok)))
        }

        fn scrubber(&self, _request: &GenRequest) -> Option<Box<dyn TextScrubber>> {
            self.redactor.as_ref().map(|r| Box::new(r.stream()) as Box<dyn TextScrubber>)
        }
    }

    fn run(parts: Vec<Vec<ProviderEvent>>, limit: u8) -> (Vec<ProviderEvent>, Vec<GenRequest>) {
        run_with_key(parts, limit, None)
    }

    fn run_with_key(
        parts: Vec<Vec<ProviderEvent>>,
        limit: u8,
        key: Option<&str>,
    ) -> (Vec<ProviderEvent>, Vec<GenRequest>) {
        let redactor = key.map(|key| Arc::new(Redactor::new(Some(key))));
        let provider =
            Arc::new(Scripted { parts: Mutex::new(parts.into()), requests: Mutex::default(), redactor });
        let request = GenRequest {
            client: 1,
            person: 1,
            key: None,
            model: "m".into(),
            messages: Vec::new(),
            params: GenParams::default(),
        };
        let events =
            futures::executor::block_on(continuing(provider.clone(), request, limit).collect::<Vec<_>>());
        let events = events.into_iter().map(|e| e.expect("no errors scripted")).collect();
        let requests = provider.requests.lock().expect("not poisoned").clone();
        (events, requests)
    }

    fn usage(prompt: Option<u32>, completion: u32) -> ProviderEvent {
        Usage { prompt_tokens: prompt, completion_tokens: completion }
    }

    #[test]
    fn parts_join_into_one_answer_with_one_start_and_summed_usage() {
        let started = || Started { model: "m".into() };
        let parts = vec![
            vec![started(), Delta("Hello, wor".into()), usage(Some(10), 3), Finished(FinishReason::Length)],
            vec![
                Queued { ahead: 1 },
                started(),
                Delta("ld!".into()),
                usage(Some(14), 1),
                Finished(FinishReason::Stop),
            ],
        ];
        let (events, requests) = run(parts, 3);
        let expected = vec![
            started(),
            Delta("Hello, wor".into()),
            Queued { ahead: 1 },
            Delta("ld!".into()),
            usage(Some(24), 4),
            Finished(FinishReason::Stop),
        ];
        assert_eq!(events, expected);
        assert_eq!(requests.len(), 2);
        let roles: Vec<Role> = requests[1].messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::Assistant, Role::User]);
        assert_eq!(requests[1].messages[0].content, "Hello, wor");
    }

    #[test]
    fn a_part_without_usage_counts_its_chunks_and_leaves_the_prompt_unknown() {
        let parts = vec![
            vec![Delta("a".into()), Delta("b".into()), Finished(FinishReason::Length)],
            vec![Delta("c".into()), usage(Some(5), 1), Finished(FinishReason::Stop)],
        ];
        let (events, _) = run(parts, 1);
        assert_eq!(events[events.len() - 2], usage(None, 3));
    }

    #[test]
    fn no_usage_reported_means_none_passed_on() {
        let parts = vec![
            vec![Delta("a".into()), Finished(FinishReason::Length)],
            vec![Delta("b".into()), Finished(FinishReason::Stop)],
        ];
        let (events, _) = run(parts, 1);
        assert_eq!(events, vec![Delta("a".into()), Delta("b".into()), Finished(FinishReason::Stop)]);
    }

    #[test]
    fn the_limit_ends_with_a_length_stop() {
        let part = |text: &str| vec![Delta(text.into()), Finished(FinishReason::Length)];
        let (events, requests) = run(vec![part("one, "), part("two, "), part("three")], 1);
        assert_eq!(requests.len(), 2);
        assert_eq!(
            events,
            vec![Delta("one, ".into()), Delta("two, ".into()), Finished(FinishReason::Length)]
        );
    }

    #[test]
    fn an_answer_cut_off_before_any_text_is_not_continued() {
        let (events, requests) = run(vec![vec![Finished(FinishReason::Length)]], 3);
        assert_eq!(requests.len(), 1);
        assert_eq!(events, vec![Finished(FinishReason::Length)]);
    }

    #[test]
    fn a_key_cut_between_two_parts_is_redacted_in_the_joined_answer() {
        const KEY: &str = "sk-proj-Zx81kQ0pLmN4vB7cR2tY9gE5";
        // Each part shows fewer than twelve of the key's characters, which its own scrubber lets
        // through; joined, they are twenty-one.
        let parts = vec![
            vec![Delta("The key: ".into()), Delta("sk-proj-Zx81k".into()), Finished(FinishReason::Length)],
            vec![Delta("Q0pLmN4vB7".into()), Delta(" is it.".into()), Finished(FinishReason::Stop)],
        ];
        let (events, requests) = run_with_key(parts, 1, Some(KEY));
        let text: String =
            events.iter().filter_map(|e| if let Delta(t) = e { Some(t.as_str()) } else { None }).collect();
        assert_eq!(text, "The key: [redacted] is it.");
        assert_eq!(events.last(), Some(&Finished(FinishReason::Stop)));
        assert_eq!(requests[1].messages[0].content, "The key: sk-proj-Zx81k", "the model reads its own text");
    }
}
