//! Zip archives: an answer's files under safe, unique names.

use flint_protocol::worker::AnswerFile;

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
        let name = unique_name(&wanted, &taken);
        taken.push(name);
    }
    taken
}

/// `wanted`, or when a name in `taken` already has it, `wanted` with `-2`, `-3`… before its
/// extension (`App-2.tsx`): nothing in an archive is written over.
pub fn unique_name(wanted: &str, taken: &[String]) -> String {
    let mut name = wanted.to_owned();
    let mut n = 2;
    while taken.contains(&name) {
        name = match wanted.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && !stem.ends_with('/') => format!("{stem}-{n}.{ext}"),
            _ => format!("{wanted}-{n}"),
        };
        n += 1;
    }
    name
}

/// `name` as a relative path of plain segments (letters, digits, `.`, `_`, `-`): no `..`, no
/// absolute path, no empty segment; `None` when nothing is left.
pub fn safe_name(name: &str) -> Option<String> {
    let segments: Vec<&str> = name
        .split(['/', '\\'])
        .filter(|s| !s.is_empty() && *s != "." && *s != "..")
        .filter(|s| s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .collect();
    (!segments.is_empty()).then(|| segments.join("/"))
}

pub(super) fn default_name(language: &str) -> String {
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
