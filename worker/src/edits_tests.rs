//! Unit tests of search/replace parsing and application (a separate file keeps `edits.rs` readable).

use super::*;

fn block(search: &str, replace: &str) -> EditBlock {
    EditBlock { search: search.into(), replace: replace.into(), file: None }
}

fn applied(outcome: &Outcome) -> &Applied {
    match outcome {
        Outcome::Applied(a) => a,
        other => panic!("expected Applied, got {other:?}"),
    }
}

const ANSWER: &str = "Here is the change:\n\n```html\n\
<<<<<<< SEARCH\n<h1>Hi</h1>\n=======\n<h1>Grüße 🌍</h1>\n<p>new</p>\n>>>>>>> REPLACE\n```\n\n\
And the style:\n<<<<<<< SEARCH\n  color: red;\n=======\n  color: blue;\n>>>>>>> REPLACE\nDone.\n";

fn answer_blocks() -> Vec<EditBlock> {
    vec![
        block("<h1>Hi</h1>\n", "<h1>Grüße 🌍</h1>\n<p>new</p>\n"),
        block("  color: red;\n", "  color: blue;\n"),
    ]
}

#[test]
fn blocks_inside_and_outside_fences_are_found_and_prose_ignored() {
    let parsed = parse_blocks(ANSWER);
    assert_eq!(parsed.blocks, answer_blocks());
    assert_eq!(parsed.unfinished, None);
}

#[test]
fn a_block_split_at_every_position_comes_out_once_when_its_replace_line_ends() {
    let ends: Vec<usize> = ANSWER.match_indices(">>>>>>> REPLACE\n").map(|(i, m)| i + m.len()).collect();
    for cut in (0..=ANSWER.len()).filter(|&i| ANSWER.is_char_boundary(i)) {
        let mut parser = BlockParser::new();
        let mut got = parser.push(&ANSWER[..cut]);
        assert_eq!(got.len(), ends.iter().filter(|&&e| e <= cut).count(), "cut at {cut}");
        got.extend(parser.push(&ANSWER[cut..]));
        got.extend(parser.finish().blocks);
        assert_eq!(got, answer_blocks(), "cut at {cut}");
    }
}

#[test]
fn byte_by_byte_and_three_way_splits_agree() {
    let chars: Vec<(usize, char)> = ANSWER.char_indices().collect();
    let mut parser = BlockParser::new();
    let mut got = Vec::new();
    for (i, c) in &chars {
        got.extend(parser.push(&ANSWER[*i..*i + c.len_utf8()]));
    }
    assert_eq!(got, answer_blocks());
    let bounds: Vec<usize> = (0..=ANSWER.len()).filter(|&i| ANSWER.is_char_boundary(i)).step_by(7).collect();
    for &a in &bounds {
        for &b in bounds.iter().filter(|&&b| b >= a) {
            let mut parser = BlockParser::new();
            let mut got = parser.push(&ANSWER[..a]);
            got.extend(parser.push(&ANSWER[a..b]));
            got.extend(parser.push(&ANSWER[b..]));
            got.extend(parser.finish().blocks);
            assert_eq!(got, answer_blocks(), "cuts at {a}, {b}");
        }
    }
}

#[test]
fn markers_tolerate_length_whitespace_and_crlf() {
    let answer = "  <<<<< SEARCH  \r\na\r\n=========\r\nb\r\n>>>>>>>>> REPLACE";
    let parsed = parse_blocks(answer);
    assert_eq!(parsed.blocks, [block("a\n", "b\n")], "the last line needs no newline");
    assert!(parse_blocks("<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n").blocks.is_empty());
    assert!(parse_blocks("<<<<<<< search\na\n=======\nb\n>>>>>>> REPLACE\n").blocks.is_empty());
}

#[test]
fn an_unfinished_block_is_reported_not_dropped() {
    let parsed = parse_blocks("<<<<<<< SEARCH\na\n=======\nb\n");
    assert!(parsed.blocks.is_empty());
    assert_eq!(parsed.unfinished, Some(block("a\n", "b\n")));
    let parsed = parse_blocks("<<<<<<< SEARCH\na\n");
    assert_eq!(parsed.unfinished, Some(block("a\n", "")));
}

#[test]
fn a_new_search_before_replace_abandons_the_malformed_block() {
    let mut parser = BlockParser::new();
    let got = parser.push("<<<<<<< SEARCH\nx\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n");
    assert_eq!(got, [block("a\n", "b\n")]);
    assert_eq!(parser.malformed(), 1);
}

#[test]
fn spans_locate_blocks_in_the_answer_whatever_the_chunks() {
    let answer = "Hi\r\n<<<<<<< SEARCH\nx\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\ntext\n\
                  <<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE";
    let first = answer.find("<<<<<<< SEARCH\na").expect("second SEARCH");
    let second = answer.rfind("<<<<<<< SEARCH").expect("last SEARCH");
    let end_first = answer.find("text").expect("prose");
    for size in [1, 2, 5, 13, answer.len()] {
        let mut parser = BlockParser::new();
        let mut got = Vec::new();
        for chunk in answer.as_bytes().chunks(size) {
            got.extend(parser.push(std::str::from_utf8(chunk).expect("ASCII")));
        }
        got.extend(parser.finish().blocks);
        assert_eq!(got.len(), 2, "chunks of {size}");
        assert_eq!(parser.spans(), [first..end_first, second..answer.len()], "chunks of {size}");
    }
    let cut = &answer[..answer.len() - 3];
    let finish = parse_blocks(cut);
    assert_eq!(finish.unfinished_at, Some(second..cut.len()));
}

#[test]
fn empty_sides_and_divider_lines_in_replace() {
    let parsed = parse_blocks(
        "<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nold\n=======\n>>>>>>> REPLACE\n",
    );
    assert_eq!(parsed.blocks, [block("", "new\n"), block("old\n", "")]);
    let parsed = parse_blocks("<<<<<<< SEARCH\na\n=======\n=======\n>>>>>>> REPLACE\n");
    assert_eq!(parsed.blocks, [block("a\n", "=======\n")], "a divider inside REPLACE is content");
}

#[test]
fn answer_kind_tells_edits_from_whole_files() {
    assert_eq!(answer_kind(ANSWER), AnswerKind::Edits);
    assert_eq!(answer_kind("Sure:\n```html\n<p>x</p>\n```\n"), AnswerKind::WholeFile);
    assert_eq!(answer_kind("<!doctype HTML>\n<html><body></body></html>"), AnswerKind::WholeFile);
    assert_eq!(answer_kind("  <html lang=\"de\">"), AnswerKind::WholeFile);
    assert_eq!(answer_kind("Try `color: red` in ```css\nfenced\n```"), AnswerKind::Prose);
    assert_eq!(answer_kind("Just an explanation, ünïcödé."), AnswerKind::Prose);
    assert_eq!(answer_kind(""), AnswerKind::Prose);
}

const FILE: &str = "<html>\n<body>\n  <h1>Hi</h1>\n  <p>\n    color: red;\n  </p>\n</body>\n</html>\n";

#[test]
fn exact_blocks_apply_and_report_ranges_in_the_current_text() {
    let mut file = EditedFile::new(FILE);
    let first = file.apply(&block("  <h1>Hi</h1>\n", "  <h1>Grüße</h1>\n  <h2>🌍</h2>\n"));
    let a = applied(&first);
    assert!(a.exact);
    assert_eq!(a.range, 14..27);
    assert_eq!(&FILE[a.range.clone()], "  <h1>Hi</h1>");
    let before_second = file.text();
    let second = file.apply(&block("    color: red;\n", "    color: blue;\n"));
    let a = applied(&second);
    assert_eq!(&before_second[a.range.clone()], "    color: red;");
    let mut expected = before_second.clone();
    expected.replace_range(a.range.clone(), &a.text);
    assert_eq!(file.text(), expected);
    assert_eq!(
        file.text(),
        "<html>\n<body>\n  <h1>Grüße</h1>\n  <h2>🌍</h2>\n  <p>\n    color: blue;\n  </p>\n</body>\n</html>\n"
    );
}

#[test]
fn a_missing_anchor_is_not_found() {
    let (text, outcomes) = apply_edits(FILE, &[block("<h3>nope</h3>\n", "x\n")]);
    assert_eq!(outcomes, [Outcome::NotFound]);
    assert_eq!(text, FILE);
}

#[test]
fn a_repeated_anchor_is_ambiguous_and_changes_nothing() {
    let file = "a\nx\nb\nx\n";
    let (text, outcomes) = apply_edits(file, &[block("x\n", "y\n")]);
    assert_eq!(outcomes, [Outcome::Ambiguous { matches: 2 }]);
    assert_eq!(text, file);
    // More context makes it unique.
    let (text, _) = apply_edits(file, &[block("b\nx\n", "b\ny\n")]);
    assert_eq!(text, "a\nx\nb\ny\n");
    // Repeated only when whitespace is ignored: still ambiguous.
    let (_, outcomes) = apply_edits("  x\n\tx\n", &[block("x\n", "y\n")]);
    assert_eq!(outcomes, [Outcome::Ambiguous { matches: 2 }]);
}

#[test]
fn overlapping_blocks_are_reported_and_the_later_one_skipped() {
    let blocks = [
        block("  <p>\n    color: red;\n", "  <div>\n"),
        block("    color: red;\n  </p>\n", "    color: blue;\n"),
        block("</body>\n", "</body>\n<!-- end -->\n"),
    ];
    let (text, outcomes) = apply_edits(FILE, &blocks);
    assert!(matches!(outcomes[0], Outcome::Applied(_)));
    assert_eq!(outcomes[1], Outcome::Overlaps { block: 0 });
    assert!(matches!(outcomes[2], Outcome::Applied(_)));
    assert_eq!(text, "<html>\n<body>\n  <h1>Hi</h1>\n  <div>\n  </p>\n</body>\n<!-- end -->\n</html>\n");
    // The same block twice overlaps itself.
    let (_, outcomes) = apply_edits(FILE, &[block("</body>\n", "</main>\n"), block("</body>\n", "</x>\n")]);
    assert_eq!(outcomes[1], Outcome::Overlaps { block: 0 });
}

#[test]
fn blocks_out_of_file_order_still_report_current_ranges() {
    let mut file = EditedFile::new("one\ntwo\nthree\n");
    let mut mirror = file.text();
    for b in [block("three\n", "3\n"), block("one\n", "1\n1\n"), block("two\n", "")] {
        let a = applied(&file.apply(&b)).clone();
        mirror.replace_range(a.range, &a.text);
        assert_eq!(mirror, file.text());
    }
    assert_eq!(file.text(), "1\n1\n3\n");
}

#[test]
fn crlf_files_match_lf_blocks_and_keep_crlf() {
    let file = "<ul>\r\n  <li>a</li>\r\n</ul>\r\n";
    let (text, outcomes) = apply_edits(file, &[block("  <li>a</li>\n", "  <li>a</li>\n  <li>b</li>\n")]);
    assert!(applied(&outcomes[0]).exact, "line breaks are not part of a line's text");
    assert_eq!(text, "<ul>\r\n  <li>a</li>\r\n  <li>b</li>\r\n</ul>\r\n");
}

#[test]
fn tabs_and_spaces_match_loosely_and_take_the_files_indentation() {
    let file = "fn main() {\n\tif x {\n\t\tgo();\n\t}\n}\n";
    let b =
        block("    if x {\n        go();\n    }\n", "    if x {\n        go();\n        stop();\n    }\n");
    let (text, outcomes) = apply_edits(file, &[b]);
    assert!(!applied(&outcomes[0]).exact);
    assert_eq!(text, "fn main() {\n\tif x {\n\t\tgo();\n\t\tstop();\n\t}\n}\n");
    // And the other way round.
    let file = "a {\n    b;\n}\n";
    let (text, _) = apply_edits(file, &[block("\tb;\n", "\tb;\n\tif c {\n\t\td;\n\t}\n")]);
    assert_eq!(text, "a {\n    b;\n    if c {\n        d;\n    }\n}\n");
    // Other differences swap the prefix.
    let (text, _) = apply_edits("x {\n      y;\n}\n", &[block("  y;\n", "  y;\n    z;\n")]);
    assert_eq!(text, "x {\n      y;\n        z;\n}\n");
    // Trailing spaces and inner runs of whitespace are ignored too.
    let (text, outcomes) = apply_edits("a  =  1;   \nb\n", &[block("a = 1;\n", "a = 2;\n")]);
    assert!(matches!(outcomes[0], Outcome::Applied(_)));
    assert_eq!(text, "a = 2;\nb\n");
}

#[test]
fn exact_beats_loose_when_both_would_match() {
    let (text, outcomes) = apply_edits("  x\nx\n", &[block("x\n", "y\n")]);
    assert!(applied(&outcomes[0]).exact);
    assert_eq!(text, "  x\ny\n");
}

#[test]
fn deleting_lines_removes_their_line_breaks() {
    let (text, _) = apply_edits("a\nb\nc\n", &[block("b\n", "")]);
    assert_eq!(text, "a\nc\n");
    let (text, _) = apply_edits("a\nb\nc", &[block("c\n", "")]);
    assert_eq!(text, "a\nb", "a last line without a break takes the one before");
    let (text, _) = apply_edits("only", &[block("only\n", "")]);
    assert_eq!(text, "");
}

#[test]
fn empty_search_appends() {
    let (text, outcomes) = apply_edits("a\n", &[block("", "b\n"), block("", "c\n")]);
    assert!(outcomes.iter().all(|o| matches!(o, Outcome::Applied(_))));
    assert_eq!(text, "a\nb\nc\n");
    assert_eq!(apply_edits("a", &[block("", "b\n")]).0, "a\nb\n");
    assert_eq!(apply_edits("", &[block("", "<p>x</p>\n")]).0, "<p>x</p>\n");
    assert_eq!(apply_edits("a\r\n", &[block("", "b\n")]).0, "a\r\nb\r\n");
}

#[test]
fn a_file_without_final_newline_keeps_it_that_way() {
    let (text, _) = apply_edits("a\nb", &[block("b\n", "c\n")]);
    assert_eq!(text, "a\nc");
}

#[test]
fn non_ascii_ranges_fall_on_char_boundaries() {
    let file = "日本語\nこんにちは 🌍\nÜbung\n";
    let mut edited = EditedFile::new(file);
    let a = applied(&edited.apply(&block("こんにちは 🌍\n", "さようなら\n"))).clone();
    assert!(file.is_char_boundary(a.range.start) && file.is_char_boundary(a.range.end));
    assert_eq!(&file[a.range], "こんにちは 🌍");
    assert_eq!(edited.text(), "日本語\nさようなら\nÜbung\n");
    // Loose matching of non-ASCII lines.
    let (text, _) = apply_edits(file, &[block("  Übung  \n", "Üben\n")]);
    assert_eq!(text, "日本語\nこんにちは 🌍\nÜben\n");
}

#[test]
fn searching_an_empty_file_finds_nothing() {
    let (text, outcomes) = apply_edits("", &[block("x\n", "y\n")]);
    assert_eq!((text.as_str(), outcomes), ("", vec![Outcome::NotFound]));
}

#[test]
fn streamed_blocks_apply_as_they_arrive() {
    let file = "<h1>Hi</h1>\n<style>\n  color: red;\n</style>\n";
    let mut edited = EditedFile::new(file);
    let mut parser = BlockParser::new();
    let mut outcomes = Vec::new();
    for piece in ANSWER.split_inclusive(['\n', '>', ' ']) {
        for b in parser.push(piece) {
            outcomes.push(edited.apply(&b));
        }
    }
    assert_eq!(outcomes.len(), 2);
    assert_eq!(edited.text(), "<h1>Grüße 🌍</h1>\n<p>new</p>\n<style>\n  color: blue;\n</style>\n");
}

#[test]
fn lines_keep_their_breaks() {
    fn split(t: &str) -> Vec<&str> {
        split_lines(t).collect()
    }
    assert_eq!(split("a\nb\r\n\nc"), ["a\n", "b\r\n", "\n", "c"]);
    assert_eq!(split("a\n"), ["a\n"]);
    assert!(split("").is_empty());
    assert_eq!(split("ü\n🌍"), ["ü\n", "🌍"]);
}
