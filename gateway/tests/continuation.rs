//! Auto-continue against the scripted upstream: an answer cut off at `max_tokens` is continued
//! by new upstream requests and arrives as one stream, joined without the repeats and reopened
//! code fences models add.

mod common;

use std::time::Duration;

use common::{Client, Gateway, Outcome, fixture, start_upstream_with};
use flint_gateway::config::{Config, ModelConfig, ProviderConfig};
use flint_gateway::providers::continuation::CONTINUE_INSTRUCTION;
use flint_protocol::{
    ChatMessage, ClientMessage, ErrorCode, FinishReason, GenParams, Role, StartRequest, Usage,
};
use flint_scripted_upstream::{Continuation, Options, RequestRecord, fixtures_dir, tokenize};

/// The answer every test asks for: a page in a code fence, so cuts fall inside the fence.
const MODEL: &str = "counter@20000";
/// The same, slow enough (each part about a second) to cancel while the second part runs.
const SLOW_MODEL: &str = "counter@300";

/// A gateway whose upstream continues answers `how`; `configure` may change the config further.
async fn gateway(how: Continuation, configure: impl FnOnce(&mut Config)) -> Gateway {
    start_upstream_with(Options::new(fixtures_dir()).continuation(how), |config| {
        for provider in &mut config.providers {
            if let ProviderConfig::Openai(openai) = provider {
                openai.models.push(ModelConfig {
                    id: SLOW_MODEL.into(),
                    label: None,
                    context_window: Some(8192),
                    tokenizer: None,
                    reasoning: None,
                    vision: None,
                    price: None,
                });
            }
        }
        configure(config);
    })
    .await
}

/// The whole answer, and a length limit that cuts it into three parts even after a sloppy
/// continuation's reopened fence and repeat: each part is 40% of the answer.
fn answer() -> (String, u32) {
    let text = fixture("counter");
    let tokens = tokenize(&text).len();
    assert!(tokens > 200, "the fixture is long enough to need three parts");
    (text, u32::try_from(tokens * 2 / 5).expect("fits"))
}

/// Runs one stream of `model` with these limits and returns what the browser saw.
async fn run(gw: &Gateway, model: &str, max_tokens: u32, auto_continue: Option<u8>) -> Outcome {
    let mut client = Client::connect(gw.addr).await;
    client.send(&start(1, model, max_tokens, auto_continue)).await;
    let (mut done, others) = client.collect(&[1]).await;
    assert!(others.is_empty(), "frames for no stream: {others:?}");
    done.remove(0).1
}

fn start(stream: u32, model: &str, max_tokens: u32, auto_continue: Option<u8>) -> ClientMessage {
    ClientMessage::Start(StartRequest {
        stream,
        model: format!("scripted/{model}"),
        messages: vec![ChatMessage::new(Role::User, "make a page")],
        params: GenParams { max_tokens: Some(max_tokens), auto_continue, ..GenParams::default() },
    })
}

fn done_of(outcome: &Outcome) -> (FinishReason, Usage) {
    match &outcome.end {
        flint_protocol::ServerMessage::Done { finish, usage, .. } => (*finish, *usage),
        other => panic!("expected Done, got {other:?}"),
    }
}

/// The first `n` tokens of `text`: what one part cut off at `max_tokens = n` holds.
fn first_tokens(text: &str, n: u32) -> String {
    tokenize(text).into_iter().take(n as usize).collect()
}

/// The messages of a logged request, as (role, content).
fn messages(record: &RequestRecord) -> Vec<(String, String)> {
    let messages = record.body["messages"].as_array().expect("messages are an array");
    let field = |m: &serde_json::Value, key: &str| m[key].as_str().unwrap_or_default().to_owned();
    messages.iter().map(|m| (field(m, "role"), field(m, "content"))).collect()
}

#[tokio::test]
async fn without_auto_continue_a_length_stop_stays_a_length_stop() {
    let gw = gateway(Continuation::Exact, |_| {}).await;
    let (text, max_tokens) = answer();
    let outcome = run(&gw, MODEL, max_tokens, None).await;
    assert_eq!(done_of(&outcome).0, FinishReason::Length);
    assert_eq!(outcome.text, first_tokens(&text, max_tokens));
    assert_eq!(gw.upstream.requests().len(), 1, "one upstream request when auto-continue is off");
}

#[tokio::test]
async fn a_long_answer_arrives_whole_over_three_requests_joined_seamlessly() {
    // The continuations reopen the code fence and repeat the last 24 characters first.
    let gw = gateway(Continuation::Sloppy { repeat: 24 }, |_| {}).await;
    let (text, max_tokens) = answer();
    let outcome = run(&gw, MODEL, max_tokens, Some(2)).await;
    assert_eq!(done_of(&outcome).0, FinishReason::Stop, "the last part finishes the answer");
    assert_eq!(outcome.text, text, "the joined answer differs from the original");
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 3, "one request per part");
    assert!(log.iter().all(|r| r.status == 200 && r.finished), "{log:?}");
    let fences = |r: &RequestRecord| messages(r)[1].1.matches("```").count();
    assert_eq!((fences(&log[1]), fences(&log[2])), (1, 1), "both cuts fall inside the code fence");
}

#[tokio::test]
async fn each_continuation_asks_with_the_text_so_far_and_the_same_params() {
    let gw = gateway(Continuation::Exact, |_| {}).await;
    let (text, max_tokens) = answer();
    run(&gw, MODEL, max_tokens, Some(2)).await;
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 3, "{log:?}");
    let part_one = first_tokens(&text, max_tokens);
    let user = |text: &str| ("user".to_owned(), text.to_owned());
    let assistant = ("assistant".to_owned(), part_one.clone());
    assert_eq!(messages(&log[0]), vec![user("make a page")]);
    assert_eq!(messages(&log[1]), vec![user("make a page"), assistant, user(CONTINUE_INSTRUCTION)]);
    let (_, so_far) = &messages(&log[2])[1];
    assert!(so_far.starts_with(&part_one) && so_far.len() > part_one.len(), "part 3 sees parts 1 and 2");
    for record in &log[1..] {
        assert_eq!(record.body["max_tokens"], log[0].body["max_tokens"], "same length limit");
        assert_eq!(record.body["model"], log[0].body["model"]);
    }
}

#[tokio::test]
async fn the_server_cap_wins_over_a_bigger_ask() {
    let gw = gateway(Continuation::Exact, |config| config.server.max_auto_continue = 1).await;
    let (text, max_tokens) = answer();
    let outcome = run(&gw, MODEL, max_tokens, Some(5)).await;
    assert_eq!(done_of(&outcome).0, FinishReason::Length, "still cut off after the one allowed");
    assert_eq!(gw.upstream.requests().len(), 2, "server.max_auto_continue = 1: two requests");
    assert!(text.starts_with(&outcome.text) && outcome.text.len() > first_tokens(&text, max_tokens).len());
}

#[tokio::test]
async fn usage_is_summed_over_the_parts() {
    let gw = gateway(Continuation::Exact, |_| {}).await;
    let (_, max_tokens) = answer();
    let outcome = run(&gw, MODEL, max_tokens, Some(2)).await;
    let (_, usage) = done_of(&outcome);
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 3);
    let completion: u32 = log.iter().map(|r| r.tokens_sent).sum();
    assert_eq!(usage.completion_tokens, completion, "completion tokens of every part");
    // The scripted upstream counts a prompt as its messages' characters / 4.
    let prompt = |r: &RequestRecord| (messages(r).iter().map(|(_, c)| c.len()).sum::<usize>() / 4) as u32;
    let prompts: u32 = log.iter().map(prompt).sum();
    assert_eq!(usage.prompt_tokens, Some(prompts), "prompt tokens of every part, each paid again");
}

#[tokio::test]
async fn cancel_during_a_continuation_closes_its_upstream_request() {
    let gw = gateway(Continuation::Exact, |_| {}).await;
    let (_, max_tokens) = answer();
    let mut client = Client::connect(gw.addr).await;
    client.send(&start(1, SLOW_MODEL, max_tokens, Some(2))).await;
    let (second, log) = gw.upstream.wait_for(Duration::from_secs(10), |r| r.len() >= 2).await;
    assert!(second, "the continuation was never requested: {log:?}");
    client.send(&ClientMessage::Cancel { stream: 1 }).await;
    let (mut done, _) = client.collect(&[1]).await;
    assert_eq!(done_of(&done.remove(0).1).0, FinishReason::Cancelled);
    let (closed, log) =
        gw.upstream.wait_for(Duration::from_secs(5), |r| r.len() >= 2 && r[1].closed_early).await;
    assert!(closed, "the upstream never saw the continuation closed early: {log:?}");
    assert_eq!(log.len(), 2, "no part starts after a cancel");
}

#[tokio::test]
async fn an_error_in_a_continuation_ends_the_stream_after_the_text_so_far() {
    let gw = gateway(Continuation::Fail, |_| {}).await;
    let (text, max_tokens) = answer();
    let outcome = run(&gw, MODEL, max_tokens, Some(2)).await;
    let flint_protocol::ServerMessage::Error { code, .. } = &outcome.end else {
        panic!("expected an error, got {:?}", outcome.end);
    };
    assert_eq!(*code, ErrorCode::UpstreamUnavailable);
    assert_eq!(outcome.text, first_tokens(&text, max_tokens), "part 1's text stays");
    assert_eq!(gw.upstream.requests().len(), 2);
}
