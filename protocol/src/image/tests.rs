use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::*;

/// A whole 64 × 48 red PNG, written by Python's zlib and struct (IHDR, one IDAT, IEND).
const REAL_PNG: &[u8] = b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x40\x00\x00\x00\x30\
\x08\x02\x00\x00\x00\x2e\x29\xeb\x48\x00\x00\x00\x5c\x49\x44\x41\x54\x78\x9c\xed\xcf\x01\x09\x00\x40\x10\x84\xc0\xed\x5f\
\xfa\x3e\x86\xc8\x0b\x06\x18\x77\x9b\x3a\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\
\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\
\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xd0\x80\x3c\x5e\xf0\xfb\xc0\x03\xa5\xc1\xf4\xa6\x8f\x2c\x54\x2f\x00\x00\x00\
\x00\x49\x45\x4e\x44\xae\x42\x60\x82";

/// The classic smallest GIF: 1 × 1, one colour, by hand.
const REAL_GIF: &[u8] =
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\
\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";

fn png(width: u32, height: u32) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend(width.to_be_bytes());
    b.extend(height.to_be_bytes());
    b.extend(b"\x08\x06\0\0\0\0\0\0\0");
    b
}

fn gif(width: u16, height: u16) -> Vec<u8> {
    let mut b = b"GIF87a".to_vec();
    b.extend(width.to_le_bytes());
    b.extend(height.to_le_bytes());
    b.extend(b"\0\0\0;");
    b
}

fn riff(chunk: &[u8], body: &[u8]) -> Vec<u8> {
    let mut b = b"RIFF\0\0\0\0WEBP".to_vec();
    b.extend(chunk);
    b.extend((body.len() as u32).to_le_bytes());
    b.extend(body);
    b
}

fn webp_lossy(width: u16, height: u16) -> Vec<u8> {
    let mut body = b"\x50\x02\x00\x9d\x01\x2a".to_vec();
    body.extend(width.to_le_bytes());
    body.extend(height.to_le_bytes());
    riff(b"VP8 ", &body)
}

fn webp_lossless(width: u32, height: u32) -> Vec<u8> {
    let bits = (width - 1) | ((height - 1) << 14);
    let mut body = vec![0x2f];
    body.extend(bits.to_le_bytes());
    riff(b"VP8L", &body)
}

fn webp_extended(width: u32, height: u32) -> Vec<u8> {
    let mut body = vec![0x10, 0, 0, 0];
    body.extend(&(width - 1).to_le_bytes()[..3]);
    body.extend(&(height - 1).to_le_bytes()[..3]);
    riff(b"VP8X", &body)
}

/// SOI, an APP0 (JFIF), fill bytes, a DQT, then SOF`marker`.
fn jpeg_with(marker: u8, width: u16, height: u16) -> Vec<u8> {
    let mut b = b"\xff\xd8\xff\xe0\x00\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0".to_vec();
    b.extend(b"\xff\xff\xff\xdb\x00\x04\x00\x00");
    b.extend([0xff, marker, 0x00, 0x0b, 0x08]);
    b.extend(height.to_be_bytes());
    b.extend(width.to_be_bytes());
    b.extend(b"\x01\x01\x11\x00\xff\xd9");
    b
}

fn jpeg(width: u16, height: u16) -> Vec<u8> {
    jpeg_with(0xc0, width, height)
}

fn info(kind: ImageType, width: u32, height: u32) -> Result<ImageInfo, ImageRefusal> {
    Ok(ImageInfo { kind, width, height })
}

#[test]
fn each_format_is_read_from_its_header() {
    assert_eq!(inspect(REAL_PNG), info(ImageType::Png, 64, 48));
    assert_eq!(inspect(REAL_GIF), info(ImageType::Gif, 1, 1));
    assert_eq!(inspect(&gif(300, 20)), info(ImageType::Gif, 300, 20));
    assert_eq!(inspect(&webp_lossy(640, 480)), info(ImageType::Webp, 640, 480));
    assert_eq!(inspect(&webp_lossless(10, 7)), info(ImageType::Webp, 10, 7));
    assert_eq!(inspect(&webp_extended(1000, 16_000)), info(ImageType::Webp, 1000, 16_000));
    assert_eq!(inspect(&jpeg(10, 12)), info(ImageType::Jpeg, 10, 12));
    // Progressive (SOF2) is a frame header too; DHT (C4) shares the range and is not.
    assert_eq!(inspect(&jpeg_with(0xc2, 33, 44)), info(ImageType::Jpeg, 33, 44));
    assert!(matches!(
        inspect(&jpeg_with(0xc4, 33, 44)),
        Err(ImageRefusal::Truncated | ImageRefusal::Malformed { .. })
    ));
}

#[test]
fn a_claimed_name_or_type_is_never_trusted_only_the_bytes() {
    // A PNG under any name is a PNG; check_sent compares the claim with the bytes.
    let sent =
        ImageData { media_type: ImageType::Jpeg, data: STANDARD.encode(REAL_PNG), width: 64, height: 48 };
    assert_eq!(
        check_sent(&sent),
        Err(ImageRefusal::TypeMismatch { claimed: ImageType::Jpeg, found: ImageType::Png })
    );
}

#[test]
fn truncated_files_are_refused_as_such() {
    // Each file with the length of its header: any cut before that is a truncation.
    let files = [(REAL_PNG.to_vec(), 29), (gif(5, 5), 13), (webp_lossy(5, 5), 30), (webp_lossless(5, 5), 25)];
    let more = [(webp_extended(5, 5), 30), (jpeg(5, 5), 35)];
    for (whole, header) in files.into_iter().chain(more) {
        assert!(inspect(&whole).is_ok());
        for cut in 1..header {
            let got = inspect(&whole[..cut]);
            assert_eq!(got, Err(ImageRefusal::Truncated), "{:?} cut at {cut}", &whole[..cut]);
        }
    }
    let text = ImageRefusal::Truncated.to_string();
    assert!(text.contains("ends inside its header"), "{text}");
}

#[test]
fn lying_headers_are_refused() {
    let mut not_ihdr = png(4, 4);
    not_ihdr[12..16].copy_from_slice(b"IDAT");
    assert!(matches!(inspect(&not_ihdr), Err(ImageRefusal::Malformed { kind: "PNG", .. })));
    let mut long_ihdr = png(4, 4);
    long_ihdr[11] = 0xff;
    assert!(matches!(inspect(&long_ihdr), Err(ImageRefusal::Malformed { kind: "PNG", .. })));
    let mut no_start_code = webp_lossy(4, 4);
    no_start_code[24] = 0;
    assert!(matches!(inspect(&no_start_code), Err(ImageRefusal::Malformed { kind: "WebP", .. })));
    assert!(matches!(inspect(&riff(b"ALPH", &[0; 20])), Err(ImageRefusal::Malformed { kind: "WebP", .. })));
    // A JPEG whose scan starts before any frame header; one whose segment length is impossible.
    assert!(matches!(
        inspect(b"\xff\xd8\xff\xda\x00\x02"),
        Err(ImageRefusal::Malformed { kind: "JPEG", .. })
    ));
    assert!(matches!(
        inspect(b"\xff\xd8\xff\xe0\x00\x01\0\0"),
        Err(ImageRefusal::Malformed { kind: "JPEG", .. })
    ));
    assert!(matches!(inspect(b"\xff\xd8\x00\x00"), Err(ImageRefusal::Malformed { kind: "JPEG", .. })));
}

#[test]
fn svg_and_other_formats_are_named() {
    let svg = "\u{feff}  <?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>";
    assert_eq!(inspect(svg.as_bytes()), Err(ImageRefusal::Svg));
    assert_eq!(inspect(b"<svg onload=alert(1)>"), Err(ImageRefusal::Svg));
    assert!(ImageRefusal::Svg.to_string().contains("SVG can carry scripts"));
    assert_eq!(inspect(b"BM\0\0\0\0\0\0"), Err(ImageRefusal::OtherFormat("BMP image")));
    assert_eq!(inspect(b"\0\0\0\x1cftypheic\0\0"), Err(ImageRefusal::OtherFormat("HEIC photo")));
    assert_eq!(inspect(b"%PDF-1.7"), Err(ImageRefusal::OtherFormat("PDF document")));
    assert_eq!(inspect(b"hello, world"), Err(ImageRefusal::NotAnImage));
    assert_eq!(inspect(b""), Err(ImageRefusal::Empty));
}

#[test]
fn zero_long_and_bomb_sizes_are_refused_before_decoding() {
    assert_eq!(inspect(&png(0, 10)), Err(ImageRefusal::ZeroSide { width: 0, height: 10 }));
    assert_eq!(inspect(&jpeg(10, 0)), Err(ImageRefusal::ZeroSide { width: 10, height: 0 }));
    assert_eq!(inspect(&gif(30_000, 200)), Err(ImageRefusal::SideTooLong { width: 30_000, height: 200 }));
    assert_eq!(
        ImageRefusal::SideTooLong { width: 30_000, height: 200 }.to_string(),
        "The image is 30000 × 200 px; the most Flint reads is 16384 px a side: crop or shrink it"
    );
    assert_eq!(
        inspect(&png(100_000, 100_000)),
        Err(ImageRefusal::SideTooLong { width: 100_000, height: 100_000 })
    );
    // Within the side limit, beyond the pixel limit: 16,000 × 16,000 is 256 Mpx.
    let bomb = inspect(&webp_extended(16_000, 16_000));
    assert_eq!(bomb, Err(ImageRefusal::TooManyPixels { width: 16_000, height: 16_000 }));
    assert!(bomb.unwrap_err().to_string().contains("256 million pixels"));
    assert_eq!(inspect(&png(MAX_SIDE, 2_000)), info(ImageType::Png, MAX_SIDE, 2_000));
}

#[test]
fn a_file_over_the_source_limit_is_refused_unread() {
    let mut big = png(10, 10);
    big.resize(MAX_SOURCE_BYTES + 1, 0);
    assert_eq!(inspect(&big), Err(ImageRefusal::FileTooLarge(MAX_SOURCE_BYTES + 1)));
}

#[test]
fn random_bytes_never_panic() {
    // A small xorshift so the test is reproducible without a dependency.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let prefixes: [&[u8]; 6] =
        [b"", b"\xff\xd8", b"RIFF\0\0\0\0WEBPVP8", b"\x89PNG\r\n\x1a\n", b"GIF89a", b"<"];
    for round in 0..20_000 {
        let len = (next() % 64) as usize;
        let mut bytes = prefixes[round % prefixes.len()].to_vec();
        bytes.extend((0..len).map(|_| next() as u8));
        let _ = inspect(&bytes);
        let sent =
            ImageData { media_type: ImageType::Png, data: STANDARD.encode(&bytes), width: 1, height: 1 };
        let _ = check_sent(&sent);
    }
}

fn sent(bytes: &[u8], media_type: ImageType, width: u32, height: u32) -> ImageData {
    ImageData { media_type, data: STANDARD.encode(bytes), width, height }
}

#[test]
fn check_sent_accepts_an_honest_image() {
    let image = sent(REAL_PNG, ImageType::Png, 64, 48);
    assert_eq!(check_sent(&image), info(ImageType::Png, 64, 48));
    assert_eq!(image.byte_len(), REAL_PNG.len());
    assert!(image.data_url().starts_with("data:image/png;base64,iVBORw0KGgo"));
    assert_eq!(summary(std::slice::from_ref(&image)), "1 image, 1 KB");
}

#[test]
fn check_sent_refuses_forgeries() {
    let mut bad = sent(REAL_PNG, ImageType::Png, 64, 48);
    bad.data.insert(5, '!');
    assert_eq!(check_sent(&bad), Err(ImageRefusal::BadBase64));
    assert_eq!(
        check_sent(&sent(REAL_PNG, ImageType::Png, 640, 480)),
        Err(ImageRefusal::SizeMismatch { claimed_width: 640, claimed_height: 480, width: 64, height: 48 })
    );
    assert_eq!(check_sent(&sent(b"<svg/>", ImageType::Png, 1, 1)), Err(ImageRefusal::Svg));
    assert_eq!(
        check_sent(&sent(&png(4096, 100), ImageType::Png, 4096, 100)),
        Err(ImageRefusal::SideTooLongToSend { width: 4096, height: 100 })
    );
    let mut heavy = png(10, 10);
    heavy.resize(MAX_SEND_BYTES + 1, 0);
    assert_eq!(
        check_sent(&sent(&heavy, ImageType::Png, 10, 10)),
        Err(ImageRefusal::TooLargeToSend(MAX_SEND_BYTES + 1))
    );
}

#[test]
fn media_types_round_trip_through_serde() {
    let image = sent(&gif(2, 3), ImageType::Gif, 2, 3);
    let json = serde_json::to_value(&image).unwrap();
    assert_eq!(json["media_type"], "image/gif");
    assert_eq!(serde_json::from_value::<ImageData>(json).unwrap(), image);
    assert!(serde_json::from_str::<ImageType>("\"image/svg+xml\"").is_err());
    assert_eq!(ImageType::from_media_type("IMAGE/JPEG"), Some(ImageType::Jpeg));
}

#[test]
fn token_estimates_follow_the_published_tile_rule() {
    // OpenAI's worked examples: 1024 × 1024 is 765 tokens; 2048 × 4096 is 1105.
    assert_eq!(estimated_tokens(1024, 1024), 765);
    assert_eq!(estimated_tokens(2048, 4096), 1105);
    assert_eq!(estimated_tokens(64, 48), 255);
}
