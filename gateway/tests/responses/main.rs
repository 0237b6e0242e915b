//! `kind = "responses"`: OpenAI's Responses API over HTTP streaming and WebSocket mode, against
//! the scripted upstream's `/v1/responses`.

#[path = "../common/mod.rs"]
mod common;
mod sockets;

use std::time::Duration;

use common::{Client, Gateway, KEY, KEY_ENV, Outcome, fixture, start_upstream_with};
use flint_gateway::config::{Config, ModelConfig, ProviderConfig, ResponsesConfig, ResponsesTransport};
use flint_protocol::{
    ChatMessage, ClientMessage, ErrorCode, FinishReason, GenParams, ReasoningEffort, Role, ServerMessage,
    StartRequest, Verbosity,
};
use flint_scripted_upstream::{
    CONTINUATION_FAILURE, Options, RequestRecord, ResponsesRecord, WHOLE_ONLY_TEXT, fixtures_dir,
};

/// The models, and whether each takes reasoning keys.
const MODELS: &[(&str, bool)] = &[
    ("counter@20000", false),
    ("counter@5000", true),
    ("counter@2000", false),
    ("large@200", false),
    ("fail-500", false),
    ("fail-429", false),
    ("empty-answer", false),
    ("leak-content@20000", false),
    ("leak-midstream", false),
    ("leak-masked", false),
    ("leak-model", false),
    ("whole-only", false),
];

/// A gateway whose only provider is a Responses provider named `scripted` (so [`Client::start`]
/// works), keyed like the other tests, in front of an upstream started with `options`.
async fn start(
    options: Options,
    transport: ResponsesTransport,
    configure: impl FnOnce(&mut ResponsesConfig),
) -> Gateway {
    start_upstream_with(options, move |config: &mut Config| {
        let ProviderConfig::Openai(scripted) = &config.providers[0] else { panic!("the scripted provider") };
        let mut responses = ResponsesConfig {
            name: "scripted".into(),
            base_url: scripted.base_url.clone(),
            api_key_env: Some(KEY_ENV.into()),
            api_key: None,
            models: MODELS
                .iter()
                .map(|(id, reasoning)| ModelConfig {
                    id: (*id).into(),
                    label: None,
                    context_window: Some(8192),
                    tokenizer: None,
                    reasoning: Some(*reasoning),
                    vision: None,
                    price: None,
                })
                .collect(),
            transport,
            max_concurrent: None,
            allow_user_keys: false,
            stall_timeout_secs: None,
            reasoning_summary: None,
            websocket_max_age: None,
        };
        configure(&mut responses);
        config.providers = vec![ProviderConfig::Responses(responses)];
    })
    .await
}

async fn start_ws() -> Gateway {
    start(Options::new(fixtures_dir()), ResponsesTransport::Websocket, |_| {}).await
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::new(Role::User, text)
}

/// Runs one stream with these messages and parameters to its end.
async fn ask(
    client: &mut Client,
    stream: u32,
    model: &str,
    messages: Vec<ChatMessage>,
    params: GenParams,
) -> Outcome {
    let start = StartRequest { stream, model: format!("scripted/{model}"), messages, params };
    client.send(&ClientMessage::Start(start)).await;
    let (mut done, others) = client.collect(&[stream]).await;
    // A reasoning model's summaries come as thinking (see `tests/thinking.rs`), never as text.
    let others: Vec<_> = others.iter().filter(|f| !matches!(f, ServerMessage::Thinking { .. })).collect();
    assert!(others.is_empty(), "unexpected frames: {others:?}");
    done.remove(0).1
}

fn finished(outcome: &Outcome) -> FinishReason {
    match &outcome.end {
        ServerMessage::Done { finish, .. } => *finish,
        other => panic!("the stream should have finished, it ended with {other:?}"),
    }
}

fn responses(record: &RequestRecord) -> &ResponsesRecord {
    record.responses.as_ref().expect("a /v1/responses request")
}

/// Waits until `check` holds for the upstream's sockets.
async fn until_sockets(
    gw: &Gateway,
    what: &str,
    check: impl Fn(&[flint_scripted_upstream::SocketRecord]) -> bool,
) {
    for _ in 0..500 {
        if check(&gw.upstream.sockets()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: {:?}", gw.upstream.sockets());
}

#[tokio::test]
async fn http_transport_streams_an_answer_in_one_post() {
    let gw = start(Options::new(fixtures_dir()), ResponsesTransport::Http, |_| {}).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "counter@20000").await;
    assert_eq!(finished(&outcome), FinishReason::Stop);
    assert_eq!(outcome.text, fixture("counter"));
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(responses(&log[0]).transport, "http");
    assert_eq!(log[0].body["stream"], true);
    assert_eq!(log[0].body["store"], false);
    assert!(log[0].authorization, "the key goes in the Authorization header");
    assert!(gw.upstream.sockets().is_empty(), "no WebSocket with transport = \"http\"");
}

#[tokio::test]
async fn websocket_transport_streams_an_answer_on_a_socket() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "counter@20000").await;
    assert_eq!(finished(&outcome), FinishReason::Stop);
    assert_eq!(outcome.text, fixture("counter"));
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(responses(&log[0]).transport, "websocket");
    assert_eq!(log[0].body["type"], "response.create");
    assert!(log[0].body.get("stream").is_none(), "no `stream` in WebSocket mode: {}", log[0].body);
    let sockets = gw.upstream.sockets();
    assert_eq!(sockets.len(), 1, "{sockets:?}");
    assert!(sockets[0].authorization, "the key goes on the handshake");
}

/// Asks three turns of one thread, each carrying the previous answer; returns the log.
async fn three_turns(client: &mut Client) -> Vec<String> {
    let mut messages = vec![ChatMessage::new(Role::System, "You are Flint."), user("make a counter")];
    let mut answers = Vec::new();
    for (turn, next) in [(1, "make it blue"), (2, "add a reset button"), (3, "")] {
        let outcome = ask(client, turn, "counter@20000", messages.clone(), GenParams::default()).await;
        assert_eq!(finished(&outcome), FinishReason::Stop, "turn {turn}");
        messages.push(ChatMessage::new(Role::Assistant, outcome.text.clone()));
        messages.push(user(next));
        answers.push(outcome.text);
    }
    answers
}

#[tokio::test]
async fn a_thread_continues_with_previous_response_id_and_only_the_new_message() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    let answers = three_turns(&mut client).await;
    assert!(answers.iter().all(|a| *a == fixture("counter")));
    let log = gw.upstream.requests();
    let turns: Vec<&ResponsesRecord> = log.iter().map(responses).collect();
    assert_eq!(turns.len(), 3, "{turns:?}");
    assert_eq!((turns[0].input_items, turns[0].previous_response_id.as_deref()), (2, None));
    for at in 1..3 {
        assert_eq!(turns[at].input_items, 1, "turn {} sends only its new message: {turns:?}", at + 1);
        assert_eq!(turns[at].previous_response_id, turns[at - 1].response_id, "turn {}", at + 1);
        assert!(turns[at].continued, "turn {}", at + 1);
    }
    assert!(turns.iter().all(|t| t.socket == Some(1)), "one socket for the thread: {turns:?}");
    assert_eq!(log[2].body["input"][0]["content"], "add a reset button");
}

#[tokio::test]
async fn a_lost_previous_response_is_sent_again_whole_without_the_person_seeing_it() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    let first = vec![user("make a counter")];
    let outcome = ask(&mut client, 1, "counter@20000", first.clone(), GenParams::default()).await;
    gw.upstream.forget_responses();
    let mut second = first;
    second.extend([ChatMessage::new(Role::Assistant, outcome.text), user("make it blue")]);
    let outcome = ask(&mut client, 2, "counter@20000", second, GenParams::default()).await;
    assert_eq!(finished(&outcome), FinishReason::Stop, "the answer arrives");
    assert_eq!(outcome.text, fixture("counter"));
    let log = gw.upstream.requests();
    let turns: Vec<&ResponsesRecord> = log.iter().map(responses).collect();
    assert_eq!(turns.len(), 3, "the follow-up, refused, then sent whole: {turns:?}");
    assert!(turns[1].previous_response_id.is_some() && !turns[1].continued, "{turns:?}");
    assert_eq!(log[1].status, 400);
    assert_eq!((turns[2].input_items, turns[2].previous_response_id.as_deref()), (3, None));
    assert_eq!(turns[2].socket, turns[1].socket, "on the same socket");
}

#[tokio::test]
async fn a_continuation_that_fails_before_any_text_is_sent_again_whole_without_the_person_seeing_it() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    let first = vec![user("make a counter")];
    let outcome = ask(&mut client, 1, "whole-only", first.clone(), GenParams::default()).await;
    assert_eq!(outcome.text, WHOLE_ONLY_TEXT, "{:?}", outcome.end);
    let mut second = first;
    second.extend([ChatMessage::new(Role::Assistant, outcome.text), user("make it blue")]);
    let outcome = ask(&mut client, 2, "whole-only", second, GenParams::default()).await;
    assert_eq!(finished(&outcome), FinishReason::Stop, "the answer arrives");
    assert_eq!(outcome.text, WHOLE_ONLY_TEXT);
    let log = gw.upstream.requests();
    let turns: Vec<&ResponsesRecord> = log.iter().map(responses).collect();
    assert_eq!(turns.len(), 3, "the follow-up, failed, then sent whole: {turns:?}");
    assert!(turns[1].continued, "the server knew the previous response: {turns:?}");
    assert_eq!((turns[2].input_items, turns[2].previous_response_id.as_deref()), (3, None));
    assert_eq!(turns[2].socket, turns[1].socket, "on the same socket");
    let started = client
        .raw
        .iter()
        .filter_map(|f| serde_json::from_str::<ServerMessage>(f).ok())
        .filter(|f| matches!(f, ServerMessage::Started { stream: 2, .. }))
        .count();
    assert_eq!(started, 1, "one answer as far as the person can tell: {:?}", client.raw);
    assert!(!client.raw.iter().any(|f| f.contains(CONTINUATION_FAILURE)), "{:?}", client.raw);
}

#[tokio::test]
async fn a_key_rejected_on_the_handshake_is_unauthorized_and_not_tried_over_http() {
    let options = Options::new(fixtures_dir()).responses_key("sk-the-only-key-the-server-takes");
    let gw = start(options, ResponsesTransport::Websocket, |_| {}).await;
    let mut client = Client::connect(gw.addr).await;
    for stream in 1..=2 {
        let outcome = client.run(stream, "counter@20000").await;
        let ServerMessage::Error { code, message, .. } = &outcome.end else { panic!("{:?}", outcome.end) };
        assert_eq!(*code, ErrorCode::Unauthorized, "{message}");
        assert_eq!(message, &format!("the provider rejected the API key for scripted; check {KEY_ENV}"));
    }
    assert!(gw.upstream.requests().is_empty(), "nothing went over HTTP: {:?}", gw.upstream.requests());
    let sockets = gw.upstream.sockets();
    assert_eq!(sockets.len(), 2, "each request tried the WebSocket mode again: {sockets:?}");
    assert!(sockets.iter().all(|s| s.refused && s.authorization), "{sockets:?}");
    assert!(client.raw.iter().all(|f| !f.contains(KEY)), "the key reached a frame: {:?}", client.raw);
}

#[tokio::test]
async fn max_output_tokens_ends_with_finish_length() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    let params = GenParams { max_tokens: Some(20), ..GenParams::default() };
    let outcome = ask(&mut client, 1, "counter@20000", vec![user("make a counter")], params).await;
    assert_eq!(finished(&outcome), FinishReason::Length);
    let expected: String = flint_scripted_upstream::tokenize(&fixture("counter"))[..20].concat();
    assert_eq!(outcome.text, expected);
    assert_eq!(gw.upstream.requests()[0].body["max_output_tokens"], 20);
}

#[tokio::test]
async fn a_failed_response_is_an_error_frame_with_the_upstreams_message() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "fail-500").await;
    let ServerMessage::Error { code, message, .. } = &outcome.end else { panic!("{:?}", outcome.end) };
    assert_eq!(*code, ErrorCode::UpstreamUnavailable);
    assert!(message.contains("The server had an error while processing your request"), "{message}");
    let outcome = client.run(2, "empty-answer").await;
    assert!(
        matches!(outcome.end, ServerMessage::Error { code: ErrorCode::UpstreamUnavailable, .. }),
        "{outcome:?}"
    );
    let outcome = client.run(3, "counter@20000").await;
    assert_eq!(finished(&outcome), FinishReason::Stop, "the socket is still good after a failure");
    assert_eq!(gw.upstream.sockets().len(), 1);
}

#[tokio::test]
async fn a_refusal_before_the_answer_keeps_its_meaning_over_either_transport() {
    for transport in [ResponsesTransport::Websocket, ResponsesTransport::Http] {
        let gw = start(Options::new(fixtures_dir()), transport, |_| {}).await;
        let mut client = Client::connect(gw.addr).await;
        let outcome = client.run(1, "fail-429").await;
        let ServerMessage::Error { code, message, .. } = &outcome.end else { panic!("{:?}", outcome.end) };
        assert_eq!(*code, ErrorCode::RateLimited, "{transport:?}");
        assert!(message.contains("Rate limit reached for requests"), "{transport:?}: {message}");
        let outcome = client.run(2, "counter@20000").await;
        assert_eq!(finished(&outcome), FinishReason::Stop, "{transport:?}: the next request works");
    }
}

#[tokio::test]
async fn the_key_never_reaches_a_frame_over_either_transport() {
    for transport in [ResponsesTransport::Websocket, ResponsesTransport::Http] {
        let gw = start(Options::new(fixtures_dir()), transport, |_| {}).await;
        let mut client = Client::connect(gw.addr).await;
        for (stream, model) in
            [(1, "leak-content@20000"), (2, "leak-midstream"), (3, "leak-masked"), (4, "leak-model")]
        {
            client.run(stream, model).await;
        }
        let upper = KEY.to_uppercase();
        for frame in &client.raw {
            assert!(
                !frame.contains(KEY) && !frame.contains(&upper),
                "{transport:?}: the key reached a frame: {frame}"
            );
        }
        assert!(client.raw.iter().any(|f| f.contains("[redacted]")), "{transport:?}: {:?}", client.raw);
    }
}

#[tokio::test]
async fn reasoning_keys_go_to_reasoning_models_and_sampling_to_the_others() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    let params = GenParams {
        reasoning_effort: Some(ReasoningEffort::High),
        verbosity: Some(Verbosity::Low),
        temperature: Some(0.5),
        ..GenParams::default()
    };
    let reasoning = ask(&mut client, 1, "counter@5000", vec![user("hi")], params.clone()).await;
    assert_eq!(reasoning.text, fixture("counter"), "the reasoning summary is not part of the answer");
    ask(&mut client, 2, "counter@20000", vec![user("hi")], params).await;
    let log = gw.upstream.requests();
    assert_eq!(log[0].body["reasoning"]["effort"], "high");
    assert_eq!(log[0].body["text"]["verbosity"], "low");
    assert!(log[0].body.get("temperature").is_none(), "{}", log[0].body);
    assert!(log[1].body.get("reasoning").is_none() && log[1].body.get("text").is_none(), "{}", log[1].body);
    assert_eq!(log[1].body["temperature"], 0.5);
}
