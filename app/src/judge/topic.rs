//! Whether a page is about what was asked, without a model: the page must show (in its title, its
//! text, or its controls' labels) a word that begins like one of the prompt's own words. A small
//! model often answers "a tip calculator" with a page about something else entirely ("Your First
//! Front-End Developer Guide", seen in `bench/judge.md`'s runs), which every other check passes.
//!
//! Lenient on purpose: one word is enough, and a word counts by its beginning ("clicks" is met by
//! "Click me", "calculator" by "Calculate"), so a page that is on topic but words it differently
//! still passes; the check is there to sink pages about nothing that was asked.
//!
//! Matched here, in the app, against the text the check frame reports: the frame is never sent the
//! prompt's words, since the page it checks shares that frame's realm and could read them there.

/// Words that say nothing about a page's topic: articles, pronouns, linking words, numbers, and
/// words about pages in general.
const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "that",
    "this",
    "these",
    "those",
    "which",
    "who",
    "with",
    "without",
    "where",
    "when",
    "while",
    "for",
    "from",
    "of",
    "and",
    "or",
    "but",
    "to",
    "into",
    "in",
    "on",
    "at",
    "by",
    "as",
    "is",
    "are",
    "be",
    "it",
    "its",
    "i",
    "me",
    "my",
    "we",
    "our",
    "you",
    "your",
    "can",
    "could",
    "should",
    "will",
    "would",
    "do",
    "does",
    "has",
    "have",
    "some",
    "any",
    "each",
    "every",
    "all",
    "one",
    "two",
    "three",
    "four",
    "five",
    "ten",
    "page",
    "pages",
    "website",
    "site",
    "web",
    "app",
    "simple",
    "basic",
    "nice",
    "make",
    "create",
    "build",
    "show",
    "shows",
    "using",
    "use",
    "like",
    "just",
    "very",
    "more",
    "then",
    "html",
    "css",
    "javascript",
    "js",
];

/// Longest stem kept: enough to tell words apart, short enough that "calculator" meets "Calculate".
const STEM_CHARS: usize = 5;
/// Most stems sent; a long goal should not make the check slow or its message long.
const STEMS_MAX: usize = 12;

/// The stems of `text`'s topical words, lower case, each once, in order: a word's first five
/// letters, after a plural's "s" ("moves" → "move", "clicks" → "click").
pub fn topic_stems(text: &str) -> Vec<String> {
    let mut stems: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.is_empty() || word.chars().all(|c| c.is_ascii_digit()) || STOP_WORDS.contains(&word.as_str())
        {
            continue;
        }
        let singular = match word.strip_suffix('s') {
            Some(rest) if rest.chars().count() >= 3 && !rest.ends_with('s') => rest,
            _ => word.as_str(),
        };
        let stem: String = singular.chars().take(STEM_CHARS).collect();
        if !stems.contains(&stem) && stems.len() < STEMS_MAX {
            stems.push(stem);
        }
    }
    stems
}

/// Longest page text read, in characters (the check frame sends at most this much).
pub const TEXT_CHARS: usize = 100_000;

/// Whether `text` (what a page reads as: its title, text and labels) holds a word beginning like one
/// of `stems`; only its first [`TEXT_CHARS`] characters are read.
pub fn on_topic(stems: &[String], text: &str) -> bool {
    let text = match text.char_indices().nth(TEXT_CHARS) {
        Some((at, _)) => &text[..at],
        None => text,
    };
    text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()).any(|word| {
        let word = word.to_lowercase();
        stems.iter().any(|stem| word.starts_with(stem.as_str()))
    })
}

#[cfg(test)]
mod tests {
    use super::{on_topic, topic_stems};

    fn stems(text: &str) -> Vec<String> {
        topic_stems(text)
    }

    #[test]
    fn a_page_is_on_topic_when_a_word_of_it_begins_like_a_stem() {
        let asked = stems("a tip calculator");
        assert!(on_topic(&asked, "Tip Calculator\nBill: 0"));
        assert!(on_topic(&asked, "CALCULATE what to leave"), "case and word endings do not matter");
        assert!(!on_topic(&asked, "Your First Front-End Developer Guide"));
        assert!(!on_topic(&asked, "multiple stipends"), "a stem must begin a word");
        assert!(!on_topic(&asked, ""));
        assert!(!on_topic(&[], "Tip calculator"), "no stems: nothing to meet");
        assert!(on_topic(&stems("un café glacé"), "Café du coin"), "letters beyond ASCII");
    }

    #[test]
    fn only_the_first_text_chars_of_a_page_are_read() {
        let asked = stems("a zebra");
        let padded = format!("{} zebra", "x ".repeat(super::TEXT_CHARS / 2));
        assert!(!on_topic(&asked, &padded), "a word past the limit counted");
        assert!(on_topic(&asked, &padded[padded.len() - 20..]));
    }

    #[test]
    fn stems_keep_the_topic_and_drop_the_rest() {
        assert_eq!(topic_stems("a tip calculator"), ["tip", "calcu"]);
        assert_eq!(topic_stems("A red square that moves when I click it"), ["red", "squar", "move", "click"]);
        assert_eq!(topic_stems("a countdown timer from 10 seconds"), ["count", "timer", "secon"]);
        assert_eq!(topic_stems("Fruits, FRUIT and fruits!"), ["fruit"], "each stem once");
        assert!(topic_stems("make a simple page with the HTML").is_empty());
        assert_eq!(
            topic_stems("café glass"),
            ["café", "glass"],
            "letters beyond ASCII; a double s is no plural"
        );
    }

    #[test]
    fn a_long_goal_gives_a_bounded_list() {
        let goal = (b'a'..=b'z').map(|c| format!("{0}{0}ord", c as char)).collect::<Vec<_>>().join(" ");
        assert_eq!(topic_stems(&goal).len(), 12);
    }
}
