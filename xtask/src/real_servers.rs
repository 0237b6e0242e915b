//! Real servers written by others, for the gateway's `tests/real_servers.rs`: llama-cpp-python's
//! OpenAI-compatible server and the LiteLLM proxy (OpenAI's Responses API, over HTTP and its
//! WebSocket mode), both in one Python virtual environment in Flint's cache.
//!
//! The environment is made once and kept. A marker file in it holds its whole recipe: the two
//! requirements, llama.cpp's build flags and the checked-in constraints (every package of the tree,
//! pinned). When any of them changes the environment is made again from nothing, since pip keeps an
//! installed package of the same version even when it was built with other flags.
//!
//! llama-cpp-python builds llama.cpp from source (PyPI has no Linux wheel), about 10 minutes on 2
//! cores. llama.cpp's default `GGML_NATIVE=ON` compiles for every instruction set the build machine
//! claims, and a virtual machine may claim some it does not execute (AVX-512 and AMX on a KVM Xeon:
//! the server died with SIGILL on its first answer). So it is built portably, into a wheel folder
//! of our own keyed by version and flags; pip's own wheel cache is keyed by the source archive
//! alone and would hand back a native wheel built earlier.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::setup::{apt_install, root, run, which};

/// What the environment holds: the versions the tests were written against.
const REQUIREMENTS: &[&str] = &["llama-cpp-python[server]==0.3.36", "litellm[proxy]==1.106.2"];

/// The package built from source, and its pinned version.
const LLAMA: (&str, &str) = ("llama-cpp-python", "0.3.36");

/// llama.cpp's build: for any x86-64 with AVX2 rather than for this machine (`GGML_NATIVE=OFF`),
/// without the multimodal library (`libmtmd`, loaded only for image models), which the tests never
/// load.
const CMAKE_ARGS: &str = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF";

/// Every package of the tree at an exact version (and the build backend, for pip's isolated build),
/// from `pip install --dry-run --ignore-installed --report` of [`REQUIREMENTS`].
const CONSTRAINTS: &str = "xtask/real-servers-constraints.txt";

/// The marker's name inside the environment.
const MARKER: &str = "flint-recipe.txt";

/// The environment's folder: `<cache>/real-servers-venv`.
pub fn venv_dir() -> PathBuf {
    crate::model::cache_dir().join("real-servers-venv")
}

/// Makes sure the environment holds [`REQUIREMENTS`], built as [`CMAKE_ARGS`] says, and returns its
/// Python, for `FLINT_REAL_PYTHON`.
pub fn ensure() -> Result<PathBuf> {
    let venv = venv_dir();
    let python = venv.join("bin/python");
    let constraints_path = root().join(CONSTRAINTS);
    let constraints = std::fs::read_to_string(&constraints_path)
        .with_context(|| format!("reading {}", constraints_path.display()))?;
    let recipe = recipe(&constraints);
    if std::fs::read_to_string(venv.join(MARKER)).is_ok_and(|have| have == recipe) && runs(&python) {
        println!("real servers: {} ({}; {CMAKE_ARGS})", venv.display(), REQUIREMENTS.join(", "));
        return Ok(python);
    }
    let started = Instant::now();
    // A fresh environment every time the recipe changes: an old native build must not survive.
    create(&venv)?;
    let wheels = llama_wheel(&python, &constraints_path)?;
    println!("real servers: installing {} into {}", REQUIREMENTS.join(" "), venv.display());
    run(pip(&python, "install")
        .arg("--constraint")
        .arg(&constraints_path)
        .args(["--only-binary", LLAMA.0, "--find-links"])
        .arg(&wheels)
        .args(REQUIREMENTS))?;
    std::fs::write(venv.join(MARKER), recipe).context("writing the real servers' marker file")?;
    println!("real servers: ready in {:.0?}", started.elapsed());
    Ok(python)
}

/// What the environment is made from; a change in any part remakes it.
fn recipe(constraints: &str) -> String {
    format!("{}\nCMAKE_ARGS={CMAKE_ARGS}\n{constraints}", REQUIREMENTS.join("\n"))
}

/// `python -m pip <command>` with the noise turned down.
fn pip(python: &Path, command: &str) -> Command {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pip", command, "--disable-pip-version-check", "--progress-bar", "off"]);
    cmd
}

/// The folder holding llama-cpp-python's wheel built with [`CMAKE_ARGS`]: built once per version
/// and flags (`<cache>/real-servers-wheels/<sha256>`), its build log kept beside it.
fn llama_wheel(python: &Path, constraints: &Path) -> Result<PathBuf> {
    let key = format!("{}=={} CMAKE_ARGS={CMAKE_ARGS}", LLAMA.0, LLAMA.1);
    let digest = Sha256::digest(key.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = crate::model::cache_dir().join("real-servers-wheels").join(hex);
    if has_wheel(&dir) {
        println!("real servers: {key} already built in {}", dir.display());
        return Ok(dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let log_path = dir.join("build.log");
    println!(
        "real servers: building {key} (llama.cpp from source: about 10 minutes on 2 cores, once); log in {}",
        log_path.display()
    );
    let log = std::fs::File::create(&log_path).context("creating the build log")?;
    let started = Instant::now();
    let status = pip(python, "wheel")
        // `-v` puts cmake's output in the log, which says which instruction sets were chosen.
        .args(["-v", "--no-deps", "--no-cache-dir", "--no-binary", LLAMA.0, "--wheel-dir"])
        .arg(&dir)
        .arg(format!("{}=={}", LLAMA.0, LLAMA.1))
        .env("CMAKE_ARGS", CMAKE_ARGS)
        // The isolated build environment's backend (scikit-build-core) is pinned too.
        .env("PIP_CONSTRAINT", constraints)
        .stdout(log.try_clone().context("build log")?)
        .stderr(log)
        .stdin(Stdio::null())
        .status()
        .context("could not start pip to build llama-cpp-python")?;
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    if !status.success() || !has_wheel(&dir) {
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!("building {key} failed ({status}); the end of {}:\n{}", log_path.display(), tail.join("\n"));
    }
    // A native wheel must not stay in the cache to be installed next time.
    check_portable(&text).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&dir);
    })?;
    println!("real servers: built in {:.0?}", started.elapsed());
    Ok(dir)
}

/// Fails when the build log shows llama.cpp compiled for the build machine; prints the lines that
/// say which instruction sets it chose.
fn check_portable(log: &str) -> Result<()> {
    for line in log.lines().filter(|l| l.contains("GGML_NATIVE") || l.contains("CPU backend variant")) {
        println!("real servers: llama.cpp build: {}", line.trim());
    }
    if let Some(line) = log.lines().find(|l| l.contains("-march=native") || l.contains("-mcpu=native")) {
        bail!(
            "llama.cpp was built for this machine's CPU (`{}`), which another machine may not execute: \
             CMAKE_ARGS ({CMAKE_ARGS}) did not reach its build",
            line.trim()
        );
    }
    Ok(())
}

fn has_wheel(dir: &Path) -> bool {
    std::fs::read_dir(dir).into_iter().flatten().flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name.starts_with("llama_cpp_python-") && name.ends_with(".whl")
    })
}

/// A new environment at `venv` (an old one is removed first), made by the system's `python3`;
/// Debian's needs `python3-venv` for that.
fn create(venv: &Path) -> Result<()> {
    let python3 = which("python3").context("python3 is not installed")?;
    // Debian's own Python (not pyenv's, not one built from source) ships `venv` separately.
    if python3.starts_with("/usr/bin") && !debian_package_installed("python3-venv") {
        apt_install(&["python3-venv"])?;
    }
    if venv.exists() {
        std::fs::remove_dir_all(venv).with_context(|| format!("removing the old {}", venv.display()))?;
    }
    println!("real servers: creating {}", venv.display());
    run(Command::new(python3).args(["-m", "venv"]).arg(venv))
}

/// Whether `python` exists and starts (a venv outlives the interpreter it was made from).
fn runs(python: &Path) -> bool {
    python.is_file() && Command::new(python).args(["-c", ""]).status().is_ok_and(|s| s.success())
}

fn debian_package_installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("install ok installed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_native_build_log_is_refused() {
        let native = "-- Adding CPU backend variant ggml-cpu: -march=native \n";
        assert!(check_portable(native).is_err());
        let portable =
            "-- Adding CPU backend variant ggml-cpu: -msse4.2;-mf16c;-mfma;-mavx;-mavx2 GGML_AVX2\n";
        assert!(check_portable(portable).is_ok());
    }

    #[test]
    fn the_recipe_changes_with_flags_and_constraints() {
        let a = recipe("x==1\n");
        assert_ne!(a, recipe("x==2\n"));
        assert!(a.contains("GGML_NATIVE=OFF"));
    }
}
