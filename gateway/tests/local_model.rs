//! The embedded model with the real SmolLM2 file: determinism, cancel, batching, fairness between
//! connections, bad files, templates.
//!
//! The model is found where the gateway looks by default (`FLINT_MODEL_PATH`, else the set-up's
//! cache). When it is absent these tests fail and say how to fetch it: a silent skip would hide a
//! broken set-up.
#![cfg(feature = "local")]

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flint_gateway::config::LocalConfig;
use flint_gateway::local::model_file;
use flint_gateway::local::template::TUNED_SYSTEM_PROMPT;
use flint_gateway::providers::local::{HTML_PRIMER, LocalProvider};
use flint_gateway::providers::{GenRequest, Provider, ProviderError, ProviderEvent};
use flint_protocol::{ChatMessage, FinishReason, GenParams, Role};
use futures::StreamExt;

fn model_path() -> PathBuf {
    let path = model_file::default_model_path();
    assert!(
        path.is_file(),
        "the embedded model is not at {}; run `cargo xtask test` (it fetches the model) or set FLINT_MODEL_PATH",
        path.display()
    );
    path
}

fn provider() -> LocalProvider {
    let config = LocalConfig { model_path: Some(model_path()), ..LocalConfig::default() };
    let provider = LocalProvider::new(&config);
    assert_eq!(provider.problem(), None, "the model should load");
    provider
}

fn request(prompt: &str, params: GenParams) -> GenRequest {
    GenRequest {
        client: 1,
        person: 1,
        key: None,
        model: LocalConfig::default().model,
        messages: vec![ChatMessage::new(Role::User, prompt)],
        params,
    }
}

fn seeded(seed: u64, max_tokens: u32) -> GenParams {
    GenParams {
        max_tokens: Some(max_tokens),
        temperature: Some(0.8),
        top_p: Some(0.95),
        seed: Some(seed),
        ..GenParams::default()
    }
}

/// Collects a stream: its text and how it ended.
async fn collect(
    provider: &LocalProvider,
    request: GenRequest,
) -> (String, Result<FinishReason, ProviderError>) {
    let mut stream = provider.stream(request);
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(ProviderEvent::Delta(d)) => text.push_str(&d),
            Ok(ProviderEvent::Finished(reason)) => return (text, Ok(reason)),
            Ok(_) => {}
            Err(e) => return (text, Err(e)),
        }
    }
    (text, Err(ProviderError::Interrupted("stream ended without Finished".into())))
}

#[tokio::test]
async fn same_seed_gives_the_same_text() {
    let provider = provider();
    let (a, end_a) = collect(&provider, request("a button that counts clicks", seeded(7, 48))).await;
    let (b, end_b) = collect(&provider, request("a button that counts clicks", seeded(7, 48))).await;
    assert!(end_a.is_ok() && end_b.is_ok(), "{end_a:?} {end_b:?}");
    assert!(!a.is_empty());
    assert_eq!(a, b, "same seed and prompt, different text");
    let (c, _) = collect(&provider, request("a button that counts clicks", seeded(8, 48))).await;
    assert_ne!(a, c, "a different seed should give a different text");
}

#[tokio::test]
async fn cancel_stops_the_decode() {
    let provider = provider();
    let stats = provider.engine().expect("engine").stats().clone();
    let mut stream = provider.stream(request("a long landing page for a bakery", seeded(3, 4000)));
    let mut deltas = 0;
    while deltas < 5 {
        match stream.next().await {
            Some(Ok(ProviderEvent::Delta(_))) => deltas += 1,
            Some(Ok(_)) => {}
            other => panic!("stream ended early: {other:?}"),
        }
    }
    let at_cancel = stats.tokens_generated.load(Ordering::Relaxed);
    drop(stream);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let settled = stats.tokens_generated.load(Ordering::Relaxed);
    // The step in flight when the stream was dropped may still sample one token.
    assert!(settled <= at_cancel + 1, "decoded {} tokens after cancel", settled - at_cancel);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(stats.tokens_generated.load(Ordering::Relaxed), settled, "the engine kept decoding");
}

#[tokio::test]
async fn four_concurrent_streams_finish_in_shared_batches() {
    let provider = provider();
    let stats = provider.engine().expect("engine").stats().clone();
    let steps_before = stats.steps.load(Ordering::Relaxed);
    let tokens_before = stats.tokens_generated.load(Ordering::Relaxed);
    let prompts = ["a dice roller", "a tip calculator", "a stopwatch", "a color picker"];
    let runs = prompts.iter().enumerate().map(|(i, p)| collect(&provider, request(p, seeded(i as u64, 64))));
    let results = futures::future::join_all(runs).await;
    for (prompt, (text, end)) in prompts.iter().zip(&results) {
        assert!(end.is_ok(), "{prompt}: {end:?}");
        assert!(!text.is_empty(), "{prompt}: no text");
    }
    let steps = stats.steps.load(Ordering::Relaxed) - steps_before;
    let tokens = stats.tokens_generated.load(Ordering::Relaxed) - tokens_before;
    // One by one, every token would need its own step; batched, steps are far fewer than tokens.
    assert!(steps * 2 < tokens, "{steps} decode steps for {tokens} tokens: the streams were not batched");
}

#[tokio::test]
async fn a_second_connection_is_served_before_the_rest_of_the_first_ones_variations() {
    let config = LocalConfig { model_path: Some(model_path()), max_parallel: 2, ..LocalConfig::default() };
    let provider = LocalProvider::new(&config);
    assert_eq!(provider.problem(), None, "the model should load");
    // Connection 1 asks for four variations, then connection 2 for one answer, in this order.
    let asks = [(1, "a1"), (1, "a2"), (1, "a3"), (1, "a4"), (2, "b")];
    let started = Arc::new(Mutex::new(Vec::new()));
    let runs = asks.map(|(client, name)| {
        // Greedy and long enough that a sequence frees up many decode steps after the one before.
        let params = GenParams { max_tokens: Some(16), temperature: Some(0.0), ..GenParams::default() };
        let mut stream = provider.stream(GenRequest {
            client,
            person: client,
            key: None,
            ..request("a dice roller", params)
        });
        let started = started.clone();
        async move {
            while let Some(event) = stream.next().await {
                match event {
                    Ok(ProviderEvent::Started { .. }) => started.lock().expect("not poisoned").push(name),
                    Ok(ProviderEvent::Finished(_)) => return Ok(()),
                    Ok(_) => {}
                    Err(e) => return Err(format!("{name}: {e}")),
                }
            }
            Err(format!("{name} ended without Finished"))
        }
    });
    for result in futures::future::join_all(runs).await {
        result.expect("every stream finishes");
    }
    let started = started.lock().expect("not poisoned").clone();
    let at = |name| started.iter().position(|n| *n == name).expect("every stream starts");
    // First come, first served would start a3 and a4 before b. Fairly, b takes the first sequence
    // that frees up (or the second, when both free in one step and a3, the earlier, takes the other).
    assert!(at("b") < at("a4"), "connection 2 waited behind connection 1's variations: {started:?}");
}

#[tokio::test]
async fn answers_are_capped_at_the_configured_length() {
    let config = LocalConfig { model_path: Some(model_path()), max_tokens: 12, ..LocalConfig::default() };
    let provider = LocalProvider::new(&config);
    let mut stream = provider.stream(request("a long landing page with many sections", seeded(3, 100_000)));
    let mut generated = None;
    while let Some(event) = stream.next().await {
        if let Ok(ProviderEvent::Usage { completion_tokens, .. }) = event {
            generated = Some(completion_tokens);
        }
    }
    let generated = generated.expect("the stream reports its usage");
    assert!(generated <= 12, "asked for 100000 tokens with a cap of 12, got {generated}");
}

#[tokio::test]
async fn prompt_longer_than_the_context_is_refused() {
    let config = LocalConfig { model_path: Some(model_path()), context_window: 64, ..LocalConfig::default() };
    let provider = LocalProvider::new(&config);
    let long = "describe this page in detail ".repeat(40);
    let (_, end) = collect(&provider, request(&long, seeded(1, 8))).await;
    match end {
        Err(ProviderError::PromptTooLarge(message)) => assert!(message.contains("64"), "{message}"),
        other => panic!("expected PromptTooLarge, got {other:?}"),
    }
}

fn broken_provider(name: &str, bytes: &[u8]) -> LocalProvider {
    let dir = std::env::temp_dir().join(format!("flint-local-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    LocalProvider::new(&LocalConfig { model_path: Some(path), ..LocalConfig::default() })
}

async fn assert_unavailable(provider: &LocalProvider, expected: &str) {
    let problem = provider.problem().expect("a broken file must be reported");
    assert!(problem.contains(expected), "problem {problem:?} should mention {expected:?}");
    let info = &provider.models()[0];
    assert!(!info.available);
    assert_eq!(info.problem.as_deref(), Some(problem));
    let (_, end) = collect(provider, request("hi", seeded(1, 4))).await;
    assert!(matches!(end, Err(ProviderError::ModelUnavailable(ref m)) if m == problem), "{end:?}");
}

#[tokio::test]
async fn truncated_model_file_is_reported() {
    let real = std::fs::read(model_path()).expect("read model");
    let provider = broken_provider("truncated.gguf", &real[..real.len() / 2]);
    assert_unavailable(&provider, "truncated").await;
}

#[tokio::test]
async fn non_gguf_and_missing_files_are_reported() {
    let provider = broken_provider("notes.gguf", b"<html>not a model</html>");
    assert_unavailable(&provider, "not a GGUF file").await;
    let missing = LocalProvider::new(&LocalConfig {
        model_path: Some("/nonexistent/flint/model.gguf".into()),
        ..LocalConfig::default()
    });
    assert_unavailable(&missing, "not found").await;
}

#[tokio::test]
async fn chat_template_renders_the_system_prompt() {
    let provider = provider();
    let mut req = request("a dice roller", seeded(1, 1));
    let (plain, primer) = provider.render_prompt(&req).expect("render");
    assert!(plain.starts_with(&format!("<|im_start|>system\n{TUNED_SYSTEM_PROMPT}<|im_end|>\n")), "{plain}");
    let turn = "<|im_start|>user\na dice roller<|im_end|>\n<|im_start|>assistant\n";
    assert!(plain.ends_with(&format!("{turn}{HTML_PRIMER}")), "{plain}");
    assert_eq!(primer, HTML_PRIMER);
    req.messages.insert(0, ChatMessage::new(Role::System, "Use blue."));
    let (combined, _) = provider.render_prompt(&req).expect("render");
    assert!(combined.contains(&format!("{TUNED_SYSTEM_PROMPT}\n\nUse blue.<|im_end|>")), "{combined}");
    assert!(
        !combined.contains("SmolLM, trained by Hugging Face"),
        "the template's default system prompt leaked in"
    );
}
