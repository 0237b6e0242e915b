//! `cargo xtask bench browser [--baseline REV]`: the browser benchmark alone, and with `--baseline`
//! the same rows measured against a build of an earlier revision in the same run ("before" and
//! "after" interleaved on one noisy machine, which is the only comparison these machines allow).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::setup::{root, run_in};

/// Where a revision's checkout and build live: `target/bench-baseline/<short hash>/` holds `src/`
/// (a git worktree), `flint-gateway` and `dist/`, the layout `FLINT_BENCH_BASELINE` expects.
fn baseline_dir(hash: &str) -> PathBuf {
    root().join("target/bench-baseline").join(hash)
}

/// The `--baseline` argument, if any; an error when it is given without a revision.
pub fn baseline_arg(args: &[String]) -> Result<Option<String>> {
    let Some(i) = args.iter().position(|a| a == "--baseline") else { return Ok(None) };
    match args.get(i + 1) {
        Some(rev) if !rev.starts_with('-') => Ok(Some(rev.clone())),
        _ => bail!(
            "--baseline needs a git revision to compare with, e.g. `--baseline HEAD~3` or a commit hash"
        ),
    }
}

/// The commit `rev` names, shortened (so `HEAD~1` and its hash share one build).
pub fn short_hash(rev: &str) -> Result<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short=7", "--verify", &format!("{rev}^{{commit}}")])
        .current_dir(root())
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        bail!("`{rev}` is not a commit in this repository ({})", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Which builder made a baseline's `dist/` (`built-by` beside it).
const BUILDER: &str = "xtask app_build";

/// Builds the gateway and the app of revision `rev` (once: a finished build is reused) and returns
/// the directory to pass as `FLINT_BENCH_BASELINE`.
pub fn baseline(rev: &str) -> Result<PathBuf> {
    let hash = short_hash(rev)?;
    let dir = baseline_dir(&hash);
    let (gateway, dist, marker) = (dir.join("flint-gateway"), dir.join("dist"), dir.join("built-by"));
    // A baseline built by Trunk (before `cargo xtask` built the app) is built again, so that both
    // sides of a comparison come from the same builder.
    let same_builder = std::fs::read_to_string(&marker).is_ok_and(|by| by == BUILDER);
    if gateway.is_file() && dist.join("index.html").is_file() && same_builder {
        println!("xtask: reusing the build of {hash} in {}", dir.display());
        return Ok(dir);
    }
    let src = dir.join("src");
    if !src.join("Cargo.toml").is_file() {
        std::fs::create_dir_all(&dir)?;
        run_in(&root(), Command::new("git").args(["worktree", "add", "--detach"]).arg(&src).arg(&hash))?;
    }
    // The build copies Monaco and idiomorph out of node_modules: the revision's own, from its lockfile.
    // (Not a link to this checkout's: `npm ci` there would empty this one's through it.)
    if !src.join("node_modules/.package-lock.json").is_file() {
        run_in(&src, Command::new("npm").args(["ci", "--no-audit", "--no-fund"]))?;
    }
    // A target folder of its own. Shared with this checkout's, cargo names both checkouts' crates
    // alike (it hashes their paths relative to the workspace) and takes one's build for the other's:
    // both "builds" would then be the same app. The first build is therefore a cold one (long).
    let target = dir.join("target");
    // Without the embedded model (`local`): the benchmark streams from the scripted upstream only,
    // and llama.cpp is most of a cold build.
    run_in(
        &src,
        Command::new("cargo")
            .args(["build", "--release", "-p", "flint-gateway", "--no-default-features"])
            .env("CARGO_TARGET_DIR", &target),
    )?;
    std::fs::copy(target.join("release/flint-gateway"), &gateway)
        .with_context(|| format!("cannot copy the gateway of {hash} to {}", gateway.display()))?;
    crate::app_build::build(&src.join("index.html"), &dist, &target, |_| Ok(()))?;
    std::fs::write(&marker, BUILDER)?;
    Ok(dir)
}

/// Builds this checkout's app keeping the wasm name sections (`data-keep-debug`, wasm-opt `-g`) into
/// `target/bench-relay/dist`, so that a CPU profile names the app's functions: what
/// `tests/bench/relay.mjs` charges to stages. Returns that `dist`.
pub fn named_build() -> Result<PathBuf> {
    let dist = root().join("target/bench-relay/dist");
    let index = std::fs::read_to_string(root().join("index.html")).context("cannot read index.html")?;
    let keep = |attr: &str| format!("{attr} data-keep-debug data-wasm-opt-params=\"-g\"");
    let named = index
        .replace(r#"data-wasm-opt="s""#, &keep(r#"data-wasm-opt="s""#))
        .replace(r#"data-wasm-opt="3""#, &keep(r#"data-wasm-opt="3""#));
    if named.matches("data-keep-debug").count() != 2 {
        bail!("index.html no longer names the app's and the worker's wasm-opt levels as this build expects");
    }
    // Beside index.html: the page's links resolve from the page's own folder.
    let page = root().join(".bench-profile.html");
    std::fs::write(&page, named)?;
    let built = crate::app_build::build(&page, &dist, &crate::setup::target_dir(), |_| Ok(()));
    std::fs::remove_file(&page)?;
    built.map(|()| dist)
}
