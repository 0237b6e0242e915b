//! Whether a page is about what was asked, without a model: the page must show (in its title, its
//! text, or its controls' labels) a word that begins like one of the prompt's own words. A small
//! model often answers "a tip calculator" with a page about something else entirely ("Your First
//! Front-End Developer Guide", seen in `bench/judge.md`'s runs), which every other check passes.
//!
//! Lenient on purpose: one word is enough, and a word counts by its beginning ("clicks" is met by
//! "Click me", "calculator" by "Calculate"), so a page that is on topic but words it differently
//! still passes; the check is there to sink pages about nothing that was asked.

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

#[cfg(test)]
mod tests {
    use super::topic_stems;

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
