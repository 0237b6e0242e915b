//! Reads an image's format and size from its header alone, every read bounds-checked.
//!
//! Layouts: PNG's IHDR (PNG spec §11.2.2), GIF's logical screen descriptor (GIF89a §18), WebP's
//! `VP8 `, `VP8L` and `VP8X` chunks (RFC 9649), and JPEG's markers up to the first start-of-frame
//! (ITU T.81 §B.1).

use super::{ImageInfo, ImageRefusal, ImageType, MAX_SOURCE_BYTES, check_size};

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Reads the format (by magic bytes, never by the name or a claimed type) and the size from the
/// header only, and checks them against [`MAX_SOURCE_BYTES`], [`super::MAX_SIDE`] and
/// [`super::MAX_PIXELS`].
pub fn inspect(bytes: &[u8]) -> Result<ImageInfo, ImageRefusal> {
    if bytes.is_empty() {
        return Err(ImageRefusal::Empty);
    }
    if bytes.len() > MAX_SOURCE_BYTES {
        return Err(ImageRefusal::FileTooLarge(bytes.len()));
    }
    let (kind, width, height) = if starts(bytes, PNG_SIGNATURE) {
        let (w, h) = png(bytes)?;
        (ImageType::Png, w, h)
    } else if starts(bytes, b"GIF87a") || starts(bytes, b"GIF89a") {
        let (w, h) = gif(bytes)?;
        (ImageType::Gif, w, h)
    } else if starts(bytes, b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        let (w, h) = webp(bytes)?;
        (ImageType::Webp, w, h)
    } else if starts(bytes, b"\xff\xd8") {
        let (w, h) = jpeg(bytes)?;
        (ImageType::Jpeg, w, h)
    } else if is_prefix_of_signature(bytes) {
        return Err(ImageRefusal::Truncated);
    } else {
        return Err(other_format(bytes));
    };
    check_size(width, height)?;
    Ok(ImageInfo { kind, width, height })
}

fn starts(bytes: &[u8], magic: &[u8]) -> bool {
    bytes.len() >= magic.len() && &bytes[..magic.len()] == magic
}

/// A file shorter than any signature that still matches one's start (a cut download).
fn is_prefix_of_signature(bytes: &[u8]) -> bool {
    [PNG_SIGNATURE, b"GIF89a", b"GIF87a", b"RIFF", b"\xff\xd8"]
        .iter()
        .any(|sig| bytes.len() < sig.len() && sig.starts_with(bytes))
        || (bytes.len() < 12 && starts(bytes, b"RIFF"))
}

fn u16_be(bytes: &[u8], at: usize) -> Result<u16, ImageRefusal> {
    let b = bytes.get(at..at + 2).ok_or(ImageRefusal::Truncated)?;
    Ok(u16::from_be_bytes([b[0], b[1]]))
}

fn u16_le(bytes: &[u8], at: usize) -> Result<u16, ImageRefusal> {
    let b = bytes.get(at..at + 2).ok_or(ImageRefusal::Truncated)?;
    Ok(u16::from_le_bytes([b[0], b[1]]))
}

fn u24_le(bytes: &[u8], at: usize) -> Result<u32, ImageRefusal> {
    let b = bytes.get(at..at + 3).ok_or(ImageRefusal::Truncated)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], 0]))
}

fn u32_be(bytes: &[u8], at: usize) -> Result<u32, ImageRefusal> {
    let b = bytes.get(at..at + 4).ok_or(ImageRefusal::Truncated)?;
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn png(bytes: &[u8]) -> Result<(u32, u32), ImageRefusal> {
    const BAD: fn(&'static str) -> ImageRefusal = |why| ImageRefusal::Malformed { kind: "PNG", why };
    let length = u32_be(bytes, 8)?;
    let kind = bytes.get(12..16).ok_or(ImageRefusal::Truncated)?;
    if kind != b"IHDR" {
        return Err(BAD("its first chunk is not IHDR"));
    }
    if length != 13 {
        return Err(BAD("its IHDR chunk has the wrong length"));
    }
    // The whole IHDR data must be there; widths over 2^31 are invalid in PNG, and the side limit
    // refuses them anyway.
    if bytes.len() < 29 {
        return Err(ImageRefusal::Truncated);
    }
    Ok((u32_be(bytes, 16)?, u32_be(bytes, 20)?))
}

fn gif(bytes: &[u8]) -> Result<(u32, u32), ImageRefusal> {
    // The logical screen descriptor is 7 bytes after the 6-byte signature; a file cut inside it
    // is not an image even when the two sizes came through.
    if bytes.len() < 13 {
        return Err(ImageRefusal::Truncated);
    }
    Ok((u32::from(u16_le(bytes, 6)?), u32::from(u16_le(bytes, 8)?)))
}

fn webp(bytes: &[u8]) -> Result<(u32, u32), ImageRefusal> {
    const BAD: fn(&'static str) -> ImageRefusal = |why| ImageRefusal::Malformed { kind: "WebP", why };
    let chunk = bytes.get(12..16).ok_or(ImageRefusal::Truncated)?;
    match chunk {
        b"VP8 " => {
            // 4-byte chunk size, 3-byte frame tag, then the key frame's start code and sizes.
            if bytes.get(23..26).ok_or(ImageRefusal::Truncated)? != b"\x9d\x01\x2a" {
                return Err(BAD("its VP8 frame has no start code"));
            }
            let width = u32::from(u16_le(bytes, 26)? & 0x3fff);
            let height = u32::from(u16_le(bytes, 28)? & 0x3fff);
            Ok((width, height))
        }
        b"VP8L" => {
            if *bytes.get(20).ok_or(ImageRefusal::Truncated)? != 0x2f {
                return Err(BAD("its VP8L stream has no signature"));
            }
            let b = bytes.get(21..25).ok_or(ImageRefusal::Truncated)?;
            let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            Ok(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Ok((u24_le(bytes, 24)? + 1, u24_le(bytes, 27)? + 1)),
        _ => Err(BAD("its first chunk is not VP8, VP8L or VP8X")),
    }
}

fn jpeg(bytes: &[u8]) -> Result<(u32, u32), ImageRefusal> {
    const BAD: fn(&'static str) -> ImageRefusal = |why| ImageRefusal::Malformed { kind: "JPEG", why };
    let mut at = 2;
    loop {
        if *bytes.get(at).ok_or(ImageRefusal::Truncated)? != 0xff {
            return Err(BAD("a marker is missing"));
        }
        // Any number of 0xFF fill bytes may precede a marker (T.81 §B.1.1.2).
        while *bytes.get(at).ok_or(ImageRefusal::Truncated)? == 0xff {
            at += 1;
        }
        let marker = bytes[at];
        at += 1;
        match marker {
            // Markers without a length: TEM and restart markers.
            0x01 | 0xd0..=0xd7 => continue,
            0xd8 => return Err(BAD("it starts twice")),
            0xd9 | 0xda => return Err(BAD("it has no frame header")),
            0x00 => return Err(BAD("a marker is missing")),
            _ => {}
        }
        let length = usize::from(u16_be(bytes, at)?);
        if length < 2 {
            return Err(BAD("a segment has an impossible length"));
        }
        // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
        if (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
            // Length, precision, then height before width.
            let height = u32::from(u16_be(bytes, at + 3)?);
            let width = u32::from(u16_be(bytes, at + 5)?);
            return Ok((width, height));
        }
        at += length;
    }
}

/// Names a format Flint does not take, so the sentence can say what the file is.
fn other_format(bytes: &[u8]) -> ImageRefusal {
    let head = &bytes[..bytes.len().min(1024)];
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    let lower = trimmed.to_ascii_lowercase();
    if lower.starts_with('<') && lower.contains("<svg") {
        return ImageRefusal::Svg;
    }
    let ftyp = bytes.get(4..12);
    let known: [(bool, &'static str); 6] = [
        (ftyp.is_some_and(|f| f.starts_with(b"ftypavi")), "AVIF image"),
        (ftyp.is_some_and(|f| f.starts_with(b"ftyphei") || f.starts_with(b"ftypmif")), "HEIC photo"),
        (starts(bytes, b"BM"), "BMP image"),
        (starts(bytes, b"II*\0") || starts(bytes, b"MM\0*"), "TIFF image"),
        (starts(bytes, b"%PDF"), "PDF document"),
        (starts(bytes, b"\0\0\x01\0"), "Windows icon"),
    ];
    known
        .iter()
        .find(|(found, _)| *found)
        .map_or(ImageRefusal::NotAnImage, |(_, name)| ImageRefusal::OtherFormat(name))
}
