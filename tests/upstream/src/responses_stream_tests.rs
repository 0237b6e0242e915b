//! The scripted Responses stream's events, read back in order.

use super::*;

async fn all_events(mut responder: Responder) -> Vec<Value> {
    let mut events = Vec::new();
    while let Some(batch) = responder.next_events().await {
        for event in batch {
            let value: Value = serde_json::from_str(&event.json).expect("events are JSON");
            assert_eq!(value["type"], event.kind);
            events.push(value);
        }
    }
    events
}

fn plan(end: End) -> Plan {
    let tokens: Arc<[String]> = ["\"a\"", "\"b\"", "\"c\""].map(str::to_owned).into();
    Plan { model: "m".into(), tokens, interval: Duration::ZERO, end }
}

#[tokio::test]
async fn a_cut_answer_is_incomplete_with_usage_and_its_text_so_far() {
    let events =
        all_events(Responder::new(plan(End::Completed), "resp_1".into(), Some(2), true, 7, Duration::ZERO))
            .await;
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds[..2], ["response.created", "response.in_progress"]);
    assert!(kinds.contains(&"response.reasoning_summary_text.delta"), "{kinds:?}");
    let deltas: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(deltas, ["a", "b"]);
    let last = events.last().expect("a last event");
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(last["response"]["incomplete_details"]["reason"], "max_output_tokens");
    assert_eq!(last["response"]["usage"]["input_tokens"], 7);
    assert_eq!(last["response"]["usage"]["output_tokens"], 2);
    let numbers: Vec<u64> = events.iter().filter_map(|e| e["sequence_number"].as_u64()).collect();
    assert_eq!(numbers, (0..events.len() as u64).collect::<Vec<_>>(), "numbered in order");
}

#[tokio::test]
async fn failed_and_dropped_answers_end_as_scripted() {
    let failed = End::Failed { code: "server_error", message: "boom".into() };
    let events =
        all_events(Responder::new(plan(failed), "resp_2".into(), None, false, 0, Duration::ZERO)).await;
    let last = events.last().expect("a last event");
    assert_eq!(
        (last["type"].as_str(), last["response"]["error"]["message"].as_str()),
        (Some("response.failed"), Some("boom"))
    );
    let mut dropped = Responder::new(plan(End::Drop), "resp_3".into(), None, false, 0, Duration::ZERO);
    while dropped.next_events().await.is_some() {}
    assert!(dropped.dropped() && !dropped.completed());
}
