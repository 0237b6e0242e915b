//! `cargo xtask bench scale`: the gateway at thousands of sockets and streams, once per allocator.
//!
//! Builds the gateway (release, without the embedded model: the scripted upstream is the provider)
//! with the system allocator, `alloc-mimalloc` and `alloc-jemalloc` (the default build's), keeps
//! each binary under its own name (the builds share one target folder), then runs
//! `gateway/examples/scale` against all three in one run so the allocators are measured side by
//! side. Results in `bench/scale.md`.
//! Extra arguments after `scale` go to the load generator (`--streams 100,1000`, `--settle-secs 10`…).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

use crate::setup::{root, run};

/// The allocators compared: label and the gateway feature that selects it (none: the system's).
const ALLOCATORS: [(&str, Option<&str>); 3] =
    [("system", None), ("mimalloc", Some("alloc-mimalloc")), ("jemalloc", Some("alloc-jemalloc"))];

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}

pub fn scale(extra: &[String]) -> Result<()> {
    let kept = target_dir().join("scale-bench");
    std::fs::create_dir_all(&kept).with_context(|| format!("creating {}", kept.display()))?;
    let mut gateways = Vec::new();
    for (label, feature) in ALLOCATORS {
        let mut build = Command::new("cargo");
        build.args([
            "build",
            "--release",
            "-p",
            "flint-gateway",
            "--no-default-features",
            "--bin",
            "flint-gateway",
        ]);
        if let Some(feature) = feature {
            build.args(["--features", feature]);
        }
        run(&mut build)?;
        let bin = kept.join(format!("flint-gateway-{label}"));
        std::fs::copy(target_dir().join("release").join("flint-gateway"), &bin)
            .with_context(|| format!("keeping the {label} build as {}", bin.display()))?;
        gateways.push(format!("{label}={}", bin.display()));
    }
    let mut bench = Command::new("cargo");
    bench.args([
        "run",
        "--release",
        "-p",
        "flint-gateway",
        "--no-default-features",
        "--example",
        "scale",
        "--",
    ]);
    for gateway in &gateways {
        bench.args(["--gateway", gateway]);
    }
    bench.args(["--out", "bench/scale.md"]).args(extra);
    let shown = std::iter::once("cargo xtask bench scale")
        .chain(extra.iter().map(String::as_str))
        .collect::<Vec<_>>();
    bench.env("FLINT_SCALE_COMMAND", shown.join(" "));
    // 10,000 tabs need 10,000 descriptors in the gateway and as many in the load generator.
    raise_open_files(&mut bench);
    run(&mut bench)
}

/// Runs the bench through `sh -c 'ulimit -n …'`, as far as the hard limit allows, so the raised
/// limit reaches both processes without any unsafe `setrlimit` call here.
fn raise_open_files(cmd: &mut Command) {
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(ToOwned::to_owned).collect();
    let mut wrapped = Command::new("sh");
    wrapped
        .arg("-c")
        .arg(r#"ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@""#)
        .arg("sh")
        .arg(program)
        .args(args);
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            wrapped.env(key, value);
        }
    }
    *cmd = wrapped;
}
