//! The key as an automaton: which bytes are its letters, which are separators to skip, and a
//! suffix automaton of its folded form that finds, byte by byte, the longest stretch of text
//! ending there that occurs in the key, in constant time per byte whatever the key's length.

/// Byte classes: a symbol of the key's alphabet, a separator to skip, or a byte not in the key.
pub(super) const SKIP: u8 = u8::MAX;
pub(super) const ABSENT: u8 = u8::MAX - 1;
/// No transition.
const NONE: u32 = u32::MAX;

pub(super) struct Matcher {
    /// Byte → symbol, [`SKIP`] or [`ABSENT`].
    pub(super) class: [u8; 256],
    symbols: usize,
    /// The suffix automaton: `next[state * symbols + symbol]`, suffix links, longest lengths.
    next: Vec<u32>,
    link: Vec<u32>,
    len: Vec<u32>,
    /// Fewest key characters in a row that count as the key.
    pub(super) min_run: usize,
    /// Key characters in a row at the end of a piece that make it wait for the next.
    pub(super) hold_run: usize,
    /// The key's letters and digits, lower-cased, for recognising masked forms; `None` for a key
    /// too short to compare loosely.
    pub(super) skeleton: Option<Vec<u8>>,
}

/// Where matching stands: the automaton's state and how many key characters end the text so far.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Cursor {
    state: u32,
    pub(super) len: usize,
}

impl Matcher {
    /// `None` for a key of more distinct bytes than the byte classes can number (not a real key).
    pub(super) fn new(key: &str, min_run: usize, hold_run: usize) -> Option<Self> {
        let skeleton: Vec<u8> =
            key.bytes().filter(u8::is_ascii_alphanumeric).map(|b| b.to_ascii_lowercase()).collect();
        // Too few letters and digits to compare loosely: only the exact key, byte for byte.
        let loose = skeleton.len() >= min_run;
        let spelled: Vec<u8> = if loose { skeleton.clone() } else { key.bytes().collect() };
        let mut class = [ABSENT; 256];
        if loose {
            for b in 0..=u8::MAX {
                if b.is_ascii_punctuation() || b.is_ascii_whitespace() || b.is_ascii_control() {
                    class[usize::from(b)] = SKIP;
                }
            }
        }
        let mut symbols = 0u8;
        for &b in &spelled {
            if class[usize::from(b)] == ABSENT {
                if symbols == ABSENT {
                    return None;
                }
                class[usize::from(b)] = symbols;
                symbols += 1;
            }
        }
        if loose {
            for b in b'A'..=b'Z' {
                class[usize::from(b)] = class[usize::from(b.to_ascii_lowercase())];
            }
        }
        let symbols = usize::from(symbols);
        let sequence: Vec<usize> = spelled.iter().map(|&b| usize::from(class[usize::from(b)])).collect();
        let (next, link, len) = suffix_automaton(&sequence, symbols);
        let min_run = if loose { min_run } else { spelled.len() };
        Some(Self {
            class,
            symbols,
            next,
            link,
            len,
            min_run,
            hold_run: hold_run.min(min_run),
            skeleton: loose.then_some(skeleton),
        })
    }

    /// Moves `at` over one symbol (not [`SKIP`]).
    pub(super) fn step(&self, at: &mut Cursor, symbol: u8) {
        if symbol == ABSENT {
            *at = Cursor::default();
            return;
        }
        loop {
            let next = self.next[at.state as usize * self.symbols + usize::from(symbol)];
            if next != NONE {
                at.state = next;
                at.len += 1;
                return;
            }
            if at.state == 0 {
                at.len = 0;
                return;
            }
            at.state = self.link[at.state as usize];
            at.len = self.len[at.state as usize] as usize;
        }
    }
}

/// Builds the suffix automaton of `sequence`: every substring of it is a path from state 0.
fn suffix_automaton(sequence: &[usize], symbols: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let states = 2 * sequence.len() + 1;
    let mut next = Vec::with_capacity(states * symbols);
    next.resize(symbols, NONE);
    let (mut link, mut len) = (vec![NONE], vec![0u32]);
    let mut last = 0usize;
    let index = |state: u32| (state != NONE).then_some(state as usize);
    for &c in sequence {
        let cur = len.len();
        len.push(len[last] + 1);
        link.push(0);
        next.resize(next.len() + symbols, NONE);
        let mut p = Some(last);
        while let Some(q) = p.filter(|&q| next[q * symbols + c] == NONE) {
            next[q * symbols + c] = cur as u32;
            p = index(link[q]);
        }
        if let Some(p) = p {
            let q = next[p * symbols + c] as usize;
            if len[p] + 1 == len[q] {
                link[cur] = q as u32;
            } else {
                let clone = len.len();
                len.push(len[p] + 1);
                link.push(link[q]);
                next.extend_from_within(q * symbols..(q + 1) * symbols);
                let mut r = Some(p);
                while let Some(s) = r.filter(|&s| next[s * symbols + c] == q as u32) {
                    next[s * symbols + c] = clone as u32;
                    r = index(link[s]);
                }
                link[q] = clone as u32;
                link[cur] = clone as u32;
            }
        }
        last = cur;
    }
    (next, link, len)
}
