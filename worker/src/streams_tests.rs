//! Tests of stream bookkeeping (a separate file keeps `streams.rs` short).

use flint_protocol::{
    ChatMessage, ErrorCode, FinishReason, GenParams, ResumeRequest, ResumeStream, Role, StreamMetrics, Usage,
};

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
    assert_eq!(s.route(delta(b, 0, "x")), Routed::Text { handler: 'b', text: "x".into(), gap: false });
    let Routed::Text { gap, .. } = s.route(delta(b, 2, "y")) else { panic!("routed") };
    assert!(gap, "seq 1 was skipped");
    let done = ServerMessage::Done {
        stream: a,
        finish: FinishReason::Stop,
        usage: Usage::default(),
        metrics: StreamMetrics::default(),
    };
    assert!(matches!(s.route(done.clone()), Routed::Frame { handler: 'a', .. }));
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
    assert_eq!(s.route(err.clone()), Routed::Frame { handler: 1, frame: err }, "forwarded as it came");
    assert_eq!(s.live_count(), 0);
    let bad = ServerMessage::Error {
        stream: None,
        code: ErrorCode::BadFrame,
        message: "?".into(),
        retry_after_ms: None,
    };
    assert_eq!(s.route(bad.clone()), Routed::Connection(bad));
}

#[test]
fn cancel_before_sending_ends_locally() {
    let mut s = Streams::default();
    let a = s.open(request(), 'a');
    let (handler, event) = s.cancel(a).expect("ends at once");
    assert_eq!(handler, 'a');
    assert_eq!(event, LaneEvent::Cancelled);
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
    assert_eq!(lost, [("sent", LaneEvent::Lost("gone".into()))]);
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
    let queued = ServerMessage::Queued { stream: a, ahead: 2 };
    assert_eq!(s.route(queued.clone()), Routed::Frame { handler: 'a', frame: queued });
    assert_eq!(s.live_count(), 1, "a queued stream is still live");
}

#[test]
fn a_quota_frame_goes_to_the_meter_not_to_a_stream() {
    let mut s: Streams<u32> = Streams::default();
    let quota = ServerMessage::Quota { used: 1_200, limit: 50_000, resets_in_ms: 60_000 };
    assert_eq!(s.route(quota.clone()), Routed::Connection(quota));
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

fn hello(token: Option<&str>) -> ServerMessage {
    ServerMessage::Hello {
        protocol: 1,
        gateway: "test".into(),
        resume: token.map(Secret::new),
        history: false,
    }
}

fn resume_of(frame: &str) -> ResumeRequest {
    match serde_json::from_str::<ClientMessage>(frame) {
        Ok(ClientMessage::Resume(resume)) => resume,
        other => panic!("expected a resume first, got {other:?}"),
    }
}

#[test]
fn a_lost_connection_with_a_token_fails_nothing_and_resumes_first() {
    let mut s = Streams::default();
    s.route(hello(Some("tok-1")));
    s.use_key("openai", Some(Secret::new("sk-mine")));
    let quiet = s.open(request(), 'q');
    let talking = s.open(request(), 't');
    s.take_outbox();
    for seq in 0..3 {
        s.route(delta(talking, seq, "x"));
    }
    let waiting = s.open(request(), 'w');
    assert_eq!(s.connection_lost("gone"), [], "nothing fails while a resume is possible");
    assert_eq!(s.connection_lost("gone again"), [], "nor when the next socket fails too");
    let frames = s.take_outbox();
    let resume = resume_of(&frames[0]);
    assert_eq!(resume.token.expose(), "tok-1");
    assert_eq!(
        resume.streams,
        [ResumeStream { stream: quiet, last_seq: None }, ResumeStream { stream: talking, last_seq: Some(2) }]
    );
    assert!(frames[1].contains("sk-mine"), "then the keys: {}", frames[1]);
    assert!(frames[2].contains(&format!(r#""stream":{waiting}"#)), "then the unsent start: {}", frames[2]);
    assert_eq!(frames.len(), 3);
    s.route(hello(Some("tok-2")));
    assert_eq!(s.route(delta(talking, 2, "x")), Routed::Nothing, "a repeated frame is dropped");
    assert!(matches!(s.route(delta(talking, 3, "y")), Routed::Text { gap: false, .. }));
    let expired = ServerMessage::Error {
        stream: Some(quiet),
        code: ErrorCode::ResumeExpired,
        message: "The gateway no longer has this answer; run again.".into(),
        retry_after_ms: None,
    };
    assert_eq!(
        s.route(expired.clone()),
        Routed::Frame { handler: 'q', frame: expired },
        "it goes to the page"
    );
    assert_eq!(s.live_count(), 2, "and ends the stream");
    s.connection_lost("gone");
    assert_eq!(resume_of(&s.take_outbox()[0]).token.expose(), "tok-2", "the newest connection's token");
}

#[test]
fn a_cut_after_any_frame_and_an_overlapping_replay_give_the_text_once() {
    let text: Vec<String> = (0..12).map(|i| format!("t{i} ")).collect();
    for k in 0..=text.len() {
        let mut s = Streams::default();
        s.route(hello(Some("tok")));
        let id = s.open(request(), ());
        s.take_outbox();
        let mut got = String::new();
        let mut take = |s: &mut Streams<()>, seq: usize| {
            if let Routed::Text { text, gap, .. } = s.route(delta(id, seq as u32, &text[seq])) {
                assert!(!gap, "cut {k}: seq {seq} is not a gap");
                got.push_str(&text);
            }
        };
        (0..k).for_each(|seq| take(&mut s, seq));
        s.connection_lost("gone");
        let last = resume_of(&s.take_outbox()[0]).streams[0].last_seq;
        assert_eq!(last, k.checked_sub(1).map(|l| l as u32), "cut {k}");
        // A replay that starts one frame early must not repeat it.
        (k.saturating_sub(1)..text.len()).for_each(|seq| take(&mut s, seq));
        assert_eq!(got, text.concat(), "cut {k}");
    }
}

#[test]
fn streams_waiting_to_resume_fail_when_the_page_gives_up() {
    let mut s = Streams::default();
    s.route(hello(Some("tok")));
    s.open(request(), 'a');
    s.take_outbox();
    assert_eq!(s.connection_lost("gone"), []);
    let failed = s.give_up_resuming("stayed away");
    assert_eq!(failed, [('a', LaneEvent::Lost("stayed away".into()))]);
    assert!(!s.has_outbox(), "no resume is sent for streams given up on");
    assert_eq!(s.give_up_resuming("again"), [], "only once");
}

#[test]
fn a_greeting_goes_to_the_page_without_its_resume_token() {
    let mut s: Streams<u32> = Streams::default();
    assert_eq!(s.route(hello(Some("tok"))), Routed::Connection(hello(None)));
    s.open(request(), 1);
    s.take_outbox();
    s.connection_lost("gone");
    assert_eq!(resume_of(&s.take_outbox()[0]).token.expose(), "tok", "the token stayed in the worker");
}

#[test]
fn the_page_chooses_stream_ids() {
    let mut s = Streams::default();
    let mut chosen = request();
    chosen.stream = 41;
    assert_eq!(s.open(chosen, 'a'), 41);
    assert_eq!(s.open(request(), 'b'), 42, "unchosen ids follow");
}
