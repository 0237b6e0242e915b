//! A hostile or broken upstream against the gateway's limits: a key echoed one character per
//! chunk or cut between the parts of a continued answer, an answer far too large, a stream kept alive by comments for ever, and redirects to a
//! page only the gateway's host can reach.

mod common;

use common::{Client, Gateway, KEY, start_upstream_with};
use flint_gateway::config::{Config, ModelConfig, ProviderConfig};
use flint_protocol::{
    ChatMessage, ClientMessage, ErrorCode, GenParams, Role, Secret, ServerMessage, StartRequest,
};
use flint_scripted_upstream::{
    Continuation, ENDLESS_TEXT, INTERNAL_TEXT, LEAK_PREFIX, LEAK_SUFFIX, Options, fixtures_dir,
};

/// A person's own key, in another format than the operator's.
const OWN_KEY: &str = "gsk_4fT9qWm2Lx7Rb0Nc5Vy8Kd3Hs6Jp1Ge9Az";

/// A gateway offering `models` of the scripted upstream besides its usual ones, configured further
/// by `configure`.
async fn gateway(models: &[&str], configure: impl FnOnce(&mut Config)) -> Gateway {
    gateway_with(Options::new(fixtures_dir()), models, configure).await
}

async fn gateway_with(options: Options, models: &[&str], configure: impl FnOnce(&mut Config)) -> Gateway {
    let models: Vec<String> = models.iter().map(|m| (*m).to_owned()).collect();
    start_upstream_with(options, move |config| {
        if let ProviderConfig::Openai(openai) = &mut config.providers[0] {
            openai.allow_user_keys = true;
            let template = openai.models[0].clone();
            openai.models.extend(models.into_iter().map(|id| ModelConfig { id, ..template.clone() }));
        }
        configure(config);
    })
    .await
}

fn error_of(end: &ServerMessage) -> (ErrorCode, &str) {
    match end {
        ServerMessage::Error { code, message, .. } => (*code, message.as_str()),
        other => panic!("expected an error frame, got {other:?}"),
    }
}

/// Letters and digits, lower-cased: what is left of a key once case and separators are gone.
fn skeleton(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
}

/// Asserts that no frame and not the text shows 12 of `key`'s letters and digits in a row.
fn assert_hidden(key: &str, client: &Client, text: &str) {
    let key = skeleton(key);
    for shown in client.raw.iter().map(String::as_str).chain([text]) {
        let shown = skeleton(shown);
        let run = (0..=key.len() - 12).map(|at| &key[at..at + 12]).find(|w| shown.contains(*w));
        assert_eq!(run, None, "the key shows in {shown}");
    }
}

#[tokio::test]
async fn the_operators_key_echoed_one_character_per_chunk_is_redacted() {
    let gw = gateway(&["leak-chars"], |_| {}).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "leak-chars").await;
    assert!(matches!(outcome.end, ServerMessage::Done { .. }), "{:?}", outcome.end);
    assert_hidden(KEY, &client, &outcome.text);
    assert!(outcome.text.starts_with(LEAK_PREFIX), "{}", outcome.text);
    assert!(outcome.text.ends_with(&format!("[redacted]{LEAK_SUFFIX}")), "{}", outcome.text);
}

#[tokio::test]
async fn a_persons_own_key_echoed_one_character_per_chunk_is_redacted() {
    let gw = gateway(&["leak-chars"], |_| {}).await;
    let mut client = Client::connect(gw.addr).await;
    client
        .send(&ClientMessage::UseKey { provider: "scripted".into(), key: Some(Secret::new(OWN_KEY)) })
        .await;
    let outcome = client.run(1, "leak-chars").await;
    assert!(matches!(outcome.end, ServerMessage::Done { .. }), "{:?}", outcome.end);
    assert_eq!(gw.upstream.requests()[0].key_tail.as_deref(), Some("e9Az"), "sent with the person's key");
    assert_hidden(OWN_KEY, &client, &outcome.text);
    assert!(outcome.text.ends_with(&format!("[redacted]{LEAK_SUFFIX}")), "{}", outcome.text);
}

#[tokio::test]
async fn a_key_cut_across_the_parts_of_a_continued_answer_is_redacted() {
    // Three tokens a part: no part holds twelve of the key's characters, so no part's own
    // scrubber sees the key; only the joined answer shows it.
    let options = Options::new(fixtures_dir())
        .continuation(Continuation::Exact)
        .inline("key-in-parts", format!("Key: {KEY} end."));
    let gw = gateway_with(options, &["key-in-parts"], |_| {}).await;
    let mut client = Client::connect(gw.addr).await;
    let params = GenParams { max_tokens: Some(3), auto_continue: Some(3), ..GenParams::default() };
    let messages = vec![ChatMessage::new(Role::User, "say the key")];
    client
        .send(&ClientMessage::Start(StartRequest {
            stream: 1,
            model: "scripted/key-in-parts".into(),
            messages,
            params,
        }))
        .await;
    let (mut done, _) = client.collect(&[1]).await;
    let outcome = done.remove(0).1;
    assert!(matches!(outcome.end, ServerMessage::Done { .. }), "{:?}", outcome.end);
    assert_eq!(gw.upstream.requests().len(), 4, "the answer came in four parts");
    assert_hidden(KEY, &client, &outcome.text);
    assert!(
        outcome.text.starts_with("Key: ") && outcome.text.ends_with("[redacted] end."),
        "{}",
        outcome.text
    );
}

#[tokio::test]
async fn an_answer_past_max_answer_bytes_is_cut_there_and_says_which_setting() {
    let gw = gateway(&["huge-answer"], |config| config.server.max_answer_bytes = 256 * 1024).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "huge-answer").await;
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamInterrupted, "{message}");
    assert!(message.contains("server.max_answer_bytes") && message.contains("256 KiB"), "{message}");
    assert_eq!(outcome.text.len(), 256 * 1024, "the text up to the cap is kept, nothing past it");
}

#[tokio::test]
async fn a_stream_kept_alive_by_comments_ends_at_max_stream_secs() {
    let gw = gateway(&["endless-comments"], |config| config.server.max_stream_secs = 1).await;
    let mut client = Client::connect(gw.addr).await;
    let started = std::time::Instant::now();
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(20), client.run(1, "endless-comments"))
        .await
        .expect("the stream must end by the gateway's clock, not run for ever");
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamInterrupted, "{message}");
    assert!(message.contains("server.max_stream_secs") && message.contains("1 second"), "{message}");
    assert_eq!(outcome.text, ENDLESS_TEXT, "the text before the limit is kept");
    assert!(started.elapsed().as_secs_f64() < 10.0, "ended after {:?}", started.elapsed());
}

/// Runs the `redirect-*` script `model`: the error names the status only, and nothing reached the
/// page the redirect points at.
async fn assert_redirect_not_followed(model: &str, status: &str) {
    let gw = gateway(&[model], |_| {}).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, model).await;
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamUnavailable, "{message}");
    assert!(message.contains(status) && message.contains("redirect"), "{message}");
    assert!(!message.contains("internal") && !message.contains("hunter2"), "{message}");
    assert!(client.raw.iter().all(|frame| !frame.contains(INTERNAL_TEXT)), "{:?}", client.raw);
    assert_eq!(gw.upstream.internal_requests(), 0, "the request went where the redirect pointed");
}

#[tokio::test]
async fn a_303_to_an_internal_page_is_not_followed_and_its_words_never_shown() {
    assert_redirect_not_followed("redirect-303", "303").await;
}

#[tokio::test]
async fn a_307_is_not_followed_so_the_prompt_goes_to_the_configured_host_only() {
    assert_redirect_not_followed("redirect-307", "307").await;
}
