//! Provider quirks found against real local servers (llama.cpp, Ollama, vLLM), replayed by the
//! scripted upstream: keyless servers, answers that never finish or say nothing, the upstream's
//! own reason for a refusal, and context windows the server reports.

mod common;

use std::time::Duration;

use common::{Client, Gateway, start_upstream_with, start_with};
use flint_gateway::config::{Config, ModelConfig, ProviderConfig};
use flint_protocol::{ContextSource, ErrorCode, ModelInfo, ModelList, ServerMessage};
use flint_scripted_upstream::{
    CONTEXT_MIDSTREAM, CONTEXT_REFUSAL, CONTEXT_UNSTREAMED, ContextReport, NO_FINISH_TEXT, Options,
    WANTS_KEY_TEXT, fixtures_dir,
};

fn error_of(end: &ServerMessage) -> (ErrorCode, &str) {
    match end {
        ServerMessage::Error { code, message, .. } => (*code, message.as_str()),
        other => panic!("expected an error frame, got {other:?}"),
    }
}

/// The scripted provider with no key configured at all, as for a local server.
fn keyless(config: &mut Config) {
    for provider in &mut config.providers {
        if let ProviderConfig::Openai(openai) = provider {
            openai.api_key_env = None;
            openai.api_key = None;
            openai.models.push(model("wants-key"));
        }
    }
}

fn model(id: &str) -> ModelConfig {
    ModelConfig {
        id: id.into(),
        label: None,
        context_window: Some(8192),
        tokenizer: None,
        reasoning: None,
        vision: None,
        price: None,
    }
}

/// The scripted provider also offering `ids`.
fn offering(ids: &'static [&'static str]) -> impl FnOnce(&mut Config) {
    move |config: &mut Config| {
        for provider in &mut config.providers {
            if let ProviderConfig::Openai(openai) = provider {
                openai.models.extend(ids.iter().map(|id| model(id)));
            }
        }
    }
}

async fn model_list(gw: &Gateway) -> ModelList {
    let body = reqwest::get(format!("http://{}/api/models", gw.addr))
        .await
        .expect("GET /api/models")
        .text()
        .await
        .expect("body");
    serde_json::from_str(&body).expect("a ModelList")
}

async fn listed(gw: &Gateway, id: &str) -> ModelInfo {
    let list = model_list(gw).await;
    list.models.into_iter().find(|m| m.id == id).unwrap_or_else(|| panic!("{id} is not listed"))
}

// --- 1. Keyless servers ----------------------------------------------------------------------------

#[tokio::test]
async fn a_keyless_provider_is_usable_and_sends_no_authorization() {
    let gw = start_with(keyless).await;
    let info = listed(&gw, "scripted/counter@20000").await;
    assert!(info.available, "a provider without a key is usable: {:?}", info.problem);
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "counter@20000").await;
    assert!(matches!(outcome.end, ServerMessage::Done { .. }), "{:?}", outcome.end);
    let log = gw.upstream.requests();
    assert!(!log[0].authorization, "no key configured: no Authorization header may be sent");
}

#[tokio::test]
async fn the_quick_start_without_a_key_is_usable() {
    let upstream_url = "http://127.0.0.1:9/v1";
    let env = |name: &str| match name {
        flint_gateway::config::QUICK_START_BASE_URL => Some(upstream_url.to_owned()),
        flint_gateway::config::QUICK_START_MODELS => Some("qwen2.5-coder".to_owned()),
        _ => None,
    };
    let config = Config::default().complete(&env).expect("complete");
    let state = flint_gateway::AppState::from_config(&config, &env);
    let list = state.model_list();
    let quick = &list.models[0];
    assert!(quick.available, "FLINT_OPENAI_API_KEY is optional: {:?}", quick.problem);
}

#[tokio::test]
async fn a_keyless_provider_refused_for_want_of_a_key_says_which_setting_to_set() {
    let gw = start_with(keyless).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "wants-key").await;
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::Unauthorized);
    assert!(message.contains("wants an API key"), "the message says a key is needed: {message}");
    assert!(message.contains("api_key_env"), "the message names the setting: {message}");
    assert!(message.contains("Invalid API Key"), "the server's own words are kept: {message}");
}

#[tokio::test]
async fn a_keyed_provider_sends_its_key() {
    let gw = start_with(offering(&["wants-key"])).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "wants-key").await;
    assert_eq!(outcome.text, WANTS_KEY_TEXT, "{:?}", outcome.end);
    assert!(gw.upstream.requests()[0].authorization);
}

// --- 2. Answers that never finished, or said nothing --------------------------------------------

#[tokio::test]
async fn done_without_a_finish_reason_is_interrupted_and_keeps_the_text() {
    let gw = start_with(offering(&["no-finish"])).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "no-finish").await;
    assert_eq!(outcome.text, NO_FINISH_TEXT, "the text before the end is delivered");
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamInterrupted, "{message}");
    // The upstream connection was read to its end all the same, so it goes back to the pool.
    client.run(2, "counter@20000").await;
    let log = gw.upstream.requests();
    assert_eq!(log[0].peer, log[1].peer, "the connection should be reused after [DONE]");
}

#[tokio::test]
async fn an_answer_with_no_text_says_so() {
    let gw = start_with(offering(&["empty-answer"])).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "empty-answer").await;
    assert_eq!(outcome.text, "");
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamUnavailable, "{message}");
    assert!(message.contains("answered with nothing"), "{message}");
}

// --- 3. The upstream's reason -------------------------------------------------------------------

#[tokio::test]
async fn llama_cpp_context_refusal_is_prompt_too_large_with_its_words() {
    let gw = start_with(offering(&["ctx-2048-refusal"])).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "ctx-2048-refusal").await;
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::PromptTooLarge, "{message}");
    assert!(message.contains(CONTEXT_REFUSAL), "{message}");
}

#[tokio::test]
async fn llama_cpp_exceed_context_size_error_is_prompt_too_large() {
    let gw = start_with(offering(&["ctx-size-refusal"])).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "ctx-size-refusal").await;
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::PromptTooLarge, "{message}");
    assert!(message.contains("exceeds the available context size"), "{message}");
}

#[tokio::test]
async fn a_context_error_event_mid_stream_is_prompt_too_large_after_the_text() {
    let gw = start_with(offering(&["ctx-midstream"])).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "ctx-midstream").await;
    assert_eq!(outcome.text, NO_FINISH_TEXT, "the text before the error is delivered");
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::PromptTooLarge, "{message}");
    assert!(message.contains(CONTEXT_MIDSTREAM), "{message}");
}

#[tokio::test]
async fn an_empty_stream_over_the_window_is_explained_by_asking_once_unstreamed() {
    let gw = start_with(offering(&["ctx-empty-stream"])).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "ctx-empty-stream").await;
    assert_eq!(outcome.text, "");
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::PromptTooLarge, "{message}");
    assert!(message.contains(CONTEXT_UNSTREAMED), "the server's own words: {message}");
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 2, "the stream, then one request without streaming: {log:?}");
    let (streamed, asked) = (&log[0].body, &log[1].body);
    assert_eq!((&streamed["stream"], &asked["stream"]), (&true.into(), &false.into()));
    assert_eq!(asked["max_tokens"], 1, "one token is enough to be refused: {asked}");
    assert!(asked.get("stream_options").is_none(), "{asked}");
    assert_eq!(asked["messages"], streamed["messages"], "the same messages");
}

#[tokio::test]
async fn an_empty_stream_the_second_request_does_not_explain_stays_interrupted() {
    let gw = start_with(offering(&["empty-stream"])).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "empty-stream").await;
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::UpstreamInterrupted, "{message}");
    assert!(message.contains("closed the stream before the answer was complete"), "{message}");
    // Unstreamed, the scripted upstream refuses every request ("this server only streams"): that
    // says nothing about the empty stream, so the person does not hear it.
    assert!(!message.contains("only streams"), "{message}");
    assert_eq!(gw.upstream.requests().len(), 2, "asked once more, not again");
}

#[tokio::test]
async fn a_rate_limit_keeps_the_upstreams_words() {
    let gw = start_with(|_| {}).await;
    let mut client = Client::connect(gw.addr).await;
    let outcome = client.run(1, "fail-429").await;
    let (code, message) = error_of(&outcome.end);
    assert_eq!(code, ErrorCode::RateLimited);
    assert!(message.contains("Rate limit reached for requests"), "{message}");
}

// --- 4. Context windows the server reports ---------------------------------------------------------

/// A gateway offering `counter` (a name the upstream's `/v1/models` lists as is) from an upstream
/// reporting its context as `report` says.
async fn start_reporting(report: ContextReport) -> Gateway {
    let options = Options::new(fixtures_dir()).context(report);
    start_upstream_with(options, offering(&["counter"])).await
}

/// Polls `/api/models` until `counter`'s window is `expected` (discovery runs in the background).
async fn wait_for_window(gw: &Gateway, expected: u32) -> ModelInfo {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let info = listed(gw, "scripted/counter").await;
        if info.context_window == expected || tokio::time::Instant::now() > deadline {
            return info;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn vllm_max_model_len_is_the_context_window() {
    let gw = start_reporting(ContextReport { max_model_len: Some(2048), ..ContextReport::default() }).await;
    let info = wait_for_window(&gw, 2048).await;
    assert_eq!((info.context_window, info.context_source), (2048, ContextSource::Discovered));
}

#[tokio::test]
async fn llama_cpp_props_n_ctx_is_the_context_window() {
    let gw = start_reporting(ContextReport { props_n_ctx: Some(4096), ..ContextReport::default() }).await;
    assert_eq!(wait_for_window(&gw, 4096).await.context_window, 4096);
}

#[tokio::test]
async fn ollama_num_ctx_wins_over_the_trained_context_length() {
    let report = ContextReport {
        ollama_context_length: Some(32768),
        ollama_num_ctx: Some(6144),
        ..ContextReport::default()
    };
    let gw = start_reporting(report).await;
    assert_eq!(wait_for_window(&gw, 6144).await.context_window, 6144);
}

#[tokio::test]
async fn ollama_context_length_is_used_without_num_ctx() {
    let report = ContextReport { ollama_context_length: Some(32768), ..ContextReport::default() };
    let gw = start_reporting(report).await;
    assert_eq!(wait_for_window(&gw, 32768).await.context_window, 32768);
}

#[tokio::test]
async fn a_server_that_reports_nothing_keeps_the_configured_window() {
    let gw = start_reporting(ContextReport::default()).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let info = listed(&gw, "scripted/counter").await;
    assert_eq!((info.context_window, info.context_source), (8192, ContextSource::Configured));
}

#[tokio::test]
async fn a_window_neither_configured_nor_reported_is_labelled_a_guess() {
    let gw = start_with(|config| {
        if let ProviderConfig::Openai(openai) = &mut config.providers[0] {
            openai.models.push(ModelConfig { context_window: None, ..model("counter") });
        }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let info = listed(&gw, "scripted/counter").await;
    assert_eq!(info.context_source, ContextSource::Guess);
    assert_eq!(info.context_window, flint_gateway::config::GUESSED_CONTEXT_WINDOW);
}
