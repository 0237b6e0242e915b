//! The one guess of a file's language when nothing names it: an answer's file sent without a fence
//! word (the worker), code from a shared link, a restore or the person's own text (the app). Both
//! sides call this, so the editor's colouring and the worker's choice of a preview never disagree.

/// The editor (Monaco) language of `code`: `html` when it starts with a tag (or is empty: a new
/// page), CSS or JavaScript by their usual first lines, else `plaintext`, the parser's word for a
/// fence that names none.
pub fn code_language(code: &str) -> &'static str {
    let head = code.trim_start_matches('\u{feff}').trim_start();
    if head.is_empty() || head.starts_with('<') {
        return "html";
    }
    let js_starts = [
        "function ",
        "const ",
        "let ",
        "var ",
        "import ",
        "export ",
        "class ",
        "async ",
        "//",
        "\"use strict\"",
    ];
    let css_starts = ["@media", "@import", "@font-face", "@keyframes", ":root", "*"];
    let first = head.lines().next().unwrap_or("").trim_end();
    if js_starts.iter().any(|s| first.starts_with(s)) {
        "javascript"
    } else if css_starts.iter().any(|s| first.starts_with(s))
        || first.ends_with('{') && !first.contains(['(', '=', ';'])
    {
        "css"
    } else {
        "plaintext"
    }
}

/// Whether JavaScript `code` is a React module (the worker builds it, the app asks for its page):
/// it imports React, or writes JSX (`return <…`, `=> (<…`).
pub fn is_react_module(code: &str) -> bool {
    if code.contains("from 'react'") || code.contains("from \"react\"") {
        return true;
    }
    ["return", "=>"].iter().any(|word| {
        code.match_indices(word).any(|(at, _)| {
            let rest = code[at + word.len()..].trim_start();
            let rest = rest.strip_prefix('(').map_or(rest, str::trim_start);
            let mut chars = rest.chars();
            chars.next() == Some('<') && chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '>')
        })
    })
}

/// Whether a file belongs to a React project (built, not shown as a page): a TypeScript or JSX
/// name or language, or JavaScript that is a React module. The worker and the app both ask this.
pub fn is_project_file(name: Option<&str>, language: &str, text: &str) -> bool {
    let ext = name.and_then(|n| n.rsplit_once('.')).map(|(_, e)| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("tsx" | "jsx" | "ts" | "mts"))
        || matches!(language, "tsx" | "typescript")
        || (language == "javascript" && is_react_module(text))
}

#[cfg(test)]
mod tests {
    use super::{code_language, is_react_module};

    #[test]
    fn react_modules_are_told_by_their_import_or_their_jsx() {
        assert!(is_react_module("import { useState } from 'react';\n"));
        assert!(is_react_module(
            "export default function App() {\n  return (\n    <main>hi</main>\n  );\n}\n"
        ));
        assert!(is_react_module("const A = () => <>x</>;"));
        assert!(!is_react_module("function f(a, b) { return a < b; }"));
        assert!(!is_react_module("const lt = (a) => a <= 2;"));
        assert!(!is_react_module("<!DOCTYPE html><p>hi</p>"));
    }

    #[test]
    fn the_language_is_guessed_from_the_start() {
        assert_eq!(code_language("<!DOCTYPE html>\n<p>"), "html");
        assert_eq!(code_language("  \n<!doctype html><p>hi"), "html");
        assert_eq!(code_language("\u{feff}\n  <div>"), "html");
        assert_eq!(code_language(""), "html");
        assert_eq!(code_language("body {\n  color: red;\n}\n"), "css");
        assert_eq!(code_language(":root { --x: 1; }"), "css");
        assert_eq!(code_language("const x = 1;\n"), "javascript");
        assert_eq!(code_language("function go() {\n}\n"), "javascript");
        assert_eq!(code_language("print('hi')"), "plaintext");
        assert_eq!(code_language("Just notes.\n"), "plaintext");
    }
}
