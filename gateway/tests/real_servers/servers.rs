//! The real servers these tests start: llama-cpp-python on the embedded model's file, and the
//! LiteLLM proxy in front of it. Each runs from the Python that has them, on a free port, with its
//! output in a log file the tests read.

use std::fs::File;
use std::net::TcpListener;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The environment variable naming the Python that has the servers installed.
const PYTHON_ENV: &str = "FLINT_REAL_PYTHON";
/// The model's name at both servers (`--model_alias`).
pub(super) const ALIAS: &str = "smol";
/// The context window llama-cpp-python gives a model by default (`--n_ctx`).
pub(super) const SERVER_CONTEXT: u32 = 2048;
/// LiteLLM's master key: it refuses to start without one.
pub(super) const MASTER_KEY: &str = "sk-flint-real-servers-master-0123456789";
/// How long a server may take to answer `/v1/models` after it is started.
const READY_WITHIN: Duration = Duration::from_secs(90);

/// Servers of one test at a time.
pub(super) static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The Python to run the servers with: `FLINT_REAL_PYTHON`, else the set-up's environment.
fn python() -> PathBuf {
    let python = std::env::var_os(PYTHON_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| super::model_file::cache_dir().join("real-servers-venv/bin/python"));
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
    let path = super::model_file::default_model_path();
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
pub(super) struct Server {
    name: &'static str,
    child: Child,
    log: PathBuf,
    port: u16,
    /// Scratch folder (LiteLLM's config), removed with the server.
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        // A failing test says what became of its servers: "the connection broke mid-answer" alone
        // hid a server killed by an instruction its CPU does not execute.
        if std::thread::panicking() {
            let state = match self.child.try_wait() {
                Ok(Some(status)) => format!("had died: {}", ended(status)),
                Ok(None) => "was still running".to_owned(),
                Err(e) => format!("could not be asked how it is ({e})"),
            };
            eprintln!("{} {state}; the end of its log:\n{}", self.name, self.log_tail());
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Server {
    /// Starts `python args…` (`{port}` in them replaced by a free port) in a fresh scratch folder
    /// holding `config.yaml` when given, and waits until `/v1/models` answers 200 to `key`.
    pub(super) async fn start(
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

    pub(super) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Everything the server has printed so far.
    pub(super) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether the log says `needle` within a few seconds: a server writes some lines only after
    /// the response they are about has closed.
    pub(super) async fn logs(&self, needle: &str) -> bool {
        for _ in 0..50 {
            if self.log().contains(needle) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }

    pub(super) fn log_tail(&self) -> String {
        // The last 40 lines: enough for a Python traceback or llama.cpp's last words.
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    async fn wait_ready(&mut self, key: Option<&str>) {
        let started = Instant::now();
        let client = reqwest::Client::new();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} {} before it answered:\n{}", self.name, ended(status), self.log_tail());
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

/// How a server process ended, in words: its exit code, or the signal that killed it by name.
pub(super) fn ended(status: ExitStatus) -> String {
    let Some(signal) = status.signal() else {
        return format!("exited with {status}");
    };
    let (name, meaning) = match signal {
        4 => ("SIGILL", ": an instruction this CPU does not execute (was it built for another machine?)"),
        6 => ("SIGABRT", ": it aborted"),
        7 => ("SIGBUS", ""),
        9 => ("SIGKILL", ": killed, perhaps for memory"),
        11 => ("SIGSEGV", ": it crashed"),
        15 => ("SIGTERM", ""),
        _ => ("signal", ""),
    };
    format!("was killed by {name} ({signal}){meaning}")
}

/// llama-cpp-python's server on the embedded model, as FACTS.md runs it.
pub(super) async fn llama_cpp_python() -> Server {
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
pub(super) async fn litellm(upstream: &Server) -> Server {
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
