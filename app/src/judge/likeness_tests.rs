use super::likeness::{GOOD_LIKENESS, in_picture_px};
use super::tests::report;
use super::*;

fn done(score: f32, findings: &[&str]) -> Likeness {
    Likeness::Done { score, findings: findings.iter().map(|f| (*f).to_owned()).collect() }
}

#[test]
fn a_page_that_looks_like_the_picture_outranks_one_passing_the_same_checks_that_does_not() {
    let (a, b) = (report(5, 6), report(5, 6));
    // The unlike page finished first: without the likeness it would rank first.
    let tiles = [
        Ranked { report: Some(&a), finished_ms: Some(100.0), likeness: Some(0.42) },
        Ranked { report: Some(&b), finished_ms: Some(900.0), likeness: Some(0.93) },
    ];
    assert_eq!(rank(&tiles), [1, 0]);
}

#[test]
fn likeness_weighs_as_much_as_the_share_of_checks() {
    let (all, one_failed) = (report(6, 6), report(5, 6));
    let tiles = [
        Ranked { report: Some(&all), finished_ms: Some(100.0), likeness: Some(0.40) },
        Ranked { report: Some(&one_failed), finished_ms: Some(200.0), likeness: Some(0.95) },
    ];
    assert_eq!(rank(&tiles), [1, 0], "one failed check (-0.17) is outweighed by 0.55 more likeness");
    let close = [
        Ranked { report: Some(&all), finished_ms: Some(100.0), likeness: Some(0.90) },
        Ranked { report: Some(&one_failed), finished_ms: Some(200.0), likeness: Some(0.95) },
    ];
    assert_eq!(rank(&close), [0, 1], "5 points of likeness do not outweigh a failed check");
}

#[test]
fn a_page_that_could_not_be_drawn_ranks_as_looking_like_nothing() {
    let (a, b) = (report(6, 6), report(6, 6));
    let failed = Likeness::Failed("the page reloaded".into());
    let tiles = [
        Ranked { report: Some(&a), finished_ms: Some(100.0), likeness: failed.rank_score() },
        Ranked { report: Some(&b), finished_ms: Some(200.0), likeness: done(0.3, &[]).rank_score() },
    ];
    assert_eq!(rank(&tiles), [1, 0]);
    assert_eq!(Likeness::Drawing.rank_score(), None);
}

#[test]
fn fix_says_how_the_page_differs_from_the_picture_when_it_looks_too_little_like_it() {
    let unlike = done(0.6, &["the page is 40 px taller than the picture (640 px against 600 px)"]);
    let text = fix_prompt(&report(3, 3), &unlike).expect("an unlike page is worth fixing");
    assert!(text.contains("does not look like it yet"), "{text}");
    assert!(text.contains("- the page is 40 px taller than the picture"), "{text}");
    assert!(!text.contains("checks failed"), "every check passed: {text}");

    let both = fix_prompt(&report(2, 3), &unlike).expect("a failure");
    assert!(both.contains("- Check 2\n") && both.contains("40 px taller"), "{both}");

    let alike = done(GOOD_LIKENESS + 0.01, &["the top band (0–75 px) is dark in the picture"]);
    assert_eq!(fix_prompt(&report(3, 3), &alike), None, "a page alike enough has nothing to fix");
    assert!(!fix_prompt(&report(2, 3), &alike).expect("a failure").contains("dark in the picture"));
}

#[test]
fn likeness_reads_as_a_percentage_or_a_sentence() {
    assert_eq!(done(0.866, &[]).label().as_deref(), Some("Looks like the picture: 87 %"));
    assert_eq!(Likeness::None.label(), None);
    let failed = Likeness::Failed("The page was not drawn within 5 s.".into());
    assert!(failed.label().is_some_and(|l| l.contains("not drawn within 5 s")));
    assert!(!failed.good_enough() && Likeness::None.good_enough());
}

#[test]
fn findings_measured_on_the_downscaled_picture_are_said_in_its_own_pixels() {
    // A 1280 px wide picture compared at 320 px: a quarter.
    let scaled = in_picture_px("the top band (0–75 px) is dark in the picture and light in the page", 0.25);
    assert_eq!(scaled, "the top band (0–300 px) is dark in the picture and light in the page");
    let taller = in_picture_px("the page is 10 px taller than the picture (160 px against 150 px)", 0.25);
    assert_eq!(taller, "the page is 40 px taller than the picture (640 px against 600 px)");
    assert_eq!(in_picture_px("3 columns at 20 px", 1.0), "3 columns at 20 px");
}
