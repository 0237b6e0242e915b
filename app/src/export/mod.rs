//! Taking code out of Flint: file names, the page a new tab shows, a zip of an answer's files
//! ([`zip`]), a React project as a Vite project ([`vite`]) or as one page that runs offline
//! ([`offline`]). Plain functions; `components/export_menu.rs` does the IO.

pub mod offline;
pub mod vite;
pub mod zip;

pub use zip::{answer_zip, file_names, zip_stored};

use crate::share::code_language;

/// `code` as a page to preview or download: a page stays as it is; anything else is shown as text
/// (a CSS or JS file alone is not a page).
pub fn page_of_code(code: &str) -> String {
    if code_language(code) == "html" {
        code.to_owned()
    } else {
        format!("<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<pre>{}</pre>\n", escape_html(code))
    }
}

/// A file name (without extension) from the prompt's first words: `a-button-that-counts`.
pub fn file_stem(prompt: &str) -> String {
    let mut stem = String::new();
    for word in prompt.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        if stem.len() + word.len() > 40 {
            break;
        }
        if !stem.is_empty() {
            stem.push('-');
        }
        stem.extend(word.chars().flat_map(char::to_lowercase));
    }
    if stem.is_empty() { "flint-page".to_owned() } else { stem }
}

/// A page to show in a new tab, sandboxed as the preview is; see [`TabPage::wrapper`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabPage {
    doc: String,
    title: String,
}

/// The page `doc` to open in a tab called `title`.
pub fn tab_page(doc: &str, title: &str) -> TabPage {
    TabPage { doc: doc.to_owned(), title: title.to_owned() }
}

/// Longest address a browser follows (Chromium: 2 MiB); a page in a longer one never arrives.
pub const MAX_URL_CHARS: usize = 2 * 1024 * 1024;

/// Why a page cannot be opened in a tab.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the page is too large to open in a tab ({kb} KB as an address, at most {max_kb} KB): download it instead",
    kb = .0 / 1024,
    max_kb = MAX_URL_CHARS / 1024
)]
pub struct TooLarge(pub usize);

impl TabPage {
    /// The tab's page: a wrapper with no script, holding one frame sandboxed like the preview's
    /// (`allow-scripts` only) that loads the preview runtime at `runtime_url` (absolute, on the
    /// app's origin) with the document in its fragment; the runtime writes it there.
    ///
    /// Opened from a blob URL, the wrapper has the app's origin and inherits the app's
    /// Content-Security-Policy, so the page cannot run in it or in a `srcdoc` frame of it (both
    /// would get that policy: no inline scripts, no CDNs). `preview.html` is served with its own
    /// policy (a sandbox), and a fragment never leaves the browser.
    pub fn wrapper(&self, runtime_url: &str) -> Result<String, TooLarge> {
        let mut src = String::with_capacity(runtime_url.len() + 5 + self.doc.len() * 5 / 4);
        src.push_str(runtime_url);
        src.push_str("#doc=");
        fragment_encode(&self.doc, &mut src);
        if src.len() > MAX_URL_CHARS {
            return Err(TooLarge(src.len()));
        }
        Ok(format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title} — Flint</title>\
             <style>html,body{{margin:0;height:100%}}iframe{{border:0;width:100%;height:100%;display:block}}</style>\
             </head><body><iframe sandbox=\"allow-scripts\" title=\"{title}\" src=\"{src}\"></iframe></body></html>\n",
            title = escape_html(&self.title),
            src = escape_html(&src),
        ))
    }
}

/// Appends `text` percent-encoded for a URL fragment, exactly as the browser serialises it (so
/// its length is the address's), and so that `decodeURIComponent` gives `text` back: `%`,
/// controls and whitespace (tabs and newlines would be dropped), the fragment's reserved `"<>\``,
/// and every byte of a non-ASCII character.
fn fragment_encode(text: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &byte in text.as_bytes() {
        if byte <= b' ' || byte >= 0x7f || matches!(byte, b'%' | b'"' | b'<' | b'>' | b'`') {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 15)]));
        } else {
            out.push(char::from(byte));
        }
    }
}

/// Escapes text for HTML content and double-quoted attributes.
pub(crate) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_come_from_the_prompt() {
        assert_eq!(file_stem("A button that counts clicks!"), "a-button-that-counts-clicks");
        assert_eq!(file_stem("   "), "flint-page");
        assert_eq!(file_stem("Größe ändern"), "größe-ändern");
        assert!(file_stem(&"word ".repeat(50)).len() <= 40);
    }

    #[test]
    fn a_tab_page_keeps_hostile_code_inside_the_sandboxed_frame() {
        let hostile = "<p>\"></iframe><script>alert(document.cookie)</script>&amp; é%41\n\tx ";
        let page =
            tab_page(hostile, "x\"><script>").wrapper("http://127.0.0.1:8787/preview.html").expect("fits");
        assert_eq!(page.matches("<script").count(), 0, "{page}");
        assert_eq!(page.matches("<iframe").count(), 1);
        assert!(page.contains(r#"<iframe sandbox="allow-scripts" "#), "{page}");
        assert!(!page.contains("allow-same-origin") && !page.contains("srcdoc"));
        let src = page.split(" src=\"").nth(1).and_then(|s| s.split('"').next()).expect("src");
        assert!(src.starts_with("http://127.0.0.1:8787/preview.html#doc="), "{src}");
        let fragment = src.split_once("#doc=").expect("fragment").1;
        assert!(fragment.bytes().all(|b| b.is_ascii_graphic() && !b"<>\"`".contains(&b)), "{fragment}");
        assert_eq!(
            percent_decode(&fragment.replace("&amp;", "&")),
            hostile,
            "the page survives the round trip"
        );
    }

    #[test]
    fn a_page_too_large_for_an_address_is_refused() {
        let big = " ".repeat(MAX_URL_CHARS / 3 + 1);
        assert!(matches!(tab_page(&big, "t").wrapper("http://h/preview.html"), Err(TooLarge(_))));
        assert!(tab_page(&"a".repeat(MAX_URL_CHARS / 2), "t").wrapper("http://h/preview.html").is_ok());
    }

    /// `decodeURIComponent`, for the test.
    fn percent_decode(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).expect("hex"));
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn code_that_is_not_a_page_is_shown_as_text() {
        assert_eq!(page_of_code("<p>hi</p>"), "<p>hi</p>");
        assert!(page_of_code("a < b && c").contains("<pre>a &lt; b &amp;&amp; c</pre>"));
    }
}
