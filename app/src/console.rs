//! The console panel's model: lines the previewed page logged or threw, capped in number and in
//! length so a chatty page cannot grow the app's memory, or the panel's work, without bound. (The
//! preview also limits how many lines a page may send a second: `app/js/preview.js`.)

use std::collections::VecDeque;
use std::sync::Arc;

/// Most lines kept; older ones are dropped first.
pub const MAX_ENTRIES: usize = 500;

/// Longest line kept, in characters; the rest is cut (the preview already cuts at 4,000 UTF-16
/// units, so this only bounds what reaches the panel by other ways).
pub const MAX_LINE_CHARS: usize = 4_000;

/// Severity of a console line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleLevel {
    /// `console.log` / `console.debug`.
    Log,
    /// `console.info`.
    Info,
    /// `console.warn`.
    Warn,
    /// `console.error`, uncaught errors and unhandled rejections.
    Error,
}

impl ConsoleLevel {
    /// Parses the level name the preview sends; unknown names count as `log`.
    pub fn parse(name: &str) -> Self {
        match name {
            "info" => Self::Info,
            "warn" => Self::Warn,
            "error" => Self::Error,
            _ => Self::Log,
        }
    }

    /// The level's name (also the `data-level` attribute).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Log => "log",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

/// One console line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleEntry {
    /// Unique within the page's lifetime (the list's key).
    pub id: u64,
    /// Severity.
    pub level: ConsoleLevel,
    /// The text (shared, so the panel's list is cheap to rebuild).
    pub text: Arc<str>,
}

/// The lines shown in the console panel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsoleLog {
    next_id: u64,
    entries: VecDeque<ConsoleEntry>,
    errors: usize,
}

impl ConsoleLog {
    /// Adds a line, cut to [`MAX_LINE_CHARS`], dropping the oldest beyond [`MAX_ENTRIES`].
    pub fn push(&mut self, level: ConsoleLevel, mut text: String) {
        if let Some((cut, _)) = text.char_indices().nth(MAX_LINE_CHARS) {
            text.truncate(cut);
            text.push('…');
        }
        if level == ConsoleLevel::Error {
            self.errors += 1;
        }
        self.entries.push_back(ConsoleEntry { id: self.next_id, level, text: text.into() });
        self.next_id += 1;
        while self.entries.len() > MAX_ENTRIES {
            if self.entries.pop_front().is_some_and(|e| e.level == ConsoleLevel::Error) {
                self.errors -= 1;
            }
        }
    }

    /// Removes all lines (ids keep growing, so keys never repeat).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.errors = 0;
    }

    /// The lines, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &ConsoleEntry> {
        self.entries.iter()
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of error lines.
    pub fn errors(&self) -> usize {
        self.errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_and_keyed() {
        let mut log = ConsoleLog::default();
        for i in 0..(MAX_ENTRIES + 3) {
            log.push(ConsoleLevel::Log, i.to_string());
        }
        assert_eq!(log.len(), MAX_ENTRIES);
        assert_eq!(log.entries().next().map(|e| &*e.text), Some("3"));
        log.clear();
        log.push(ConsoleLevel::parse("error"), "boom".into());
        let entry = log.entries().next().expect("one line");
        assert_eq!(entry.id, MAX_ENTRIES as u64 + 3);
        assert_eq!(entry.level.as_str(), "error");
        assert_eq!(log.errors(), 1);
    }

    #[test]
    fn long_lines_are_cut_and_errors_counted_as_they_come_and_go() {
        let mut log = ConsoleLog::default();
        log.push(ConsoleLevel::Error, "é".repeat(MAX_LINE_CHARS + 10));
        let text = &log.entries().next().expect("a line").text;
        assert_eq!(text.chars().count(), MAX_LINE_CHARS + 1);
        assert!(text.ends_with('…'));
        assert_eq!(log.errors(), 1);
        for _ in 0..MAX_ENTRIES {
            log.push(ConsoleLevel::Warn, "w".into());
        }
        assert_eq!(log.errors(), 0, "the error line was dropped with the oldest");
        log.push(ConsoleLevel::Error, "e".into());
        log.clear();
        assert_eq!(log.errors(), 0);
    }

    #[test]
    fn unknown_levels_are_log() {
        assert_eq!(ConsoleLevel::parse("debug"), ConsoleLevel::Log);
        assert_eq!(ConsoleLevel::parse("warn"), ConsoleLevel::Warn);
    }
}
