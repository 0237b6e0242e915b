use super::report::{complete_document, read};
use super::vocabulary::{self, TERMS, term};
use super::*;

const PAGE: &str = "<!DOCTYPE html>\n<html><body><button>+1</button></body></html>\n";

fn ids(terms: &[&Term]) -> Vec<&'static str> {
    terms.iter().map(|t| t.id).collect()
}

#[test]
fn a_prompt_names_the_elements_it_expects() {
    assert_eq!(ids(&expected(&["a button that counts clicks", ""])), ["has:button"]);
    assert_eq!(
        ids(&expected(&["A to-do LIST with an input field and a Button", "big heading"])),
        ["has:heading", "has:button", "has:input", "has:list"]
    );
    assert!(expected(&["a bouncing ball", "make it fun"]).is_empty());
    // Whole words only: "transform" holds no form, "buttonhole" no button.
    assert!(expected(&["transform the buttonhole"]).is_empty());
    assert_eq!(ids(&expected(&["buttons", "Buttons!"])), ["has:button"], "each term once");
}

#[test]
fn words_imply_what_the_page_needs_whatever_it_is_built_from() {
    assert_eq!(
        ids(&expected(&["a login form with email and password", ""])),
        ["has:input", "has:password", "has:form"]
    );
    assert_eq!(ids(&expected(&["a tip calculator", ""])), ["has:controls"]);
    assert_eq!(ids(&expected(&["a dark mode toggle", ""])), ["has:controls"]);
    assert_eq!(ids(&expected(&["a digital clock", ""])), ["ticks"]);
    assert_eq!(ids(&expected(&["a stopwatch with start, stop and reset", ""])), ["ticks"]);
    assert_eq!(ids(&expected(&["a countdown timer from 10 seconds", ""])), ["ticks"], "each term once");
    assert!(expected(&["a landing page for a coffee shop", ""]).is_empty());
}

#[test]
fn every_term_has_a_label_and_a_need_and_a_unique_id() {
    for t in TERMS {
        match t.need {
            vocabulary::Need::Shown(selector) => {
                assert!(
                    t.id.starts_with("has:") && t.label.starts_with("Has ") && !selector.is_empty(),
                    "{t:?}"
                )
            }
            vocabulary::Need::Ticks => assert_eq!(t.id, "ticks"),
        }
        assert_eq!(term(t.id), Some(t));
    }
}

#[test]
fn the_check_frame_is_sent_no_word_of_the_prompt_only_whether_to_watch_a_clock() {
    let json = |prompt: &str, goal: &str| expect_json(&expect(prompt, goal, false));
    // The page shares the check frame's realm: whatever it is sent, the page can read.
    let sent = json("a secret zebra table with a link", "for the quokka society");
    for word in ["secre", "zebra", "quokk", "socie", "stems"] {
        assert!(!sent.contains(word), "{word} in {sent}");
    }
    assert_eq!(sent, json("a bouncing ball", ""), "every page gets the same list");
    let list: serde_json::Value = serde_json::from_str(&sent).unwrap();
    let shown = TERMS.iter().filter(|t| t.need != vocabulary::Need::Ticks).count();
    assert_eq!(list.as_array().unwrap().len(), shown);
    assert_eq!(
        list[0],
        serde_json::json!({ "id": "has:heading", "selector": "h1, h2, h3, h4, h5, h6, [role=heading]" })
    );
    let clock: serde_json::Value = serde_json::from_str(&json("a digital clock", "")).unwrap();
    assert_eq!(clock.as_array().unwrap().len(), shown + 1);
    assert_eq!(clock[shown], serde_json::json!({ "id": "ticks", "ticks": true }));
}

#[test]
fn the_topic_is_the_goals_and_the_prompts_but_an_edit_says_nothing_about_it() {
    assert_eq!(expect("a tip calculator", "for a cafe", false).topic, ["cafe", "tip", "calcu"]);
    let edit = expect("make the button red", "a coffee shop", true);
    assert_eq!(edit.topic, ["coffe", "shop"], "an edit's words are not the page's topic");
    assert_eq!(ids(&edit.terms), ["has:button"], "but the elements it names are checked");
    assert!(expect("make it red", "", true).topic.is_empty(), "no goal, an edit: no topic check");
}

#[test]
fn a_whole_document_runs_from_doctype_or_html_to_the_closing_tag() {
    assert!(complete_document(PAGE));
    assert!(complete_document("  <html lang=en><p>x</p></HTML>  "));
    assert!(!complete_document("<p>Here is a counter.</p>"));
    assert!(!complete_document("<!DOCTYPE html><html><body><button>+1"), "cut off");
    assert!(!complete_document("Sure! <html></html>"));
}

fn results(list: &[(&str, Option<bool>, Option<&str>)]) -> String {
    let results: Vec<serde_json::Value> = list
        .iter()
        .map(|(id, pass, detail)| serde_json::json!({ "id": id, "pass": pass, "detail": detail }))
        .collect();
    serde_json::json!({ "results": results, "ms": 120.0 }).to_string()
}

#[test]
fn a_report_lists_every_check_in_order_and_leaves_out_those_that_do_not_apply() {
    let terms = Expect { terms: expected(&["a button"]), topic: Vec::new() };
    let json = results(&[
        ("loads", Some(true), None),
        ("errors", Some(false), Some("Uncaught TypeError: x is null (line 3:1)")),
        ("buttons", Some(true), Some("1 clicked")),
        ("has:button", Some(true), None),
        ("visible", Some(true), None),
    ]);
    let report = read(&json, &terms, PAGE);
    let listed: Vec<(&str, bool)> = report.checks.iter().map(|c| (c.id.as_str(), c.passed)).collect();
    assert_eq!(
        listed,
        [
            ("complete", true),
            ("visible", true),
            ("has:button", true),
            ("buttons", true),
            ("errors", false),
            ("loads", true)
        ]
    );
    assert_eq!(report.score(), "5/6");
    assert_eq!(report.summary(), "1 of 6 checks failed");

    let none = read(
        &results(&[("visible", Some(true), None), ("buttons", None, Some("no buttons"))]),
        &Expect::default(),
        PAGE,
    );
    assert!(!none.checks.iter().any(|c| c.id == "buttons"), "no buttons: not a check");

    // The topic follows what the prompt named; unreported, it fails.
    let asked = expect("a button that counts clicks", "", false);
    let json =
        results(&[("visible", Some(true), None), ("topic", Some(false), Some("Nothing mentions it."))]);
    let report = read(&json, &asked, PAGE);
    let ids: Vec<&str> = report.checks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["complete", "visible", "has:button", "topic", "buttons", "errors", "loads"]);
    let topic = report.checks.iter().find(|c| c.id == "topic").unwrap();
    assert_eq!(topic.label, "About what was asked");
    assert!(!topic.passed && topic.detail.as_deref() == Some("The check frame did not report it."));
}

fn with_text(results_json: &str, text: &str) -> String {
    let mut outcome: serde_json::Value = serde_json::from_str(results_json).unwrap();
    outcome["text"] = text.into();
    outcome.to_string()
}

#[test]
fn the_topic_is_matched_here_in_the_pages_text_and_a_topic_result_from_the_page_is_not_read() {
    let asked = expect("a tip calculator", "", false);
    let topic = |json: &str| read(json, &asked, PAGE).checks.into_iter().find(|c| c.id == "topic").unwrap();
    let claims = results(&[("visible", Some(true), None), ("topic", Some(true), None)]);
    let off = topic(&with_text(&claims, "Your First Front-End Developer Guide"));
    assert!(!off.passed, "the page's own topic result counted");
    assert_eq!(
        off.detail.as_deref(),
        Some("Nothing on the page mentions what was asked for: it may be about something else.")
    );
    let on = topic(&with_text(&results(&[("visible", Some(true), None)]), "Tip calculator Bill Tip 15%"));
    assert!(on.passed && on.detail.is_none());
    let hung = topic(r#"{"failed":"The page did not finish in 8 s.","text":"Tip calculator"}"#);
    assert!(
        !hung.passed && hung.detail.unwrap().starts_with("Not checked:"),
        "a failed check frame's text counts"
    );
}

#[test]
fn the_checks_tooltip_says_the_page_reported_them() {
    let tooltip = report(2, 3).tooltip();
    assert!(tooltip.starts_with("1 of 3 checks failed. The page ran these checks on itself"), "{tooltip}");
    assert!(tooltip.contains("a page can claim to pass them"), "{tooltip}");
}

#[test]
fn a_report_is_the_pages_word_so_only_known_names_count_once_and_details_are_clipped() {
    let long = "x".repeat(10_000);
    let json = results(&[
        ("visible", Some(true), None),
        ("visible", Some(false), None),
        ("has:button", Some(true), None),
        ("complete", Some(true), None),
        ("errors", Some(false), Some(&long)),
        ("made-up", Some(true), None),
    ]);
    let report = read(&json, &Expect::default(), "<p>not a document</p>");
    assert!(!report.checks.iter().any(|c| c.id == "made-up" || c.id == "has:button"), "unasked names count");
    assert!(!report.checks[0].passed, "the page cannot say it is a whole document");
    assert!(report.checks.iter().find(|c| c.id == "visible").unwrap().passed, "the first answer counts");
    let errors = report.checks.iter().find(|c| c.id == "errors").unwrap();
    assert!(errors.detail.as_ref().unwrap().chars().count() <= 301);
    let loads = report.checks.iter().find(|c| c.id == "loads").unwrap();
    assert!(!loads.passed && loads.detail.as_deref() == Some("The check frame did not report it."));
}

#[test]
fn a_page_that_never_finished_or_an_unreadable_report_fails_every_check_with_the_reason() {
    let terms = Expect { terms: expected(&["a button"]), topic: Vec::new() };
    let hung =
        read(r#"{"failed":"The page did not finish in 6 s: a script may loop or block."}"#, &terms, PAGE);
    assert_eq!(hung.passed(), 1, "only the document check, made here, can pass");
    assert!(hung.checks[1].detail.as_deref().unwrap().starts_with("Not checked: The page did not finish"));
    let garbage = read("{\"results\": 7}", &terms, PAGE);
    assert_eq!(garbage.passed(), 1);
    assert_eq!(garbage.total(), 6);
}

/// A report of `total` checks, the first `passed` of them passed (the likeness tests use it too).
pub(super) fn report(passed: usize, total: usize) -> Report {
    Report {
        checks: (0..total)
            .map(|i| Check {
                id: format!("c{i}"),
                label: format!("Check {i}"),
                passed: i < passed,
                detail: None,
            })
            .collect(),
    }
}

#[test]
fn variations_rank_by_share_of_checks_passed_then_by_who_finished_first() {
    let (a, b, c, d) = (report(4, 6), report(5, 5), report(5, 6), report(5, 6));
    let tiles = [
        Ranked { report: Some(&a), finished_ms: Some(100.0), likeness: None },
        Ranked { report: None, finished_ms: None, likeness: None },
        Ranked { report: Some(&b), finished_ms: Some(900.0), likeness: None },
        Ranked { report: Some(&c), finished_ms: Some(800.0), likeness: None },
        Ranked { report: Some(&d), finished_ms: Some(300.0), likeness: None },
    ];
    assert_eq!(rank(&tiles), [2, 4, 3, 0, 1]);
    assert_eq!(rank(&[]), Vec::<usize>::new());
}

#[test]
fn fix_asks_for_what_failed_in_the_checks_words_once_each() {
    assert_eq!(fix_prompt(&report(3, 3), &Likeness::None), None, "nothing to fix");
    let mut failing = report(1, 3);
    failing.checks[1].detail = Some("Not checked: the page hung.".into());
    failing.checks[2].detail = Some("Not checked: the page hung.".into());
    let text = fix_prompt(&failing, &Likeness::None).unwrap();
    assert!(text.contains("- Check 1: Not checked: the page hung.\n- Check 2\n"), "{text}");
    assert!(!text.contains("Check 0"), "a passing check is not mentioned");
    let mut long = report(0, 1);
    long.checks[0].detail = Some("e".repeat(5_000));
    let text = fix_prompt(&long, &Likeness::None).unwrap();
    assert!(text.chars().count() < 2_100 && text.ends_with("keep everything else as it is."));
}

use super::guard::{GUARD_CALL, guard_script};

#[test]
fn loop_bodies_in_inline_scripts_start_with_the_guard() {
    let js = "for (let i = 0; i < f(x); i++) { a(); }\nwhile (true) {}\ndo { b(); } while (c());\nfor (const k of ks) k();";
    let guarded = guard_script(js);
    assert_eq!(guarded.matches(GUARD_CALL).count(), 3, "{guarded}");
    assert!(guarded.contains("i++) {__flintLoopGuard(); a(); }"));
    assert!(guarded.contains("while (true) {__flintLoopGuard();}"));
    assert!(
        guarded.contains("do {__flintLoopGuard(); b(); } while (c());"),
        "a do-while's tail is not a body"
    );
    assert!(guarded.ends_with("for (const k of ks) k();"), "a loop without braces is left as it is");
}

#[test]
fn strings_comments_templates_and_regular_expressions_are_not_code() {
    let js = r#"const s = "while (1) {"; // for (;;) {
/* do { */ const t = `for (;;) { ${ "while(1){" } ${a.map((x) => { return x; })}`;
const r = /for \(;;\) {[/]/g; const half = total / 2; const q = 'do {';
obj.for(1); obj.while(2); x.do;"#;
    assert_eq!(guard_script(js), js, "nothing in there is a loop");
}

#[test]
fn only_inline_javascript_is_guarded_and_the_rest_of_the_page_is_kept() {
    let doc = "<!DOCTYPE html><html><body><p>while (x) {}</p>\
        <script>while (go) { step(); }</script>\
        <script type=\"module\">for (;;) { tick(); }</script>\
        <SCRIPT type=\"application/json\">{\"for\": 1}</SCRIPT>\
        <script type=\"text/template\">for (;;) { }</script>\
        <script src=\"x.js\"></script></body></html>";
    let guarded = super::guard_loops(doc);
    assert_eq!(guarded.matches(GUARD_CALL).count(), 2, "{guarded}");
    assert!(guarded.contains("<p>while (x) {}</p>"), "text outside scripts is left alone");
    assert_eq!(guarded.replace(GUARD_CALL, ""), doc, "nothing else changes");
    assert_eq!(
        super::guard_loops("<script>while (1) {"),
        "<script>while (1) {",
        "an unclosed script is left alone"
    );
}

#[test]
fn best_of_waits_a_bounded_multiple_of_the_first_page_then_stops_the_rest() {
    use super::deadline::{FACTOR, MIN_EXTRA_MS, extra_wait_ms, stopped_note};
    // A first page at 8 s: the slowest may take 2.5 × 8 = 20 s in all, 12 s more.
    assert_eq!(extra_wait_ms(8_000.0), 8_000.0 * (FACTOR - 1.0));
    assert!((extra_wait_ms(8_000.0) - 12_000.0).abs() < 1e-9);
    // A very quick first page leaves the rest at least the floor, and nonsense times do too.
    assert_eq!(extra_wait_ms(400.0), MIN_EXTRA_MS);
    assert_eq!(extra_wait_ms(-5.0), MIN_EXTRA_MS);
    // Longer first pages give proportionally longer waits.
    assert!(extra_wait_ms(40_000.0) > extra_wait_ms(20_000.0));
    assert_eq!(
        stopped_note(1, 12_000.0),
        "Stopped 1 variation still writing 12 s after the first page was done; the best checked page wins \
         (Retry on a tile runs it again)."
    );
    assert!(stopped_note(7, 5_000.0).starts_with("Stopped 7 variations still writing 5 s"));
}
