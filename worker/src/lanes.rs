//! What the page is owed per stream besides the parse: frames other than text, and how much text
//! arrived. Merged with the parser's updates into one [`LaneUpdate`] per stream, all sent in one
//! message, so the page's cost is one message per display frame however many streams run.

use std::collections::BTreeMap;

use flint_protocol::StreamId;
use flint_protocol::worker::{LaneEvent, LaneUpdate, ParsedUpdate};

#[derive(Debug, Default)]
struct Owed {
    text_bytes: u64,
    events: Vec<LaneEvent>,
}

/// The news each stream owes the page, waiting for the next update.
#[derive(Debug, Default)]
pub struct Lanes {
    owed: BTreeMap<StreamId, Owed>,
}

impl Lanes {
    /// Text of `stream` arrived (it went to the parser; the page only counts it).
    pub fn text(&mut self, stream: StreamId, bytes: usize) {
        self.owed.entry(stream).or_default().text_bytes += bytes as u64;
    }

    /// A frame or a local event of `stream`, for the page.
    pub fn event(&mut self, stream: StreamId, event: LaneEvent) {
        self.owed.entry(stream).or_default().events.push(event);
    }

    /// Whether an event waits (text alone can wait for the parse it feeds).
    pub fn has_events(&self) -> bool {
        self.owed.values().any(|o| !o.events.is_empty())
    }

    /// The updates to send now: each parse with what its stream is owed, then streams owed news
    /// without a parse. Text counted for a stream without a parse waits for the parse, unless it
    /// has events (so a stream's figures never run ahead of its events).
    pub fn merge(&mut self, parsed: Vec<ParsedUpdate>) -> Vec<LaneUpdate> {
        let mut out: Vec<LaneUpdate> = parsed
            .into_iter()
            .map(|update| {
                let owed = self.owed.remove(&update.stream).unwrap_or_default();
                LaneUpdate {
                    stream: update.stream,
                    text_bytes: owed.text_bytes,
                    events: owed.events,
                    parsed: Some(update),
                }
            })
            .collect();
        let with_events: Vec<StreamId> =
            self.owed.iter().filter(|(_, o)| !o.events.is_empty()).map(|(&id, _)| id).collect();
        for stream in with_events {
            if let Some(owed) = self.owed.remove(&stream) {
                out.push(LaneUpdate {
                    stream,
                    text_bytes: owed.text_bytes,
                    events: owed.events,
                    parsed: None,
                });
            }
        }
        out
    }

    /// Forgets what `stream` is owed (the page no longer listens to it).
    pub fn forget(&mut self, stream: StreamId) {
        self.owed.remove(&stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(stream: StreamId) -> ParsedUpdate {
        ParsedUpdate { stream, code_append: "x".into(), ..ParsedUpdate::default() }
    }

    #[test]
    fn one_update_per_stream_with_its_text_count_events_and_parse() {
        let mut lanes = Lanes::default();
        lanes.text(1, 5);
        lanes.text(1, 7);
        lanes.event(2, LaneEvent::Cancelled);
        lanes.text(3, 4);
        let out = lanes.merge(vec![parsed(1)]);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!((out[0].stream, out[0].text_bytes, out[0].parsed.is_some()), (1, 12, true));
        assert_eq!((out[1].stream, out[1].events.as_slice()), (2, [LaneEvent::Cancelled].as_slice()));
        assert!(!lanes.has_events());
        let later = lanes.merge(vec![parsed(3)]);
        assert_eq!(later[0].text_bytes, 4, "text without a parse waits for it");
        assert!(lanes.merge(Vec::new()).is_empty(), "nothing owed twice");
    }

    #[test]
    fn a_stream_forgotten_owes_nothing() {
        let mut lanes = Lanes::default();
        lanes.event(1, LaneEvent::Lost("gone".into()));
        lanes.forget(1);
        assert!(lanes.merge(Vec::new()).is_empty());
    }
}
