//! The console panel's model: lines the previewed page logged or threw, capped so a chatty page
//! cannot grow the app's memory without bound.

use std::collections::VecDeque;

/// Most lines kept; older ones are dropped first.
pub const MAX_ENTRIES: usize = 500;

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
    /// The text.
    pub text: String,
}

/// The lines shown in the console panel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsoleLog {
    next_id: u64,
    entries: VecDeque<ConsoleEntry>,
}

impl ConsoleLog {
    /// Adds a line, dropping the oldest beyond [`MAX_ENTRIES`].
    pub fn push(&mut self, level: ConsoleLevel, text: String) {
        self.entries.push_back(ConsoleEntry { id: self.next_id, level, text });
        self.next_id += 1;
        while self.entries.len() > MAX_ENTRIES {
            self.entries.pop_front();
        }
    }

    /// Removes all lines (ids keep growing, so keys never repeat).
    pub fn clear(&mut self) {
        self.entries.clear();
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
        self.entries.iter().filter(|e| e.level == ConsoleLevel::Error).count()
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
        assert_eq!(log.entries().next().map(|e| e.text.as_str()), Some("3"));
        log.clear();
        log.push(ConsoleLevel::parse("error"), "boom".into());
        let entry = log.entries().next().expect("one line");
        assert_eq!(entry.id, MAX_ENTRIES as u64 + 3);
        assert_eq!(entry.level.as_str(), "error");
        assert_eq!(log.errors(), 1);
    }

    #[test]
    fn unknown_levels_are_log() {
        assert_eq!(ConsoleLevel::parse("debug"), ConsoleLevel::Log);
        assert_eq!(ConsoleLevel::parse("warn"), ConsoleLevel::Warn);
    }
}
