//! Model servers found on loopback (`[discovery]`): a fake server of each kind on a free port, the
//! ports pointed at them, and what `/api/models` and a stream then show.

mod common;

use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use common::{Client, start_with};
use flint_gateway::AppState;
use flint_gateway::config::{Config, DiscoveryPorts};
use flint_protocol::{ContextSource, ModelList, ServerMessage};
use serde_json::json;
use tokio::net::TcpListener;

mod discovery_fakes;

use discovery_fakes::*;

#[tokio::test]
async fn every_kind_of_server_is_found_with_its_models_and_never_sent_a_key() {
    let (ollama, llama, lm, vllm, sglang, litellm) = (
        ollama().await,
        llama_cpp().await,
        lm_studio().await,
        vllm_like().await,
        vllm_like().await,
        litellm_with_key().await,
    );
    let ports = DiscoveryPorts {
        ollama: ollama.port,
        llama_cpp: llama.port,
        lm_studio: lm.port,
        vllm: vllm.port,
        sglang: sglang.port,
        litellm: litellm.port,
    };
    let gw = start_with(looking_at(ports)).await;
    assert!(gw.state.model_list().found.is_empty(), "nothing is probed before a scan");
    gw.state.discovery().scan().await;
    let list = gw.state.model_list();
    assert!(list.discovery);
    let kinds: Vec<(&str, &str)> =
        list.found.iter().map(|s| (s.provider.as_str(), s.kind.as_str())).collect();
    assert_eq!(
        kinds,
        [
            ("ollama", "Ollama"),
            ("llama-cpp", "llama.cpp server"),
            ("lm-studio", "LM Studio"),
            ("vllm", "vLLM"),
            ("sglang", "SGLang"),
            ("litellm", "LiteLLM")
        ]
    );
    let ids: Vec<&str> =
        list.models.iter().filter(|m| !m.id.starts_with("scripted/")).map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "ollama/qwen2.5-coder:1.5b",
            "ollama/qwen2.5-coder:7b",
            "llama-cpp/gemma-3-4b-it-Q4_K_M.gguf",
            "lm-studio/qwen2.5-7b-instruct",
            "vllm/Qwen/Qwen2.5-Coder-7B-Instruct",
            "sglang/Qwen/Qwen2.5-Coder-7B-Instruct",
        ],
        "embedding models are left out"
    );
    assert_eq!(list.found[0].best.as_deref(), Some("ollama/qwen2.5-coder:7b"), "the largest is offered");
    assert_eq!(list.default.as_deref(), Some("scripted/counter@20000"), "a find never becomes the default");
    let litellm_found = &list.found[5];
    assert!(litellm_found.problem.as_deref().is_some_and(|p| p.contains("wants a key")), "{litellm_found:?}");
    assert!(list.models.iter().all(|m| m.provider != "litellm"), "a server that wants a key offers nothing");
    // Windows as each kind tells them.
    assert_eq!(window_of(&gw.state, "ollama/qwen2.5-coder:7b", ContextSource::Discovered).await, 32768);
    assert_eq!(
        window_of(&gw.state, "llama-cpp/gemma-3-4b-it-Q4_K_M.gguf", ContextSource::Discovered).await,
        4096
    );
    assert_eq!(
        window_of(&gw.state, "vllm/Qwen/Qwen2.5-Coder-7B-Instruct", ContextSource::Discovered).await,
        16384
    );
    assert_eq!(window_of(&gw.state, "lm-studio/qwen2.5-7b-instruct", ContextSource::Configured).await, 32768);
    for fake in [&ollama, &llama, &lm, &vllm, &sglang, &litellm] {
        assert_eq!(fake.keys(), 0, "a key reached the server at {}: {:?}", fake.port, fake.paths());
    }
    assert!(
        litellm.paths().iter().all(|p| p == "/v1/models"),
        "one refusal is enough: {:?}",
        litellm.paths()
    );
}

#[tokio::test]
async fn a_found_model_runs_a_prompt() {
    let ollama = ollama().await;
    let gw = start_with(looking_at(DiscoveryPorts { ollama: ollama.port, ..DiscoveryPorts::none() })).await;
    gw.state.discovery().scan().await;
    let mut client = Client::connect(gw.addr).await;
    client.send(&start_one("ollama/qwen2.5-coder:7b")).await;
    let (mut done, others) = client.collect(&[1]).await;
    assert!(others.is_empty(), "{others:?}");
    let outcome = done.remove(0).1;
    assert_eq!(outcome.text, "<p>found</p>", "{:?}", outcome.end);
    assert!(matches!(outcome.end, ServerMessage::Done { .. }), "{:?}", outcome.end);
    assert_eq!(ollama.keys(), 0);
}

#[tokio::test]
async fn a_configured_provider_at_the_same_address_wins() {
    let ollama = ollama().await;
    let port = ollama.port;
    let gw = start_with(move |config: &mut Config| {
        config.discovery.ports = DiscoveryPorts { ollama: port, ..DiscoveryPorts::none() };
        config.providers.push(keyless("mine", &format!("http://localhost:{port}/v1"), "qwen2.5-coder:7b"));
    })
    .await;
    gw.state.discovery().scan().await;
    let list = gw.state.model_list();
    assert!(list.found.is_empty(), "{:?}", list.found);
    assert!(list.models.iter().any(|m| m.id == "mine/qwen2.5-coder:7b"));
    assert!(
        !ollama.paths().contains(&"/api/tags".to_owned()),
        "its port was not probed: {:?}",
        ollama.paths()
    );
}

#[tokio::test]
async fn nothing_is_probed_off_loopback_or_when_turned_off() {
    let ollama = ollama().await;
    let ports = DiscoveryPorts { ollama: ollama.port, ..DiscoveryPorts::none() };
    let public = start_with(move |config: &mut Config| {
        config.discovery.ports = ports;
        config.server.listen = "0.0.0.0:8787".parse().unwrap();
    })
    .await;
    let off = start_with(move |config: &mut Config| {
        config.discovery.ports = ports;
        config.discovery.enabled = Some(false);
    })
    .await;
    for gw in [&public, &off] {
        gw.state.discovery().scan().await;
        assert!(gw.state.model_list().found.is_empty());
        assert!(!gw.state.model_list().discovery, "the picker offers no Rescan");
        let origin = format!("http://{}", gw.addr);
        let refused = rescan(gw.addr, Some(&origin)).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND);
        assert!(refused.text().await.unwrap().contains("[discovery]"));
    }
    assert!(ollama.paths().is_empty(), "probed: {:?}", ollama.paths());
    // An operator may turn it on for a gateway others reach.
    let on = start_with(move |config: &mut Config| {
        config.discovery.ports = ports;
        config.server.listen = "0.0.0.0:8787".parse().unwrap();
        config.discovery.enabled = Some(true);
    })
    .await;
    on.state.discovery().scan().await;
    assert_eq!(on.state.model_list().found.len(), 1);
}

#[tokio::test]
async fn rescan_takes_only_the_own_page_and_not_too_often() {
    // A server that starts after the gateway, found by the page's Rescan.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("port 0 binds");
    let port = listener.local_addr().expect("address").port();
    let gw = start_with(move |config: &mut Config| {
        config.discovery.ports = DiscoveryPorts { ollama: port, ..DiscoveryPorts::none() };
        config.server.allowed_origins.push("http://127.0.0.1:9".into());
    })
    .await;
    let ollama = serve_on(listener, ollama_routes());
    let own_new = format!("http://{}", gw.addr);
    assert!(model_list(gw.addr).await.found.is_empty());
    assert_eq!(rescan(gw.addr, None).await.status(), StatusCode::FORBIDDEN, "a hand-made request");
    assert_eq!(
        rescan(gw.addr, Some("http://127.0.0.1:9")).await.status(),
        StatusCode::FORBIDDEN,
        "an allowed origin that is not the gateway's own"
    );
    assert_eq!(rescan(gw.addr, Some("https://evil.example")).await.status(), StatusCode::FORBIDDEN);
    assert!(ollama.paths().is_empty(), "refused rescans probe nothing");
    let answer = rescan(gw.addr, Some(&own_new)).await;
    assert_eq!(answer.status(), StatusCode::OK);
    let list: ModelList = answer.json().await.expect("the new model list");
    assert_eq!(list.found.len(), 1);
    assert_eq!(model_list(gw.addr).await.found.len(), 1, "kept for /api/models");
    let again = rescan(gw.addr, Some(&own_new)).await;
    assert_eq!(again.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(again.headers().contains_key("retry-after"));
    assert!(again.text().await.unwrap().contains("try again"));
}

#[tokio::test]
async fn looking_never_slows_the_start_and_gives_up_fast() {
    // Nothing listens at five ports; the sixth accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").await.expect("port 0 binds");
    let silent_port = silent.local_addr().expect("address").port();
    let keep = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let ports = DiscoveryPorts {
        ollama: closed_port().await,
        llama_cpp: closed_port().await,
        lm_studio: closed_port().await,
        vllm: closed_port().await,
        sglang: closed_port().await,
        litellm: silent_port,
    };
    let mut config = Config::default();
    config.discovery.ports = ports;
    config.share.database =
        std::env::temp_dir().join(format!("flint-discovery-{}", std::process::id())).join("s.db");
    config.auth.database = config.share.database.with_file_name("a.db");
    let mut quiet = config.clone();
    quiet.discovery.enabled = Some(false);
    let started = Instant::now();
    let state = AppState::from_config(&quiet, &|_| None);
    state.discovery().scan_in_background();
    let without = started.elapsed();
    let started = Instant::now();
    let state = AppState::from_config(&config, &|_| None);
    state.discovery().scan_in_background();
    let _ = state.model_list();
    let with = started.elapsed();
    assert!(
        with < without + Duration::from_millis(300),
        "start took {with:?} with discovery, {without:?} without"
    );
    let started = Instant::now();
    let found = state.discovery().scan().await;
    let took = started.elapsed();
    assert!(found.servers.is_empty());
    assert!(took < Duration::from_millis(1500), "a look with nothing to find took {took:?}");
    keep.abort();
}

#[tokio::test]
async fn a_probe_follows_no_redirect_and_reads_no_huge_answer() {
    let elsewhere = ollama().await;
    let target = format!("http://127.0.0.1:{}/api/tags", elsewhere.port);
    let redirecting = serve(Router::new().route(
        "/api/tags",
        get(move || async move { (StatusCode::FOUND, [("location", target)]).into_response() }),
    ))
    .await;
    let huge = serve(Router::new().route(
        "/v1/models",
        get(|| async {
            let filler = "x".repeat(2 << 20);
            axum::Json(json!({ "data": [{ "id": "m" }], "filler": filler }))
        }),
    ))
    .await;
    let gw = start_with(looking_at(DiscoveryPorts {
        ollama: redirecting.port,
        vllm: huge.port,
        ..DiscoveryPorts::none()
    }))
    .await;
    let found = gw.state.discovery().scan().await;
    assert!(found.servers.is_empty(), "{:?}", found.servers);
    assert!(elsewhere.paths().is_empty(), "the redirect was followed: {:?}", elsewhere.paths());
    assert_eq!(redirecting.paths(), ["/api/tags", "/v1/models"]);
}

#[tokio::test]
async fn a_look_never_cuts_a_running_answer_short() {
    let server = interrupting_llama_cpp(Duration::ZERO).await;
    let gw =
        start_with(looking_at(DiscoveryPorts { llama_cpp: server.port, ..DiscoveryPorts::none() })).await;
    // The start's own look and this one are one look: a server that cuts answers sees one probe.
    let (first, second) = tokio::join!(gw.state.discovery().scan(), gw.state.discovery().scan());
    assert_eq!(first.servers.len(), 1, "{:?}", first.servers);
    assert_eq!(second.servers.len(), 1);
    let mut client = Client::connect(gw.addr).await;
    client.send(&start_one("llama-cpp/smol.gguf")).await;
    let first = loop {
        if let ServerMessage::Delta { text, .. } = client.next().await {
            break text;
        }
    };
    // A rescan while the answer streams keeps the server's last find and sends it nothing.
    let during = gw.state.discovery().scan().await;
    assert_eq!(during.servers.len(), 1, "the busy server is still listed: {:?}", during.servers);
    let (mut done, _) = client.collect(&[1]).await;
    let outcome = done.remove(0).1;
    assert!(
        matches!(outcome.end, ServerMessage::Done { .. }),
        "the answer was cut: {:?} after {:?}",
        outcome.end,
        server.paths()
    );
    assert_eq!(first + &outcome.text, "<p>one two</p>");
    let asked = server.paths();
    assert_eq!(
        asked.last().map(String::as_str),
        Some("/v1/chat/completions"),
        "asked during the answer: {asked:?}"
    );
    // Once it has ended, the server is looked at again.
    gw.state.discovery().scan().await;
    assert!(server.paths().len() > asked.len(), "{:?}", server.paths());
}

#[tokio::test]
async fn a_configured_server_is_sent_the_first_answer_after_it_was_looked_at() {
    // The look at its windows and slots starts with the gateway; its list is slow, so without
    // waiting the look's next request would arrive during the answer and cut it.
    let server = interrupting_llama_cpp(Duration::from_millis(300)).await;
    let port = server.port;
    let gw = start_with(move |config: &mut Config| {
        config.discovery.enabled = Some(false);
        config.providers.push(keyless("mine", &format!("http://127.0.0.1:{port}/v1"), "smol.gguf"));
    })
    .await;
    let mut client = Client::connect(gw.addr).await;
    client.send(&start_one("mine/smol.gguf")).await;
    let (mut done, _) = client.collect(&[1]).await;
    let outcome = done.remove(0).1;
    assert!(
        matches!(outcome.end, ServerMessage::Done { .. }),
        "the answer was cut: {:?} after {:?}",
        outcome.end,
        server.paths()
    );
    assert_eq!(
        server.paths().last().map(String::as_str),
        Some("/v1/chat/completions"),
        "{:?}",
        server.paths()
    );
}
