//! A stream's chunks differ only in their text: read the rest once, then compare it.
//!
//! Most servers send every chunk of an answer with the same bytes around the text (the same `id`,
//! `created`, `model`, `index`, a `null` `finish_reason`): the scripted upstream, llama.cpp,
//! llama-cpp-python, vLLM, Groq. [`Templates`] keeps the bytes before the text's opening quote and
//! after its closing quote from the last chunk the scanner read. A chunk that begins and ends with
//! the same bytes is read by reading its text alone: the scanner is a left-to-right reader whose
//! state after a string does not depend on the string's contents, so the same bytes around any
//! valid string are read as they were, and `model` and `finish_reason` are where they were. Any
//! other chunk is read by the scanner (and learnt). A stream whose surroundings change every chunk
//! (OpenAI's `obfuscation` padding) stops being learnt after [`GIVE_UP_AFTER`] misses in a row.

use std::borrow::Cow;
use std::ops::Range;

use super::openai_chunk_scan::{self, Common, CommonChoice, Scan};

/// Misses in a row after which a stream's chunks are no longer learnt.
const GIVE_UP_AFTER: u8 = 8;

/// The most bytes around a text that are kept: real chunks have a few hundred, and an upstream
/// sending megabytes of `id` does not get a second copy of them held for each of its streams.
const MAX_KEPT: usize = 4096;

/// Where a string field is: in the bytes before the text, or after it (from its closing quote).
#[derive(Debug, Clone)]
enum Place {
    Before(Range<usize>),
    After(Range<usize>),
}

#[derive(Debug, Default)]
struct Template {
    /// Up to and including the text's opening quote.
    before: String,
    /// From the text's closing quote on.
    after: String,
    model: Option<Place>,
    finish_reason: Option<Place>,
}

/// One stream's last template, and how often it missed in a row.
#[derive(Debug, Default)]
pub(super) struct Templates {
    template: Option<Template>,
    misses: u8,
}

impl Templates {
    /// `data` read as [`openai_chunk_scan::read`] reads it, by the last template where it fits.
    pub(super) fn read<'a>(&mut self, data: &'a str) -> Option<Common<'a>> {
        if let Some(common) = self.template.as_ref().and_then(|template| template.read(data)) {
            self.misses = 0;
            return Some(common);
        }
        let (common, quotes) = openai_chunk_scan::read_marked(data)?;
        if let Some(quotes) = quotes
            && self.misses < GIVE_UP_AFTER
        {
            if self.template.is_some() {
                self.misses += 1;
            }
            self.learn(data, &common, quotes);
        }
        Some(common)
    }

    /// Misses in a row (the template did not fit, the chunk was learnt afresh).
    #[cfg(test)]
    pub(super) fn misses(&self) -> u8 {
        self.misses
    }

    /// Whether a template is kept.
    #[cfg(test)]
    pub(super) fn holds_one(&self) -> bool {
        self.template.is_some()
    }

    /// Keeps the bytes around the text of `data`, whose reading is `common`.
    fn learn(&mut self, data: &str, common: &Common<'_>, (open, close): (usize, usize)) {
        let place = |field: Option<&Cow<'_, str>>| -> Option<Option<Place>> {
            match field {
                None => Some(None),
                // A field with escapes was copied: it has no place to be found again.
                Some(Cow::Owned(_)) => None,
                Some(Cow::Borrowed(text)) => {
                    let start = text.as_ptr() as usize - data.as_ptr() as usize;
                    let end = start + text.len();
                    if end <= open {
                        Some(Some(Place::Before(start..end)))
                    } else if start > close {
                        Some(Some(Place::After(start - close..end - close)))
                    } else {
                        None
                    }
                }
            }
        };
        let finish_reason = common.choice.as_ref().and_then(|choice| choice.finish_reason.as_ref());
        let kept = open + 1 + data.len() - close;
        let (Some(model), Some(finish_reason), true) =
            (place(common.model.as_ref()), place(finish_reason), kept <= MAX_KEPT)
        else {
            self.template = None;
            return;
        };
        let mut template = self.template.take().unwrap_or_default();
        template.before.clear();
        template.before.push_str(&data[..=open]);
        template.after.clear();
        template.after.push_str(&data[close..]);
        template.model = model;
        template.finish_reason = finish_reason;
        self.template = Some(template);
    }
}

impl Template {
    fn read<'a>(&self, data: &'a str) -> Option<Common<'a>> {
        if !data.starts_with(&self.before) {
            return None;
        }
        let mut scan = Scan::new(data, self.before.len() - 1);
        let content = scan.string()?;
        let close = scan.at - 1;
        if data[close..] != self.after {
            return None;
        }
        let field = |place: &Option<Place>| {
            place.as_ref().map(|place| {
                Cow::Borrowed(match place {
                    Place::Before(range) => &data[range.clone()],
                    Place::After(range) => &data[close + range.start..close + range.end],
                })
            })
        };
        Some(Common {
            model: field(&self.model),
            choice: Some(CommonChoice {
                delta: Some(Some(content)),
                finish_reason: field(&self.finish_reason),
            }),
        })
    }
}
