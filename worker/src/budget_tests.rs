//! Unit tests of the budget plan and of recounting only what changed.

use super::*;

fn parts(system: usize, goal: usize, file: usize, history: &[usize], prompt: usize) -> PartCounts {
    PartCounts { system, goal, file, history: history.to_vec(), prompt }
}

#[test]
fn everything_fits_when_there_is_room() {
    let p = plan(1000, 100, parts(10, 20, 30, &[40, 50], 60));
    assert!(p.fits);
    assert_eq!(p.dropped, 0..0);
    assert_eq!(p.kept(), 0..2);
    assert_eq!(p.total, 210);
    assert_eq!(p.room(), 900);
    assert_eq!(p.percent, 23);
    assert_eq!(p.zone, Zone::Sharp);
}

#[test]
fn oldest_turns_go_first_until_the_rest_fits() {
    // Fixed 100 + history 180 = 280 in a room of 200: without the 50 it is 230, without the
    // 60 as well 170.
    let p = plan(250, 50, parts(25, 25, 25, &[50, 60, 70], 25));
    assert!(p.fits);
    assert_eq!(p.dropped, 0..2);
    assert_eq!(p.kept(), 2..3);
    assert_eq!(p.total, 170);
    assert_eq!((p.percent, p.zone), (85, Zone::AboutToOverflow));
}

#[test]
fn a_small_old_turn_is_not_skipped_to_keep_it() {
    // Dropping only the big newer turn would fit too, but history is trimmed oldest first.
    let p = plan(100, 0, parts(10, 10, 10, &[5, 80, 5], 10));
    assert_eq!(p.dropped, 0..2);
    assert_eq!(p.total, 45);
}

#[test]
fn exactly_full_fits() {
    let p = plan(100, 20, parts(20, 20, 20, &[10], 10));
    assert!(p.fits);
    assert_eq!(p.total, 80);
    assert_eq!(p.dropped, 0..0);
    assert_eq!(p.percent, 100);
    assert_eq!(p.zone, Zone::AboutToOverflow);
}

#[test]
fn one_token_over_drops_a_turn() {
    let p = plan(100, 20, parts(20, 20, 20, &[11], 10));
    assert!(p.fits);
    assert_eq!(p.dropped, 0..1);
    assert_eq!(p.total, 70);
}

#[test]
fn all_history_dropped_when_only_the_fixed_parts_fit() {
    let p = plan(100, 0, parts(25, 25, 25, &[10, 10, 10], 25));
    assert!(p.fits);
    assert_eq!(p.dropped, 0..3);
    assert!(p.kept().is_empty());
    assert_eq!(p.total, 100);
}

#[test]
fn fixed_parts_over_the_room_do_not_fit() {
    let p = plan(100, 10, parts(30, 30, 30, &[1, 2], 1));
    assert!(!p.fits);
    assert_eq!(p.dropped, 0..2);
    assert_eq!(p.total, 91);
    assert_eq!(p.percent, 101);
    assert_eq!(p.zone, Zone::AboutToOverflow);
}

#[test]
fn a_huge_file_alone_does_not_fit() {
    let p = plan(128_000, 16_000, parts(500, 100, 200_000, &[], 50));
    assert!(!p.fits);
    assert_eq!(p.dropped, 0..0);
}

#[test]
fn reserved_output_at_or_over_the_window_never_fits() {
    assert!(!plan(100, 100, parts(0, 0, 0, &[], 0)).fits);
    assert!(!plan(100, 200, parts(1, 0, 0, &[], 0)).fits);
    assert!(!plan(0, 0, PartCounts::default()).fits);
    assert_eq!(plan(100, 200, parts(1, 0, 0, &[], 0)).percent, usize::MAX);
}

#[test]
fn empty_request_is_sharp() {
    let p = plan(8192, 1024, PartCounts::default());
    assert!(p.fits);
    assert_eq!((p.total, p.percent, p.zone), (0, 0, Zone::Sharp));
}

#[test]
fn zone_boundaries_are_exact() {
    assert_eq!(Zone::of(0, 100), Zone::Sharp);
    assert_eq!(Zone::of(29, 100), Zone::Sharp);
    assert_eq!(Zone::of(30, 100), Zone::SomeDrift);
    assert_eq!(Zone::of(59, 100), Zone::SomeDrift);
    assert_eq!(Zone::of(60, 100), Zone::DriftLikely);
    assert_eq!(Zone::of(79, 100), Zone::DriftLikely);
    assert_eq!(Zone::of(80, 100), Zone::AboutToOverflow);
    assert_eq!(Zone::of(100, 100), Zone::AboutToOverflow);
    // 29.99 % is still sharp: no rounding up.
    assert_eq!(Zone::of(2999, 10_000), Zone::Sharp);
    assert_eq!(Zone::of(usize::MAX, usize::MAX), Zone::AboutToOverflow);
    assert_eq!(Zone::DriftLikely.label(), "drift likely");
}

#[test]
fn zone_follows_the_kept_total() {
    // 128k window, 8k reserved: 120k room; 40k fixed + 30k history = 58 %.
    let p = plan(128_000, 8_000, parts(1_000, 500, 38_000, &[10_000, 20_000], 500));
    assert_eq!((p.percent, p.zone), (58, Zone::SomeDrift));
}

#[test]
fn texts_are_counted_with_message_overhead() {
    let texts = PartTexts {
        system: "You edit web pages.",
        goal: "",
        file: "<p>hi</p>",
        history: &["make it red", ""],
        prompt: "now blue",
    };
    let counts = PartCounts::count(&TokenCounter::estimating(), &texts);
    assert_eq!(counts.goal, 0, "an empty part costs nothing");
    assert_eq!(counts.history[1], 0);
    let fixed_framing = FIXED_MESSAGES * MESSAGE_OVERHEAD;
    assert_eq!(counts.system, "You edit web pages.".len().div_ceil(3) + fixed_framing);
    assert_eq!(counts.history[0], 4 + MESSAGES_PER_TURN * MESSAGE_OVERHEAD, "a prompt and an answer");
    assert_eq!(counts.file, 3, "the file rides in the user message");
    assert_eq!(counts.prompt, 3);
}

fn request(revision: u32) -> BudgetRequest {
    BudgetRequest { revision, window: 1000, reserved_output: 100, ..BudgetRequest::default() }
}

#[test]
fn only_changed_parts_are_recounted() {
    let counter = TokenCounter::estimating();
    let mut parts = CountedRequest::default();
    let file = "<p>x</p>\n".repeat(30);
    let first = parts.update(
        BudgetRequest {
            system: Some("sys".into()),
            file: Some(file.clone()),
            prompt: Some("make it red".into()),
            ..request(1)
        },
        &counter,
    );
    assert_eq!(parts.recounts(), 3);
    assert_eq!((first.revision, first.file, first.prompt), (1, 90, 4));
    let second = parts.update(BudgetRequest { prompt: Some("make it blue!".into()), ..request(2) }, &counter);
    assert_eq!(parts.recounts(), 4, "only the prompt was counted again");
    assert_eq!((second.revision, second.file, second.prompt), (2, 90, 5), "the file is kept");
    parts.update(
        BudgetRequest { file: Some(file), prompt: Some("make it blue!".into()), ..request(3) },
        &counter,
    );
    assert_eq!(parts.recounts(), 4, "texts equal to the stored ones are not counted");
    let turns = |t: &[&str]| Some(t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    parts.update(BudgetRequest { history: turns(&["a", "bb"]), ..request(4) }, &counter);
    assert_eq!(parts.recounts(), 6);
    parts.update(BudgetRequest { history: turns(&["a", "bb", "ccc"]), ..request(5) }, &counter);
    assert_eq!(parts.recounts(), 7, "a turn appended is the only one counted");
    parts.update(BudgetRequest { history: turns(&["bb", "ccc"]), ..request(6) }, &counter);
    assert_eq!(parts.recounts(), 7, "turns shifted by one keep their counts");
}

#[test]
fn the_report_adds_up_and_drops_the_oldest_turns() {
    let counter = TokenCounter::estimating();
    let mut parts = CountedRequest::default();
    let turn = "x".repeat(300); // 100 tokens + 8 framing
    let report = parts.update(
        BudgetRequest {
            window: 400,
            reserved_output: 100,
            system: Some("s".repeat(30)),
            prompt: Some("p".repeat(30)),
            history: Some(vec![turn.clone(), turn.clone(), turn]),
            ..BudgetRequest::default()
        },
        &counter,
    );
    assert_eq!(report.system, 10 + 8);
    assert_eq!(report.history, [108, 108, 108]);
    // 28 fixed + 324 history in a room of 300: the oldest turn goes.
    assert_eq!(report.dropped, 1);
    assert_eq!(report.total, 18 + 10 + 216);
    let kept: u32 = report.history[report.dropped as usize..].iter().sum();
    assert_eq!(report.total, report.system + report.goal + report.file + kept + report.prompt);
    assert!(report.fits);
    assert_eq!((report.percent, report.zone), (81, flint_protocol::worker::Zone::AboutToOverflow));
    assert!(!report.exact, "an estimate");
}

#[test]
fn a_file_over_the_room_does_not_fit() {
    let mut parts = CountedRequest::default();
    let report = parts.update(
        BudgetRequest { file: Some("y".repeat(3000)), history: Some(vec!["h".into()]), ..request(1) },
        &TokenCounter::estimating(),
    );
    assert!(!report.fits);
    assert_eq!(report.dropped, 1, "all turns are left out");
    assert_eq!(report.total, 8 + 1000);
    assert_eq!(report.percent, 112);
    assert_eq!(report.zone, flint_protocol::worker::Zone::AboutToOverflow);
}

#[test]
fn recount_with_the_exact_counter_reports_exact_counts() {
    let mut parts = CountedRequest::default();
    assert_eq!(parts.recount(&TokenCounter::o200k()), None, "no request yet");
    let estimate = parts.update(
        BudgetRequest { tokenizer: Tokenizer::O200k, prompt: Some("hello world".into()), ..request(7) },
        &TokenCounter::estimating(),
    );
    assert!(!estimate.exact);
    assert_eq!(estimate.prompt, 4);
    let exact = parts.recount(&TokenCounter::o200k()).expect("a request was received");
    assert!(exact.exact);
    assert_eq!((exact.revision, exact.prompt), (7, 2));
    let other =
        parts.update(BudgetRequest { tokenizer: Tokenizer::Estimate, ..request(8) }, &TokenCounter::o200k());
    assert!(!other.exact, "o200k counts for another vocabulary are an estimate");
    assert_eq!(other.prompt, 2);
}
