//! Responses events against what OpenAI's API sends, over SSE and in WebSocket mode.

use super::*;

const KEY: &str = "sk-scripted-0123456789-very-secret";

fn events() -> Events {
    Events::new(
        "openai",
        "asked",
        &KeyHint::Env("OPENAI_API_KEY".into()),
        &Arc::new(Redactor::new(Some(KEY))),
    )
}

/// Feeds `payloads` until one does not say `Continue`; returns the items and that outcome.
fn run(payloads: &[&str]) -> (Vec<Item>, Outcome) {
    let mut state = events();
    let mut out = VecDeque::new();
    for payload in payloads {
        let outcome = state.on_event(payload, &mut out);
        if outcome != Outcome::Continue {
            return (out.into(), outcome);
        }
    }
    (out.into(), Outcome::Continue)
}

fn delta(text: &str) -> String {
    format!(
        r#"{{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":{}}}"#,
        serde_json::to_string(text).unwrap_or_default()
    )
}

const CREATED: &str = r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"served","output":[]}}"#;

#[test]
fn a_completed_response_is_started_deltas_usage_and_stop() {
    let completed = r#"{"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":12,"output_tokens":3,"total_tokens":15}}}"#;
    let mut state = events();
    let mut out = VecDeque::new();
    for payload in [
        CREATED,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1"}}"#,
        r#"{"type":"response.reasoning_summary_text.delta","delta":{"unexpected":"shape"}}"#,
        &delta("Hel\"lo"),
        &delta(" there"),
        r#"{"type":"response.output_text.done","text":"Hel\"lo there"}"#,
    ] {
        assert_eq!(state.on_event(payload, &mut out), Outcome::Continue, "{payload}");
    }
    assert_eq!(state.on_event(completed, &mut out), Outcome::Ended);
    assert_eq!(
        out.into_iter().map(|e| e.expect("no errors")).collect::<Vec<_>>(),
        vec![
            ProviderEvent::Started { model: "asked".into() },
            // The reasoning item says the model thinks; the odd-shaped summary is passed over.
            ProviderEvent::Reasoning(String::new()),
            ProviderEvent::Delta("Hel\"lo".into()),
            ProviderEvent::Delta(" there".into()),
            ProviderEvent::Usage { prompt_tokens: Some(12), completion_tokens: 3 },
            ProviderEvent::Finished(FinishReason::Stop),
        ]
    );
    assert_eq!(state.response_id(), Some("resp_1"));
    assert_eq!(state.answer(), "Hel\"lo there");
    assert!(state.ended());
}

#[test]
fn max_output_tokens_is_a_length_finish_and_other_reasons_say_what() {
    let incomplete = |reason: &str| {
        format!(
            r#"{{"type":"response.incomplete","response":{{"id":"resp_1","status":"incomplete","incomplete_details":{{"reason":"{reason}"}},"usage":{{"input_tokens":5,"output_tokens":8}}}}}}"#
        )
    };
    let (items, outcome) = run(&[CREATED, &delta("half"), &incomplete("max_output_tokens")]);
    assert_eq!(outcome, Outcome::Ended);
    assert_eq!(items.last(), Some(&Ok(ProviderEvent::Finished(FinishReason::Length))));
    let (items, _) = run(&[CREATED, &delta("half"), &incomplete("content_filter")]);
    assert_eq!(items[1], Ok(ProviderEvent::Delta("half".into())), "the text is kept");
    let Some(Err(ProviderError::Interrupted(message))) = items.last() else { panic!("{items:?}") };
    assert_eq!(message, "openai left the answer incomplete: its content filter stopped it");
}

#[test]
fn a_failed_response_reports_its_message_without_the_key() {
    let failed = format!(
        r#"{{"type":"response.failed","response":{{"id":"resp_1","status":"failed","error":{{"code":"server_error","message":"overloaded while serving {}"}}}}}}"#,
        KEY.to_uppercase()
    );
    let (items, outcome) = run(&[CREATED, &delta("some"), &failed]);
    assert_eq!(outcome, Outcome::Ended);
    assert_eq!(items[1], Ok(ProviderEvent::Delta("some".into())));
    assert_eq!(
        items.last(),
        Some(&Err(ProviderError::Unavailable(
            "openai failed mid-answer: overloaded while serving [redacted]".into()
        )))
    );
    let context = r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}"#;
    let (items, _) = run(&[CREATED, context]);
    assert!(matches!(items.last(), Some(Err(ProviderError::PromptTooLarge(_)))), "{items:?}");
}

#[test]
fn websocket_and_sse_error_events_map_by_status_or_code() {
    let ws = r#"{"type":"error","status":429,"error":{"type":"rate_limit_error","code":"rate_limit_exceeded","message":"slow down"}}"#;
    let (items, _) = run(&[ws]);
    assert!(
        matches!(&items[0], Err(ProviderError::RateLimited { message, .. }) if message.contains("slow down")),
        "{items:?}"
    );
    let sse = r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null}"#;
    let (items, _) = run(&[sse]);
    assert!(matches!(&items[0], Err(ProviderError::RateLimited { .. })), "{items:?}");
    let unauthorized = format!(r#"{{"type":"error","status":401,"error":{{"message":"bad key {KEY}"}}}}"#);
    let (items, _) = run(&[&unauthorized]);
    assert_eq!(
        items[0],
        Err(ProviderError::Unauthorized(
            "the provider rejected the API key for openai; check OPENAI_API_KEY".into()
        ))
    );
    let server = r#"{"type":"error","status":500,"error":{"code":"server_error","message":"oops"}}"#;
    let (items, _) = run(&[server]);
    assert_eq!(items[0], Err(ProviderError::Unavailable("openai failed mid-answer: oops".into())));
}

#[test]
fn a_lost_previous_response_asks_for_a_full_resend_before_any_text_only() {
    let lost = r#"{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"Previous response with id 'resp_1' not found.","param":"previous_response_id"}}"#;
    let (items, outcome) = run(&[lost]);
    assert_eq!(outcome, Outcome::ResendFull);
    assert!(items.is_empty(), "the person never sees it: {items:?}");
    let (items, outcome) = run(&[CREATED, &delta("text"), lost]);
    assert_eq!(outcome, Outcome::Ended);
    assert!(matches!(items.last(), Some(Err(ProviderError::Unavailable(_)))), "{items:?}");
    let limit = r#"{"type":"error","status":400,"error":{"code":"websocket_connection_limit_reached","message":"60 minutes"}}"#;
    assert_eq!(run(&[limit]).1, Outcome::Reconnect);
}

#[test]
fn a_stream_that_ends_early_is_interrupted_with_its_text_kept() {
    let mut state = events();
    let mut out = VecDeque::new();
    state.on_event(CREATED, &mut out);
    state.on_event(&delta("key: sk-scr"), &mut out);
    state.end_of_stream(&mut out);
    let items: Vec<_> = out.into();
    assert_eq!(items[1], Ok(ProviderEvent::Delta("key: ".into())));
    assert_eq!(items[2], Ok(ProviderEvent::Delta("sk-scr".into())), "held text goes out before the error");
    assert!(matches!(items[3], Err(ProviderError::Interrupted(_))), "{items:?}");
    let mut done = events();
    let mut out = VecDeque::new();
    done.on_event(r#"{"type":"response.completed","response":{"status":"completed"}}"#, &mut out);
    done.end_of_stream(&mut out);
    assert!(out.iter().all(Result::is_ok), "nothing after the end: {out:?}");
}

#[test]
fn the_key_in_the_text_never_goes_out_and_bad_json_is_a_protocol_error() {
    let completed = r#"{"type":"response.completed","response":{"status":"completed"}}"#;
    let (items, _) =
        run(&[CREATED, &delta("here: sk-scripted-"), &delta("0123456789-very-secret!"), completed]);
    let text: String = items
        .iter()
        .filter_map(|i| match i {
            Ok(ProviderEvent::Delta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "here: [redacted]!");
    let (items, outcome) = run(&["{not json"]);
    assert_eq!(outcome, Outcome::Ended);
    assert!(matches!(items[0], Err(ProviderError::Protocol(_))), "{items:?}");
    assert_eq!(run(&["[DONE]", r#"{"type":"response.queued"}"#]).1, Outcome::Continue);
}

#[test]
fn reasoning_is_shown_apart_and_its_tokens_counted() {
    let summary = |text: &str| {
        format!(r#"{{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","delta":"{text}"}}"#)
    };
    let (items, outcome) = run(&[
        r#"{"type":"response.created","response":{"id":"resp_1"}}"#,
        r#"{"type":"response.output_item.added","item":{"type":"reasoning","id":"rs_1"}}"#,
        &summary("Plan: a "),
        &summary("grid"),
        r#"{"type":"response.output_item.added","item":{"type":"message","id":"m_1"}}"#,
        &delta("<p>"),
        r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5,
            "output_tokens":40,"output_tokens_details":{"reasoning_tokens":30}}}}"#,
    ]);
    assert_eq!(outcome, Outcome::Ended);
    let items: Vec<_> = items.into_iter().map(|i| i.expect("no errors")).collect();
    assert_eq!(
        items[1..],
        [
            ProviderEvent::Reasoning(String::new()),
            ProviderEvent::Reasoning("Plan: a ".into()),
            ProviderEvent::Reasoning("grid".into()),
            ProviderEvent::Delta("<p>".into()),
            ProviderEvent::ReasoningTokens(30),
            ProviderEvent::Usage { prompt_tokens: Some(5), completion_tokens: 40 },
            ProviderEvent::Finished(FinishReason::Stop),
        ]
    );
}
