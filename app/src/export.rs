//! Taking code out of Flint: file names, the page a new tab shows, and a zip of an answer's files.
//! Plain functions; `components/export_menu.rs` hands their output to the browser.

use flint_protocol::worker::AnswerFile;

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

/// The zip of an answer's `files`, the main one replaced by `main_code` (the editor's text, which
/// the person may have changed). Files without a usable name get one from their language.
pub fn answer_zip(files: &[AnswerFile], main_code: Option<&str>) -> Vec<u8> {
    let names = file_names(files);
    let entries: Vec<(String, &[u8])> = files
        .iter()
        .zip(names)
        .map(|(file, name)| {
            let text = match main_code {
                Some(code) if file.main => code,
                _ => file.content.as_str(),
            };
            (name, text.as_bytes())
        })
        .collect();
    zip_stored(&entries)
}

/// Unique, safe names: the answer's own (path segments of letters, digits, `.`, `_`, `-`), else
/// `index.html`, `style.css`, `script.js`…; a repeated name gets `-2`, `-3` before its extension.
pub fn file_names(files: &[AnswerFile]) -> Vec<String> {
    let mut taken: Vec<String> = Vec::with_capacity(files.len());
    for file in files {
        let wanted = file.name.as_deref().and_then(safe_name).unwrap_or_else(|| default_name(&file.language));
        let mut name = wanted.clone();
        let mut n = 2;
        while taken.contains(&name) {
            name = match wanted.rsplit_once('.') {
                Some((stem, ext)) if !stem.is_empty() => format!("{stem}-{n}.{ext}"),
                _ => format!("{wanted}-{n}"),
            };
            n += 1;
        }
        taken.push(name);
    }
    taken
}

fn safe_name(name: &str) -> Option<String> {
    let segments: Vec<&str> = name
        .split(['/', '\\'])
        .filter(|s| !s.is_empty() && *s != "." && *s != "..")
        .filter(|s| s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .collect();
    (!segments.is_empty()).then(|| segments.join("/"))
}

fn default_name(language: &str) -> String {
    let name = match language {
        "html" => "index.html",
        "css" => "style.css",
        "javascript" => "script.js",
        "typescript" => "script.ts",
        "json" => "data.json",
        "python" => "main.py",
        "rust" => "main.rs",
        "markdown" => "README.md",
        "svg" => "image.svg",
        _ => "file.txt",
    };
    name.to_owned()
}

/// A zip archive of `entries` (name, bytes), stored without compression: the files are small text
/// and every unzip tool reads stored entries. Names are UTF-8 (flag bit 11); times are 1980-01-01
/// so the same files give the same archive.
pub fn zip_stored(entries: &[(String, &[u8])]) -> Vec<u8> {
    const DOS_DATE: u16 = (1 << 5) | 1;
    const UTF8_NAMES: u16 = 1 << 11;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        let offset = out.len() as u32;
        let crc = crc32(data);
        let size = data.len() as u32;
        // Local file header.
        put32(&mut out, 0x0403_4b50);
        for v in [20, UTF8_NAMES, 0, 0, DOS_DATE] {
            put16(&mut out, v);
        }
        for v in [crc, size, size] {
            put32(&mut out, v);
        }
        put16(&mut out, name.len() as u16);
        put16(&mut out, 0);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        // Its central directory record.
        put32(&mut central, 0x0201_4b50);
        for v in [20, 20, UTF8_NAMES, 0, 0, DOS_DATE] {
            put16(&mut central, v);
        }
        for v in [crc, size, size] {
            put32(&mut central, v);
        }
        for v in [name.len() as u16, 0, 0, 0, 0] {
            put16(&mut central, v);
        }
        put32(&mut central, 0);
        put32(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let central_offset = out.len() as u32;
    let central_size = central.len() as u32;
    out.extend_from_slice(&central);
    // End of central directory.
    put32(&mut out, 0x0605_4b50);
    for v in [0, 0, entries.len() as u16, entries.len() as u16] {
        put16(&mut out, v);
    }
    put32(&mut out, central_size);
    put32(&mut out, central_offset);
    put16(&mut out, 0);
    out
}

fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// CRC-32 (IEEE, reflected), as zip requires. Bitwise: exports are a few KB, made on a click.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: Option<&str>, language: &str, content: &str, main: bool) -> AnswerFile {
        AnswerFile { name: name.map(str::to_owned), language: language.into(), content: content.into(), main }
    }

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn names_are_safe_unique_and_fall_back_to_the_language() {
        let files = [
            file(Some("index.html"), "html", "", true),
            file(None, "css", "", false),
            file(Some("../../etc/passwd"), "plaintext", "", false),
            file(Some("style.css"), "css", "", false),
            file(Some("my file?.js"), "javascript", "", false),
            file(Some("js/app.js"), "javascript", "", false),
        ];
        assert_eq!(
            file_names(&files),
            ["index.html", "style.css", "etc/passwd", "style-2.css", "script.js", "js/app.js"]
        );
    }

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

    /// Reads back what `zip_stored` wrote, following the central directory as unzip tools do.
    fn read_zip(zip: &[u8]) -> Vec<(String, Vec<u8>)> {
        let u16_at = |at: usize| u16::from_le_bytes([zip[at], zip[at + 1]]) as usize;
        let u32_at = |at: usize| u32::from_le_bytes(zip[at..at + 4].try_into().unwrap()) as usize;
        let end = zip.len() - 22;
        assert_eq!(u32_at(end), 0x0605_4b50, "end of central directory");
        let count = u16_at(end + 10);
        let mut at = u32_at(end + 16);
        let mut out = Vec::new();
        for _ in 0..count {
            assert_eq!(u32_at(at), 0x0201_4b50, "central record");
            let (crc, size, name_len) = (u32_at(at + 16), u32_at(at + 24), u16_at(at + 28));
            let local = u32_at(at + 42);
            let name = String::from_utf8(zip[at + 46..at + 46 + name_len].to_vec()).unwrap();
            assert_eq!(u32_at(local), 0x0403_4b50, "local header");
            let data_at = local + 30 + u16_at(local + 26) + u16_at(local + 28);
            let data = zip[data_at..data_at + size].to_vec();
            assert_eq!(crc32(&data) as usize, crc, "{name}: checksum");
            out.push((name, data));
            at += 46 + name_len;
        }
        out
    }

    #[test]
    fn a_zip_holds_every_file_with_the_edited_main_one() {
        let files = [file(Some("index.html"), "html", "<p>old</p>", true), file(None, "css", "p{}\n", false)];
        let zip = answer_zip(&files, Some("<p>new ✓</p>"));
        let read = read_zip(&zip);
        assert_eq!(
            read,
            [
                ("index.html".to_owned(), "<p>new ✓</p>".as_bytes().to_vec()),
                ("style.css".into(), b"p{}\n".to_vec())
            ]
        );
        assert_eq!(answer_zip(&files, Some("<p>new ✓</p>")), zip, "the same files give the same bytes");
    }

    #[test]
    fn an_empty_zip_is_still_a_zip() {
        assert!(read_zip(&zip_stored(&[])).is_empty());
    }
}
