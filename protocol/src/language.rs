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

#[cfg(test)]
mod tests {
    use super::code_language;

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
