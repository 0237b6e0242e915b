//! Reading `flint.toml`, the quick-start variables, and what a bad file is told.

use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn a_provider_file_parses() {
    let text = r#"
        default_model = "cerebras/llama-3.3-70b"
        [server]
        listen = "0.0.0.0:9000"
        [[providers]]
        kind = "openai"
        name = "cerebras"
        base_url = "https://api.cerebras.ai/v1"
        api_key_env = "CEREBRAS_API_KEY"
        max_tokens_field = "max_completion_tokens"
        max_concurrent = 2
        models = [{ id = "llama-3.3-70b", label = "Llama 3.3 70B" }]
    "#;
    let config = Config::parse(text, Path::new("flint.toml")).expect("valid file");
    assert_eq!(config.server.listen.port(), 9000);
    assert_eq!(config.server.max_streams_per_connection, 16, "unset limits keep their defaults");
    let ProviderConfig::Openai(cerebras) = &config.providers[0] else { panic!("expected openai") };
    assert_eq!(cerebras.max_tokens_field, MaxTokensField::MaxCompletionTokens);
    assert_eq!(cerebras.max_concurrent.map(std::num::NonZeroUsize::get), Some(2));
    let zero = text.replace("max_concurrent = 2", "max_concurrent = 0");
    assert!(Config::parse(&zero, Path::new("flint.toml")).is_err(), "max_concurrent = 0 would run nothing");
    assert_eq!(cerebras.models[0].context_window, None, "unset: discovered or guessed later");
}

#[test]
fn the_example_file_parses_as_shipped_and_with_every_section_enabled() {
    let text = include_str!("../../../flint.example.toml");
    let shipped = Config::parse(text, Path::new("flint.example.toml")).expect("example parses");
    assert_eq!(shipped.providers.len(), 1, "only Cerebras is enabled as shipped");
    let enabled: String = text
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest) if rest.starts_with('[') || rest.split_once(" = ").is_some_and(|(k, _)| is_key(k)) => {
                rest
            }
            _ => line,
        })
        .flat_map(|line| [line, "\n"])
        .collect();
    let all = Config::parse(&enabled, Path::new("flint.example.toml")).expect("every section parses");
    let names: Vec<_> = all.providers.iter().map(ProviderConfig::name).collect();
    assert_eq!(names, ["cerebras", "groq", "llamacpp", "llamacpp-python", "ollama", "openai", "local"]);
    let ProviderConfig::Responses(openai) = &all.providers[5] else { panic!("expected responses") };
    assert_eq!(openai.transport, ResponsesTransport::Websocket);
    assert_eq!(openai.models[0].price().map(|p| p.output_per_mtok), Some(14.0));
    let ProviderConfig::Openai(one_slot) = &all.providers[3] else { panic!("expected openai") };
    assert_eq!(one_slot.max_concurrent.map(std::num::NonZeroUsize::get), Some(1));
    assert!(all.default_model.is_some());
    assert_eq!(all.share.database, Path::new("/var/lib/flint/shares.sqlite3"));
    assert_eq!(all.share.max_link_bytes, 524_288);
    assert_eq!(all.metrics.allow.len(), 3, "the example's [metrics] allow list");
    assert_eq!(shipped.metrics.allow.len(), 2, "loopback only by default");
    assert_eq!(shipped.metrics.listen, None, "on server.listen unless set");
    assert_eq!(all.metrics.listen.map(|a| a.port()), Some(9187));
    assert_eq!(shipped.server.max_connections_per_address, 256);
    assert_eq!(all.vision.model.as_deref(), Some("openai/gpt-5.3-codex"));
    all.complete(&no_env).expect("the example's [vision] model sees");
}

#[test]
fn the_vision_model_must_be_a_configured_model_that_sees() {
    let file = |vision: &str| {
        format!(
            r#"
            [[providers]]
            kind = "openai"
            name = "p"
            base_url = "http://127.0.0.1:9/v1"
            models = [{{ id = "gpt-4o" }}, {{ id = "llama-3.3-70b" }}, {{ id = "odd-model", vision = true }},
                      {{ id = "gpt-4.1", vision = false }}]
            [[providers]]
            kind = "local"
            name = "local"
            [vision]
            model = "{vision}"
            "#
        )
    };
    let check = |vision: &str| {
        Config::parse(&file(vision), Path::new("flint.toml")).expect("parses").complete(&no_env)
    };
    check("p/gpt-4o").expect("guessed to see");
    check("p/odd-model").expect("configured to see");
    for (bad, says) in [
        ("p/llama-3.3-70b", "is not marked as seeing images; set vision = true"),
        ("p/gpt-4.1", "is not marked as seeing images"),
        ("p/nope", "provider \"p\" lists no model \"nope\""),
        ("q/gpt-4o", "no provider is named \"q\""),
        ("gpt-4o", "write it as provider/model"),
        ("local/smollm2-135m-instruct", "the embedded model does not see images"),
    ] {
        let message = check(bad).expect_err(bad).to_string();
        assert!(message.contains(says), "{bad}: {message}");
        assert!(message.starts_with("[vision] model = "), "{message}");
    }
}

fn is_key(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c == '_')
}

#[test]
fn a_typo_is_reported_with_the_file_name() {
    let err = Config::parse("[server]\nlisten_on = 1", Path::new("my.toml")).expect_err("unknown field");
    assert!(err.to_string().contains("my.toml"), "{err}");
}

#[test]
fn the_quick_start_adds_one_provider_keyed_by_env() {
    let env = |name: &str| match name {
        QUICK_START_BASE_URL => Some("http://localhost:11434/v1".into()),
        QUICK_START_MODELS => Some("qwen2.5-coder, llama3.2 ,".into()),
        _ => None,
    };
    let config = Config::default().complete(&env).expect("complete");
    let ProviderConfig::Openai(quick) = &config.providers[0] else { panic!("expected openai") };
    assert_eq!(quick.name, QUICK_START_PROVIDER);
    assert_eq!(quick.api_key_env.as_deref(), Some(QUICK_START_API_KEY));
    assert!(quick.api_key_optional, "local servers want no key");
    let ids: Vec<_> = quick.models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["qwen2.5-coder", "llama3.2"]);
    assert_eq!(config.providers.len(), 1, "no local model when a provider is configured");
}

#[test]
fn the_quick_start_needs_models() {
    let env = |name: &str| (name == QUICK_START_BASE_URL).then(|| "http://x/v1".to_owned());
    assert!(matches!(Config::default().complete(&env), Err(ConfigError::QuickStartWithoutModels)));
}

#[test]
fn with_nothing_configured_the_local_model_is_the_default() {
    let config = Config::default().complete(&no_env).expect("complete");
    #[cfg(feature = "local")]
    assert!(matches!(&config.providers[..], [ProviderConfig::Local(_)]));
    #[cfg(not(feature = "local"))]
    assert!(config.providers.is_empty());
}
