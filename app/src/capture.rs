//! Puts the console-capture script (`app/js/capture.js`) at the top of a finished document, so the
//! page's console output and errors reach the console panel.

/// The capture script's source.
pub const CAPTURE_SCRIPT: &str = include_str!("../js/capture.js");

/// `doc` with the capture script as early as possible without changing how it parses: right after
/// `<head>`, else after `<html>`, else after the doctype, else first. (A script before the doctype
/// would switch the page to quirks mode.)
pub fn with_capture(doc: &str) -> String {
    let at = end_of_tag(doc, "<head")
        .or_else(|| end_of_tag(doc, "<html"))
        .or_else(|| end_of_tag(doc, "<!doctype"))
        .unwrap_or(0);
    let mut out = String::with_capacity(doc.len() + CAPTURE_SCRIPT.len() + 20);
    out.push_str(&doc[..at]);
    out.push_str("<script>");
    out.push_str(CAPTURE_SCRIPT);
    out.push_str("</script>");
    out.push_str(&doc[at..]);
    out
}

/// Byte offset just past the first `<name …>` tag (ASCII case-insensitive; `<head` does not match
/// `<header`).
fn end_of_tag(doc: &str, name: &str) -> Option<usize> {
    let bytes = doc.as_bytes();
    let n = name.len();
    let mut from = 0;
    while from + n <= bytes.len() {
        let rel = bytes[from..].windows(n).position(|w| w.eq_ignore_ascii_case(name.as_bytes()))?;
        let start = from + rel;
        let next = bytes.get(start + n).copied();
        if matches!(next, Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/')) || name == "<!doctype" {
            let close = bytes[start..].iter().position(|&b| b == b'>')?;
            return Some(start + close + 1);
        }
        from = start + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script_at(doc: &str) -> usize {
        with_capture(doc).find("<script>").expect("inserted")
    }

    #[test]
    fn goes_after_head_then_html_then_doctype() {
        assert_eq!(
            script_at("<!DOCTYPE html><html lang=en><HEAD><title>x"),
            "<!DOCTYPE html><html lang=en><HEAD>".len()
        );
        assert_eq!(script_at("<!doctype html>\n<html><body>"), "<!doctype html>\n<html>".len());
        assert_eq!(script_at("<!DOCTYPE html>\n<p>hi"), "<!DOCTYPE html>".len());
        assert_eq!(script_at("<p>fragment</p>"), 0);
    }

    #[test]
    fn header_is_not_head() {
        let doc = "<html><body><header>h</header>";
        assert_eq!(script_at(doc), "<html>".len());
    }

    #[test]
    fn document_is_kept_whole() {
        let doc = "<html><head></head><body>é</body></html>";
        let out = with_capture(doc);
        assert_eq!(out.replace(&format!("<script>{CAPTURE_SCRIPT}</script>"), ""), doc);
        assert!(!CAPTURE_SCRIPT.contains("</script"), "the script must not end its own tag");
    }
}
