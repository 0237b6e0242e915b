//! `cargo xtask test`'s check that a React answer's Vite export builds: the fixture's export, made
//! by the app's own code (`app/examples/vite_export.rs`), unzipped, installed from the npm registry
//! and built with `vite build`. The only step of the tests that needs the registry: what Flint
//! pins (vite, the React plugin, Tailwind) must install and build together.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Result, bail};

use crate::setup::{self, root, run, run_in};

const FIXTURE: &str = "tests/fixtures/react-files.md";
const PROMPT: &str = "a React todo app";

/// Exports the fixture as a Vite project under `target/vite-export/` and builds it.
pub fn check() -> Result<()> {
    let started = Instant::now();
    let dir = root().join("target/vite-export");
    let project = dir.join("project");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    run(Command::new("cargo")
        .args(["run", "--release", "-q", "-p", "flint-app", "--example", "vite_export", "--"])
        .arg(FIXTURE)
        .arg(&dir)
        .arg(PROMPT)
        .env("FLINT_PREVIEW_VENDOR", setup::preview_packages::out_dir()))?;
    let zip = dir.join("a-react-todo-app-vite.zip");
    run(Command::new("unzip").arg("-q").arg(&zip).arg("-d").arg(&project))?;
    // The cache beside the build: a warm run installs without downloading.
    let cache = root().join("target/npm-cache");
    let install = run_in(
        &project,
        Command::new("npm").args(["install", "--no-audit", "--no-fund", "--cache"]).arg(&cache),
    );
    if let Err(err) = install {
        bail!(
            "the exported Vite project could not install its packages ({err}): this check needs the npm \
             registry (registry.npmjs.org, or the one npm is configured with) reachable from this machine"
        );
    }
    run_in(&project, Command::new(project.join("node_modules/.bin/vite")).arg("build"))?;
    let built = project.join("dist/index.html");
    let assets = project.join("dist/assets");
    if !built.is_file() || !has(&assets, "js", "createRoot") {
        bail!("`vite build` of the exported project wrote no {} with its script", built.display());
    }
    // A class of the fixture's Header: Tailwind read the project's files.
    if !has(&assets, "css", "text-emerald-700") {
        bail!("`vite build` of the exported project wrote no Tailwind class of its components");
    }
    println!("vite export: {} built by vite in {:.0} s", zip.display(), started.elapsed().as_secs_f64());
    Ok(())
}

/// Whether a file in `dir` ending in `.ext` holds `text`.
fn has(dir: &Path, ext: &str, text: &str) -> bool {
    let holds = |path: &Path| std::fs::read_to_string(path).is_ok_and(|t| t.contains(text));
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == ext) && holds(&e.path()))
    })
}
