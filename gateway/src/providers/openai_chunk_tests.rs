//! A stream's chunks → provider events: every field, ending and error.

use super::*;

fn run(payloads: &[&str]) -> (Vec<Result<ProviderEvent, ProviderError>>, Result<(), ChunkError>) {
    let mut state = ChunkState::new("asked", &Arc::new(Redactor::new(Some("sk-secret-0123456789"))));
    let mut out = VecDeque::new();
    for payload in payloads {
        if let Err(err) = state.on_data(payload, &mut out) {
            return (out.into(), Err(err));
        }
    }
    (out.into(), Ok(()))
}

#[test]
fn a_stream_becomes_started_deltas_usage_and_finished() {
    let (events, result) = run(&[
        r#"{"model":"served","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
        r#"{"model":"served","choices":[{"delta":{"content":"Hel\"lo"},"finish_reason":null},{"delta":{}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#,
        "[DONE]",
        r#"{"choices":[{"delta":{"content":"after done"}}]}"#,
    ]);
    assert_eq!(result, Ok(()));
    let events: Vec<_> = events.into_iter().map(|e| e.expect("no errors")).collect();
    assert_eq!(
        events,
        vec![
            ProviderEvent::Started { model: "asked".into() },
            ProviderEvent::Delta("Hel\"lo".into()),
            ProviderEvent::Usage { prompt_tokens: Some(3), completion_tokens: 2 },
            ProviderEvent::Finished(FinishReason::Length),
        ]
    );
}

#[test]
fn started_reports_the_requested_model_whatever_the_upstream_says() {
    let (events, _) = run(&[r#"{"choices":null}"#]);
    assert_eq!(events[0], Ok(ProviderEvent::Started { model: "asked".into() }));
    let (events, _) = run(&[r#"{"model":"sk-secret-0123456789","choices":null}"#]);
    assert_eq!(events[0], Ok(ProviderEvent::Started { model: "asked".into() }));
}

#[test]
fn text_that_may_be_the_key_waits_and_the_key_itself_never_goes_out() {
    let chunk = |text: &str| format!(r#"{{"choices":[{{"delta":{{"content":"{text}"}}}}]}}"#);
    let stop = r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#;
    let (events, _) = run(&[
        &chunk("key: sk-sec"),
        &chunk("ret-01"),
        &chunk("23456789!"),
        &chunk("sk-sec"),
        stop,
        "[DONE]",
    ]);
    let events: Vec<_> = events.into_iter().map(|e| e.expect("no errors")).collect();
    assert_eq!(
        events[1..],
        [
            ProviderEvent::Delta("key: ".into()),
            ProviderEvent::Delta("[redacted]".into()),
            ProviderEvent::Delta("!".into()),
            ProviderEvent::Delta("sk-sec".into()),
            ProviderEvent::Finished(FinishReason::Stop),
        ],
        "held text goes out before Finished"
    );
}

#[test]
fn bad_json_and_error_objects_are_reported() {
    assert_eq!(run(&["{not json"]).1, Err(ChunkError::Json));
    let (_, result) = run(&[r#"{"error":{"message":"overloaded"}}"#]);
    assert_eq!(result, Err(ChunkError::Upstream { message: "overloaded".into(), context: false }));
    let redactor = Redactor::new(Some("sk-secret-0123456789"));
    let upstream = ChunkError::Upstream { message: "bad key SK-SECRET-0123456789".into(), context: false };
    let err = upstream.into_error("groq", &redactor);
    assert_eq!(err, ProviderError::Unavailable("groq failed mid-answer: bad key [redacted]".into()));
}

#[test]
fn a_context_error_event_is_a_prompt_too_large() {
    let (_, result) = run(&[r#"{"error":{"message":"maximum context length is 2048 tokens","code":400}}"#]);
    let Err(err) = result else { panic!("an error event must fail the stream") };
    let err = err.into_error("vllm", &Redactor::new(None));
    assert!(
        matches!(&err, ProviderError::PromptTooLarge(m) if m.contains("maximum context length is 2048")),
        "{err:?}"
    );
}

#[test]
fn done_without_a_finish_reason_is_unfinished_after_the_text() {
    let (events, result) = run(&[r#"{"choices":[{"delta":{"content":"half an"}}]}"#, "[DONE]"]);
    assert_eq!(result, Err(ChunkError::Unfinished));
    assert_eq!(events.last(), Some(&Ok(ProviderEvent::Delta("half an".into()))), "the text comes first");
    let err = ChunkError::Unfinished.into_error("llamacpp", &Redactor::new(None));
    assert!(matches!(err, ProviderError::Interrupted(_)), "{err:?}");
}

#[test]
fn reasoning_goes_apart_from_the_text_and_its_tokens_are_counted() {
    let (events, result) = run(&[
        r#"{"choices":[{"delta":{"role":"assistant","reasoning_content":"Plan: "}}]}"#,
        r#"{"choices":[{"delta":{"reasoning":"a grid"}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.encrypted","data":"x"}]}}]}"#,
        r#"{"choices":[{"delta":{"content":"<p>"},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":7}}}"#,
        "[DONE]",
    ]);
    assert_eq!(result, Ok(()));
    let events: Vec<_> = events.into_iter().map(|e| e.expect("no errors")).collect();
    assert_eq!(
        events[1..],
        [
            ProviderEvent::Reasoning("Plan: ".into()),
            ProviderEvent::Reasoning("a grid".into()),
            ProviderEvent::Reasoning(String::new()),
            ProviderEvent::Delta("<p>".into()),
            ProviderEvent::ReasoningTokens(7),
            ProviderEvent::Usage { prompt_tokens: None, completion_tokens: 9 },
            ProviderEvent::Finished(FinishReason::Stop),
        ]
    );
}

#[test]
fn a_filtered_or_unknown_ending_is_an_error_after_the_text() {
    for reason in ["content_filter", "tool_calls", "made_up"] {
        let finish =
            format!(r#"{{"choices":[{{"delta":{{"content":"half"}},"finish_reason":"{reason}"}}]}}"#);
        let (events, result) = run(&[&finish, "[DONE]"]);
        assert_eq!(result, Err(ChunkError::Ended(reason.into())), "{reason}");
        assert_eq!(events.last(), Some(&Ok(ProviderEvent::Delta("half".into()))), "{reason}: text first");
        let err = ChunkError::Ended(reason.into()).into_error("groq", &Redactor::new(None));
        assert!(matches!(&err, ProviderError::Interrupted(m) if m.starts_with("groq")), "{err:?}");
    }
}
