//! Unit tests of the incremental parser (a separate file keeps `parser.rs` readable).

use super::*;

fn parse(text: &str) -> StreamParser {
    let mut p = StreamParser::new();
    p.push(text);
    p.finish();
    p
}

fn file(language: &str, name: Option<&str>, content: &str, closed: bool) -> FileBlock {
    FileBlock { language: language.into(), name: name.map(Into::into), content: content.into(), closed }
}

#[test]
fn fenced_html_between_prose() {
    let p = parse("Here you go:\n\n```html\n<p>hi</p>\n```\n\nEnjoy.\n");
    assert_eq!(p.files(), [file("html", None, "<p>hi</p>\n", true)]);
    assert_eq!(p.prose(), "Here you go:\n\n\nEnjoy.\n");
    assert_eq!(p.main_file(), Some(0));
}

#[test]
fn crlf_is_normalised() {
    let p = parse("Intro\r\n```css\r\na { b: c; }\r\n```\r\n");
    assert_eq!(p.files(), [file("css", None, "a { b: c; }\n", true)]);
    assert_eq!(p.prose(), "Intro\n");
}

#[test]
fn crlf_split_between_cr_and_lf_is_not_shown_early() {
    let mut p = StreamParser::new();
    p.push("```html\n<p>a</p>\r");
    assert_eq!(p.visible(Some(0)), ("", "<p>a</p>"));
    p.push("\n<b>");
    assert_eq!(p.visible(Some(0)), ("<p>a</p>\n", "<b>"));
}

#[test]
fn longer_fence_keeps_inner_triple_backticks_as_content() {
    let text = "````markdown README.md\nUse:\n```sh\nrun\n```\n````\n";
    let p = parse(text);
    assert_eq!(p.files(), [file("markdown", Some("README.md"), "Use:\n```sh\nrun\n```\n", true)]);
}

#[test]
fn backticks_inside_lines_and_fence_with_info_are_content() {
    let text = "```js\nconst s = `a ${b}`;\nconst f = \"```\";\n```js\n```\n";
    let p = parse(text);
    assert_eq!(
        p.files(),
        [file("javascript", None, "const s = `a ${b}`;\nconst f = \"```\";\n```js\n", true)]
    );
}

#[test]
fn tilde_fences_and_indented_fences() {
    let p = parse("1. Page:\n   ~~~html\n   <p>x</p>\n   ~~~\n");
    assert_eq!(p.files(), [file("html", None, "   <p>x</p>\n", true)]);
}

#[test]
fn bare_document_without_fences() {
    let p = parse("<!DOCTYPE html>\n<html><body>ok</body></html>\nThat is all.\n");
    assert_eq!(p.files(), [file("html", None, "<!DOCTYPE html>\n<html><body>ok</body></html>\n", true)]);
    assert_eq!(p.prose(), "That is all.\n");
}

#[test]
fn bare_document_after_prose_and_without_doctype() {
    let p = parse("Sure!\n<html lang=\"en\">\n<body></body>\n");
    assert_eq!(p.files(), [file("html", None, "<html lang=\"en\">\n<body></body>\n", false)]);
    assert_eq!(p.prose(), "Sure!\n");
}

#[test]
fn html_like_prose_is_not_a_document() {
    let p = parse("<htmlish> is not a tag\n<p>nor a document</p>\n");
    assert!(p.files().is_empty());
    assert_eq!(p.prose(), "<htmlish> is not a tag\n<p>nor a document</p>\n");
}

#[test]
fn one_line_bare_document_streams_before_its_newline() {
    let mut p = StreamParser::new();
    p.push("<!doctype html><html><body><button>Go");
    assert_eq!(p.main_file(), Some(0));
    assert_eq!(p.visible(Some(0)), ("", "<!doctype html><html><body><button>Go"));
}

#[test]
fn multiple_named_files_and_main_file_choice() {
    let text = "```css style.css\nb{}\n```\n```index.html\n<p>\n```\n```javascript app.js\ngo()\n```\n";
    let p = parse(text);
    assert_eq!(
        p.files(),
        [
            file("css", Some("style.css"), "b{}\n", true),
            file("html", Some("index.html"), "<p>\n", true),
            file("javascript", Some("app.js"), "go()\n", true),
        ]
    );
    assert_eq!(p.main_file(), Some(1), "the HTML file is the main file even when it comes second");
}

#[test]
fn language_names_are_normalised() {
    let info = crate::names::fence_info;
    assert_eq!(info("JS"), ("javascript".into(), None));
    assert_eq!(info("html title.html"), ("html".into(), Some("title.html".into())));
    assert_eq!(info(""), ("plaintext".into(), None));
    assert_eq!(info("{.css}"), ("css".into(), None));
    assert_eq!(info("python"), ("python".into(), None));
}

#[test]
fn non_ascii_content_survives() {
    let text = "Voilà — ça marche 🎉\n```html\n<h1>Grüße, 世界 🌍</h1>\n```\n";
    let p = parse(text);
    assert_eq!(p.files(), [file("html", None, "<h1>Grüße, 世界 🌍</h1>\n", true)]);
    assert!(p.prose().starts_with("Voilà"));
}

#[test]
fn unclosed_fence_at_finish_keeps_its_last_line() {
    let p = parse("```html\n<p>cut off");
    assert_eq!(p.files(), [file("html", None, "<p>cut off\n", false)]);
}

#[test]
fn tail_holds_back_what_could_still_be_a_fence() {
    let mut p = StreamParser::new();
    p.push("```html\n<p>x</p>\n``");
    assert_eq!(p.tail(Some(0)), "", "could become the closing fence");
    p.push("`");
    assert_eq!(p.tail(Some(0)), "");
    p.push("  ");
    assert_eq!(p.tail(Some(0)), "", "trailing spaces after a fence are allowed");
    p.push("x");
    assert_eq!(p.tail(Some(0)), "```  x", "not a fence any more: content");
}

#[test]
fn prose_tail_holds_back_fence_and_document_starts() {
    let mut p = StreamParser::new();
    p.push("Hello wor");
    assert_eq!(p.tail(None), "Hello wor");
    p.push("ld\n``");
    assert_eq!(p.tail(None), "");
    p.push("`html\n");
    assert_eq!(p.main_file(), Some(0));
    let mut q = StreamParser::new();
    q.push("<!DOC");
    assert_eq!(q.tail(None), "");
    assert_eq!(q.main_file(), None);
}

#[test]
fn revision_moves_only_when_files_change() {
    let mut p = StreamParser::new();
    p.push("Some prose\nand more");
    let before = p.revision();
    p.push(" prose\n");
    assert_eq!(p.revision(), before);
    p.push("```css\n");
    assert_ne!(p.revision(), before);
}

#[test]
fn case_insensitive_search_helpers() {
    assert_eq!(find_ascii_ci("a</HEAD>b</head>", "</head>"), Some(1));
    assert_eq!(rfind_ascii_ci("a</HEAD>b</head>", "</head>"), Some(9));
    assert_eq!(find_ascii_ci("é</body>", "</body>"), Some(2));
    assert_eq!(find_ascii_ci("ab", "abc"), None);
}

#[test]
fn files_named_as_models_name_them_keep_their_paths() {
    let text = "Here is the app.\n\n**App.tsx**\n```tsx\nimport { Header } from './components/Header';\n```\n\n\
                ### `components/Header.tsx`\n\n```tsx\nexport const Header = () => <h1/>;\n```\n\
                ```tsx\n// components/Footer.tsx\nexport const Footer = () => <p/>;\n```\n\
                ```\n/* styles.css */\nh1 { color: red }\n```\n\
                ```tsx title=\"hooks/useClock.ts\"\nexport {};\n```\n";
    let p = parse(text);
    let names: Vec<_> = p.files().iter().map(|f| (f.name.as_deref(), f.language.as_str())).collect();
    assert_eq!(
        names,
        [
            (Some("App.tsx"), "tsx"),
            (Some("components/Header.tsx"), "tsx"),
            (Some("components/Footer.tsx"), "tsx"),
            (Some("styles.css"), "css"),
            (Some("hooks/useClock.ts"), "tsx"),
        ]
    );
    assert_eq!(
        p.files()[2].content,
        "// components/Footer.tsx\nexport const Footer = () => <p/>;\n",
        "the comment stays"
    );
}

#[test]
fn a_label_names_only_the_next_block_and_only_when_it_suits() {
    // A label followed by more prose, by a block it does not suit, or used once already names nothing more.
    let text = "**App.tsx**\nIt renders the list.\n```tsx\nx\n```\n\
                **index.css**\n```tsx\ny\n```\n```tsx\nz\n```\n\
                Run it with:\n```bash\nnpm run dev\n```\n";
    let p = parse(text);
    assert!(p.files().iter().all(|f| f.name.is_none()), "{:?}", p.files());
}

#[test]
fn a_first_line_name_arrives_when_that_line_completes() {
    let mut p = StreamParser::new();
    p.push("```tsx\n// components/Hea");
    assert_eq!(p.files()[0].name, None);
    p.push("der.tsx\nexport {}");
    assert_eq!(p.files()[0].name.as_deref(), Some("components/Header.tsx"));
    p.push("\n// other.tsx\n```\n");
    assert_eq!(p.files()[0].name.as_deref(), Some("components/Header.tsx"), "only the first line names");
}
