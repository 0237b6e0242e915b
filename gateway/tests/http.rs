//! The plain HTTP routes over a real socket: health, the model list (never a key), the built app.

mod common;

use std::path::PathBuf;

use common::{KEY, start_with};
use flint_gateway::config::{ModelConfig, OpenAiConfig, ProviderConfig};
use flint_protocol::ModelList;

async fn get(url: String) -> (u16, String) {
    let response = reqwest::get(url).await.expect("request succeeds");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

/// A fresh folder under the system temp dir.
fn temp_dir(tag: &str) -> PathBuf {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("flint-gateway-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[tokio::test]
async fn healthz_answers_ok() {
    let gw = start_with(|_| {}).await;
    assert_eq!(get(format!("http://{}/healthz", gw.addr)).await, (200, "ok".to_owned()));
}

#[tokio::test]
async fn the_model_list_never_contains_a_key() {
    let gw = start_with(|config| {
        config.providers.push(ProviderConfig::Openai(OpenAiConfig {
            name: "inline-key".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key_env: None,
            api_key: Some(format!("{KEY}-inline")),
            models: vec![ModelConfig {
                id: "m".into(),
                label: None,
                context_window: Some(1000),
                tokenizer: None,
                reasoning: None,
                vision: None,
                price: None,
            }],
            max_tokens_field: Default::default(),
            max_concurrent: None,
            allow_user_keys: false,
            stall_timeout_secs: None,
            api_key_optional: false,
        }));
        config.providers.push(ProviderConfig::Openai(OpenAiConfig {
            name: "unset".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key_env: Some("FLINT_TEST_UNSET_KEY".into()),
            api_key: None,
            models: vec![ModelConfig {
                id: "m".into(),
                label: None,
                context_window: Some(1000),
                tokenizer: None,
                reasoning: None,
                vision: None,
                price: None,
            }],
            max_tokens_field: Default::default(),
            max_concurrent: None,
            allow_user_keys: false,
            stall_timeout_secs: None,
            api_key_optional: false,
        }));
    })
    .await;
    let (status, body) = get(format!("http://{}/api/models", gw.addr)).await;
    assert_eq!(status, 200);
    assert!(!body.contains(KEY), "a key leaked into /api/models");
    assert!(!body.contains("sk-"), "something key-like leaked into /api/models: {body}");
    let list: ModelList = serde_json::from_str(&body).expect("a ModelList");
    assert_eq!(list.default.as_deref(), Some("scripted/counter@20000"), "first available is the default");
    let unset = list.models.iter().find(|m| m.provider == "unset").expect("listed");
    assert!(!unset.available, "a provider without its key is unavailable");
    assert!(unset.problem.as_deref().is_some_and(|p| p.contains("FLINT_TEST_UNSET_KEY")), "{unset:?}");
    assert_eq!(
        list.models.last().map(|m| m.provider.as_str()),
        Some("unset"),
        "unavailable models come last"
    );
}

#[tokio::test]
async fn without_models_the_list_says_what_to_set() {
    let gw = start_with(|config| config.providers.clear()).await;
    let (_, body) = get(format!("http://{}/api/models", gw.addr)).await;
    let list: ModelList = serde_json::from_str(&body).expect("a ModelList");
    assert!(list.models.is_empty());
    let notice = list.notice.expect("a notice when nothing is available");
    assert!(notice.contains("FLINT_OPENAI_BASE_URL") && notice.contains("cargo xtask serve"), "{notice}");
}

#[tokio::test]
async fn without_a_built_app_the_root_says_how_to_build_it() {
    let missing = temp_dir("missing").join("dist");
    let gw = start_with(|config| config.server.dist = missing).await;
    let (status, body) = get(format!("http://{}/", gw.addr)).await;
    assert_eq!(status, 200);
    assert!(body.contains("cargo xtask serve"), "the page must say how to build the app: {body}");
}

#[tokio::test]
async fn the_built_app_is_served_with_an_index_fallback() {
    let dist = temp_dir("dist");
    std::fs::write(dist.join("index.html"), "<!DOCTYPE html><title>Flint app</title>").expect("write");
    std::fs::write(dist.join("app.js"), "console.log(1)").expect("write");
    let gw = start_with(|config| config.server.dist = dist.clone()).await;
    let base = format!("http://{}", gw.addr);
    assert!(get(format!("{base}/")).await.1.contains("Flint app"), "/ serves index.html");
    assert_eq!(get(format!("{base}/app.js")).await.1, "console.log(1)", "files are served");
    assert!(
        get(format!("{base}/some/route")).await.1.contains("Flint app"),
        "routes fall back to index.html"
    );
    assert_eq!(get(format!("{base}/missing.js")).await.0, 404, "missing files are 404");
    let _ = std::fs::remove_dir_all(dist);
}
