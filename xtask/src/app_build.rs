//! The app's release build into `dist/`, done by `cargo xtask` itself: what `trunk build --release`
//! did, without Trunk, whose own `cargo install` was the first several minutes of a fresh machine's
//! first run (`bench/setup.md`). Trunk stays the developers' tool for `trunk serve`, reading the
//! same `index.html`.
//!
//! The steps: one cargo build for every crate the page names (both wasm crates at once, where Trunk
//! built them one after the other), wasm-bindgen (web target), wasm-opt from npm's binaryen 132 on
//! both at once, content-hashed names for the app's files (the gateway keeps those for a year),
//! subresource integrity on what the page loads, the copies, and the page itself
//! ([`page`]). Everything is staged beside `dist/` and replaces it whole, so a failed build leaves
//! the last good one and no stale file stays beside a new one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256, Sha384};

use crate::setup::run_in;

pub mod page;

use page::{Asset, Output, Preload, RustAsset};

/// wasm-bindgen's folder of the JS snippets the crates import; copied whole and preloaded.
const SNIPPETS: &str = "snippets";

/// Builds the page at `page_path` (its tags resolved from its own folder) into `dist`, with cargo's
/// output in `target_dir`.
pub fn build(page_path: &Path, dist: &Path, target_dir: &Path) -> Result<()> {
    let started = Instant::now();
    let dir = page_path.parent().context("the page has no folder")?;
    let html =
        std::fs::read_to_string(page_path).with_context(|| format!("cannot read {}", page_path.display()))?;
    let found = page::assets(&html)?;
    let stage = sibling(dist, "staging")?;
    reset(&stage)?;

    let crates: Vec<&RustAsset> =
        found.iter().filter_map(|(_, a)| if let Asset::Rust(r) = a { Some(r) } else { None }).collect();
    let mut cargo = Command::new("cargo");
    cargo
        .args(["build", "--release", "--target", "wasm32-unknown-unknown"])
        .env("CARGO_TARGET_DIR", target_dir);
    for rust in &crates {
        cargo.args(["-p", &package_name(&dir.join(&rust.manifest))?, "--bin", &rust.bin]);
    }
    run_in(dir, &mut cargo)?;
    let compiled = started.elapsed();

    let mut outputs = Vec::with_capacity(found.len());
    let mut to_optimise = Vec::new();
    for (range, asset) in &found {
        let output = match asset {
            Asset::Rust(rust) => {
                let (output, wasm) = bindgen(dir, rust, target_dir, &stage)?;
                if let Some(level) = &rust.wasm_opt {
                    to_optimise.push((wasm, level.clone(), rust.wasm_opt_params.clone()));
                }
                output
            }
            Asset::Css { href } => {
                let bytes = std::fs::read(dir.join(href)).with_context(|| format!("cannot read {href}"))?;
                let source = Path::new(href);
                let stem = source.file_stem().context("a stylesheet without a name")?.to_string_lossy();
                let name = format!("{stem}-{}.css", short_hash(&bytes));
                std::fs::write(stage.join(&name), &bytes)?;
                Output::Stylesheet { integrity: integrity(&bytes), href: name }
            }
            Asset::CopyDir { href, target } => {
                let from = dir.join(href);
                let name = match target {
                    Some(target) => PathBuf::from(target),
                    None => PathBuf::from(from.file_name().context("a folder without a name")?),
                };
                copy_dir(&from, &stage.join(name))?;
                Output::Nothing
            }
            Asset::CopyFile { href } => {
                let from = dir.join(href);
                let name = from.file_name().context("a file without a name")?;
                std::fs::copy(&from, stage.join(name)).with_context(|| format!("cannot copy {href}"))?;
                Output::Nothing
            }
        };
        outputs.push((range.clone(), output));
    }
    let bound = started.elapsed();

    // wasm-opt is most of what follows cargo; the two files are optimised at once.
    std::thread::scope(|scope| {
        let jobs: Vec<_> = to_optimise
            .iter()
            .map(|(wasm, level, params)| scope.spawn(move || wasm_opt(wasm, level, params)))
            .collect();
        jobs.into_iter()
            .try_for_each(|job| job.join().unwrap_or_else(|_| bail!("wasm-opt's thread panicked")))
    })?;
    // The preloads' integrity is of the files as served: after wasm-opt.
    for (_, output) in &mut outputs {
        if let Output::App { preloads, .. } = output {
            for preload in preloads.iter_mut() {
                preload.integrity = integrity(&std::fs::read(stage.join(&preload.href))?);
            }
        }
    }
    std::fs::write(stage.join("index.html"), page::render(&html, &outputs)?)?;

    if dist.exists() {
        std::fs::remove_dir_all(dist).with_context(|| format!("cannot replace {}", dist.display()))?;
    }
    std::fs::rename(&stage, dist).with_context(|| format!("cannot move the build to {}", dist.display()))?;
    println!(
        "xtask: built the app into {} in {:.0} s (cargo {:.0} s, wasm-bindgen and copies {:.0} s, wasm-opt {:.0} s)",
        dist.display(),
        started.elapsed().as_secs_f64(),
        compiled.as_secs_f64(),
        (bound - compiled).as_secs_f64(),
        (started.elapsed() - bound).as_secs_f64()
    );
    Ok(())
}

/// wasm-bindgen for one crate, its files staged under their served names. Returns the page's output
/// for the crate and the staged wasm (for wasm-opt).
fn bindgen(dir: &Path, rust: &RustAsset, target_dir: &Path, stage: &Path) -> Result<(Output, PathBuf)> {
    let input = target_dir.join("wasm32-unknown-unknown/release").join(format!("{}.wasm", rust.bin));
    let out = target_dir.join("xtask-app").join(&rust.bin);
    reset(&out)?;
    let mut cmd = Command::new("wasm-bindgen");
    cmd.args(["--target", "web", "--no-typescript", "--out-name", &rust.bin, "--out-dir"])
        .arg(&out)
        .arg(&input);
    if rust.keep_debug {
        cmd.arg("--keep-debug");
    }
    run_in(dir, &mut cmd)?;
    // The app's names carry its content's hash (cached for a year); a worker's stay stable, because
    // the app names them in its code.
    let name = if rust.worker {
        rust.bin.clone()
    } else {
        let bytes = std::fs::read(&input).with_context(|| format!("cannot read {}", input.display()))?;
        format!("{}-{}", rust.bin, short_hash(&bytes))
    };
    let (js, wasm) = (format!("{name}.js"), format!("{name}_bg.wasm"));
    std::fs::copy(out.join(format!("{}.js", rust.bin)), stage.join(&js))?;
    std::fs::copy(out.join(format!("{}_bg.wasm", rust.bin)), stage.join(&wasm))?;
    let mut snippets = Vec::new();
    if out.join(SNIPPETS).is_dir() {
        copy_dir(&out.join(SNIPPETS), &stage.join(SNIPPETS))?;
        collect_files(&out.join(SNIPPETS), &mut snippets)?;
    }
    if rust.loader_shim {
        std::fs::write(
            stage.join(format!("{name}_loader.js")),
            format!("import init from './{js}';await init();"),
        )?;
    }
    let staged = stage.join(&wasm);
    if rust.worker {
        return Ok((Output::Nothing, staged));
    }
    let preload = |href: String, wasm: bool| Preload { href, integrity: String::new(), wasm };
    let mut preloads = vec![preload(js.clone(), false)];
    for file in snippets {
        let relative =
            file.strip_prefix(&out).expect("collected under out").to_string_lossy().replace('\\', "/");
        preloads.push(preload(relative, false));
    }
    preloads.push(preload(wasm.clone(), true));
    Ok((Output::App { js, wasm, preloads }, staged))
}

fn wasm_opt(wasm: &Path, level: &str, params: &[String]) -> Result<()> {
    let optimised = wasm.with_extension("opt.wasm");
    let mut cmd = Command::new("wasm-opt");
    cmd.arg(format!("-O{level}")).arg("--output").arg(&optimised).arg(wasm).args(params);
    run_in(wasm.parent().expect("a staged file"), &mut cmd)?;
    std::fs::rename(&optimised, wasm)?;
    Ok(())
}

/// The `name` of a crate's `[package]`.
fn package_name(manifest: &Path) -> Result<String> {
    let text =
        std::fs::read_to_string(manifest).with_context(|| format!("cannot read {}", manifest.display()))?;
    let package = text.split("[package]").nth(1).context("no [package]")?;
    package
        .lines()
        .find_map(|line| line.trim().strip_prefix("name")?.trim().strip_prefix('=')?.trim().strip_prefix('"'))
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned)
        .with_context(|| format!("{} has no package name", manifest.display()))
}

/// 16 hex digits of the content's SHA-256: the gateway's immutable-file pattern.
fn short_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// A subresource-integrity value (`sha384-<base64>`), as browsers check it.
fn integrity(bytes: &[u8]) -> String {
    format!("sha384-{}", base64(&Sha384::digest(bytes)))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                text.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                text.push('=');
            }
        }
    }
    text
}

fn sibling(dist: &Path, suffix: &str) -> Result<PathBuf> {
    let name = dist.file_name().context("dist has no name")?.to_string_lossy();
    Ok(dist.with_file_name(format!(".{name}.{suffix}")))
}

fn reset(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

fn collect_files(dir: &Path, into: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<std::io::Result<_>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        if entry.file_type()?.is_dir() {
            collect_files(&entry.path(), into)?;
        } else {
            into.push(entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrity_is_base64_of_sha384() {
        // sha384("abc"), as `openssl dgst -sha384 -binary | base64` prints it.
        assert_eq!(
            integrity(b"abc"),
            "sha384-ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn"
        );
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(short_hash(b"abc").len(), 16);
    }

    #[test]
    fn the_package_name_is_read_from_the_manifest() {
        let dir = std::env::temp_dir().join(format!("xtask-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"flint-app\"\nversion = \"0.1.0\"\n[dependencies]\nname = \"x\"\n",
        )
        .unwrap();
        assert_eq!(package_name(&manifest).unwrap(), "flint-app");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
