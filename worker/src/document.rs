//! Builds the one HTML document the preview shows from an answer's files.
//!
//! The preview is a single sandboxed document, so CSS and JS files are inlined: a file the HTML
//! references by name (`<link href="style.css">`, `<script src="app.js">`) replaces that tag, any
//! other goes before `</head>` (styles) or `</body>` (scripts). Without the replacement the sandboxed
//! page would fetch `app.js` from the app's own server and report a confusing error.

use crate::parser::{StreamParser, find_ascii_ci, rfind_ascii_ci};

/// The preview document for the parser's current state, or `None` when the answer has no HTML, CSS
/// or JS yet. Unfinished lines are included so the preview grows while the answer streams.
pub fn preview_document(parser: &StreamParser) -> Option<String> {
    let files = parser.files();
    let html_index = files.iter().position(|f| f.language == "html");
    let mut html = match html_index {
        Some(i) => joined(parser, i),
        None => String::new(),
    };
    let mut styles = Vec::new();
    let mut scripts = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let kind = match file.language.as_str() {
            "css" => Kind::Style,
            "javascript" => Kind::Script,
            _ => continue,
        };
        let text = joined(parser, i);
        if let Some(name) = &file.name
            && replace_reference(&mut html, kind, name, &text)
        {
            continue;
        }
        match kind {
            Kind::Style => styles.push(text),
            Kind::Script => scripts.push(text),
        }
    }
    if html_index.is_none() && styles.is_empty() && scripts.is_empty() {
        return None;
    }
    Some(inline_files(&html, &styles, &scripts))
}

/// The preview page of one file in `language`, as [`preview_document`] builds it for an answer of
/// that file alone: an HTML file is the page; CSS or JS is inlined into an empty one.
pub fn file_preview(language: &str, text: &str) -> Option<String> {
    let text = text.to_owned();
    match language {
        "html" => Some(text),
        "css" => Some(inline_files("", &[text], &[])),
        "javascript" => Some(inline_files("", &[], &[text])),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Style,
    Script,
}

/// File `index`'s text so far, its unfinished line included.
fn joined(parser: &StreamParser, index: usize) -> String {
    let (committed, tail) = parser.visible(Some(index));
    let mut s = String::with_capacity(committed.len() + tail.len());
    s.push_str(committed);
    s.push_str(tail);
    s
}

/// Inserts `styles` before `</head>` (else at the start) and `scripts` before the last `</body>`
/// (else at the end) of `html`.
pub fn inline_files(html: &str, styles: &[String], scripts: &[String]) -> String {
    let extra: usize = styles.iter().chain(scripts).map(|s| s.len() + 20).sum();
    let mut out = String::with_capacity(html.len() + extra);
    let head_end = find_ascii_ci(html, "</head>");
    let style_at = head_end.unwrap_or(0);
    let body_end = rfind_ascii_ci(html, "</body>").filter(|&b| b >= style_at);
    let script_at = body_end.unwrap_or(html.len());
    out.push_str(&html[..style_at]);
    for css in styles {
        out.push_str("<style>\n");
        out.push_str(css);
        out.push_str("</style>\n");
    }
    out.push_str(&html[style_at..script_at]);
    for js in scripts {
        out.push_str("<script>\n");
        out.push_str(js);
        out.push_str("</script>\n");
    }
    out.push_str(&html[script_at..]);
    out
}

/// Replaces the tag that loads `name` (`<link … href="name">` or `<script … src="name"></script>`)
/// with the file's text inline. Returns whether a reference was found.
fn replace_reference(html: &mut String, kind: Kind, name: &str, text: &str) -> bool {
    let attr = match kind {
        Kind::Style => "href=",
        Kind::Script => "src=",
    };
    let bare = name.trim_start_matches("./");
    for quote in ['"', '\''] {
        for prefix in ["", "./"] {
            let needle = format!("{attr}{quote}{prefix}{bare}{quote}");
            let Some(at) = find_ascii_ci(html, &needle) else { continue };
            let Some(start) = html[..at].rfind('<') else { continue };
            let end = match kind {
                Kind::Style => html[at..].find('>').map(|e| at + e + 1),
                Kind::Script => find_ascii_ci(&html[at..], "</script>").map(|e| at + e + "</script>".len()),
            };
            let Some(end) = end else { continue };
            let (open, close) = match kind {
                Kind::Style => ("<style>\n", "</style>"),
                Kind::Script => ("<script>\n", "</script>"),
            };
            let replacement = format!("{open}{text}{close}");
            html.replace_range(start..end, &replacement);
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> StreamParser {
        let mut p = StreamParser::new();
        p.push(text);
        p.finish();
        p
    }

    #[test]
    fn css_and_js_are_inlined_into_head_and_body() {
        let p = parse(
            "```html\n<html><head><title>t</title></head><body><p>x</p></body></html>\n```\n\
             ```css\np { color: red; }\n```\n```js\nconsole.log(1);\n```\n",
        );
        let doc = preview_document(&p).expect("has html");
        let style = doc.find("p { color: red; }").expect("style inlined");
        let head_end = doc.find("</head>").expect("head kept");
        let script = doc.find("console.log(1);").expect("script inlined");
        let body_end = doc.find("</body>").expect("body kept");
        assert!(style < head_end, "{doc}");
        assert!(head_end < script && script < body_end, "{doc}");
    }

    #[test]
    fn referenced_files_replace_their_tags() {
        let p = parse(
            "```html index.html\n<head><link rel=\"stylesheet\" href=\"style.css\"></head>\n\
             <body><script src='./app.js'></script></body>\n```\n\
             ```css style.css\nb{}\n```\n```javascript app.js\nrun();\n```\n",
        );
        let doc = preview_document(&p).expect("has html");
        assert!(!doc.contains("href=\"style.css\""), "{doc}");
        assert!(!doc.contains("src='./app.js'"), "{doc}");
        assert!(doc.contains("<style>\nb{}\n</style>"), "{doc}");
        assert!(doc.contains("<script>\nrun();\n</script>"), "{doc}");
        assert_eq!(doc.matches("run();").count(), 1);
    }

    #[test]
    fn fragment_without_head_or_body() {
        let doc = inline_files("<p>hi</p>", &["a{}".into()], &["go()".into()]);
        assert_eq!(doc, "<style>\na{}</style>\n<p>hi</p><script>\ngo()</script>\n");
    }

    #[test]
    fn one_file_previews_as_an_answer_of_it_would() {
        for (language, text) in [("html", "<p>hi</p>\n"), ("css", "p{}\n"), ("javascript", "go()\n")] {
            let p = parse(&format!("```{language}\n{text}```\n"));
            assert_eq!(file_preview(language, text), preview_document(&p), "{language}");
        }
        assert_eq!(file_preview("python", "print(1)\n"), None);
    }

    #[test]
    fn prose_only_has_no_preview() {
        assert_eq!(preview_document(&parse("Just words.\n")), None);
        assert_eq!(preview_document(&parse("```python\nprint(1)\n```\n")), None);
    }

    #[test]
    fn unfinished_html_is_previewed() {
        let mut p = StreamParser::new();
        p.push("```html\n<body><button>Go");
        assert_eq!(preview_document(&p).as_deref(), Some("<body><button>Go"));
    }
}
