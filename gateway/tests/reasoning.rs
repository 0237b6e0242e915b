//! Reasoning keys (`reasoning_effort`, `verbosity`) reach a chat-completions upstream only for
//! models that take them.

mod common;

use common::{Client, start_upstream_with};
use flint_gateway::config::{ModelConfig, ProviderConfig};
use flint_protocol::{
    ChatMessage, ClientMessage, GenParams, ReasoningEffort, Role, ServerMessage, StartRequest, Verbosity,
};
use flint_scripted_upstream::{Options, fixtures_dir};

/// A reasoning model by its name, and one that is not.
const REASONING: &str = "gpt-5-codex";
const PLAIN: &str = "llama-3.3-70b";

#[tokio::test]
async fn reasoning_keys_go_to_reasoning_models_only() {
    let options =
        Options::new(fixtures_dir()).inline(REASONING, "<p>Thought.</p>").inline(PLAIN, "<p>Said.</p>");
    let gw = start_upstream_with(options, |config| {
        for provider in &mut config.providers {
            if let ProviderConfig::Openai(openai) = provider {
                for id in [REASONING, PLAIN] {
                    openai.models.push(ModelConfig {
                        id: id.into(),
                        label: None,
                        context_window: Some(8192),
                        tokenizer: None,
                        // Guessed from the name.
                        reasoning: None,
                        vision: None,
                        price: None,
                    });
                }
            }
        }
    })
    .await;
    let mut client = Client::connect(gw.addr).await;
    for (stream, model) in [(1, REASONING), (2, PLAIN)] {
        let params = GenParams {
            reasoning_effort: Some(ReasoningEffort::High),
            verbosity: Some(Verbosity::Low),
            ..GenParams::default()
        };
        let start = StartRequest {
            stream,
            model: format!("scripted/{model}"),
            messages: vec![ChatMessage::new(Role::User, "make a page")],
            params,
        };
        client.send(&ClientMessage::Start(start)).await;
        let (done, _) = client.collect(&[stream]).await;
        assert!(matches!(done[0].1.end, ServerMessage::Done { .. }), "{model}: {:?}", done[0].1.end);
    }
    let log = gw.upstream.requests();
    let body = |model: &str| &log.iter().find(|r| r.model == model).expect("requested").body;
    assert_eq!(body(REASONING)["reasoning_effort"], "high", "{}", body(REASONING));
    assert_eq!(body(REASONING)["verbosity"], "low", "{}", body(REASONING));
    assert!(body(PLAIN).get("reasoning_effort").is_none(), "{}", body(PLAIN));
    assert!(body(PLAIN).get("verbosity").is_none(), "{}", body(PLAIN));
}
