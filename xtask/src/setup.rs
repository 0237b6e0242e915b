//! Installs what Flint needs on a fresh machine, and only what is missing.
//!
//! Versions are pinned here or by the lockfiles: wasm-bindgen-cli at exactly the `wasm-bindgen`
//! version in Cargo.lock, npm packages from package-lock.json (binaryen 132 provides a wasm-opt
//! whose output works in Chromium; Debian's 108 does not), Debian's chromium and chromium-driver,
//! Debian's postgresql (for the gateway's store tests), the embedded model checked by sha256, and the
//! modules previews import ([`preview_packages`], from `preview-packages/package-lock.json`). Trunk
//! 0.21.14 (0.22 needs a newer rustc) only on request, for `trunk serve`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

pub mod preview_packages;

/// Trunk's version: 0.22 needs rustc ≥ 1.96.1.
const TRUNK_VERSION: &str = "0.21.14";

/// What a command needs installed.
#[derive(Debug, Clone, Copy)]
pub struct Needs {
    /// Chromium and chromedriver, for browser tests and benchmarks.
    pub browser: bool,
    /// The embedded model and the C/C++ tools that build llama.cpp.
    pub local_model: bool,
}

impl Needs {
    /// Everything: what `cargo xtask test` needs.
    pub fn everything() -> Self {
        Self { browser: true, local_model: true }
    }
}

/// The repository root. `cargo run` sets `CARGO_MANIFEST_DIR` for the running binary, which names the
/// checkout it was started from; the compiled-in path is only a fallback, because cargo reuses one
/// binary across checkouts that share a target folder.
pub fn root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir.parent().expect("xtask lives in the workspace").into()
}

/// Cargo's target folder: `CARGO_TARGET_DIR`, or `target/` in the repository. Made absolute: the
/// builds run cargo in other folders (a benchmark's baseline checkout) than the one xtask started in.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_relative() => std::env::current_dir().map_or(dir.clone(), |cwd| cwd.join(dir)),
        Some(dir) => dir,
        None => root().join("target"),
    }
}

/// Installs what is missing and returns the embedded model's path when it was asked for.
pub fn all(needs: Needs) -> Result<()> {
    ensure(needs).map(|_| ())
}

/// Installs what is missing; returns the model path when `needs.local_model`.
pub fn ensure(needs: Needs) -> Result<Option<PathBuf>> {
    ensure_alongside(needs, || Ok(()))
}

/// [`ensure`], running `alongside` once Debian's packages are in, beside the tools' builds and the
/// downloads: work for the processor (the gateway's build) while the downloads wait on the network.
pub fn ensure_alongside(needs: Needs, alongside: impl FnOnce() -> Result<()>) -> Result<Option<PathBuf>> {
    let mut apt = Vec::new();
    if needs.browser {
        if !Path::new("/usr/bin/chromium").exists() {
            apt.push("chromium");
        }
        if !Path::new("/usr/bin/chromedriver").exists() {
            apt.push("chromium-driver");
        }
    }
    if needs.local_model {
        for (binary, package) in [("cmake", "cmake"), ("clang", "clang")] {
            if which(binary).is_none() {
                apt.push(package);
            }
        }
        if !has_libclang() {
            apt.push("libclang-dev");
        }
    }
    // Everything is what `cargo xtask test` needs, and its gateway tests start a throwaway
    // PostgreSQL (`gateway/tests/pg`) with the server's own initdb and pg_ctl.
    if needs.browser && needs.local_model && !has_postgres() {
        apt.push("postgresql");
    }
    // And `unzip` for the Vite export's check (`vite_export.rs`).
    if needs.browser && needs.local_model && which("unzip").is_none() {
        apt.push("unzip");
    }
    apt_install(&apt)?;
    // The downloads (npm packages, the model) wait on the network and the disk, the tool builds on
    // the CPU: on a fresh machine they overlap instead of taking turns.
    std::thread::scope(|scope| {
        // A failure on a side thread is said when it happens, not only after the long build.
        let downloads = scope.spawn(move || {
            let fetched = npm_packages().and_then(|()| preview_packages::ensure()).and_then(|_| {
                needs.local_model.then(|| crate::model::ensure_model(&crate::model::cache_dir())).transpose()
            });
            fetched.inspect_err(say_now)
        });
        // The tools' builds beside `alongside`'s: each fills the other's idle core (a build script
        // configuring, a crate that compiles alone, a link). The app's build needs only
        // `flint-bindgen`; the tests also run wasm-bindgen-cli's test runner.
        let tools = scope.spawn(move || {
            wasm_target()
                .and_then(|()| bindgen_tool().map(drop))
                .and_then(|()| if needs.browser { wasm_bindgen() } else { Ok(()) })
                .inspect_err(say_now)
        });
        let built = alongside();
        let tools = tools.join().unwrap_or_else(|_| bail!("the tools thread panicked"));
        let model = downloads.join().unwrap_or_else(|_| bail!("the download thread panicked"));
        built.and(tools).and(model)
    })
}

fn say_now(err: &anyhow::Error) {
    eprintln!("setup: {err:#} (the build beside it goes on; this is reported again when it ends)");
}

/// `PATH` with the project's tools first: npm's binaries (wasm-opt 132) and cargo's.
pub fn tool_path() -> OsString {
    let mut dirs = vec![root().join("node_modules/.bin")];
    if let Some(home) = std::env::var_os("CARGO_HOME")
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo").into_os_string()))
    {
        dirs.push(PathBuf::from(home).join("bin"));
    }
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).expect("PATH entries contain no separator")
}

/// Runs a command in the repository root with the project's tools on `PATH`, echoing it first.
pub fn run(cmd: &mut Command) -> Result<()> {
    run_in(&root(), cmd)
}

/// Runs `cmd` in `dir` with the project's tools on `PATH`; fails with what was run.
pub fn run_in(dir: &Path, cmd: &mut Command) -> Result<()> {
    cmd.current_dir(dir).env("PATH", tool_path());
    let shown = describe(cmd);
    println!("$ (in {}) {shown}", dir.display());
    let status = cmd.status().with_context(|| format!("could not start `{shown}`"))?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    Ok(())
}

/// Runs a command and returns its stdout, or `None` when it cannot run or fails.
pub fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).env("PATH", tool_path()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn describe(cmd: &Command) -> String {
    let mut text = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}

/// The first `binary` on the project's `PATH`.
pub fn which(binary: &str) -> Option<PathBuf> {
    std::env::split_paths(&tool_path()).map(|dir| dir.join(binary)).find(|p| p.is_file())
}

/// PostgreSQL's server binaries: on `PATH`, or where Debian puts them (`/usr/lib/postgresql/N/bin`,
/// not on `PATH`; the tests look there too).
fn has_postgres() -> bool {
    which("initdb").is_some()
        || std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .any(|version| version.path().join("bin/initdb").is_file())
}

fn has_libclang() -> bool {
    let Ok(entries) = std::fs::read_dir("/usr/lib") else { return false };
    entries.flatten().any(|e| {
        e.file_name().to_string_lossy().starts_with("llvm-") && e.path().join("lib/libclang.so").exists()
    })
}

/// Installs Debian packages with apt-get (through sudo when not root).
pub fn apt_install(packages: &[&str]) -> Result<()> {
    if packages.is_empty() {
        return Ok(());
    }
    println!("setup: installing Debian packages {}", packages.join(" "));
    let root_user = output("id", &["-u"]).as_deref() == Some("0");
    let apt = |args: &[&str]| {
        let mut cmd = if root_user { Command::new("apt-get") } else { Command::new("sudo") };
        if !root_user {
            cmd.arg("apt-get");
        }
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    run(&mut apt(&["update", "-qq"]))?;
    run(apt(&["install", "-y", "-qq", "--no-install-recommends"]).args(packages))
}

fn wasm_target() -> Result<()> {
    let installed = output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if installed.lines().any(|l| l.trim() == "wasm32-unknown-unknown") {
        return Ok(());
    }
    println!("setup: adding the wasm32-unknown-unknown target");
    run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))
}

/// Trunk, for `trunk serve` (`cargo xtask setup trunk`). `cargo xtask` builds the app itself
/// ([`crate::app_build`]), so neither `serve` nor `test` waits for Trunk's install.
pub fn trunk() -> Result<()> {
    wasm_target()?;
    wasm_bindgen()?;
    npm_packages()?;
    let have = output("trunk", &["--version"]).unwrap_or_default();
    if have.split_whitespace().nth(1) == Some(TRUNK_VERSION) {
        println!("setup: Trunk {TRUNK_VERSION} is installed");
        return Ok(());
    }
    println!(
        "setup: installing Trunk {TRUNK_VERSION} for `trunk serve` (unoptimised: a few minutes on 2 cores, once)"
    );
    // Trunk's own speed hardly matters (it waits on cargo, wasm-bindgen and wasm-opt), and its
    // release profile (fat LTO, one codegen unit) took 11 of a fresh machine's 32 minutes.
    run(quick_build(Command::new("cargo").args([
        "install",
        "--locked",
        "--debug",
        &format!("trunk@{TRUNK_VERSION}"),
    ])))
}

/// A tool build that keeps compile time down: no debug info in the dev profile, and in release
/// neither LTO nor a single codegen unit (environment settings win over the crate's own profile).
fn quick_build(cmd: &mut Command) -> &mut Command {
    cmd.env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_LTO", "off")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
}

/// The `wasm-bindgen` version that Cargo.lock resolved; the CLI must match it exactly.
pub fn locked_wasm_bindgen() -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).context("reading Cargo.lock")?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"wasm-bindgen\""
            && let Some(version) = lines.next().and_then(|v| v.strip_prefix("version = \""))
        {
            return Ok(version.trim_end_matches('"').to_owned());
        }
    }
    bail!("Cargo.lock has no wasm-bindgen entry")
}

/// `xtask/bindgen`, built if it is not (cargo's own check, a fraction of a second when it is), and
/// the path of its binary: wasm-bindgen's library without the CLI's test runner and servers.
pub fn bindgen_tool() -> Result<PathBuf> {
    let target = target_dir().join("bindgen");
    let manifest = root().join("xtask/bindgen/Cargo.toml");
    let mut cargo = Command::new("cargo");
    cargo.args(["build", "--release", "--locked", "--quiet", "--manifest-path"]).arg(&manifest);
    cargo.arg("--target-dir").arg(&target);
    // Its own target folder: the workspace's is locked by the gateway's build beside it.
    run(&mut cargo).context("building xtask/bindgen (wasm-bindgen for the app)")?;
    Ok(target.join("release").join(format!("flint-bindgen{}", std::env::consts::EXE_SUFFIX)))
}

/// wasm-bindgen-cli, for its test runner (`cargo xtask test` runs the worker's tests in Chromium).
fn wasm_bindgen() -> Result<()> {
    let want = locked_wasm_bindgen()?;
    let have = output("wasm-bindgen", &["--version"]).unwrap_or_default();
    if have.split_whitespace().nth(1) == Some(want.as_str()) {
        return Ok(());
    }
    // Not --locked: one of its locked dependencies is missing from the registry.
    println!("setup: installing wasm-bindgen-cli {want} to match Cargo.lock (a few minutes, once)");
    // Release (it runs every test build's wasm) but without LTO.
    run(quick_build(Command::new("cargo").args(["install", "--force", &format!("wasm-bindgen-cli@{want}")])))
}

fn npm_packages() -> Result<()> {
    let root = root();
    let installed = root.join("node_modules/.package-lock.json");
    let fresh = match (std::fs::metadata(&installed), std::fs::metadata(root.join("package-lock.json"))) {
        (Ok(have), Ok(want)) => have.modified()? >= want.modified()?,
        _ => false,
    };
    if fresh {
        return Ok(());
    }
    println!(
        "setup: installing npm packages from package-lock.json (monaco-editor, idiomorph, binaryen, playwright-core)"
    );
    run(Command::new("npm").args(["ci", "--no-audit", "--no-fund"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `xtask/bindgen` must bind with the wasm-bindgen the app links: the generated glue and the
    /// wasm's schema must agree, and a mismatch fails only when the app is built.
    #[test]
    fn bindgen_tool_matches_the_locked_wasm_bindgen() {
        let manifest = std::fs::read_to_string(root().join("xtask/bindgen/Cargo.toml")).unwrap();
        let table: toml::Table = toml::from_str(&manifest).unwrap();
        let pinned = table["dependencies"]["wasm-bindgen-cli-support"].as_str().unwrap();
        assert_eq!(pinned, format!("={}", locked_wasm_bindgen().unwrap()));
    }
}
