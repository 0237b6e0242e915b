//! `cargo xtask bench scale [--baseline REV]`: the gateway at thousands of sockets and streams.
//!
//! Without `--baseline`: builds the gateway (release, without the embedded model: the scripted
//! upstream is the provider) with the system allocator (the default build's, trimmed after loads),
//! `alloc-mimalloc` and `alloc-jemalloc`, keeps each binary under its own name (the builds share
//! one target folder), then runs `gateway/examples/scale` against all three in one run so the
//! allocators are measured side by side.
//!
//! With `--baseline REV`: this checkout and REV (checked out under
//! `target/bench-baseline/<hash>/src`), each with its allocator as shipped, every stream point run by
//! both, each pair one after the other. Results in `bench/scale.md`.
//! Other arguments after `scale` go to the load generator (`--streams 100,1000`, `--settle-secs 10`…).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::setup::{root, run, run_in, target_dir};

/// The allocators compared: label and the gateway feature that selects it (none: the system's).
const ALLOCATORS: [(&str, Option<&str>); 3] =
    [("system", None), ("mimalloc", Some("alloc-mimalloc")), ("jemalloc", Some("alloc-jemalloc"))];

/// Builds the gateway of the checkout in `dir` (release, no embedded model, `feature` if any) and
/// keeps the binary as `kept/flint-gateway-<label>`.
fn build(dir: &Path, label: &str, feature: Option<&str>, kept: &Path) -> Result<String> {
    // With a shared CARGO_TARGET_DIR, both checkouts' crates have the same names and relative
    // paths, so cargo would take one's build for the other's: the workspace crates are cleaned
    // first, the dependencies stay built.
    run_in(
        dir,
        Command::new("cargo").args(["clean", "--release", "-p", "flint-gateway", "-p", "flint-protocol"]),
    )?;
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
    run_in(dir, &mut build)?;
    // Where that build went: the shared target folder when one is set, else the checkout's own
    // (a baseline under `target/bench-baseline/` builds into its own `target/`; taking this
    // checkout's binary for it once compared this build with itself).
    let built =
        if std::env::var_os("CARGO_TARGET_DIR").is_some() { target_dir() } else { dir.join("target") };
    let bin = kept.join(format!("flint-gateway-{label}"));
    std::fs::copy(built.join("release").join("flint-gateway"), &bin)
        .with_context(|| format!("keeping the {label} build as {}", bin.display()))?;
    Ok(format!("{label}={}", bin.display()))
}

/// The allocator feature the checkout at `dir` builds by default (`alloc-…` in the gateway's
/// `default` features), if any: before 2026-12-02 it was jemalloc.
fn shipped_allocator(dir: &Path) -> Result<Option<String>> {
    let manifest = dir.join("gateway/Cargo.toml");
    let text =
        std::fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
    let table: toml::Table =
        toml::from_str(&text).with_context(|| format!("parsing {}", manifest.display()))?;
    let defaults = table.get("features").and_then(|f| f.get("default")).and_then(|d| d.as_array());
    Ok(defaults
        .into_iter()
        .flatten()
        .filter_map(|feature| feature.as_str())
        .find(|feature| feature.starts_with("alloc-"))
        .map(str::to_owned))
}

/// REV checked out (once) under `target/bench-baseline/<hash>/src`.
fn checkout(rev: &str) -> Result<(String, PathBuf)> {
    let hash = crate::bench_browser::short_hash(rev)?;
    let src = root().join("target/bench-baseline").join(&hash).join("src");
    if !src.join("Cargo.toml").is_file() {
        std::fs::create_dir_all(src.parent().unwrap_or(&src))?;
        run(Command::new("git").args(["worktree", "add", "--detach"]).arg(&src).arg(&hash))?;
    }
    Ok((hash, src))
}

pub fn scale(args: &[String]) -> Result<()> {
    let kept = target_dir().join("scale-bench");
    std::fs::create_dir_all(&kept).with_context(|| format!("creating {}", kept.display()))?;
    let baseline = crate::bench_browser::baseline_arg(args)?;
    let mut extra: Vec<String> = args.to_vec();
    if let Some(i) = extra.iter().position(|a| a == "--baseline") {
        extra.drain(i..i + 2);
    }
    let mut gateways = Vec::new();
    match &baseline {
        Some(rev) => {
            let (hash, src) = checkout(rev)?;
            // `run` runs in this checkout; the baseline is built from its own.
            gateways.push(build(&root(), "this", shipped_allocator(&root())?.as_deref(), &kept)?);
            let base_allocator = shipped_allocator(&src)?;
            gateways.push(build(&src, &format!("base-{hash}"), base_allocator.as_deref(), &kept)?);
            // Every stream point for both builds, unless the arguments say otherwise.
            if !extra.iter().any(|a| a == "--compare") {
                let points = extra
                    .iter()
                    .position(|a| a == "--streams")
                    .and_then(|i| extra.get(i + 1).cloned())
                    .unwrap_or_else(|| "100,1000,2000".into());
                extra.extend(["--compare".into(), points]);
            }
        }
        None => {
            for (label, feature) in ALLOCATORS {
                gateways.push(build(&root(), label, feature, &kept)?);
            }
        }
    }
    let extra = &extra;
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
    let shown =
        std::iter::once("cargo xtask bench scale").chain(args.iter().map(String::as_str)).collect::<Vec<_>>();
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
