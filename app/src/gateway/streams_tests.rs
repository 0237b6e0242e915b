//! Tests of stream bookkeeping (a separate file keeps `streams.rs` short).

use flint_protocol::{ChatMessage, GenParams, Role};

use super::*;

fn request() -> StartRequest {
    StartRequest {
        stream: 0,
        model: "p/m".into(),
        messages: vec![ChatMessage::new(Role::User, "hi")],
        params: GenParams::default(),
    }
}

fn delta(stream: StreamId, seq: u32, text: &str) -> ServerMessage {
    ServerMessage::Delta { stream, seq, text: text.into() }
}

#[test]
fn ids_are_assigned_and_start_frames_queued() {
    let mut s = Streams::<&str>::default();
    let a = s.open(request(), "a");
    let b = s.open(request(), "b");
    assert_ne!(a, b);
    let frames = s.take_outbox();
    assert_eq!(frames.len(), 2);
    let first: ClientMessage = serde_json::from_str(&frames[0]).expect("valid frame");
    let ClientMessage::Start(start) = first else { panic!("expected start") };
    assert_eq!(start.stream, a);
    assert!(!s.has_outbox());
}

#[test]
fn frames_route_to_their_stream_and_final_events_end_it() {
    let mut s = Streams::default();
    let a = s.open(request(), 'a');
    let b = s.open(request(), 'b');
    s.take_outbox();
    assert_eq!(
        s.route(delta(b, 0, "x")),
        Routed::Stream { handler: 'b', event: StreamEvent::Delta { text: "x".into() }, gap: false }
    );
    let Routed::Stream { gap, .. } = s.route(delta(b, 2, "y")) else { panic!("routed") };
    assert!(gap, "seq 1 was skipped");
    let done = ServerMessage::Done {
        stream: a,
        finish: FinishReason::Stop,
        usage: Usage::default(),
        metrics: StreamMetrics::default(),
    };
    assert!(matches!(s.route(done.clone()), Routed::Stream { handler: 'a', .. }));
    assert_eq!(s.route(done), Routed::Nothing, "stream a is over");
    assert_eq!(s.live_count(), 1);
}

#[test]
fn errors_with_and_without_stream() {
    let mut s = Streams::default();
    let a = s.open(request(), 1);
    s.take_outbox();
    let err = ServerMessage::Error {
        stream: Some(a),
        code: ErrorCode::RateLimited,
        message: "Slow down.".into(),
        retry_after_ms: Some(1500),
    };
    let Routed::Stream { event: StreamEvent::Failed { code, message }, .. } = s.route(err) else {
        panic!("expected a failure")
    };
    assert_eq!(code, Some(ErrorCode::RateLimited));
    assert_eq!(message, "Slow down. (retry in 2 s)");
    assert_eq!(s.live_count(), 0);
    let bad = ServerMessage::Error {
        stream: None,
        code: ErrorCode::BadFrame,
        message: "?".into(),
        retry_after_ms: None,
    };
    assert_eq!(s.route(bad), Routed::ConnectionError { code: ErrorCode::BadFrame, message: "?".into() });
}

#[test]
fn cancel_before_sending_ends_locally() {
    let mut s = Streams::default();
    let a = s.open(request(), 'a');
    let (handler, event) = s.cancel(a).expect("ends at once");
    assert_eq!(handler, 'a');
    assert!(matches!(event, StreamEvent::Done { finish: FinishReason::Cancelled, .. }));
    assert!(!s.has_outbox(), "the start frame is withdrawn");
}

#[test]
fn cancel_after_sending_asks_the_gateway() {
    let mut s = Streams::default();
    let a = s.open(request(), 'a');
    s.take_outbox();
    assert_eq!(s.cancel(a), None);
    let frames = s.take_outbox();
    assert_eq!(frames, [format!(r#"{{"type":"cancel","stream":{a}}}"#)]);
}

#[test]
fn lost_connection_fails_sent_streams_and_keeps_unsent_ones() {
    let mut s = Streams::default();
    let sent = s.open(request(), "sent");
    s.take_outbox();
    s.queue_control(&ClientMessage::Ping { nonce: 1 });
    let waiting = s.open(request(), "waiting");
    let lost = s.connection_lost("gone");
    assert_eq!(lost, [("sent", StreamEvent::Failed { code: None, message: "gone".into() })]);
    let frames = s.take_outbox();
    assert_eq!(frames.len(), 1, "only the unsent start survives: {frames:?}");
    assert!(frames[0].contains(&format!("\"stream\":{waiting}")));
    assert!(s.route(delta(sent, 0, "late")) == Routed::Nothing);
}

#[test]
fn a_queued_stream_hears_how_many_are_ahead() {
    let mut s = Streams::default();
    let a = s.open(request(), 'a');
    s.take_outbox();
    assert_eq!(
        s.route(ServerMessage::Queued { stream: a, ahead: 2 }),
        Routed::Stream { handler: 'a', event: StreamEvent::Queued { ahead: 2 }, gap: false }
    );
    assert_eq!(s.live_count(), 1, "a queued stream is still live");
}

#[test]
fn a_quota_frame_goes_to_the_meter_not_to_a_stream() {
    let mut s: Streams<u32> = Streams::default();
    let quota = ServerMessage::Quota { used: 1_200, limit: 50_000, resets_in_ms: 60_000 };
    assert!(matches!(
        s.route(quota),
        Routed::Quota(Quota { used: 1_200, limit: 50_000, resets_in_ms: 60_000 })
    ));
}

#[test]
fn own_keys_are_sent_now_and_first_again_on_every_new_connection() {
    let mut s: Streams<u32> = Streams::default();
    s.use_key("openai", Some(Secret::new("sk-mine")));
    s.use_key("groq", Some(Secret::new("gsk-mine")));
    s.use_key("groq", None);
    let sent = s.take_outbox();
    assert_eq!(sent.len(), 3);
    assert!(sent[0].contains(r#""type":"use_key","provider":"openai","key":"sk-mine""#), "{}", sent[0]);
    s.open(request(), 7);
    s.take_outbox();
    let queued = s.open(request(), 8);
    s.connection_lost("gone");
    let again = s.take_outbox();
    assert_eq!(again.len(), 2, "the key, then the start that waited: {again:?}");
    assert!(again[0].contains("sk-mine") && again[0].contains("openai"), "{}", again[0]);
    assert!(!again.iter().any(|f| f.contains("gsk-mine")), "a removed key came back");
    assert!(again[1].contains(&format!(r#""stream":{queued}"#)), "{}", again[1]);
}
