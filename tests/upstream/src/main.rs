//! `flint-scripted-upstream --listen 127.0.0.1:0 --fixtures tests/fixtures --rate 1000 [--setup-delay-ms 40]`
//!
//! Runs the scripted upstream until Ctrl-C. The first line on stdout is `listening http://ADDR/v1`,
//! so a test harness can start it on port 0 and read the address.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use flint_scripted_upstream::{Options, ScriptedUpstream};

const USAGE: &str = "usage: flint-scripted-upstream [--listen ADDR] [--fixtures DIR] [--rate TOKENS_PER_S]
  --listen    address to bind (default 127.0.0.1:0: a free port)
  --fixtures  folder of <name>.md fixtures (default tests/fixtures)
  --rate      default tokens per second (default 1000); a model `name@N` overrides it
  --setup-delay-ms  wait before each /v1/responses request and WebSocket handshake (default 0)";

struct Args {
    listen: SocketAddr,
    fixtures: PathBuf,
    rate: f64,
    setup_delay_ms: u64,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        fixtures: "tests/fixtures".into(),
        rate: 1000.0,
        setup_delay_ms: 0,
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => parsed.listen = value()?.parse().map_err(|e| format!("--listen: {e}"))?,
            "--fixtures" => parsed.fixtures = value()?.into(),
            "--rate" => {
                parsed.rate = value()?.parse().map_err(|e| format!("--rate: {e}"))?;
                if !(parsed.rate.is_finite() && parsed.rate > 0.0) {
                    return Err("--rate must be a positive number".into());
                }
            }
            "--setup-delay-ms" => {
                parsed.setup_delay_ms = value()?.parse().map_err(|e| format!("--setup-delay-ms: {e}"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(parsed)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(problem) => {
            if !problem.is_empty() {
                eprintln!("{problem}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let options = Options::new(args.fixtures)
        .rate(args.rate)
        .setup_delay(std::time::Duration::from_millis(args.setup_delay_ms));
    let upstream = match ScriptedUpstream::bind(args.listen, options).await {
        Ok(upstream) => upstream,
        Err(err) => {
            eprintln!("cannot listen on {}: {err}", args.listen);
            return ExitCode::FAILURE;
        }
    };
    println!("listening {}", upstream.base_url());
    let _ = std::io::stdout().flush();
    if let Err(err) = tokio::signal::ctrl_c().await {
        eprintln!("cannot wait for Ctrl-C: {err}");
    }
    match upstream.stop().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("server failed: {err}");
            ExitCode::FAILURE
        }
    }
}
