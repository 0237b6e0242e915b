//! A lane's view of its model thinking: the reasoning's pace and summary text, shown apart from
//! the code (it never reaches the editor, the worker or the preview), and the live notice of an
//! upstream gone quiet. Plain logic: the lane hands it the stream's events and shows what it
//! returns.

use super::group::ThrottledMetrics;
use super::{Command, Display};
use crate::gateway::StreamEvent;
use crate::metrics::group_thousands;

/// What the model has thought so far, for the thinking line and its panel.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thought {
    /// Reasoning tokens so far.
    pub tokens: u32,
    /// The summary text the provider gave, if any.
    pub text: String,
    /// When the reasoning began, on the page clock.
    pub started_ms: f64,
    /// The latest reasoning, or when it ended (the first code, or the stream's end).
    pub last_ms: f64,
    /// The model has moved on to the code (or the stream ended).
    pub over: bool,
}

impl Thought {
    /// The line the lane shows: `Thinking · 12 s · 3,400 tokens`, then `Thought for 12 s · …`.
    pub fn line(&self) -> String {
        let secs = ((self.last_ms - self.started_ms) / 1000.0).max(0.0).round() as u64;
        let tokens = match self.tokens {
            1 => "1 token".to_owned(),
            n => format!("{} tokens", group_thousands(u64::from(n))),
        };
        if self.over {
            format!("Thought for {secs} s · {tokens}")
        } else {
            format!("Thinking · {secs} s · {tokens}")
        }
    }
}

/// A lane's reasoning and silence; each method returns what changed, to be shown.
#[derive(Debug, Clone, Default)]
pub struct Thinking {
    thought: Option<Thought>,
    stalled: bool,
}

/// A change to show.
#[derive(Debug, Clone, PartialEq)]
pub enum ThinkingChange {
    /// The thinking line and text; `None` clears it.
    Thought(Option<Thought>),
    /// The silence notice; `None` clears it.
    Stalled(Option<String>),
}

impl Thinking {
    /// A new stream: nothing thought, nothing silent.
    pub fn reset(&mut self) -> Vec<ThinkingChange> {
        *self = Self::default();
        vec![ThinkingChange::Thought(None), ThinkingChange::Stalled(None)]
    }

    /// A `Thinking` frame at `now_ms`: `tokens` so far, `text` going on from byte `from` of the
    /// summary (a frame sent again after a resume is not appended twice).
    pub fn on_thinking(&mut self, tokens: u32, from: u32, text: &str, now_ms: f64) -> Vec<ThinkingChange> {
        let thought =
            self.thought.get_or_insert_with(|| Thought { started_ms: now_ms, ..Thought::default() });
        let have = thought.text.len();
        let from = from as usize;
        if from <= have && from + text.len() > have {
            let skip = have - from;
            if let Some(rest) = text.get(skip..) {
                thought.text.push_str(rest);
            }
        } else if from > have {
            // Some reasoning went missing on the way: what arrives is still worth showing.
            thought.text.push_str(text);
        }
        thought.tokens = thought.tokens.max(tokens);
        if !thought.over {
            thought.last_ms = now_ms;
        }
        let mut out = self.flowing();
        out.push(ThinkingChange::Thought(self.thought.clone()));
        out
    }

    /// Code arrived (or the stream ended) at `now_ms`: the thinking is over.
    pub fn on_code(&mut self, now_ms: f64) -> Vec<ThinkingChange> {
        let mut out = self.flowing();
        if let Some(thought) = self.thought.as_mut().filter(|t| !t.over) {
            thought.over = true;
            thought.last_ms = now_ms;
            out.push(ThinkingChange::Thought(Some(thought.clone())));
        }
        out
    }

    /// The gateway says the provider has sent nothing for `secs` seconds (0: it sends again).
    pub fn on_stalled(&mut self, provider: &str, secs: u32) -> Vec<ThinkingChange> {
        self.stalled = secs > 0;
        let notice = (secs > 0).then(|| format!("No data from {provider} for {secs} s"));
        vec![ThinkingChange::Stalled(notice)]
    }

    /// A lane's stream event at `now_ms`, as far as thinking goes: `true` when it was only about
    /// thinking (nothing else to do). A frozen lane (stopped by the person) shows nothing new.
    pub(super) fn on_event(
        &mut self,
        event: &StreamEvent,
        frozen: bool,
        metrics: &mut ThrottledMetrics,
        now_ms: f64,
        out: &mut Vec<Command>,
    ) -> bool {
        match event {
            StreamEvent::Thinking { .. } | StreamEvent::Stalled { .. } if frozen => true,
            StreamEvent::Thinking { tokens, from, text } => {
                show(self.on_thinking(*tokens, *from, text, now_ms), out);
                // The first reasoning is a figure of its own (time to first reasoning); the count
                // after it shows in the thinking line, not in a metrics repaint per frame.
                let first = metrics.live().first_reasoning_ms.is_none();
                metrics.on_thinking(now_ms, *tokens);
                if first {
                    out.push(Command::Show(Display::Metrics(metrics.live().clone())));
                }
                true
            }
            StreamEvent::Stalled { silent_secs, provider } => {
                show(self.on_stalled(provider, *silent_secs), out);
                true
            }
            StreamEvent::Queued { .. } | StreamEvent::Started { .. } => false,
            StreamEvent::Done { usage, .. } => {
                // The gateway's count is exact where the live one counted chunks.
                if let (Some(thought), Some(tokens)) = (self.thought.as_mut(), usage.reasoning_tokens) {
                    thought.tokens = tokens;
                    if thought.over {
                        out.push(Command::Show(Display::Thinking(Some(thought.clone()))));
                    }
                }
                show(self.on_code(now_ms), out);
                false
            }
            StreamEvent::Text { .. } | StreamEvent::Parsed(_) | StreamEvent::Failed { .. } => {
                show(self.on_code(now_ms), out);
                false
            }
        }
    }

    /// Anything arrived: a silence notice shown goes.
    fn flowing(&mut self) -> Vec<ThinkingChange> {
        if std::mem::take(&mut self.stalled) { vec![ThinkingChange::Stalled(None)] } else { Vec::new() }
    }
}

/// Shows what changed in a lane's thinking.
pub(super) fn show(changes: Vec<ThinkingChange>, out: &mut Vec<Command>) {
    out.extend(changes.into_iter().map(|change| {
        Command::Show(match change {
            ThinkingChange::Thought(thought) => Display::Thinking(thought),
            ThinkingChange::Stalled(notice) => Display::Stalled(notice),
        })
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thought(changes: &[ThinkingChange]) -> Thought {
        changes
            .iter()
            .rev()
            .find_map(|c| if let ThinkingChange::Thought(Some(t)) = c { Some(t.clone()) } else { None })
            .expect("a thought shown")
    }

    #[test]
    fn the_line_counts_time_and_tokens_and_the_text_grows_once() {
        let mut t = Thinking::default();
        t.on_thinking(1, 0, "", 1_000.0);
        t.on_thinking(40, 0, "Plan: ", 5_000.0);
        // The same frame again (a resume repeats it): not appended twice.
        t.on_thinking(40, 0, "Plan: ", 5_100.0);
        let shown = thought(&t.on_thinking(3_400, 6, "a grid", 13_000.0));
        assert_eq!(shown.text, "Plan: a grid");
        assert_eq!(shown.line(), "Thinking · 12 s · 3,400 tokens");
        let over = thought(&t.on_code(14_000.0));
        assert_eq!(over.line(), "Thought for 13 s · 3,400 tokens");
        assert!(t.on_code(15_000.0).is_empty(), "told once");
        let late = thought(&t.on_thinking(3_500, 12, "!", 16_000.0));
        assert_eq!(late.line(), "Thought for 13 s · 3,500 tokens", "reasoning after the code keeps the time");
    }

    #[test]
    fn the_gateways_final_count_replaces_the_live_one() {
        let mut t = Thinking::default();
        let mut metrics = ThrottledMetrics::default();
        let mut out = Vec::new();
        let thinking = StreamEvent::Thinking { tokens: 23, from: 0, text: "Plan".into() };
        assert!(t.on_event(&thinking, false, &mut metrics, 0.0, &mut out), "only about thinking");
        let usage = flint_protocol::Usage {
            completion_tokens: 341,
            reasoning_tokens: Some(321),
            ..Default::default()
        };
        let done = StreamEvent::Done {
            finish: flint_protocol::FinishReason::Stop,
            usage,
            metrics: Default::default(),
        };
        out.clear();
        assert!(!t.on_event(&done, false, &mut metrics, 2_000.0, &mut out), "the lane ends it too");
        let Some(Command::Show(Display::Thinking(Some(shown)))) = out.last() else { panic!("{out:?}") };
        assert_eq!(shown.line(), "Thought for 2 s · 321 tokens");
    }

    #[test]
    fn a_frame_overlapping_what_was_shown_adds_only_the_rest() {
        let mut t = Thinking::default();
        t.on_thinking(1, 0, "abc", 0.0);
        assert_eq!(thought(&t.on_thinking(2, 1, "bcdé", 0.0)).text, "abcdé");
    }

    #[test]
    fn silence_is_told_and_cleared_by_the_next_data() {
        let mut t = Thinking::default();
        assert_eq!(
            t.on_stalled("groq", 12),
            [ThinkingChange::Stalled(Some("No data from groq for 12 s".into()))]
        );
        assert_eq!(t.on_code(1.0), [ThinkingChange::Stalled(None)]);
        t.on_stalled("groq", 12);
        assert_eq!(t.on_stalled("groq", 0), [ThinkingChange::Stalled(None)]);
        assert_eq!(t.reset(), [ThinkingChange::Thought(None), ThinkingChange::Stalled(None)]);
    }
}
