//! A bound on how deeply a file nests, checked before oxc parses it.
//!
//! oxc's parser, scope builder, transform and printer recurse once per level of nesting, and none
//! has a limit. Natively a 1 MiB stack holds about 600 nested object literals or template
//! literals, 700 parentheses, 1,700 JSX elements, 1,800 chained `?:` and about 10,000 `+` (each a
//! level of the tree the visitors walk). In the worker a stack overflow is not a panic but a
//! trap that leaves the instance unusable, so a crafted file (a shared link) could kill the tab's
//! worker. Real components nest a few dozen levels; a file that nests beyond [`LIMIT`] is refused
//! with an error at the place it gets too deep.
//!
//! The scan is lexical and deliberately rough (strings and comments are not skipped; a bracket in
//! a string counts): it estimates the parser's depth from three things that each cost stack:
//! - open brackets `( [ {` (and a template's `${`), weight 2;
//! - open JSX elements: `<` followed by a name or `>` where an expression starts, until `</` or
//!   `/>`, weight 1;
//! - operators and statement keywords chained in one expression (`a ? b : c ? …`, `a + b + …`,
//!   `x => y => …`, `if (a) if (b) …`), counted since the last `,` `;` bracket or JSX tag of the
//!   same level, weight 2.

/// The most a file may nest, in the units above: 250 brackets, or 500 JSX elements, or 250
/// chained operators, or a mix (about a third of what overflows 1 MiB natively: the browser's
/// baseline wasm compiler uses bigger frames).
pub const LIMIT: u32 = 500;

/// Keywords that nest a statement or an expression without a bracket (`if (a) if (b) x;`,
/// `else if` chains, `await await x`).
const CHAINING_KEYWORDS: [&[u8]; 6] = [b"if", b"for", b"while", b"do", b"await", b"typeof"];

/// Operator characters; a run of them (`===`, `=>`, `&&`, `?.`) counts as one level per two.
const OPERATORS: &[u8] = b"+-*/%&|^!~?.=<>:";

/// Byte classes, looked up once per byte: the scan runs before every parse.
const OPERATOR: u8 = 1;
const WORD: u8 = 2;

const fn classes() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < OPERATORS.len() {
        table[OPERATORS[i] as usize] = OPERATOR;
        i += 1;
    }
    let mut b = 0;
    while b < 128 {
        if (b as u8).is_ascii_alphanumeric() || b == b'_' as usize {
            table[b] = WORD;
        }
        b += 1;
    }
    table
}

static CLASSES: [u8; 256] = classes();

fn is(class: u8, b: u8) -> bool {
    CLASSES[usize::from(b)] == class
}

/// The running estimate.
#[derive(Default)]
struct Depth {
    /// Each open bracket's enclosing chain count, innermost last.
    levels: Vec<u32>,
    /// Sum of `levels`.
    outer: u32,
    /// Operators chained at the current level.
    chain: u32,
    /// Open JSX elements.
    jsx: u32,
}

impl Depth {
    fn open(&mut self) {
        self.outer = self.outer.saturating_add(self.chain);
        self.levels.push(self.chain);
        self.chain = 0;
    }

    fn close(&mut self) {
        let enclosing = self.levels.pop().unwrap_or(0);
        self.outer = self.outer.saturating_sub(enclosing);
        self.chain = enclosing;
    }

    fn score(&self) -> u32 {
        let brackets = u32::try_from(self.levels.len()).unwrap_or(u32::MAX);
        let chained = self.outer.saturating_add(self.chain);
        brackets.saturating_mul(2).saturating_add(self.jsx).saturating_add(chained.saturating_mul(2))
    }
}

/// The byte offset where `source` first nests deeper than [`LIMIT`], if it does.
pub fn too_deep(source: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut depth = Depth::default();
    // The previous significant byte: whether a `<` can open a JSX element.
    let mut last = b';';
    let mut i = 0;
    while i < bytes.len() {
        let at = i;
        let b = bytes[i];
        i += 1;
        if b.is_ascii_whitespace() {
            continue;
        }
        let next = bytes.get(i).copied().unwrap_or(0);
        // Only what adds to the depth is checked against the limit.
        let deeper = match (b, next) {
            (b'(' | b'[' | b'{', _) => {
                depth.open();
                true
            }
            (b')' | b']' | b'}', _) => {
                depth.close();
                false
            }
            (b',' | b';', _) => {
                depth.chain = 0;
                false
            }
            // `</` and `/>` close an element.
            (b'<', b'/') | (b'/', b'>') => {
                depth.jsx = depth.jsx.saturating_sub(1);
                depth.chain = 0;
                i += 1;
                false
            }
            (b'<', next) if starts_expression(last) && (next == b'>' || next.is_ascii_alphabetic()) => {
                depth.jsx += 1;
                depth.chain = 0;
                true
            }
            (b, _) if is(OPERATOR, b) => {
                // The run stops before a `<`: in `><a>` it opens the next element.
                i += bytes[i..].iter().take_while(|&&c| is(OPERATOR, c) && c != b'<').count();
                // Half its length: `===` and `&&` are about one level, `!!!!x` is four.
                let units = u32::try_from((i - at).div_ceil(2)).unwrap_or(u32::MAX);
                depth.chain = depth.chain.saturating_add(units);
                true
            }
            (b, _) if b.is_ascii_alphabetic() => {
                i += bytes[i..].iter().take_while(|&&c| is(WORD, c)).count();
                let word = &bytes[at..i];
                let keyword = word.len() <= 6 && CHAINING_KEYWORDS.contains(&word);
                if keyword {
                    depth.chain = depth.chain.saturating_add(1);
                }
                // `return <div />`: the word ends where an expression starts.
                last = if word == b"return" { b'(' } else { b'a' };
                if keyword && depth.score() > LIMIT {
                    return Some(at);
                }
                continue;
            }
            _ => false,
        };
        last = bytes[i - 1];
        if deeper && depth.score() > LIMIT {
            return Some(at);
        }
    }
    None
}

/// Whether a `<` after `last` (the previous significant byte) opens a JSX element rather than
/// comparing or opening type arguments (`a < b`, `useState<T>`).
fn starts_expression(last: u8) -> bool {
    matches!(last, b'(' | b'[' | b'{' | b'}' | b',' | b';' | b'=' | b'>' | b'?' | b':' | b'&' | b'|')
}

#[cfg(test)]
#[path = "nesting_tests.rs"]
mod tests;
