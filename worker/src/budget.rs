//! Context budget: what of a conversation fits in the model's window, and how full that window is.
//!
//! A request is, in order: the system prompt, the pinned goal, the current file, the history turns
//! (oldest first) and the new prompt. Everything but the history is needed for the answer to make
//! sense, so only history is trimmed, oldest turn first. If the rest alone does not fit, the plan says
//! so and nothing should be sent: a request cut elsewhere would produce a confident wrong answer.
//!
//! Fullness is measured against the room for input (window minus the tokens reserved for the answer)
//! and named by [`Zone`], because models lose track of instructions long before the window is full.
//!
//! The page describes each next request as it changes ([`BudgetRequest`]); [`CountedRequest`] keeps
//! the texts and counts only the parts that changed, so typing a prompt does not recount the file.

use std::ops::Range;

use flint_protocol::worker::{BudgetReport, BudgetRequest, Tokenizer};

use crate::tokens::TokenCounter;

/// Tokens a chat format adds around each message (role markers, separators). OpenAI's guidance is
/// 3–4 per message; 4 keeps the plan on the safe side.
pub const MESSAGE_OVERHEAD: usize = 4;

/// Messages every request has whatever its parts: the system message (system prompt and goal) and
/// the user message (file and prompt). Their framing is counted in [`PartCounts::system`].
pub const FIXED_MESSAGES: usize = 2;

/// Messages per history turn: its prompt and its answer. Their framing is counted in the turn.
pub const MESSAGES_PER_TURN: usize = 2;

/// Token counts of the parts of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartCounts {
    /// The system prompt, plus the framing of the request's fixed messages ([`FIXED_MESSAGES`]).
    pub system: usize,
    /// The goal the user pinned; never trimmed.
    pub goal: usize,
    /// The file being edited; never trimmed.
    pub file: usize,
    /// Earlier turns, oldest first, each with its messages' framing; trimmed oldest first.
    pub history: Vec<usize>,
    /// The new prompt.
    pub prompt: usize,
}

impl PartCounts {
    /// Counts each text with `counter` and adds the messages' framing ([`PartCounts::framed`]).
    pub fn count(counter: &TokenCounter, texts: &PartTexts<'_>) -> Self {
        let history: Vec<usize> = texts.history.iter().map(|turn| counter.count(turn)).collect();
        Self::framed(
            counter.count(texts.system),
            counter.count(texts.goal),
            counter.count(texts.file),
            &history,
            counter.count(texts.prompt),
        )
    }

    /// Counts of the bare texts, with [`MESSAGE_OVERHEAD`] added where messages begin: to the system
    /// prompt for the request's fixed messages, and to each turn that is not empty for its own.
    /// Goal, file and prompt ride in the fixed messages, so they cost only their text.
    pub fn framed(system: usize, goal: usize, file: usize, history: &[usize], prompt: usize) -> Self {
        let turn = |tokens: usize| match tokens {
            0 => 0,
            tokens => tokens + MESSAGES_PER_TURN * MESSAGE_OVERHEAD,
        };
        Self {
            system: system + FIXED_MESSAGES * MESSAGE_OVERHEAD,
            goal,
            file,
            history: history.iter().map(|&t| turn(t)).collect(),
            prompt,
        }
    }

    /// The parts that are never trimmed.
    pub fn fixed(&self) -> usize {
        self.system + self.goal + self.file + self.prompt
    }
}

/// The texts of one request, for [`PartCounts::count`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PartTexts<'a> {
    /// The system prompt.
    pub system: &'a str,
    /// The pinned goal.
    pub goal: &'a str,
    /// The current file.
    pub file: &'a str,
    /// Earlier turns, oldest first.
    pub history: &'a [&'a str],
    /// The new prompt.
    pub prompt: &'a str,
}

/// How full the context is, by the share of the input room in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Zone {
    /// Under 30 %: the model keeps track of everything.
    Sharp,
    /// 30 % to under 60 %.
    SomeDrift,
    /// 60 % to under 80 %.
    DriftLikely,
    /// 80 % and more (including a request that does not fit).
    AboutToOverflow,
}

impl Zone {
    /// The zone for `used` tokens out of `room`.
    pub fn of(used: usize, room: usize) -> Self {
        // Integer comparisons: no rounding at the boundaries.
        let used = used as u128 * 100;
        let room = room as u128;
        if used < 30 * room {
            Self::Sharp
        } else if used < 60 * room {
            Self::SomeDrift
        } else if used < 80 * room {
            Self::DriftLikely
        } else {
            Self::AboutToOverflow
        }
    }

    /// What the user sees.
    pub fn label(self) -> &'static str {
        match self {
            Self::Sharp => "sharp",
            Self::SomeDrift => "some drift",
            Self::DriftLikely => "drift likely",
            Self::AboutToOverflow => "about to overflow",
        }
    }
}

/// What to send, and how full the context will be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The model's context window.
    pub window: usize,
    /// Tokens kept free for the answer.
    pub reserved_output: usize,
    /// The counts the plan was made from.
    pub parts: PartCounts,
    /// History turns left out (indices into `parts.history`): always the oldest ones, `0..k`. When
    /// the request does not fit, all of them.
    pub dropped: Range<usize>,
    /// Tokens of the request as planned (every part, minus dropped turns).
    pub total: usize,
    /// Whether the request fits; when `false`, do not send it: the pinned goal, the file, the system
    /// prompt and the new prompt alone exceed the room for input.
    pub fits: bool,
    /// `total` as a whole percentage of the room for input, rounded down (over 100 when it does not
    /// fit).
    pub percent: usize,
    /// How full the context is.
    pub zone: Zone,
}

impl Plan {
    /// Room for input: the window minus the reserved output.
    pub fn room(&self) -> usize {
        self.window.saturating_sub(self.reserved_output)
    }

    /// History turns that are sent (indices into `parts.history`).
    pub fn kept(&self) -> Range<usize> {
        self.dropped.end..self.parts.history.len()
    }
}

/// Plans a request of `parts` for a model with a `window`-token context, keeping `reserved_output`
/// tokens free for the answer.
pub fn plan(window: usize, reserved_output: usize, parts: PartCounts) -> Plan {
    let room = window.saturating_sub(reserved_output);
    let fixed = parts.fixed();
    let history: usize = parts.history.iter().sum();
    let (dropped, total, fits) = if fixed > room || room == 0 {
        (0..parts.history.len(), fixed, false)
    } else {
        // Drop the oldest turns until the rest fits; the fixed parts alone fit, so this ends.
        let mut total = fixed + history;
        let mut drop = 0;
        while total > room {
            total -= parts.history[drop];
            drop += 1;
        }
        (0..drop, total, true)
    };
    let percent = match room {
        0 => usize::MAX,
        room => (total as u128 * 100 / room as u128).try_into().unwrap_or(usize::MAX),
    };
    let zone = if fits { Zone::of(total, room) } else { Zone::AboutToOverflow };
    Plan { window, reserved_output, parts, dropped, total, fits, percent, zone }
}

/// One part of a request as the page last described it, and its token count (without framing).
#[derive(Debug, Clone, Default)]
struct CountedText {
    text: String,
    tokens: usize,
}

/// The parts of the next request as the page last described them ([`BudgetRequest`]), each counted
/// once: a request that changes only the prompt does not recount a 500 KB file.
#[derive(Debug, Clone, Default)]
pub struct CountedRequest {
    /// The latest request, its texts taken out (revision, window, reserved output, tokenizer).
    last: Option<BudgetRequest>,
    system: CountedText,
    goal: CountedText,
    file: CountedText,
    history: Vec<CountedText>,
    prompt: CountedText,
    recounts: usize,
}

impl CountedRequest {
    /// Takes the parts `request` carries (the others stay as they were), counts those whose text
    /// changed, and plans the request.
    pub fn update(&mut self, mut request: BudgetRequest, counter: &TokenCounter) -> BudgetReport {
        for (slot, text) in [
            (&mut self.system, request.system.take()),
            (&mut self.goal, request.goal.take()),
            (&mut self.file, request.file.take()),
            (&mut self.prompt, request.prompt.take()),
        ] {
            if let Some(text) = text {
                self.recounts += usize::from(set(slot, text, counter));
            }
        }
        if let Some(turns) = request.history.take() {
            let mut old = std::mem::take(&mut self.history);
            for text in turns {
                // Turns are usually the same texts shifted by one: reuse any equal one's count.
                let mut turn = match old.iter().position(|t| t.text == text) {
                    Some(i) => old.swap_remove(i),
                    None => CountedText::default(),
                };
                self.recounts += usize::from(set(&mut turn, text, counter));
                self.history.push(turn);
            }
        }
        self.last = Some(request);
        self.report(counter).unwrap_or_default()
    }

    /// Counts every part again with a new `counter`; the report, if a request was ever received.
    pub fn recount(&mut self, counter: &TokenCounter) -> Option<BudgetReport> {
        self.last.as_ref()?;
        for part in [&mut self.system, &mut self.goal, &mut self.file, &mut self.prompt]
            .into_iter()
            .chain(self.history.iter_mut())
        {
            part.tokens = counter.count(&part.text);
            self.recounts += 1;
        }
        self.report(counter)
    }

    /// The plan for the parts as they stand, if a request was ever received.
    pub fn report(&self, counter: &TokenCounter) -> Option<BudgetReport> {
        let request = self.last.as_ref()?;
        let history: Vec<usize> = self.history.iter().map(|t| t.tokens).collect();
        let parts = PartCounts::framed(
            self.system.tokens,
            self.goal.tokens,
            self.file.tokens,
            &history,
            self.prompt.tokens,
        );
        let plan = plan(request.window as usize, request.reserved_output as usize, parts);
        Some(BudgetReport {
            revision: request.revision,
            window: request.window,
            reserved_output: request.reserved_output,
            exact: counter.is_exact() && request.tokenizer == Tokenizer::O200k,
            system: saturate(plan.parts.system),
            goal: saturate(plan.parts.goal),
            file: saturate(plan.parts.file),
            history: plan.parts.history.iter().map(|&t| saturate(t)).collect(),
            prompt: saturate(plan.parts.prompt),
            dropped: saturate(plan.dropped.end),
            total: saturate(plan.total),
            fits: plan.fits,
            percent: saturate(plan.percent),
            zone: plan.zone.into(),
        })
    }

    /// How many texts have been counted so far (for tests and diagnostics: a part sent again
    /// unchanged must not add to it).
    pub fn recounts(&self) -> usize {
        self.recounts
    }
}

/// Puts `text` in `slot`, counting it unless it is the text already there; whether it counted.
fn set(slot: &mut CountedText, text: String, counter: &TokenCounter) -> bool {
    // `==` on strings compares lengths before bytes, so a changed file rarely costs a full compare.
    if slot.text == text {
        return false;
    }
    slot.tokens = if text.is_empty() { 0 } else { counter.count(&text) };
    slot.text = text;
    true
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl From<Zone> for flint_protocol::worker::Zone {
    fn from(zone: Zone) -> Self {
        match zone {
            Zone::Sharp => Self::Sharp,
            Zone::SomeDrift => Self::SomeDrift,
            Zone::DriftLikely => Self::DriftLikely,
            Zone::AboutToOverflow => Self::AboutToOverflow,
        }
    }
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
