//! `flint-gateway [--config PATH] [--listen ADDR] [--dist DIR] [--allow-origin ORIGIN]…`, or
//! `flint-gateway token create NAME | list | revoke NAME` for access tokens ([`auth::cli`]).
//!
//! Re-starts itself once with glibc's per-thread caches off ([`allocator::restart_tuned`]), reads the
//! configuration, builds the providers and serves until Ctrl-C (or SIGTERM).
//! Logging follows `RUST_LOG` (default `info`), libraries that print frames held at `info` ([`logging`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use flint_gateway::config::Config;
use flint_gateway::{AppState, allocator, app, auth, logging, metrics_app, serve};
use tokio_util::sync::CancellationToken;

// The system's allocator by default, trimmed after loads (`allocator::trim_after_loads`); jemalloc or
// mimalloc when built for them (`bench/scale.md`, `bench/scale-issue13.md` compare them).
#[cfg(all(feature = "alloc-mimalloc", feature = "alloc-jemalloc"))]
compile_error!("choose one allocator: alloc-mimalloc or alloc-jemalloc, not both");
#[cfg(feature = "alloc-mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(feature = "alloc-jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const USAGE: &str =
    "usage: flint-gateway [--config PATH] [--listen ADDR] [--dist DIR] [--allow-origin ORIGIN]...
  --config        flint.toml to read (default: ./flint.toml when it exists)
  --listen        address to serve on (default: server.listen, 127.0.0.1:8787)
  --dist          the built app to serve at / (default: server.dist, ./dist)
  --allow-origin  also accept pages of this origin (added to server.allowed_origins), e.g.
                  http://127.0.0.1:8080 for `trunk serve`
Without a file, FLINT_OPENAI_BASE_URL, FLINT_OPENAI_MODELS and FLINT_OPENAI_API_KEY configure one
OpenAI-compatible provider. Logging: RUST_LOG (default info).
Access tokens (auth.mode = \"tokens\"): flint-gateway token create NAME | list | revoke NAME";

/// The longest the process waits, once its sockets are closed, for the store to count the tokens
/// of its last streams.
const SETTLE_PATIENCE: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Args {
    config: Option<PathBuf>,
    listen: Option<SocketAddr>,
    dist: Option<PathBuf>,
    allow_origins: Vec<String>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args::default();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--config" => parsed.config = Some(value()?.into()),
            "--listen" => parsed.listen = Some(value()?.parse().map_err(|e| format!("--listen: {e}"))?),
            "--dist" => parsed.dist = Some(value()?.into()),
            "--allow-origin" => parsed.allow_origins.push(value()?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(parsed)
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("token") {
        return auth::cli::run(&std::env::args().skip(2).collect::<Vec<_>>());
    }
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(problem) => {
            if !problem.is_empty() {
                eprintln!("{problem}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Before any thread is made: when it succeeds the process is replaced and this never returns.
    // Under jemalloc or mimalloc glibc holds only what the C libraries allocate.
    #[cfg(not(any(feature = "alloc-mimalloc", feature = "alloc-jemalloc")))]
    let not_tuned = allocator::restart_tuned();
    #[cfg(any(feature = "alloc-mimalloc", feature = "alloc-jemalloc"))]
    let not_tuned = None;
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(run(args, not_tuned)),
        Err(err) => {
            eprintln!("cannot start the async runtime: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args, not_tuned: Option<std::io::Error>) -> ExitCode {
    logging::init();
    if let Some(err) = not_tuned {
        tracing::warn!(
            "cannot re-start with glibc's per-thread caches off ({err}): after a burst of streams \
             about 4 MB more stays resident (DEPLOY.md, Memory)"
        );
    }
    match serve::open_files::raise() {
        Ok(limit) => {
            if limit.now > limit.before {
                tracing::info!(from = limit.before, to = limit.now, "raised the open-files limit");
            }
            if let Some(warning) = limit.warning() {
                tracing::warn!("{warning}");
            }
        }
        Err(err) => tracing::warn!("cannot read or raise the open-files limit: {err}"),
    }
    let env = |name: &str| std::env::var(name).ok();
    let configured = Config::discover(args.config.as_deref()).map(|mut config| {
        config.server.allowed_origins.extend(args.allow_origins);
        config
    });
    let mut config = match configured.and_then(|c| c.complete(&env)) {
        Ok(config) => config,
        Err(err) => {
            tracing::error!("{err}");
            return ExitCode::FAILURE;
        }
    };
    config.server.listen = args.listen.unwrap_or(config.server.listen);
    config.server.dist = args.dist.unwrap_or(config.server.dist);
    // After `--listen`: the address actually served decides whether anyone must sign in.
    if let Err(err) = config.auth.check(config.server.listen) {
        tracing::error!("{err}");
        return ExitCode::FAILURE;
    }
    let state = AppState::from_config(&config, &env);
    // Migrations run now, so a store that is down or refuses them is in the log before the first
    // request; the gateway still starts (the app and relaying need no store) and asks again on use.
    match state.store().ready().await {
        Ok(()) => tracing::info!("store: {}", state.store().describe()),
        Err(err) => {
            tracing::error!("store: {} is not ready, retried on each use: {err}", state.store().describe())
        }
    }
    // In the background: the gateway serves at once, and found servers join the list when they answer.
    state.discovery().scan_in_background();
    let models = state.model_list();
    for model in &models.models {
        match &model.problem {
            None => tracing::info!(model = %model.id, "model available"),
            Some(problem) => tracing::warn!(model = %model.id, %problem, "model unavailable"),
        }
    }
    for warning in models.profiles.iter().flat_map(|p| &p.warnings) {
        tracing::warn!("{warning}");
    }
    if let Some(notice) = &models.notice {
        tracing::warn!("{notice}");
    }
    match state.vendor().start_report(&config.preview.packages) {
        Ok(line) => tracing::info!("{line}"),
        Err(warnings) => warnings.iter().for_each(|warning| tracing::warn!("{warning}")),
    }
    let listener = match tokio::net::TcpListener::bind(config.server.listen).await {
        Ok(listener) => listener,
        Err(err) => {
            tracing::error!("cannot listen on {}: {err}", config.server.listen);
            return ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().unwrap_or(config.server.listen);
    tracing::info!("Flint is serving on http://{addr}/ (app from {})", config.server.dist.display());
    if !addr.ip().is_loopback() && config.server.hosts.is_empty() {
        tracing::warn!(
            "listening on {addr} with no server.hosts: a site whose name resolves to this machine (DNS rebinding) \
             can reach this gateway; list the names it is served under in server.hosts"
        );
    }
    let shutdown = state.shutdown().clone();
    let stop_accepting = CancellationToken::new();
    tokio::spawn(allocator::trim_after_loads(state.metrics().clone(), shutdown.clone()));
    let drain =
        tokio::spawn(drain_on_signal(state.clone(), stop_accepting.clone(), config.server.drain_secs));
    let limits = serve::ConnectionLimits {
        header_read_timeout: Duration::from_millis(config.server.header_read_timeout_ms.max(1)),
        max_per_address: config.server.max_connections_per_address,
        exempt: config.auth.trusted_proxies.clone(),
    };
    if let Some(metrics_listen) = config.metrics.listen {
        let listener = match tokio::net::TcpListener::bind(metrics_listen).await {
            Ok(listener) => listener,
            Err(err) => {
                tracing::error!("cannot listen on metrics.listen {metrics_listen}: {err}");
                return ExitCode::FAILURE;
            }
        };
        let addr = listener.local_addr().unwrap_or(metrics_listen);
        tracing::info!("metrics are served on http://{addr}/metrics only");
        tokio::spawn(serve::serve(listener, metrics_app(state.clone()), limits.clone(), shutdown.clone()));
    }
    if let Some(peer_listen) = config.server.peer_listen {
        let listener = match tokio::net::TcpListener::bind(peer_listen).await {
            Ok(listener) => listener,
            Err(err) => {
                tracing::error!("cannot listen on server.peer_listen {peer_listen}: {err}");
                return ExitCode::FAILURE;
            }
        };
        tracing::info!("other gateways relay resumed tabs to {peer_listen}");
        // Not closed by the drain: tabs relayed here finish their answers.
        let peer_limits = serve::ConnectionLimits::from(limits.header_read_timeout);
        tokio::spawn(serve::serve(
            listener,
            flint_gateway::peer_app(state.clone()),
            peer_limits,
            shutdown.clone(),
        ));
    }
    match serve::serve_draining(listener, app(state.clone()), limits, stop_accepting, shutdown).await {
        Ok(()) => {
            // HTTP connections are done, but upgraded sockets live in their own tasks: wait for the
            // drain to end, then give the sockets a moment to send their close frames.
            let _ = drain.await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            // Every stream ended with its socket: what each generated is charged to the day's
            // quota (in the shared store, for the other gateways) before the process is gone.
            if !state.people().settled(SETTLE_PATIENCE).await {
                tracing::error!(
                    "the store did not answer within {} s; the last streams' tokens may be uncounted",
                    SETTLE_PATIENCE.as_secs()
                );
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            tracing::error!("server failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// On the first stop signal: stop accepting connections and let running streams finish for up to
/// `drain_secs`; then (or on a second signal) close every socket. A rolling restart behind a load
/// balancer so loses no answer that finishes within the drain.
async fn drain_on_signal(state: AppState, stop_accepting: CancellationToken, drain_secs: u64) {
    stop_signal().await;
    let running = state.metrics().streams_running();
    tracing::info!(running, drain_secs, "draining: no new connections; running streams may finish");
    stop_accepting.cancel();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(drain_secs);
    let drained = async {
        while state.metrics().streams_running() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::select! {
        () = drained => {}
        () = stop_signal() => tracing::info!("second stop signal: closing now"),
    }
    let left = state.metrics().streams_running();
    tracing::info!(left, "shutting down: closing every socket (pages reconnect elsewhere)");
    state.shutdown().cancel();
}

/// Ctrl-C, or SIGTERM on Unix (how `cargo xtask` and service managers stop it).
async fn stop_signal() {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot wait for Ctrl-C: {err}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
