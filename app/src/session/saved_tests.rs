//! Tests of the saved session (a separate file keeps `saved.rs` short).

use super::*;

fn generation(status: SavedStatus, code: &str) -> SavedGeneration {
    SavedGeneration {
        id: Some(1),
        prompt: "a clock".into(),
        model: "m/x".into(),
        code: code.into(),
        status,
        pictures: None,
    }
}

#[test]
fn history_is_newest_first_and_skips_unreadable_records() {
    let mut old = generation(SavedStatus::Done, "<p>1</p>");
    old.id = Some(100);
    let mut new = generation(SavedStatus::Cancelled, "<p>2</p>");
    new.id = Some(200);
    let records = [old.to_json(), "{broken".to_owned(), new.to_json(), r#"{"prompt":"no id"}"#.to_owned()];
    assert_eq!(history_entries(&records), [new, old]);
}

#[test]
fn a_generation_saved_before_the_history_existed_reads_without_an_id() {
    let json = r#"{"version":1,"generation":{"prompt":"p","model":"m","code":"c","status":"done"}}"#;
    let saved = SavedSession::from_json(json).expect("an older record still reads");
    assert_eq!(saved.generation.map(|g| g.id), Some(None));
}

#[test]
fn summaries_are_one_short_line() {
    assert_eq!(summary("  a clock\nwith hands", 80), "a clock");
    assert_eq!(summary("abcdef", 4), "abc…");
    assert_eq!(summary("äöüß", 4), "äöüß");
}

#[test]
fn a_record_reads_back_as_written() {
    let saved = SavedSession {
        prompt: Some("a clock — ✓".into()),
        model: Some("groq/llama".into()),
        generation: Some(generation(SavedStatus::Cancelled, "<p>\"hi\"</p>")),
        ..SavedSession::default()
    };
    let json = saved.to_json();
    assert!(json.contains(r#""status":"cancelled""#), "{json}");
    assert_eq!(SavedSession::from_json(&json).expect("reads back"), saved);
}

#[test]
fn missing_fields_are_empty_and_unknown_ones_ignored() {
    let saved = SavedSession::from_json(r#"{"version":1,"later":true}"#).expect("reads");
    assert_eq!(saved, SavedSession::default());
}

#[test]
fn other_versions_and_garbage_are_refused() {
    assert!(matches!(SavedSession::from_json(r#"{"version":2,"prompt":7}"#), Err(SavedError::Version(2))));
    assert!(matches!(SavedSession::from_json("not json"), Err(SavedError::Malformed(_))));
    assert!(matches!(SavedSession::from_json(r#"{"version":1,"prompt":7}"#), Err(SavedError::Malformed(_))));
}

#[test]
fn statuses_map_to_saved_ones() {
    assert_eq!(SavedStatus::from_stream(StreamStatus::Idle), None);
    assert_eq!(SavedStatus::from_stream(StreamStatus::Streaming), Some(SavedStatus::Streaming));
    assert_eq!(SavedStatus::from_stream(StreamStatus::Error), Some(SavedStatus::Error));
}

#[test]
fn a_stream_cut_off_by_the_reload_says_so() {
    let saved = SavedSession {
        prompt: Some("a timer".into()),
        model: Some("m/x".into()),
        generation: Some(generation(SavedStatus::Streaming, "<button")),
        ..SavedSession::default()
    };
    let restored = restore(&saved, false);
    assert_eq!(restored.prompt.as_deref(), Some("a timer"));
    assert_eq!(restored.model.as_deref(), Some("m/x"));
    assert_eq!(restored.code.as_deref(), Some("<button"));
    assert_eq!(restored.notice, Some(RestoredNotice::CutOff));
    assert!(RestoredNotice::CutOff.text().contains("cut off by the reload"));
}

#[test]
fn a_finished_answer_or_a_draft_is_restored_quietly() {
    let done =
        SavedSession { generation: Some(generation(SavedStatus::Done, "<p>")), ..SavedSession::default() };
    let restored = restore(&done, false);
    assert_eq!(restored.prompt.as_deref(), Some("a clock"), "the generation's prompt fills in");
    assert_eq!(restored.notice, Some(RestoredNotice::Restored));

    let draft = SavedSession { prompt: Some("draft".into()), ..SavedSession::default() };
    assert_eq!(restore(&draft, false).notice, Some(RestoredNotice::Restored));
    assert_eq!(restore(&draft, false).code, None);
}

#[test]
fn blank_code_is_not_restored_and_an_empty_record_says_nothing() {
    let blank =
        SavedSession { generation: Some(generation(SavedStatus::Error, " \n")), ..SavedSession::default() };
    assert_eq!(restore(&blank, false).code, None);
    assert_eq!(restore(&SavedSession::default(), false), Restore::default());
}

#[test]
fn the_variations_count_comes_back() {
    let saved = SavedSession { variations: Some(6), ..SavedSession::default() };
    let read = SavedSession::from_json(&saved.to_json()).expect("reads back");
    assert_eq!(restore(&read, false).variations, Some(6));
    assert_eq!(restore(&read, true).variations, None, "a shared link chose its own");
}

#[test]
fn a_shared_link_wins_over_the_saved_session() {
    let saved = SavedSession {
        prompt: Some("mine".into()),
        generation: Some(generation(SavedStatus::Streaming, "<p>")),
        ..SavedSession::default()
    };
    assert_eq!(restore(&saved, true), Restore::default());
}

#[test]
fn the_picked_kind_comes_back_unless_a_link_chose_and_an_unknown_one_reads_as_auto() {
    use flint_protocol::prompt::ProjectKind;
    let saved = SavedSession { kind: kind_record(Some(ProjectKind::React)), ..SavedSession::default() };
    let read = SavedSession::from_json(&saved.to_json()).expect("reads back");
    assert_eq!(restore(&read, false).kind, Some(ProjectKind::React));
    assert_eq!(restore(&read, true).kind, None, "the link's kind (or Auto) wins");
    let newer = SavedSession { kind: Some("vue".into()), ..SavedSession::default() };
    let read = SavedSession::from_json(&newer.to_json()).expect("a kind it does not know loses nothing else");
    assert_eq!(restore(&read, false).kind, None);
}

#[test]
fn profile_continuation_and_cost_come_back_and_a_link_keeps_the_settings() {
    let saved = SavedSession {
        prompt: Some("mine".into()),
        profile: Some("deep".into()),
        auto_continue: Some(true),
        spent: spent_record(Some((0.015_75, true))),
        ..SavedSession::default()
    };
    let read = SavedSession::from_json(&saved.to_json()).expect("reads back");
    let back = restore(&read, false);
    assert_eq!(back.profile.as_deref(), Some("deep"));
    assert_eq!(back.auto_continue, Some(true));
    assert_eq!(back.spent, Some((0.015_75, true)));
    let linked = restore(&read, true);
    assert_eq!(linked.profile, None, "the link's own profile wins");
    assert_eq!((linked.auto_continue, linked.spent), (Some(true), Some((0.015_75, true))));
}

#[test]
fn the_storage_problem_says_what_is_at_stake() {
    let text = storage_problem("QuotaExceededError");
    assert!(text.contains("(QuotaExceededError)") && text.contains("lost on reload"), "{text}");
}

#[test]
fn the_selected_version_comes_back_unless_the_editor_held_other_code() {
    let mut versions = Versions::default();
    versions.push("<p>1</p>".into(), "one", "m", 1, crate::versions::Origin::Generated);
    versions.push("<p>2</p>".into(), "two", "m", 2, crate::versions::Origin::Edited);
    versions.select(0);
    let mut saved = SavedSession {
        generation: Some(generation(SavedStatus::Done, "<p>2</p>")),
        versions: Some(versions),
        ..SavedSession::default()
    };
    let plan = restore(&saved, false);
    assert_eq!(plan.code.as_deref(), Some("<p>1</p>"), "v1 was selected");
    assert_eq!(plan.versions.map(|v| v.list().len()), Some(2));
    saved.generation = Some(generation(SavedStatus::Done, "<p>1</p> typed"));
    assert_eq!(restore(&saved, false).code.as_deref(), Some("<p>1</p> typed"), "hand edits are kept");
    let linked = restore(&saved, true);
    assert_eq!((linked.code, linked.versions.map(|v| v.list().len())), (None, Some(2)), "a link keeps them");
}

#[test]
fn past_the_cap_the_oldest_entries_let_their_pictures_go_never_the_newest() {
    use flint_protocol::image::{ImageData, ImageType};
    let with = |id: u64, bytes: usize| SavedGeneration {
        id: Some(id),
        pictures: Some(crate::pictures::SavedPictures {
            images: vec![(
                "mock.png".into(),
                ImageData { media_type: ImageType::Png, data: "A".repeat(bytes), width: 1, height: 1 },
            )],
            description: Some(("cloud/eye".into(), "a header".into())),
            held: false,
        }),
        ..generation(SavedStatus::Done, "<p>x</p>")
    };
    let plain = SavedGeneration { id: Some(5), ..generation(SavedStatus::Done, "<p>y</p>") };
    let entries = vec![with(30, 40), plain, with(10, 40), with(20, 40)];
    assert!(pictures_over_cap(&entries, 120).is_empty(), "under the cap nothing goes");
    let ids = |over: Vec<&SavedGeneration>| over.iter().map(|g| g.id.unwrap()).collect::<Vec<_>>();
    assert_eq!(ids(pictures_over_cap(&entries, 100)), vec![10], "the oldest goes first");
    assert_eq!(ids(pictures_over_cap(&entries, 50)), vec![10, 20]);
    assert_eq!(ids(pictures_over_cap(&entries, 0)), vec![10, 20], "the newest keeps its pictures");
    let stripped = with(10, 40).without_pictures();
    assert_eq!((stripped.pictures, stripped.code.as_str()), (None, "<p>x</p>"), "prompt and code stay");
    assert!(pictures_let_go(2).contains("the oldest 2 entries with pictures let them go"));
    assert!(pictures_let_go(1).starts_with("History keeps up to 64 MB of pictures: the oldest entry"));
}
