//! Real servers written by others, for the gateway's `tests/real_servers.rs`: llama-cpp-python's
//! OpenAI-compatible server and the LiteLLM proxy (OpenAI's Responses API, over HTTP and its
//! WebSocket mode), both in one Python virtual environment in Flint's cache.
//!
//! The environment is made once and kept: a marker file in it holds the pinned requirements it was
//! installed with, and pip runs again only when they change. llama-cpp-python builds llama.cpp from
//! source (PyPI has no Linux wheel), about 10 minutes on 2 cores; pip keeps the built wheel in its
//! own cache (`~/.cache/pip`), so making the environment again later skips the build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::setup::{apt_install, run, which};

/// What the environment holds, pinned: the versions the tests were written against.
const REQUIREMENTS: &[&str] = &["llama-cpp-python[server]==0.3.36", "litellm[proxy]==1.106.2"];

/// llama.cpp's build, for the CPU it runs on: without the multimodal library (`libmtmd`, loaded
/// only for image models), which the tests never load.
const CMAKE_ARGS: &str = "-DLLAVA_BUILD=OFF";

/// The marker's name inside the environment.
const MARKER: &str = "flint-requirements.txt";

/// The environment's folder: `<cache>/real-servers-venv`.
pub fn venv_dir() -> PathBuf {
    crate::model::cache_dir().join("real-servers-venv")
}

/// Makes sure the environment holds [`REQUIREMENTS`] and returns its Python, for
/// `FLINT_REAL_PYTHON`.
pub fn ensure() -> Result<PathBuf> {
    let venv = venv_dir();
    let python = venv.join("bin/python");
    let want = REQUIREMENTS.join("\n") + "\n";
    if std::fs::read_to_string(venv.join(MARKER)).is_ok_and(|have| have == want) && runs(&python) {
        println!("real servers: {} ({})", venv.display(), REQUIREMENTS.join(", "));
        return Ok(python);
    }
    let started = Instant::now();
    if !runs(&python) {
        create(&venv)?;
    }
    println!(
        "real servers: installing {} into {} (llama-cpp-python builds llama.cpp: about 10 minutes on 2 \
         cores, once)",
        REQUIREMENTS.join(" "),
        venv.display()
    );
    run(Command::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off"])
        .args(REQUIREMENTS)
        .env("CMAKE_ARGS", CMAKE_ARGS))?;
    std::fs::write(venv.join(MARKER), want).context("writing the real servers' marker file")?;
    println!("real servers: ready in {:.0?}", started.elapsed());
    Ok(python)
}

/// A new environment at `venv` (an old, broken one is removed first), made by the system's
/// `python3`; Debian's needs `python3-venv` for that.
fn create(venv: &Path) -> Result<()> {
    let python3 = which("python3").context("python3 is not installed")?;
    // Debian's own Python (not pyenv's, not one built from source) ships `venv` separately.
    if python3.starts_with("/usr/bin") && !debian_package_installed("python3-venv") {
        apt_install(&["python3-venv"])?;
    }
    if venv.exists() {
        std::fs::remove_dir_all(venv).with_context(|| format!("removing the broken {}", venv.display()))?;
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
