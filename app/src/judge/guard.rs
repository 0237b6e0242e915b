//! Loop guards for the check frame's copy of a page. Checking clicks every button, and a handler that
//! never returns would hang not only the check frame but every preview frame in its renderer process
//! (Chromium groups sandboxed frames of one site in one process). So before a page is checked, each
//! braced loop body in its inline scripts starts with a call to the check runtime's guard
//! (`public/preview-checks.js`), which throws once one task has looped for a second. The page the
//! person sees runs unchanged.
//!
//! This is a scanner, not a parser: it skips strings, template literals, comments and regular
//! expression literals, finds `for (…) {`, `while (…) {` and `do {`, and leaves everything else as
//! it is. A loop without braces (`while (x) y();`) is not guarded; the check frame's time limit
//! still ends its check.

/// What each guarded loop body starts with.
pub const GUARD_CALL: &str = "__flintLoopGuard();";

/// `doc` with every braced loop in its inline scripts guarded.
pub fn guard_loops(doc: &str) -> String {
    let lower = doc.to_ascii_lowercase();
    let mut out = String::with_capacity(doc.len() + 256);
    let mut at = 0;
    while let Some(open) = lower[at..].find("<script").map(|i| at + i) {
        let Some(tag_end) = lower[open..].find('>').map(|i| open + i + 1) else { break };
        let Some(close) = lower[tag_end..].find("</script").map(|i| tag_end + i) else { break };
        out.push_str(&doc[at..tag_end]);
        let tag = &lower[open..tag_end];
        let script = &doc[tag_end..close];
        if tag.contains(" src") || !runs_as_javascript(tag) {
            out.push_str(script);
        } else {
            out.push_str(&guard_script(script));
        }
        at = close;
    }
    out.push_str(&doc[at..]);
    out
}

/// Whether a `<script …>` tag (lower case) holds JavaScript (no type, a JavaScript type, a module).
fn runs_as_javascript(tag: &str) -> bool {
    let Some(at) = tag.find("type=") else { return true };
    let value = tag[at + 5..].trim_start_matches(['"', '\'']);
    value.starts_with("module")
        || value.starts_with("text/javascript")
        || value.starts_with("application/javascript")
}

/// Keywords after which a `/` starts a regular expression rather than a division.
const BEFORE_REGEX: &[&str] = &[
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
];

/// One script's text with its braced loops guarded.
pub fn guard_script(js: &str) -> String {
    let bytes = js.as_bytes();
    let mut out = String::with_capacity(js.len() + 64);
    let mut copied = 0;
    let mut i = 0;
    // Whether a `/` here would start a regular expression (nothing significant yet: it would).
    let mut regex_ok = true;
    // Loop headers waiting for their `{`: after `for`/`while`, the depth of `(` to close first.
    let mut pending: Vec<usize> = Vec::new();
    let mut parens = 0usize;
    // After a loop header closes (or after `do`), the next significant character decides.
    let mut expect_body = false;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if expect_body && c != b'{' {
            expect_body = false;
        }
        match c {
            b'\'' | b'"' => {
                i = skip_string(bytes, i, c);
                regex_ok = false;
            }
            b'`' => {
                i = skip_template(bytes, i);
                regex_ok = false;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = bytes[i..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = find(bytes, i + 2, b"*/").map_or(bytes.len(), |n| n + 2);
            }
            b'/' if regex_ok => {
                i = skip_regex(bytes, i);
                regex_ok = false;
            }
            b'{' => {
                if expect_body {
                    out.push_str(&js[copied..=i]);
                    out.push_str(GUARD_CALL);
                    copied = i + 1;
                    expect_body = false;
                }
                i += 1;
                regex_ok = true;
            }
            b'(' => {
                parens += 1;
                i += 1;
                regex_ok = true;
            }
            b')' => {
                parens = parens.saturating_sub(1);
                if pending.last() == Some(&parens) {
                    pending.pop();
                    expect_body = true;
                }
                i += 1;
                regex_ok = false;
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
                {
                    i += 1;
                }
                let word = &js[start..i];
                // `.for`, `obj.while`: a property, not a keyword.
                let property = js[..start].trim_end().ends_with('.');
                match word {
                    "for" | "while" if !property => {
                        // The header's `(` comes next; its body follows the matching `)`.
                        let next = bytes[i..].iter().position(|b| !b.is_ascii_whitespace()).map(|n| i + n);
                        if next.is_some_and(|n| bytes[n] == b'(') {
                            pending.push(parens);
                        }
                    }
                    "do" if !property => expect_body = true,
                    _ => {}
                }
                regex_ok = BEFORE_REGEX.contains(&word);
            }
            c if c.is_ascii_digit() => {
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.' || bytes[i] == b'_')
                {
                    i += 1;
                }
                regex_ok = false;
            }
            b']' | b'}' => {
                i += 1;
                regex_ok = c == b'}';
            }
            _ => {
                i += 1;
                regex_ok = true;
            }
        }
    }
    out.push_str(&js[copied..]);
    out
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|n| from + n)
}

/// Past the string literal opening at `i` with `quote`.
fn skip_string(bytes: &[u8], mut i: usize, quote: u8) -> usize {
    i += 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return i + 1,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Past the template literal opening at `i`, its `${…}` parts included.
fn skip_template(bytes: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'`' => return i + 1,
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                // Inside `${…}`: count braces, skipping strings and nested templates.
                i += 2;
                let mut depth = 1;
                while i < bytes.len() && depth > 0 {
                    match bytes[i] {
                        b'{' => depth += 1,
                        b'}' => depth -= 1,
                        b'\'' | b'"' => {
                            i = skip_string(bytes, i, bytes[i]);
                            continue;
                        }
                        b'`' => {
                            i = skip_template(bytes, i);
                            continue;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Past the regular expression literal opening at `i` (its class `[…]` may hold a `/`).
fn skip_regex(bytes: &[u8], mut i: usize) -> usize {
    i += 1;
    let mut class = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return i + 1,
            b'[' => {
                class = true;
                i += 1;
            }
            b']' => {
                class = false;
                i += 1;
            }
            b'/' if !class => {
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                    i += 1;
                }
                return i;
            }
            _ => i += 1,
        }
    }
    bytes.len()
}
