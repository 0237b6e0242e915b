//! The one reading of a file's name in a model's answer. Models name files in many ways, and a
//! project whose files lose their names loses its relative imports, so every form seen in real
//! answers is read here, and only here (the stream parser and the edit blocks both ask):
//!
//! - on the fence: ```` ```tsx App.tsx ````, ```` ```App.tsx ````, ```` ```tsx:src/App.tsx ````,
//!   ```` ```tsx title="App.tsx" ```` (also `filename=`, `file=`, `path=`, and in `{…}`);
//! - on the last line of prose before the fence: `App.tsx`, `**App.tsx**`, `` `src/App.tsx`: ``,
//!   `### components/Header.tsx`, `**File: App.tsx**`, `1. **App.tsx** (the root)`, or a sentence
//!   ending in `:` with one path in code (`` Create `src/App.tsx`: ``);
//! - on the block's first line, as a comment: `// components/Header.tsx`, `/* styles.css */`,
//!   `<!-- index.html -->`, `# app.py`, `// filepath: src/App.tsx`.
//!
//! A path is a relative file name with an extension: no URL, no `..`, no spaces. A name whose
//! extension contradicts the fence's language (a `**index.css**` label above a ```` ```tsx ````
//! fence) is not taken: it was about something else.

/// Language and file name from a fence's info string.
pub fn fence_info(info: &str) -> (String, Option<String>) {
    let info = info.trim().trim_start_matches('{').trim_end_matches('}').trim();
    let mut words = info.split_whitespace();
    let Some(first) = words.next() else { return ("plaintext".to_owned(), None) };
    let first = first.trim_start_matches('{').trim_start_matches('.').trim_end_matches('}');
    // `tsx:App.tsx`, the form some chat front-ends write.
    if let Some((language, path)) = first.split_once(':')
        && let Some(path) = as_path(path)
    {
        return (normalise_language(language), Some(path));
    }
    if let Some(path) = as_path(first) {
        return (language_of(&path), Some(path));
    }
    let language = normalise_language(first);
    let mut name = None;
    for word in words {
        let word = word.trim_matches(['{', '}', ',']);
        let value = match word.split_once('=') {
            Some(("title" | "filename" | "file" | "path" | "name", value)) => value,
            Some(_) => continue,
            None => word,
        };
        if let Some(path) = as_path(value.trim_matches(['"', '\''])) {
            name = Some(path);
            break;
        }
    }
    (language, name)
}

/// The path a line of prose names, if naming it is all the line does (see the module docs).
pub fn label_path(line: &str) -> Option<String> {
    let line = strip_list_marker(line.trim().trim_start_matches('#').trim());
    if let Some(path) = as_path(&undecorate(line)) {
        return Some(path);
    }
    // A leading name in bold or code, then a description: `**App.tsx** (the root)`.
    if let Some(path) = leading_span(line) {
        return Some(path);
    }
    // A sentence that introduces the block: one path in code, and a colon at the end.
    if line.trim_end_matches(['*', '_']).ends_with(':') {
        let spans: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
        let paths: Vec<String> = spans.iter().filter_map(|s| as_path(s)).collect();
        if let [path] = paths.as_slice() {
            return Some(path.clone());
        }
    }
    None
}

/// The path a block's first line names as a comment (see the module docs).
pub fn comment_path(line: &str) -> Option<String> {
    let line = line.trim();
    let body = ["//", "/*", "<!--", "#", "--"].iter().find_map(|open| line.strip_prefix(open))?;
    let body = body.trim().trim_end_matches("-->").trim_end_matches("*/").trim();
    let body = strip_label(body);
    let word = body.split_whitespace().next()?;
    let rest = body[word.len()..].trim_start();
    (rest.is_empty() || starts_description(rest)).then(|| as_path(word)).flatten()
}

/// Whether a name suits a block in `language`: the same family, or a block that names none.
pub fn suits(language: &str, path: &str) -> bool {
    let family = |l: &str| match l {
        "tsx" | "jsx" | "typescript" | "javascript" => "script",
        "html" => "html",
        "css" | "scss" | "sass" | "less" => "css",
        "plaintext" | "text" | "txt" => "any",
        _ => "other",
    };
    let named = language_of(path);
    let (a, b) = (family(language), family(&named));
    a == "any" || a == b || (a == "other" && b == "other")
}

/// The block's language from a name's extension (`App.tsx` → `tsx`).
pub fn language_of(path: &str) -> String {
    path.rsplit_once('.').map_or_else(|| "plaintext".to_owned(), |(_, ext)| normalise_language(ext))
}

/// One language word for a fence's or a name's: `js`, `mjs` and `jsx` are `javascript`…
pub fn normalise_language(word: &str) -> String {
    let lower = word.to_ascii_lowercase();
    match lower.as_str() {
        "html" | "htm" | "xhtml" => "html".to_owned(),
        "css" => "css".to_owned(),
        "js" | "javascript" | "mjs" | "jsx" => "javascript".to_owned(),
        "ts" | "typescript" => "typescript".to_owned(),
        "" => "plaintext".to_owned(),
        _ => lower,
    }
}

/// Libraries whose names look like files; a heading `### Chart.js` names a library, not a file.
const LIBRARY_NAMES: &[&str] = &[
    "node", "next", "vue", "nuxt", "three", "d3", "chart", "express", "react", "angular", "p5", "alpine",
    "ember",
];

/// `word` as a project path (`./` and a leading `/` dropped), if it is one.
fn as_path(word: &str) -> Option<String> {
    let word = word.trim().trim_start_matches("./").trim_start_matches('/');
    let (stem, ext) = word.rsplit_once('.')?;
    let file_stem = stem.rsplit('/').next().unwrap_or(stem);
    let is_path = !file_stem.is_empty()
        && word.len() <= 200
        && !word.contains("://")
        && !word.split('/').any(|segment| segment.is_empty() || segment == "..")
        && (1..=5).contains(&ext.len())
        && ext.bytes().all(|b| b.is_ascii_alphabetic())
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/' | b'@'))
        && !(ext.eq_ignore_ascii_case("js") && LIBRARY_NAMES.contains(&stem.to_ascii_lowercase().as_str()));
    is_path.then(|| word.to_owned())
}

/// A line without its bold, italics, code marks, colons and a `File:` label.
fn undecorate(line: &str) -> String {
    let trim = |s: &str| {
        s.trim_matches(|c: char| matches!(c, '*' | '`' | ':' | '_') || c.is_whitespace()).to_owned()
    };
    trim(strip_label(&trim(line)))
}

/// `text` without a leading `File:`, `Filename:`, `File name:`, `Path:` or `filepath:` label.
fn strip_label(text: &str) -> &str {
    for label in ["file name:", "filename:", "filepath:", "file path:", "file:", "path:"] {
        if text.len() >= label.len()
            && text.is_char_boundary(label.len())
            && text[..label.len()].eq_ignore_ascii_case(label)
        {
            return text[label.len()..].trim_start_matches(['*', '`', '_', ' ']);
        }
    }
    text
}

/// A list item's text: `- x`, `* x`, `+ x`, `1. x`, `1) x` give `x`.
fn strip_list_marker(line: &str) -> &str {
    if let Some(rest) = line.strip_prefix(['-', '+', '*'])
        && rest.starts_with(' ')
    {
        return rest.trim_start();
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(rest) = line[digits..].strip_prefix(['.', ')'])
        && rest.starts_with(' ')
    {
        return rest.trim_start();
    }
    line
}

/// A path in bold or code at the start of `line`, followed by an end or a description.
fn leading_span(line: &str) -> Option<String> {
    let mark = ["**", "__", "`"].into_iter().find(|m| line.starts_with(m))?;
    let inner = &line[mark.len()..];
    let end = inner.find(mark)?;
    let path = as_path(&undecorate(&inner[..end]))?;
    let rest = inner[end + mark.len()..].trim_start_matches(['*', '_', '`', ':']).trim_start();
    (rest.is_empty() || starts_description(rest)).then_some(path)
}

fn starts_description(rest: &str) -> bool {
    ["-", "—", "–", "(", ":"].iter().any(|s| rest.starts_with(s))
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
