use super::*;

/// A test picture: a light page with filled rectangles (x, y, w, h, colour) drawn in order.
fn draw(width: u32, height: u32, rects: &[(u32, u32, u32, u32, [u8; 3])]) -> Rgba {
    let mut data = vec![255u8; (width * height * 4) as usize];
    for &(x, y, w, h, [r, g, b]) in rects {
        for yy in y..(y + h).min(height) {
            for xx in x..(x + w).min(width) {
                let i = ((yy * width + xx) * 4) as usize;
                data[i..i + 4].copy_from_slice(&[r, g, b, 255]);
            }
        }
    }
    Rgba::new(width, height, data).expect("a valid test image")
}

const DARK: [u8; 3] = [30, 34, 40];
const BLUE: [u8; 3] = [40, 90, 200];
const GREY: [u8; 3] = [200, 200, 200];
const TEXT: [u8; 3] = [60, 60, 60];

/// Lines of "text" (thin dark bars) in a column, `dy` apart.
fn lines(x: u32, y: u32, width: u32, count: u32, dy: u32) -> Vec<(u32, u32, u32, u32, [u8; 3])> {
    (0..count).map(|i| (x, y + i * dy, width - (i % 3) * 20, 8, TEXT)).collect()
}

/// A dark header, a card of text, a blue button.
fn landing(shift: u32, line_gap: u32) -> Vec<(u32, u32, u32, u32, [u8; 3])> {
    let mut rects = vec![
        (0, 0, 640, 80, DARK),
        (60 + shift, 120 + shift, 520, 200, GREY),
        (80 + shift, 400, 160, 40, BLUE),
    ];
    rects.extend(lines(80 + shift, 140 + shift, 440, 8, line_gap));
    rects
}

/// A light sidebar at the left and text at the right, no header.
fn dashboard() -> Vec<(u32, u32, u32, u32, [u8; 3])> {
    let mut rects = vec![(0, 0, 160, 480, GREY)];
    rects.extend(lines(200, 40, 400, 16, 26));
    rects
}

#[test]
fn an_identical_page_scores_about_one_with_nothing_to_say() {
    let mock = draw(640, 480, &landing(0, 22));
    let likeness = compare(&mock, &mock.clone());
    assert!(likeness.score > 0.99, "{likeness:?}");
    assert!(likeness.findings.is_empty(), "{likeness:?}");
}

#[test]
fn a_shifted_page_with_other_text_ranks_above_another_layout() {
    let mock = draw(640, 480, &landing(0, 22));
    let near = compare(&mock, &draw(640, 480, &landing(6, 24)));
    let far = compare(&mock, &draw(640, 480, &dashboard()));
    assert!(near.score > far.score + 0.15, "near {near:?}, far {far:?}");
    assert!(near.score > 0.8, "{near:?}");
}

#[test]
fn images_of_different_sizes_compare_by_layout() {
    // The page drawn at twice the size: the same layout, every cell twice the pixels.
    let mock = draw(320, 240, &[(0, 0, 320, 40, DARK), (40, 200, 80, 20, BLUE)]);
    let page = draw(640, 480, &[(0, 0, 640, 80, DARK), (80, 400, 160, 40, BLUE)]);
    let likeness = compare(&mock, &page);
    assert!(likeness.score > 0.97, "{likeness:?}");
    assert!(likeness.findings.is_empty(), "{likeness:?}");
}

#[test]
fn tiny_huge_and_short_images_are_refused_with_a_sentence() {
    let tiny = Rgba::new(1, 1, vec![0; 4]).expect_err("1×1");
    assert!(matches!(tiny, ImageError::TooSmall { .. }));
    assert!(tiny.to_string().contains("at least 8×8"), "{tiny}");
    // Refused before any byte is looked at: the size alone is too much.
    let huge = Rgba::new(30_000, 30_000, Vec::new()).expect_err("30,000 px sides");
    assert!(huge.to_string().contains("downscale it first"), "{huge}");
    let many = Rgba::new(16_000, 16_000, Vec::new()).expect_err("256 megapixels");
    assert!(matches!(many, ImageError::TooLarge { .. }));
    let short = Rgba::new(10, 10, vec![0; 399]).expect_err("a byte short");
    assert!(short.to_string().contains("399 bytes"), "{short}");
}

#[test]
fn a_page_taller_than_the_picture_says_by_how_much() {
    let mock = draw(640, 480, &landing(0, 22));
    let mut rects = landing(0, 22);
    rects.push((60, 520, 520, 160, GREY));
    let page = draw(640, 720, &rects);
    let likeness = compare(&mock, &page);
    let text: Vec<&str> = likeness.findings.iter().map(|f| f.text.as_str()).collect();
    assert!(text.iter().any(|t| t.starts_with("the page is 240 px taller")), "{text:?}");
    // The extra content costs, but the matching part still reads as alike.
    let same = compare(&mock, &mock.clone()).score;
    assert!(likeness.score < same && likeness.score > 0.6, "{likeness:?}");
}

#[test]
fn blank_space_past_the_end_costs_little() {
    let mock = draw(640, 480, &landing(0, 22));
    let page = draw(640, 600, &landing(0, 22));
    let likeness = compare(&mock, &page);
    assert!(likeness.score > 0.95, "{likeness:?}");
    assert!(likeness.findings[0].text.contains("120 px taller"), "{likeness:?}");
}

#[test]
fn a_header_of_another_colour_is_named() {
    let mock = draw(640, 480, &landing(0, 22));
    let mut rects = landing(0, 22);
    rects[0].4 = [250, 250, 250];
    let likeness = compare(&mock, &draw(640, 480, &rects));
    let text: Vec<&str> = likeness.findings.iter().map(|f| f.text.as_str()).collect();
    assert!(
        text.iter().any(|t| t.contains("top band (0–60 px) is dark in the picture and light in the page")),
        "{text:?}"
    );
}

#[test]
fn a_missing_sidebar_is_named() {
    let mock = draw(640, 480, &dashboard());
    let mut rects = dashboard();
    rects.remove(0);
    let likeness = compare(&mock, &draw(640, 480, &rects));
    let text: Vec<&str> = likeness.findings.iter().map(|f| f.text.as_str()).collect();
    assert!(
        text.iter().any(|t| t.starts_with("the picture has a column at the left (about 160 px wide)")),
        "{text:?}"
    );
}

#[test]
fn a_very_tall_page_is_compared_down_to_the_grid_limit() {
    let mock = draw(640, 480, &landing(0, 22));
    let page = draw(640, 16_000, &landing(0, 22));
    let likeness = compare(&mock, &page);
    assert!(likeness.findings[0].text.contains("15520 px taller"), "{likeness:?}");
    assert!((0.0..=1.0).contains(&likeness.score));
}

#[test]
fn transparent_pixels_read_as_white() {
    let clear = Rgba::new(16, 16, vec![0; 16 * 16 * 4]).expect("valid");
    let white = Rgba::new(16, 16, vec![255; 16 * 16 * 4]).expect("valid");
    assert!(compare(&clear, &white).score > 0.99);
}

mod requests {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use flint_protocol::worker::RgbaImage;

    use super::super::request::answer;

    fn image(width: u32, height: u32, value: u8) -> RgbaImage {
        RgbaImage { width, height, rgba: STANDARD.encode(vec![value; (width * height * 4) as usize]) }
    }

    #[test]
    fn a_request_is_answered_with_a_score_and_its_findings() {
        let report = answer(3, &image(64, 48, 255), &image(64, 96, 255), || 0.0);
        assert_eq!(report.job, 3);
        assert!(report.score.is_some_and(|s| s > 0.9), "{report:?}");
        assert_eq!(report.findings, ["the page is 48 px taller than the picture (96 px against 48 px)"]);
        assert_eq!(report.problem, None);
    }

    #[test]
    fn a_drawing_that_claims_huge_sides_is_refused_before_decoding() {
        // 30,000 px sides and four bytes of pixels: refused on the size alone.
        let lie = RgbaImage { width: 30_000, height: 30_000, rgba: "AAAA".into() };
        let report = answer(1, &image(64, 48, 255), &lie, || 0.0);
        assert_eq!(report.score, None);
        let problem = report.problem.expect("a sentence");
        assert!(
            problem.starts_with("The page's drawing could not be compared: the image is 30000×30000 px"),
            "{problem}"
        );
    }

    #[test]
    fn pixels_that_do_not_fill_the_size_are_refused() {
        let mut short = image(64, 48, 255);
        short.rgba.truncate(short.rgba.len() - 4);
        let report = answer(1, &short, &image(64, 48, 255), || 0.0);
        assert!(report.problem.is_some_and(|p| p.starts_with("The picture could not be compared")));
        let mangled = RgbaImage { width: 8, height: 8, rgba: "*".repeat(344) };
        let problem = answer(1, &mangled, &image(64, 48, 255), || 0.0).problem.expect("a sentence");
        assert!(problem.ends_with("its pixels are not base64 (standard alphabet, padded)."), "{problem}");
    }
}
