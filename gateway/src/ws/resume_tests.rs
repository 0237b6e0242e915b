//! Resuming a dropped connection: two sockets (channels) on one gateway state.

use flint_protocol::Secret;

use super::*;
use crate::config::{LimitsConfig, PersonLimits};

const ADA: [u8; 4] = [127, 0, 0, 1];
const BOB: [u8; 4] = [127, 0, 0, 2];

struct Tab {
    to_gateway: UnboundedSender<Result<Message, Infallible>>,
    from_gateway: UnboundedReceiver<Message>,
    connection: JoinHandle<()>,
}

fn gateway(server: ServerConfig, limits: LimitsConfig) -> (AppState, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    let config = Config { server, limits, ..Config::default() };
    (AppState::new(&config, vec![fake.clone() as Arc<dyn Provider>]), fake)
}

fn open(state: &AppState, conn: u64, who: [u8; 4]) -> Tab {
    let state = state.clone();
    let (to_gateway, incoming) = unbounded();
    let (sink, from_gateway) = unbounded();
    let connection = tokio::spawn(async move {
        serve_socket(sink, incoming, state, conn, None, Person::Anonymous(who.into()), None).await
    });
    Tab { to_gateway, from_gateway, connection }
}

impl Tab {
    fn send(&self, json: &str) {
        self.to_gateway.unbounded_send(Ok(Message::Text(json.into()))).expect("connection is open");
    }

    async fn next(&mut self) -> ServerMessage {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(5), self.from_gateway.next())
                .await
                .expect("a frame within 5 s")
                .expect("connection still open");
            if let Message::Text(text) = message {
                return serde_json::from_str(&text).expect("gateway frames are valid");
            }
        }
    }

    /// The `Hello`'s resume token.
    async fn hello(&mut self) -> Option<Secret> {
        match self.next().await {
            ServerMessage::Hello { resume, .. } => resume,
            other => panic!("expected Hello, got {other:?}"),
        }
    }

    /// Starts stream 1 on the fake model that numbers its deltas and reads until `deltas` arrived.
    async fn numbered_until(&mut self, deltas: usize) -> Seen {
        self.send(START_NUMBERED);
        let mut seen = Seen::default();
        while seen.seqs.len() < deltas {
            seen.take(self.next().await);
        }
        seen
    }

    /// The socket breaks without a goodbye; frames the gateway already sent are lost with it.
    fn cut(self) -> JoinHandle<()> {
        drop(self.from_gateway);
        self.to_gateway.close_channel();
        self.connection
    }

    fn resume(&self, token: &Secret, last_seq: Option<u32>) {
        let last = last_seq.map_or(String::new(), |s| format!(r#","last_seq":{s}"#));
        self.send(&format!(
            r#"{{"type":"resume","token":"{}","streams":[{{"stream":1{last}}}]}}"#,
            token.expose()
        ));
    }
}

/// Stream 1 on the fake model whose deltas are numbered.
const START_NUMBERED: &str = r#"{"type":"start","stream":1,"model":"fake/numbered","messages":[]}"#;

/// What a page saw of stream 1: its text, every delta seq, and how it ended.
#[derive(Default)]
struct Seen {
    text: String,
    seqs: Vec<u32>,
    end: Option<ServerMessage>,
}

impl Seen {
    fn take(&mut self, frame: ServerMessage) {
        match frame {
            ServerMessage::Delta { stream: 1, seq, text } => {
                self.text.push_str(&text);
                self.seqs.push(seq);
            }
            end @ (ServerMessage::Done { stream: 1, .. } | ServerMessage::Error { stream: Some(1), .. }) => {
                self.end = Some(end);
            }
            _ => {}
        }
    }
}

fn whole_text() -> String {
    (0..20).map(|i| format!("t{i} ")).collect()
}

fn resumable() -> ServerConfig {
    ServerConfig { resume_grace_secs: 30, ..ServerConfig::default() }
}

#[tokio::test(start_paused = true)]
async fn a_cut_after_any_frame_resumes_with_the_whole_text_and_each_seq_once() {
    // Started, twenty deltas, Done: cut after each of the first 21 frames.
    for k in 0..=21 {
        let (state, fake) = gateway(resumable(), LimitsConfig::default());
        let mut first = open(&state, 1, ADA);
        let token = first.hello().await.expect("a resume token");
        first.send(START_NUMBERED);
        let mut seen = Seen::default();
        let mut frames = 0;
        while frames < k {
            let frame = first.next().await;
            if matches!(&frame, ServerMessage::Started { .. } | ServerMessage::Delta { .. }) {
                frames += 1;
            }
            seen.take(frame);
        }
        assert!(seen.end.is_none(), "cut {k}: the stream ended before the cut");
        let _waiting = first.cut();
        let mut second = open(&state, 2, ADA);
        second.hello().await;
        second.resume(&token, seen.seqs.last().copied());
        while seen.end.is_none() {
            seen.take(second.next().await);
        }
        assert!(matches!(seen.end, Some(ServerMessage::Done { .. })), "cut {k}: {:?}", seen.end);
        assert_eq!(seen.text, whole_text(), "cut {k}: text lost or repeated");
        assert_eq!(seen.seqs, (0..20).collect::<Vec<u32>>(), "cut {k}: each seq once, in order");
        assert_eq!(fake.requests.lock().unwrap().len(), 1, "cut {k}: the answer was not asked for again");
        assert_eq!(
            state.resumes().len(),
            1,
            "cut {k}: the old token was used up; only the new socket's is left"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_resume_after_the_grace_period_is_told_the_answer_is_gone() {
    let (state, fake) = gateway(resumable(), LimitsConfig::default());
    let mut first = open(&state, 1, ADA);
    let token = first.hello().await.expect("a resume token");
    first.send(r#"{"type":"start","stream":1,"model":"fake/hang","messages":[]}"#);
    assert!(matches!(first.next().await, ServerMessage::Started { .. }));
    let waiting = first.cut();
    tokio::time::sleep(Duration::from_secs(29)).await;
    assert_eq!(fake.dropped.load(Ordering::SeqCst), 0, "the stream runs on during the grace period");
    tokio::time::sleep(Duration::from_secs(2)).await;
    tokio::time::timeout(Duration::from_secs(1), waiting)
        .await
        .expect("the waiting session ends with the grace period")
        .expect("without a panic");
    assert_eq!(fake.dropped.load(Ordering::SeqCst), 1, "after the grace period the upstream is dropped");
    assert_eq!(state.resumes().len(), 0);
    let mut second = open(&state, 2, ADA);
    second.hello().await;
    second.resume(&token, None);
    let ServerMessage::Error { stream: Some(1), code: ErrorCode::ResumeExpired, message, .. } =
        second.next().await
    else {
        panic!("expected resume_expired for stream 1")
    };
    assert!(message.contains("resume_grace_secs") && message.contains("run again"), "{message}");
}

#[tokio::test(start_paused = true)]
async fn another_persons_token_resumes_nothing_and_the_owner_still_can() {
    let (state, _) = gateway(resumable(), LimitsConfig::default());
    let mut ada = open(&state, 1, ADA);
    let token = ada.hello().await.expect("a resume token");
    let mut seen = ada.numbered_until(3).await;
    let _waiting = ada.cut();
    let mut bob = open(&state, 2, BOB);
    bob.hello().await;
    bob.resume(&token, None);
    let frame = bob.next().await;
    assert!(
        matches!(frame, ServerMessage::Error { stream: Some(1), code: ErrorCode::ResumeExpired, .. }),
        "Bob must get nothing of Ada's: {frame:?}"
    );
    bob.send(r#"{"type":"ping","nonce":1}"#);
    assert!(matches!(bob.next().await, ServerMessage::Pong { nonce: 1 }), "no frame of Ada's stream");
    let mut again = open(&state, 3, ADA);
    again.hello().await;
    again.resume(&token, seen.seqs.last().copied());
    while seen.end.is_none() {
        seen.take(again.next().await);
    }
    assert_eq!(seen.text, whole_text());
}

#[tokio::test(start_paused = true)]
async fn a_waiting_tab_holds_its_place_and_its_resumed_socket_counts_once() {
    let one_tab = PersonLimits { sockets: 1, ..PersonLimits::default() };
    let limits = LimitsConfig { signed_in: one_tab, ..LimitsConfig::default() };
    let (state, _) = gateway(resumable(), limits);
    let mut first = open(&state, 1, ADA);
    let token = first.hello().await.expect("a resume token");
    let _waiting = first.cut();
    let mut other = open(&state, 2, ADA);
    other.hello().await;
    other.send(r#"{"type":"ping","nonce":1}"#);
    let frame = other.next().await;
    assert!(matches!(frame, ServerMessage::Error { code: ErrorCode::RateLimited, .. }), "{frame:?}");
    let mut back = open(&state, 3, ADA);
    back.hello().await;
    back.send(&format!(r#"{{"type":"resume","token":"{}","streams":[]}}"#, token.expose()));
    back.send(r#"{"type":"ping","nonce":2}"#);
    assert!(matches!(back.next().await, ServerMessage::Pong { nonce: 2 }), "the page is back on its tab");
    let mut extra = open(&state, 4, ADA);
    extra.hello().await;
    let frame = extra.next().await;
    assert!(matches!(frame, ServerMessage::Error { code: ErrorCode::RateLimited, .. }), "one tab: {frame:?}");
}

#[tokio::test(start_paused = true)]
async fn a_resumed_socket_gives_back_its_own_place_among_the_tabs() {
    let two_tabs = PersonLimits { sockets: 2, ..PersonLimits::default() };
    let (state, fake) = gateway(resumable(), LimitsConfig { signed_in: two_tabs, ..LimitsConfig::default() });
    let mut first = open(&state, 1, ADA);
    let token = first.hello().await.expect("a resume token");
    let _waiting = first.cut();
    let mut back = open(&state, 2, ADA);
    back.hello().await;
    back.send(&format!(r#"{{"type":"resume","token":"{}","streams":[]}}"#, token.expose()));
    back.send(r#"{"type":"ping","nonce":1}"#);
    assert!(matches!(back.next().await, ServerMessage::Pong { nonce: 1 }));
    back.send(r#"{"type":"start","stream":5,"model":"fake/echo","messages":[]}"#);
    back.next().await;
    let client = fake.requests.lock().unwrap().last().map(|r| r.client);
    assert_eq!(client, Some(1), "providers still know the tab by its first connection (the Responses pool)");
    let mut second_tab = open(&state, 3, ADA);
    second_tab.hello().await;
    second_tab.send(r#"{"type":"ping","nonce":2}"#);
    let frame = second_tab.next().await;
    assert!(matches!(frame, ServerMessage::Pong { nonce: 2 }), "the resumed tab counts once: {frame:?}");
    let mut third_tab = open(&state, 4, ADA);
    third_tab.hello().await;
    let frame = third_tab.next().await;
    assert!(matches!(frame, ServerMessage::Error { code: ErrorCode::RateLimited, .. }), "{frame:?}");
}

#[tokio::test(start_paused = true)]
async fn frames_past_the_buffer_cap_stop_the_streams_and_the_resume_says_why() {
    let server = ServerConfig { resume_buffer_bytes: 300, ..resumable() };
    let (state, fake) = gateway(server, LimitsConfig::default());
    let mut first = open(&state, 1, ADA);
    let token = first.hello().await.expect("a resume token");
    first.send(START_NUMBERED);
    assert!(matches!(first.next().await, ServerMessage::Started { .. }));
    let _waiting = first.cut();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(fake.dropped.load(Ordering::SeqCst), 1, "the stream was stopped at the cap");
    let mut second = open(&state, 2, ADA);
    second.hello().await;
    second.resume(&token, None);
    let ServerMessage::Error { stream: Some(1), code: ErrorCode::ResumeExpired, message, .. } =
        second.next().await
    else {
        panic!("expected resume_expired for stream 1")
    };
    assert!(message.contains("resume_buffer_bytes"), "{message}");
}

#[tokio::test(start_paused = true)]
async fn with_no_grace_period_there_is_no_token_and_a_cut_ends_the_streams() {
    let (state, fake) =
        gateway(ServerConfig { resume_grace_secs: 0, ..ServerConfig::default() }, LimitsConfig::default());
    let mut first = open(&state, 1, ADA);
    assert!(first.hello().await.is_none(), "no token when resuming is off");
    first.send(r#"{"type":"start","stream":1,"model":"fake/hang","messages":[]}"#);
    first.next().await;
    tokio::time::timeout(Duration::from_secs(1), first.cut()).await.expect("ends at once").expect("no panic");
    assert_eq!(fake.dropped.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_page_back_before_the_gateway_saw_its_socket_die_takes_the_session_over() {
    let (state, fake) = gateway(resumable(), LimitsConfig::default());
    let mut silent = open(&state, 1, ADA);
    let token = silent.hello().await.expect("a resume token");
    let mut seen = silent.numbered_until(4).await;
    // The old socket is still open as far as the gateway knows.
    let mut back = open(&state, 2, ADA);
    back.hello().await;
    back.resume(&token, seen.seqs.last().copied());
    while seen.end.is_none() {
        seen.take(back.next().await);
    }
    assert_eq!(seen.text, whole_text());
    assert_eq!(seen.seqs, (0..20).collect::<Vec<u32>>());
    tokio::time::timeout(Duration::from_secs(1), silent.connection)
        .await
        .expect("the replaced socket's connection ends")
        .expect("no panic");
    assert_eq!(fake.requests.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_finished_answer_the_browser_confirmed_is_no_longer_kept_and_one_it_did_not_is() {
    // A forged pong (a mark no ping carried) confirms nothing: it is sent like the browser's echo.
    for (confirmed, forged) in [(false, false), (true, false), (false, true)] {
        let (state, _) = gateway(resumable(), LimitsConfig::default());
        let mut first = open(&state, 1, ADA);
        let token = first.hello().await.expect("a resume token");
        first.send(START_NUMBERED);
        let mut seen = Seen::default();
        let mark = loop {
            let message = tokio::time::timeout(Duration::from_secs(5), first.from_gateway.next())
                .await
                .expect("a frame within 5 s")
                .expect("connection still open");
            match message {
                Message::Text(text) => seen.take(serde_json::from_str(&text).expect("valid frames")),
                // The ping that follows Done asks the browser to confirm it has it.
                Message::Ping(payload) if seen.end.is_some() => break payload,
                _ => {}
            }
        };
        if confirmed || forged {
            // What a browser does by itself: echo the ping's payload.
            let pong = if forged { u64::MAX.to_be_bytes().to_vec().into() } else { mark };
            first.to_gateway.unbounded_send(Ok(Message::Pong(pong))).expect("open");
            // Frames are read in order: once the JSON ping is answered, the pong was handled.
            first.send(r#"{"type":"ping","nonce":7}"#);
            while !matches!(first.next().await, ServerMessage::Pong { nonce: 7 }) {}
        }
        let _waiting = first.cut();
        let mut second = open(&state, 2, ADA);
        second.hello().await;
        second.resume(&token, Some(19));
        let frame = second.next().await;
        if confirmed {
            assert!(
                matches!(frame, ServerMessage::Error { stream: Some(1), code: ErrorCode::ResumeExpired, .. }),
                "the confirmed answer is still kept: {frame:?}"
            );
        } else {
            assert!(
                matches!(frame, ServerMessage::Done { stream: 1, .. }),
                "unconfirmed, Done is sent again: {frame:?}"
            );
        }
    }
}
