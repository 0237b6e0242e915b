//! Context budget: what of a conversation fits in the model's window, and how full that window is.
//!
//! A request is, in order: the system prompt, the pinned goal, the current file, the history turns
//! (oldest first) and the new prompt. Everything but the history is needed for the answer to make
//! sense, so only history is trimmed, oldest turn first. If the rest alone does not fit, the plan says
//! so and nothing should be sent: a request cut elsewhere would produce a confident wrong answer.
//!
//! Fullness is measured against the room for input (window minus the tokens reserved for the answer)
//! and named by [`Zone`], because models lose track of instructions long before the window is full.

use std::ops::Range;

use crate::tokens::TokenCounter;

/// Tokens a chat format adds around each message (role markers, separators). OpenAI's guidance is
/// 3–4 per message; 4 keeps the plan on the safe side.
pub const MESSAGE_OVERHEAD: usize = 4;

/// Token counts of the parts of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartCounts {
    /// The system prompt.
    pub system: usize,
    /// The goal the user pinned; never trimmed.
    pub goal: usize,
    /// The file being edited; never trimmed.
    pub file: usize,
    /// Earlier turns, oldest first; trimmed oldest first.
    pub history: Vec<usize>,
    /// The new prompt.
    pub prompt: usize,
}

impl PartCounts {
    /// Counts each text with `counter`, adding [`MESSAGE_OVERHEAD`] to every part that is not empty.
    pub fn count(counter: &TokenCounter, texts: &PartTexts<'_>) -> Self {
        let count = |text: &str| match text {
            "" => 0,
            text => counter.count(text) + MESSAGE_OVERHEAD,
        };
        Self {
            system: count(texts.system),
            goal: count(texts.goal),
            file: count(texts.file),
            history: texts.history.iter().map(|turn| count(turn)).collect(),
            prompt: count(texts.prompt),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(system: usize, goal: usize, file: usize, history: &[usize], prompt: usize) -> PartCounts {
        PartCounts { system, goal, file, history: history.to_vec(), prompt }
    }

    #[test]
    fn everything_fits_when_there_is_room() {
        let p = plan(1000, 100, parts(10, 20, 30, &[40, 50], 60));
        assert!(p.fits);
        assert_eq!(p.dropped, 0..0);
        assert_eq!(p.kept(), 0..2);
        assert_eq!(p.total, 210);
        assert_eq!(p.room(), 900);
        assert_eq!(p.percent, 23);
        assert_eq!(p.zone, Zone::Sharp);
    }

    #[test]
    fn oldest_turns_go_first_until_the_rest_fits() {
        // Fixed 100 + history 180 = 280 in a room of 200: without the 50 it is 230, without the
        // 60 as well 170.
        let p = plan(250, 50, parts(25, 25, 25, &[50, 60, 70], 25));
        assert!(p.fits);
        assert_eq!(p.dropped, 0..2);
        assert_eq!(p.kept(), 2..3);
        assert_eq!(p.total, 170);
        assert_eq!((p.percent, p.zone), (85, Zone::AboutToOverflow));
    }

    #[test]
    fn a_small_old_turn_is_not_skipped_to_keep_it() {
        // Dropping only the big newer turn would fit too, but history is trimmed oldest first.
        let p = plan(100, 0, parts(10, 10, 10, &[5, 80, 5], 10));
        assert_eq!(p.dropped, 0..2);
        assert_eq!(p.total, 45);
    }

    #[test]
    fn exactly_full_fits() {
        let p = plan(100, 20, parts(20, 20, 20, &[10], 10));
        assert!(p.fits);
        assert_eq!(p.total, 80);
        assert_eq!(p.dropped, 0..0);
        assert_eq!(p.percent, 100);
        assert_eq!(p.zone, Zone::AboutToOverflow);
    }

    #[test]
    fn one_token_over_drops_a_turn() {
        let p = plan(100, 20, parts(20, 20, 20, &[11], 10));
        assert!(p.fits);
        assert_eq!(p.dropped, 0..1);
        assert_eq!(p.total, 70);
    }

    #[test]
    fn all_history_dropped_when_only_the_fixed_parts_fit() {
        let p = plan(100, 0, parts(25, 25, 25, &[10, 10, 10], 25));
        assert!(p.fits);
        assert_eq!(p.dropped, 0..3);
        assert!(p.kept().is_empty());
        assert_eq!(p.total, 100);
    }

    #[test]
    fn fixed_parts_over_the_room_do_not_fit() {
        let p = plan(100, 10, parts(30, 30, 30, &[1, 2], 1));
        assert!(!p.fits);
        assert_eq!(p.dropped, 0..2);
        assert_eq!(p.total, 91);
        assert_eq!(p.percent, 101);
        assert_eq!(p.zone, Zone::AboutToOverflow);
    }

    #[test]
    fn a_huge_file_alone_does_not_fit() {
        let p = plan(128_000, 16_000, parts(500, 100, 200_000, &[], 50));
        assert!(!p.fits);
        assert_eq!(p.dropped, 0..0);
    }

    #[test]
    fn reserved_output_at_or_over_the_window_never_fits() {
        assert!(!plan(100, 100, parts(0, 0, 0, &[], 0)).fits);
        assert!(!plan(100, 200, parts(1, 0, 0, &[], 0)).fits);
        assert!(!plan(0, 0, PartCounts::default()).fits);
        assert_eq!(plan(100, 200, parts(1, 0, 0, &[], 0)).percent, usize::MAX);
    }

    #[test]
    fn empty_request_is_sharp() {
        let p = plan(8192, 1024, PartCounts::default());
        assert!(p.fits);
        assert_eq!((p.total, p.percent, p.zone), (0, 0, Zone::Sharp));
    }

    #[test]
    fn zone_boundaries_are_exact() {
        assert_eq!(Zone::of(0, 100), Zone::Sharp);
        assert_eq!(Zone::of(29, 100), Zone::Sharp);
        assert_eq!(Zone::of(30, 100), Zone::SomeDrift);
        assert_eq!(Zone::of(59, 100), Zone::SomeDrift);
        assert_eq!(Zone::of(60, 100), Zone::DriftLikely);
        assert_eq!(Zone::of(79, 100), Zone::DriftLikely);
        assert_eq!(Zone::of(80, 100), Zone::AboutToOverflow);
        assert_eq!(Zone::of(100, 100), Zone::AboutToOverflow);
        // 29.99 % is still sharp: no rounding up.
        assert_eq!(Zone::of(2999, 10_000), Zone::Sharp);
        assert_eq!(Zone::of(usize::MAX, usize::MAX), Zone::AboutToOverflow);
        assert_eq!(Zone::DriftLikely.label(), "drift likely");
    }

    #[test]
    fn zone_follows_the_kept_total() {
        // 128k window, 8k reserved: 120k room; 40k fixed + 30k history = 58 %.
        let p = plan(128_000, 8_000, parts(1_000, 500, 38_000, &[10_000, 20_000], 500));
        assert_eq!((p.percent, p.zone), (58, Zone::SomeDrift));
    }

    #[test]
    fn texts_are_counted_with_message_overhead() {
        let texts = PartTexts {
            system: "You edit web pages.",
            goal: "",
            file: "<p>hi</p>",
            history: &["make it red", ""],
            prompt: "now blue",
        };
        let counts = PartCounts::count(&TokenCounter::estimating(), &texts);
        assert_eq!(counts.goal, 0, "an empty part costs nothing");
        assert_eq!(counts.history[1], 0);
        assert_eq!(counts.system, "You edit web pages.".len().div_ceil(3) + MESSAGE_OVERHEAD);
        assert_eq!(counts.prompt, 3 + MESSAGE_OVERHEAD);
    }
}
