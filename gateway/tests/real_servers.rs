//! The gateway against real servers written by others: llama-cpp-python's OpenAI-compatible
//! server, serving the embedded model's file, and the LiteLLM proxy in front of it, which speaks
//! OpenAI's Responses API over HTTP streaming and its WebSocket mode. The scripted upstream only
//! knows what we taught it; these find out what the real ones do.
//!
//! The servers run from the Python in `FLINT_REAL_PYTHON` (`cargo xtask test` installs them, pinned,
//! and sets it), else from the set-up's environment in Flint's cache. Without either these tests
//! fail and say how to get one: a silent skip would hide a broken set-up. Each test starts its own
//! servers on free ports, and they take turns ([`ONE_AT_A_TIME`]): SmolLM2 on 2 cores is quick
//! alone, and two servers decoding at once would slow each other into timeouts.

mod common;

#[allow(dead_code)]
#[path = "../src/local/model_file.rs"]
mod model_file;

use std::fs::File;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Client, Gateway, Outcome, start_with};
use flint_gateway::config::{
    Config, ModelConfig, OpenAiConfig, ProviderConfig, ResponsesConfig, ResponsesTransport,
};
use flint_protocol::{
    ChatMessage, ClientMessage, ErrorCode, FinishReason, GenParams, Role, ServerMessage, StartRequest,
};

/// The environment variable naming the Python that has the servers installed.
const PYTHON_ENV: &str = "FLINT_REAL_PYTHON";
/// The model's name at both servers (`--model_alias`).
const ALIAS: &str = "smol";
/// The context window llama-cpp-python gives a model by default (`--n_ctx`).
const SERVER_CONTEXT: u32 = 2048;
/// LiteLLM's master key: it refuses to start without one.
const MASTER_KEY: &str = "sk-flint-real-servers-master-0123456789";
/// How long a server may take to answer `/v1/models` after it is started.
const READY_WITHIN: Duration = Duration::from_secs(90);

/// How long a tab waits for the next frame.
const FRAME_WITHIN: Duration = Duration::from_secs(60);

/// Servers of one test at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The Python to run the servers with: `FLINT_REAL_PYTHON`, else the set-up's environment.
fn python() -> PathBuf {
    let python = std::env::var_os(PYTHON_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| model_file::cache_dir().join("real-servers-venv/bin/python"));
    assert!(
        python.is_file(),
        "no Python with llama-cpp-python and LiteLLM at {}: run `cargo xtask test` (it installs them and \
         sets {PYTHON_ENV}), or set {PYTHON_ENV} to a Python that has `llama-cpp-python[server]` and \
         `litellm[proxy]`",
        python.display()
    );
    python
}

fn model_path() -> PathBuf {
    let path = model_file::default_model_path();
    assert!(
        path.is_file(),
        "the embedded model is not at {}; run `cargo xtask test` (it fetches the model) or set FLINT_MODEL_PATH",
        path.display()
    );
    path
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("port 0 binds");
    listener.local_addr().expect("bound address").port()
}

/// A server process, killed when dropped; what it prints goes to a log file.
struct Server {
    name: &'static str,
    child: Child,
    log: PathBuf,
    port: u16,
    /// Scratch folder (LiteLLM's config), removed with the server.
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Server {
    /// Starts `python args…` (`{port}` in them replaced by a free port) in a fresh scratch folder
    /// holding `config.yaml` when given, and waits until `/v1/models` answers 200 to `key`.
    async fn start(
        name: &'static str,
        args: &[&str],
        env: &[(&str, &str)],
        key: Option<&str>,
        config: Option<&str>,
    ) -> Self {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("flint-real-{name}-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        if let Some(config) = config {
            std::fs::write(dir.join("config.yaml"), config).expect("config file");
        }
        let log = dir.join("server.log");
        let out = File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let python = python();
        let args: Vec<String> = args.iter().map(|a| a.replace("{port}", &port.to_string())).collect();
        let child = Command::new(&python)
            .args(&args)
            .envs(env.iter().copied())
            .env("PYTHONUNBUFFERED", "1")
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} with {}: {e}", python.display()));
        let mut server = Self { name, child, log, port, dir };
        server.wait_ready(key).await;
        server
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Everything the server has printed so far.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether the log says `needle` within a few seconds: a server writes some lines only after
    /// the response they are about has closed.
    async fn logs(&self, needle: &str) -> bool {
        for _ in 0..50 {
            if self.log().contains(needle) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    async fn wait_ready(&mut self, key: Option<&str>) {
        let started = Instant::now();
        let client = reqwest::Client::new();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited ({status}) before it answered:\n{}", self.name, self.log_tail());
            }
            let mut request = client.get(format!("{}/models", self.base_url()));
            if let Some(key) = key {
                request = request.bearer_auth(key);
            }
            if request.send().await.is_ok_and(|r| r.status().is_success()) {
                eprintln!("{} answered after {:.1?}", self.name, started.elapsed());
                return;
            }
            assert!(
                started.elapsed() < READY_WITHIN,
                "{} did not answer /v1/models within {READY_WITHIN:?}:\n{}",
                self.name,
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// llama-cpp-python's server on the embedded model, as FACTS.md runs it.
async fn llama_cpp_python() -> Server {
    let model = model_path();
    let model = model.to_str().expect("the model path is UTF-8");
    let args = [
        "-m",
        "llama_cpp.server",
        "--model",
        model,
        "--model_alias",
        ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--n_threads",
        "2",
        "--chat_format",
        "chatml",
        // Without llama.cpp's own tensor-by-tensor log: the server's log is read by the tests.
        "--verbose",
        "False",
    ];
    Server::start("llama-cpp-python", &args, &[], None, None).await
}

/// The LiteLLM proxy in front of `upstream`: `llamafile/` bridges `/v1/responses` to its chat
/// completions. Warmed up with one answer, as its first request loads much of it.
async fn litellm(upstream: &Server) -> Server {
    let config = format!(
        "model_list:\n  - model_name: {ALIAS}\n    litellm_params:\n      model: llamafile/{ALIAS}\n      \
         api_base: {}\n",
        upstream.base_url()
    );
    let args = [
        "-m",
        "litellm.proxy.proxy_cli",
        "--config",
        "config.yaml",
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--telemetry",
        "False",
    ];
    // The bundled model price list, not a download from GitHub at start.
    let env = [("LITELLM_MASTER_KEY", MASTER_KEY), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")];
    let server = Server::start("LiteLLM", &args, &env, Some(MASTER_KEY), Some(&config)).await;
    let started = Instant::now();
    let warm = reqwest::Client::new()
        .post(format!("{}/responses", server.base_url()))
        .bearer_auth(MASTER_KEY)
        .json(&serde_json::json!({ "model": ALIAS, "input": "hi", "max_output_tokens": 16 }))
        .send()
        .await
        .expect("LiteLLM answers a warm-up request");
    assert!(
        warm.status().is_success(),
        "LiteLLM's warm-up failed: {:?}\n{}",
        warm.status(),
        server.log_tail()
    );
    eprintln!("LiteLLM warmed up in {:.1?}", started.elapsed());
    server
}

fn model(id: &str) -> ModelConfig {
    ModelConfig {
        id: id.into(),
        label: None,
        context_window: Some(SERVER_CONTEXT),
        tokenizer: None,
        reasoning: Some(false),
        price: None,
    }
}

/// llama-cpp-python as a keyless OpenAI-compatible provider named `llama`.
fn llama_provider(server: &Server, max_concurrent: Option<usize>) -> ProviderConfig {
    ProviderConfig::Openai(OpenAiConfig {
        name: "llama".into(),
        base_url: server.base_url(),
        api_key_env: None,
        api_key: None,
        api_key_optional: false,
        models: vec![model(ALIAS)],
        max_tokens_field: Default::default(),
        max_concurrent: max_concurrent.and_then(std::num::NonZeroUsize::new),
        allow_user_keys: false,
    })
}

/// LiteLLM as a Responses provider named `litellm`, with `key`.
fn litellm_provider(server: &Server, transport: ResponsesTransport, key: &str) -> ProviderConfig {
    ProviderConfig::Responses(ResponsesConfig {
        name: "litellm".into(),
        base_url: server.base_url(),
        api_key_env: None,
        api_key: Some(key.into()),
        models: vec![model(ALIAS)],
        transport,
        // llama-cpp-python behind it runs one answer at a time.
        max_concurrent: std::num::NonZeroUsize::new(1),
        allow_user_keys: false,
        websocket_max_age: None,
    })
}

/// A gateway whose only provider is `provider`.
async fn gateway(provider: ProviderConfig) -> Gateway {
    start_with(move |config: &mut Config| config.providers = vec![provider]).await
}

/// A tab on `gw` that waits up to a minute for a frame: a real server on a busy 2-core machine
/// can take seconds before its first token.
async fn connect(gw: &Gateway) -> Client {
    let mut client = Client::connect(gw.addr).await;
    client.patience = FRAME_WITHIN;
    client
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::new(Role::User, text)
}

fn at_most(max_tokens: u32) -> GenParams {
    GenParams { max_tokens: Some(max_tokens), ..GenParams::default() }
}

async fn send(client: &mut Client, stream: u32, model: &str, messages: Vec<ChatMessage>, params: GenParams) {
    let start = StartRequest { stream, model: model.into(), messages, params };
    client.send(&ClientMessage::Start(start)).await;
}

/// Runs one stream to its end.
async fn ask(
    client: &mut Client,
    stream: u32,
    model: &str,
    messages: Vec<ChatMessage>,
    params: GenParams,
) -> Outcome {
    send(client, stream, model, messages, params).await;
    let (mut done, others) = client.collect(&[stream]).await;
    assert!(others.is_empty(), "unexpected frames: {others:?}");
    done.remove(0).1
}

/// How a stream that should have finished finished; panics with how it ended otherwise.
fn finished(outcome: &Outcome) -> FinishReason {
    match &outcome.end {
        ServerMessage::Done { finish, .. } => *finish,
        other => panic!("the stream should have finished; it ended with {other:?} after {:?}", outcome.text),
    }
}

fn error_of(outcome: &Outcome) -> (ErrorCode, &str) {
    match &outcome.end {
        ServerMessage::Error { code, message, .. } => (*code, message.as_str()),
        other => panic!("the stream should have failed; it ended with {other:?}"),
    }
}

/// Prints how long a test took when it ends (`--nocapture` shows it).
struct Timed(&'static str, Instant);

impl Drop for Timed {
    fn drop(&mut self) {
        eprintln!("{}: {:.1?}", self.0, self.1.elapsed());
    }
}

// --- llama-cpp-python, kind = "openai" ---------------------------------------------------------------

#[tokio::test]
async fn llama_cpp_python_streams_an_answer_with_usage() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let _timed = Timed("llama_cpp_python_streams_an_answer_with_usage", Instant::now());
    let server = llama_cpp_python().await;
    let gw = gateway(llama_provider(&server, Some(1))).await;
    let mut client = connect(&gw).await;
    let messages = vec![user("Write one short sentence about the sea.")];
    let outcome = ask(&mut client, 1, "llama/smol", messages, at_most(32)).await;
    assert_eq!(outcome.started.as_deref(), Some(ALIAS), "Started names the model picked");
    assert!(!outcome.text.trim().is_empty(), "the answer has text: {:?}", outcome.end);
    finished(&outcome);
    let ServerMessage::Done { usage, .. } = outcome.end else { unreachable!("finished") };
    eprintln!("usage reported through llama-cpp-python: {usage:?}");
    assert!(usage.completion_tokens > 0, "{usage:?}");
    // llama-cpp-python 0.3.36 ignores `stream_options.include_usage`: no usage chunk, so the
    // gateway counts the streamed chunks and has no prompt count. A later version that reports
    // one must report a real one.
    assert!(usage.prompt_tokens.is_none_or(|n| n > 0), "{usage:?}");
}

/// Starts streams 1‥=3 at once and reads them to their ends; returns them and the other frames.
async fn three_at_once(gw: &Gateway) -> (Vec<(u32, Outcome)>, Vec<ServerMessage>) {
    let mut client = connect(gw).await;
    let prompts = ["Name a colour.", "Name a fruit.", "Name an animal."];
    for (stream, prompt) in (1..).zip(prompts) {
        send(&mut client, stream, "llama/smol", vec![user(prompt)], at_most(24)).await;
    }
    client.collect(&[1, 2, 3]).await
}

#[tokio::test]
async fn llama_cpp_python_with_max_concurrent_1_completes_every_variation() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let _timed = Timed("llama_cpp_python_with_max_concurrent_1_completes_every_variation", Instant::now());
    let server = llama_cpp_python().await;
    let gw = gateway(llama_provider(&server, Some(1))).await;
    let (done, others) = three_at_once(&gw).await;
    for (stream, outcome) in &done {
        finished(outcome);
        assert!(!outcome.text.trim().is_empty(), "stream {stream} has no text");
    }
    let queued = others.iter().filter(|f| matches!(f, ServerMessage::Queued { .. })).count();
    assert!(queued > 0, "two of the three should have waited in the gateway: {others:?}");
    // The server prints this when a new request cuts the running answer short.
    assert!(!server.log().contains("Disconnected from client"), "llama-cpp-python cut an answer short");
}

#[tokio::test]
async fn llama_cpp_python_without_a_limit_cuts_variations_short() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let _timed = Timed("llama_cpp_python_without_a_limit_cuts_variations_short", Instant::now());
    let server = llama_cpp_python().await;
    let gw = gateway(llama_provider(&server, None)).await;
    let (done, _) = three_at_once(&gw).await;
    let ends: Vec<(u32, &ServerMessage, &str)> =
        done.iter().map(|(s, o)| (*s, &o.end, o.text.as_str())).collect();
    eprintln!("three at once, no limit: {ends:#?}");
    let cut = done
        .iter()
        .filter(|(_, o)| matches!(o.end, ServerMessage::Error { code: ErrorCode::UpstreamInterrupted, .. }))
        .count();
    // Each request that arrives while one is decoding ends the running one with `[DONE]` and no
    // finish_reason: two of three, as the gateway sent them all at once.
    assert!(cut >= 1, "the quirk `max_concurrent = 1` exists for: an answer should be cut short: {ends:#?}");
    assert!(server.logs("Disconnected from client").await, "llama-cpp-python says it cut one short");
}

#[tokio::test]
async fn llama_cpp_python_refuses_a_prompt_over_its_window() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let _timed = Timed("llama_cpp_python_refuses_a_prompt_over_its_window", Instant::now());
    let server = llama_cpp_python().await;
    let gw = gateway(llama_provider(&server, Some(1))).await;
    let mut client = connect(&gw).await;
    // About 3,000 tokens: over the server's 2,048.
    let long = "word ".repeat(3000);
    let outcome = ask(&mut client, 1, "llama/smol", vec![user(&long)], at_most(8)).await;
    assert_eq!(outcome.text, "", "nothing is generated");
    let (code, message) = error_of(&outcome);
    eprintln!("over the window: {code:?}: {message}");
    let logged = "exceed context window of 2048";
    assert!(server.logs(logged).await, "llama-cpp-python should refuse the prompt:\n{}", server.log_tail());
    let refusal = server.log().lines().find(|l| l.contains(logged)).unwrap_or_default().to_owned();
    // llama-cpp-python 0.3.36 refuses a streamed request only after its 200 and headers: the body
    // then ends empty and its reason ("Requested tokens (3015) exceed context window of 2048") goes
    // to its log alone. Asked without `stream`, it answers 400 "This model's maximum context length
    // is 2048 tokens. However, you requested 3023 tokens…". Either is the server's own words.
    assert_eq!(code, ErrorCode::PromptTooLarge, "{message} (the server logged: {refusal})");
    assert!(
        message.contains(logged) || message.contains("maximum context length is 2048"),
        "the server's own words: {message} (it logged: {refusal})"
    );
}

#[tokio::test]
async fn llama_cpp_python_stops_at_max_tokens_with_length() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let _timed = Timed("llama_cpp_python_stops_at_max_tokens_with_length", Instant::now());
    let server = llama_cpp_python().await;
    let gw = gateway(llama_provider(&server, Some(1))).await;
    let mut client = connect(&gw).await;
    let messages = vec![user("Write a long story about a cat who sails around the world.")];
    let outcome = ask(&mut client, 1, "llama/smol", messages, at_most(8)).await;
    assert_eq!(finished(&outcome), FinishReason::Length, "{:?}", outcome.text);
    assert!(!outcome.text.is_empty());
}

// --- LiteLLM, kind = "responses" ----------------------------------------------------------------------

/// llama-cpp-python, LiteLLM in front of it, and how much LiteLLM had logged once warm.
async fn litellm_stack() -> (Server, Server, usize) {
    let llama = llama_cpp_python().await;
    let proxy = litellm(&llama).await;
    let warm = proxy.log().len();
    (llama, proxy, warm)
}

#[tokio::test]
async fn litellm_responses_over_http_streams_an_answer() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let _timed = Timed("litellm_responses_over_http_streams_an_answer", Instant::now());
    let (_llama, proxy, warm) = litellm_stack().await;
    let gw = gateway(litellm_provider(&proxy, ResponsesTransport::Http, MASTER_KEY)).await;
    let mut client = connect(&gw).await;
    let messages = vec![user("Write one short sentence about the sea.")];
    let outcome = ask(&mut client, 1, "litellm/smol", messages, at_most(32)).await;
    eprintln!("over HTTP: {:?} then {:?}", outcome.text, outcome.end);
    assert_eq!(outcome.started.as_deref(), Some(ALIAS));
    assert!(!outcome.text.trim().is_empty(), "{:?}", outcome.end);
    finished(&outcome);
    let log = &proxy.log()[warm..];
    assert!(log.contains("\"POST /v1/responses HTTP/1.1\" 200"), "one streaming POST:\n{log}");
    assert!(!log.contains("WebSocket /v1/responses"), "no WebSocket with transport = \"http\":\n{log}");
}

#[tokio::test]
async fn litellm_responses_over_websocket_answers_a_thread() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let _timed = Timed("litellm_responses_over_websocket_answers_a_thread", Instant::now());
    let (_llama, proxy, warm) = litellm_stack().await;
    let gw = gateway(litellm_provider(&proxy, ResponsesTransport::Websocket, MASTER_KEY)).await;
    let mut client = connect(&gw).await;
    let mut messages = vec![user("Write one short sentence about the sea.")];
    let first = ask(&mut client, 1, "litellm/smol", messages.clone(), at_most(32)).await;
    eprintln!("first turn over the WebSocket: {:?} then {:?}", first.text, first.end);
    assert!(!first.text.trim().is_empty(), "{:?}", first.end);
    finished(&first);
    let log = proxy.log()[warm..].to_owned();
    assert!(log.contains("\"WebSocket /v1/responses\" [accepted]"), "a WebSocket was opened:\n{log}");
    assert!(!log.contains("POST /v1/responses"), "nothing went over HTTP:\n{log}");

    // The follow-up extends the first turn and its answer: on the same socket it goes as
    // `previous_response_id` plus the new message. LiteLLM honours it by rebuilding the earlier
    // turns for the chat-completions server, the answer as content parts, which llama-cpp-python
    // 0.3.36 refuses for an assistant message (the same follow-up sent whole is answered).
    messages.push(ChatMessage::new(Role::Assistant, first.text));
    messages.push(user("Now one about the sky."));
    let second = ask(&mut client, 2, "litellm/smol", messages, at_most(32)).await;
    eprintln!("follow-up over the WebSocket: {:?} then {:?}", second.text, second.end);
    let log = &proxy.log()[warm..];
    assert_eq!(log.matches("WebSocket /v1/responses").count(), 1, "one socket for the thread:\n{log}");
    assert!(!second.text.trim().is_empty(), "the follow-up answers: {:?}", second.end);
    finished(&second);
}

#[tokio::test]
async fn litellm_with_a_wrong_key_is_refused_without_the_key() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let _timed = Timed("litellm_with_a_wrong_key_is_refused_without_the_key", Instant::now());
    let (_llama, proxy, warm) = litellm_stack().await;
    let wrong = "sk-flint-wrong-key-9876543210";
    let gw = gateway(litellm_provider(&proxy, ResponsesTransport::Websocket, wrong)).await;
    let mut client = connect(&gw).await;
    let outcome = ask(&mut client, 1, "litellm/smol", vec![user("hi")], at_most(16)).await;
    let (code, message) = error_of(&outcome);
    let log = proxy.log()[warm..].to_owned();
    eprintln!("wrong key: {code:?}: {message}\nLiteLLM:\n{log}");
    for frame in &client.raw {
        assert!(
            !frame.contains(wrong) && !frame.contains("9876543210"),
            "the key reached the browser: {frame}"
        );
    }
    // LiteLLM without a database (config only, as here) refuses a key that is not the master key
    // with 403 on the WebSocket handshake and, over HTTP, 400 `no_db_connection` ("No connected
    // db."): it would look the key up among its virtual keys.
    assert_eq!(code, ErrorCode::Unauthorized, "{message}\nLiteLLM logged:\n{log}");
}
