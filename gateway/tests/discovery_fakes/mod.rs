//! Fake model servers of each shape Flint looks for, on free loopback ports, each recording what it
//! was sent (so a test can see no key went out), and the calls the discovery tests make.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use flint_gateway::AppState;
use flint_gateway::config::{Config, DiscoveryPorts, ModelConfig, OpenAiConfig, ProviderConfig};
use flint_protocol::{ContextSource, ModelList};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// What a fake server was asked: each path, and whether any request carried a key.
#[derive(Default)]
pub struct Seen {
    pub paths: Vec<String>,
    pub keys: usize,
}

pub struct Fake {
    pub port: u16,
    pub seen: Arc<Mutex<Seen>>,
}

impl Fake {
    pub fn paths(&self) -> Vec<String> {
        self.seen.lock().unwrap().paths.clone()
    }
    pub fn keys(&self) -> usize {
        self.seen.lock().unwrap().keys
    }
}

pub async fn record(State(seen): State<Arc<Mutex<Seen>>>, request: Request, next: Next) -> Response {
    {
        let mut seen = seen.lock().unwrap();
        seen.paths.push(request.uri().path().to_owned());
        if request.headers().contains_key("authorization") {
            seen.keys += 1;
        }
    }
    next.run(request).await
}

pub async fn serve(routes: Router) -> Fake {
    serve_on(TcpListener::bind("127.0.0.1:0").await.expect("port 0 binds"), routes)
}

pub fn serve_on(listener: TcpListener, routes: Router) -> Fake {
    let port = listener.local_addr().expect("address").port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let app = routes.layer(middleware::from_fn_with_state(seen.clone(), record));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Fake { port, seen }
}

pub fn json_route(body: Value) -> axum::routing::MethodRouter {
    get(move || async move { axum::Json(body) })
}

/// An OpenAI-compatible streamed answer: one chunk saying `text`, then the end.
pub async fn chat() -> Response {
    let chunk = json!({ "choices": [{ "index": 0, "delta": { "content": "<p>found</p>" } }] });
    let done = json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] });
    let body = format!("data: {chunk}\n\ndata: {done}\n\ndata: [DONE]\n\n");
    ([("content-type", "text/event-stream")], body).into_response()
}

pub async fn ollama() -> Fake {
    serve(ollama_routes()).await
}

pub fn ollama_routes() -> Router {
    Router::new()
            .route(
                "/api/tags",
                json_route(json!({ "models": [
                    { "name": "qwen2.5-coder:1.5b", "details": { "family": "qwen2", "parameter_size": "1.5B" } },
                    { "name": "qwen2.5-coder:7b", "details": { "family": "qwen2", "parameter_size": "7.6B" } },
                    { "name": "nomic-embed-text:latest", "details": { "family": "nomic-bert" } },
                ] })),
            )
            .route(
                "/api/show",
                post(|| async { axum::Json(json!({ "model_info": { "qwen2.context_length": 32768 } })) }),
            )
        .route("/v1/chat/completions", post(chat))
}

pub async fn llama_cpp() -> Fake {
    serve(
        Router::new()
            .route("/v1/models", json_route(json!({ "data": [{ "id": "gemma-3-4b-it-Q4_K_M.gguf" }] })))
            .route(
                "/props",
                json_route(json!({ "total_slots": 1, "default_generation_settings": { "n_ctx": 4096 } })),
            )
            .route("/health", json_route(json!({ "status": "ok" }))),
    )
    .await
}

pub async fn lm_studio() -> Fake {
    serve(Router::new().route(
        "/api/v0/models",
        json_route(json!({ "data": [
            { "id": "qwen2.5-7b-instruct", "type": "llm", "max_context_length": 32768 },
            { "id": "text-embedding-nomic-embed-text-v1.5", "type": "embeddings" },
        ] })),
    ))
    .await
}

pub async fn vllm_like() -> Fake {
    serve(
        Router::new()
            .route(
                "/v1/models",
                json_route(
                    json!({ "data": [{ "id": "Qwen/Qwen2.5-Coder-7B-Instruct", "max_model_len": 16384 }] }),
                ),
            )
            .route("/get_model_info", json_route(json!({ "model_path": "Qwen/Qwen2.5-Coder-7B-Instruct" }))),
    )
    .await
}

pub async fn litellm_with_key() -> Fake {
    let refuse =
        || async { (StatusCode::UNAUTHORIZED, axum::Json(json!({ "error": "Authentication Error" }))) };
    serve(Router::new().route("/v1/models", get(refuse)).route("/model/info", get(refuse))).await
}

/// A port where nothing listens (bound, then closed).
pub async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("port 0 binds");
    listener.local_addr().expect("address").port()
}

pub fn looking_at(ports: DiscoveryPorts) -> impl FnOnce(&mut Config) {
    move |config: &mut Config| {
        config.discovery.ports = ports;
    }
}

pub async fn model_list(addr: SocketAddr) -> ModelList {
    reqwest::get(format!("http://{addr}/api/models")).await.expect("GET").json().await.expect("a model list")
}

pub async fn rescan(addr: SocketAddr, origin: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new().post(format!("http://{addr}/api/discovery/rescan"));
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request.send().await.expect("POST rescan")
}

/// Waits for the found providers' own questions (windows, slots) to be answered.
pub async fn window_of(state: &AppState, id: &str, source: ContextSource) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let list = state.model_list();
        let model =
            list.models.iter().find(|m| m.id == id).unwrap_or_else(|| panic!("{id} listed: {list:?}"));
        if model.context_source == source {
            return model.context_window;
        }
        assert!(Instant::now() < deadline, "{id} never got a {source:?} window: {model:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A llama.cpp-shaped server that behaves as llama-cpp-python's does by default: any request
/// arriving while an answer streams (a `/v1/models` probe included) ends that answer with
/// `[DONE]` and no `finish_reason`. Its answer: one chunk, then the rest about 600 ms later; its
/// model list comes `list_delay` after it is asked for.
pub async fn interrupting_llama_cpp(list_delay: Duration) -> Fake {
    use std::sync::atomic::{AtomicBool, Ordering};
    let streaming = Arc::new(AtomicBool::new(false));
    let cut = Arc::new(AtomicBool::new(false));
    let chat = {
        let (streaming, cut) = (streaming.clone(), cut.clone());
        post(move || {
            let (streaming, cut) = (streaming.clone(), cut.clone());
            async move {
                streaming.store(true, Ordering::SeqCst);
                cut.store(false, Ordering::SeqCst);
                let first = json!({ "choices": [{ "index": 0, "delta": { "content": "<p>one " } }] });
                let body = futures::stream::once(async move { format!("data: {first}\n\n") }).chain(
                    futures::stream::once(async move {
                        for _ in 0..12 {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            if cut.load(Ordering::SeqCst) {
                                streaming.store(false, Ordering::SeqCst);
                                return "data: [DONE]\n\n".to_owned();
                            }
                        }
                        streaming.store(false, Ordering::SeqCst);
                        let rest = json!({ "choices": [{ "index": 0, "delta": { "content": "two</p>" } }] });
                        let end =
                            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] });
                        format!("data: {rest}\n\ndata: {end}\n\ndata: [DONE]\n\n")
                    }),
                );
                let body = axum::body::Body::from_stream(body.map(Ok::<_, std::convert::Infallible>));
                ([("content-type", "text/event-stream")], body).into_response()
            }
        })
    };
    let interrupts = middleware::from_fn(move |request: Request, next: Next| {
        if streaming.load(Ordering::SeqCst) {
            cut.store(true, Ordering::SeqCst);
        }
        next.run(request)
    });
    serve(
        Router::new()
            .route(
                "/v1/models",
                get(move || async move {
                    tokio::time::sleep(list_delay).await;
                    axum::Json(json!({ "data": [{ "id": "smol.gguf" }] }))
                }),
            )
            .route(
                "/props",
                json_route(json!({ "total_slots": 1, "default_generation_settings": { "n_ctx": 2048 } })),
            )
            .route("/v1/chat/completions", chat)
            .layer(interrupts),
    )
    .await
}

/// A configured keyless `openai`-kind provider serving `model` at `base_url`.
pub fn keyless(name: &str, base_url: &str, model: &str) -> ProviderConfig {
    ProviderConfig::Openai(OpenAiConfig {
        name: name.into(),
        base_url: base_url.into(),
        api_key_env: None,
        api_key: None,
        api_key_optional: false,
        models: vec![ModelConfig {
            id: model.into(),
            label: None,
            context_window: None,
            tokenizer: None,
            reasoning: None,
            vision: None,
            price: None,
        }],
        max_tokens_field: Default::default(),
        max_concurrent: None,
        allow_user_keys: false,
        stall_timeout_secs: None,
    })
}

/// Stream 1 of `model`, asked for a small page.
pub fn start_one(model: &str) -> flint_protocol::ClientMessage {
    flint_protocol::ClientMessage::Start(flint_protocol::StartRequest {
        stream: 1,
        model: model.into(),
        messages: vec![flint_protocol::ChatMessage::new(
            flint_protocol::Role::User,
            "a button that counts clicks",
        )],
        params: Default::default(),
    })
}
