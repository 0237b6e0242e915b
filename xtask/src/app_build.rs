//! The app's release build into `dist/`, done by `cargo xtask` itself: what `trunk build --release`
//! did, without Trunk, whose own `cargo install` was the first several minutes of a fresh machine's
//! first run (`bench/setup.md`). Trunk stays the developers' tool for `trunk serve`, reading the
//! same `index.html`.
//!
//! The steps: one cargo build for every crate the page names (both wasm crates at once, where Trunk
//! built them one after the other, so their dependencies' features are unified across the two),
//! wasm-bindgen (web target, by `xtask/bindgen`), wasm-opt from npm's binaryen 132 on both at once (cached by its input,
//! so an unchanged crate is not optimised again), names after the content as served (the gateway
//! keeps those files for a year), subresource integrity on what the page loads, the copies, and the
//! page itself ([`page`]). Everything is staged beside `dist/` and replaces it whole, so a failed
//! build leaves the last good one and no stale file stays beside a new one. The app is served at
//! `/` (Trunk.toml's `public_url`).

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
/// output in `target_dir`. `check` sees the finished build before it replaces `dist`.
pub fn build(
    page_path: &Path,
    dist: &Path,
    target_dir: &Path,
    check: impl Fn(&Path) -> Result<()>,
) -> Result<()> {
    let stage = sibling(dist, "staging")?;
    let built = build_into(page_path, &stage, target_dir).and_then(|()| check(&stage));
    if let Err(err) = built {
        // The last good dist/ stays as it was; nothing half-built is left beside it.
        let _ = std::fs::remove_dir_all(&stage);
        return Err(err);
    }
    replace(dist, &stage)
}

fn build_into(page_path: &Path, stage: &Path, target_dir: &Path) -> Result<()> {
    let started = Instant::now();
    let dir = page_path.parent().context("the page has no folder")?;
    let html =
        std::fs::read_to_string(page_path).with_context(|| format!("cannot read {}", page_path.display()))?;
    let found = page::assets(&html, &page_path.file_name().unwrap_or_default().to_string_lossy())?;
    reset(stage)?;

    let crates: Vec<&RustAsset> =
        found.iter().filter_map(|(_, a)| if let Asset::Rust(r) = a { Some(r) } else { None }).collect();
    if crates.is_empty() {
        bail!("{} has no <link data-trunk rel=\"rust\"> tag: there is no app to build", page_path.display());
    }
    let mut cargo = Command::new("cargo");
    cargo
        .args(["build", "--release", "--locked", "--target", "wasm32-unknown-unknown"])
        .env("CARGO_TARGET_DIR", target_dir);
    for rust in &crates {
        cargo.args(["-p", &package_name(&dir.join(&rust.manifest))?, "--bin", &rust.bin]);
    }
    run_in(dir, &mut cargo)?;
    let compiled = started.elapsed();

    let tool = crate::setup::bindgen_tool()?;
    let mut outputs = Vec::with_capacity(found.len());
    let mut apps = Vec::new();
    for (range, asset) in &found {
        let output = match asset {
            Asset::Rust(rust) => {
                let bound = bindgen(&tool, dir, rust, target_dir, stage)?;
                apps.push((outputs.len(), bound));
                Output::Nothing
            }
            Asset::Css { href } => {
                let source = dir.join(href);
                let bytes =
                    std::fs::read(&source).with_context(|| format!("cannot read {}", source.display()))?;
                let stem =
                    Path::new(href).file_stem().context("a stylesheet without a name")?.to_string_lossy();
                let name = format!("{stem}-{}.css", content_hash(&[&bytes]));
                write(&stage.join(&name), &bytes)?;
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
                copy(&from, &stage.join(name))?;
                Output::Nothing
            }
        };
        outputs.push((range.clone(), output));
    }
    let bound = started.elapsed();

    // wasm-opt is most of what follows cargo; the files are optimised at once.
    let cache = target_dir.join("xtask-app/wasm-opt");
    let version = crate::setup::output("wasm-opt", &["--version"])
        .context("cannot run wasm-opt (npm's binaryen, installed by the set-up)")?;
    std::thread::scope(|scope| {
        let jobs: Vec<_> = apps
            .iter()
            .filter_map(|(_, app)| Some((app, app.rust.wasm_opt.as_ref()?)))
            .map(|(app, level)| {
                scope.spawn(|| wasm_opt(&app.wasm, level, &app.rust.wasm_opt_params, &version, &cache))
            })
            .collect();
        jobs.into_iter()
            .try_for_each(|job| job.join().unwrap_or_else(|_| bail!("wasm-opt's thread panicked")))
    })?;
    // Named only now, so that a name stands for the bytes served (wasm-opt's level and version
    // included): the gateway lets browsers keep these files for a year.
    for (at, app) in apps {
        if !app.rust.worker {
            outputs[at].1 = app.into_page(stage)?;
        }
    }
    write(&stage.join("index.html"), page::render(&html, &outputs)?.as_bytes())?;
    println!(
        "xtask: built the app in {:.0} s (cargo {:.0} s, wasm-bindgen and copies {:.0} s, wasm-opt {:.0} s)",
        started.elapsed().as_secs_f64(),
        compiled.as_secs_f64(),
        (bound - compiled).as_secs_f64(),
        (started.elapsed() - bound).as_secs_f64()
    );
    Ok(())
}

/// One crate after wasm-bindgen: its files staged under the crate's name.
struct Bound<'a> {
    rust: &'a RustAsset,
    js: PathBuf,
    wasm: PathBuf,
    /// wasm-bindgen's snippets, as served (`snippets/…`).
    snippets: Vec<String>,
}

impl Bound<'_> {
    /// The app's files renamed after their content, and the page's loader and preloads for them.
    fn into_page(self, stage: &Path) -> Result<Output> {
        let (js_bytes, wasm_bytes) = (read(&self.js)?, read(&self.wasm)?);
        let name = format!("{}-{}", self.rust.bin, content_hash(&[&js_bytes, &wasm_bytes]));
        let (js, wasm) = (format!("{name}.js"), format!("{name}_bg.wasm"));
        std::fs::rename(&self.js, stage.join(&js))?;
        std::fs::rename(&self.wasm, stage.join(&wasm))?;
        let mut preloads = vec![Preload { href: js.clone(), integrity: integrity(&js_bytes), wasm: false }];
        for href in self.snippets {
            let integrity = integrity(&read(&stage.join(&href))?);
            preloads.push(Preload { href, integrity, wasm: false });
        }
        preloads.push(Preload { href: wasm.clone(), integrity: integrity(&wasm_bytes), wasm: true });
        Ok(Output::App { js, wasm, preloads })
    }
}

/// wasm-bindgen for one crate, its files staged as `<bin>.js` and `<bin>_bg.wasm` (a worker's final
/// names: the app names them in its code), its snippets copied, and a worker's loader shim written.
fn bindgen<'a>(
    tool: &Path,
    dir: &Path,
    rust: &'a RustAsset,
    target_dir: &Path,
    stage: &Path,
) -> Result<Bound<'a>> {
    let input = target_dir.join("wasm32-unknown-unknown/release").join(format!("{}.wasm", rust.bin));
    let out = target_dir.join("xtask-app").join(&rust.bin);
    reset(&out)?;
    // `wasm-bindgen --target web --no-typescript`, byte for byte (xtask/bindgen).
    let mut cmd = Command::new(tool);
    cmd.args(["--out-name", &rust.bin, "--out-dir"]).arg(&out).arg(&input);
    if rust.keep_debug {
        cmd.arg("--keep-debug");
    }
    run_in(dir, &mut cmd)?;
    let (js, wasm) = (stage.join(format!("{}.js", rust.bin)), stage.join(format!("{}_bg.wasm", rust.bin)));
    copy(&out.join(format!("{}.js", rust.bin)), &js)?;
    copy(&out.join(format!("{}_bg.wasm", rust.bin)), &wasm)?;
    let mut snippets = Vec::new();
    if out.join(SNIPPETS).is_dir() {
        copy_dir(&out.join(SNIPPETS), &stage.join(SNIPPETS))?;
        let mut files = Vec::new();
        collect_files(&out.join(SNIPPETS), &mut files)?;
        for file in files {
            let relative = file.strip_prefix(&out).expect("collected under out");
            snippets.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    if rust.loader_shim {
        let shim = format!("import init from './{}.js';await init();", rust.bin);
        write(&stage.join(format!("{}_loader.js", rust.bin)), shim.as_bytes())?;
    }
    Ok(Bound { rust, js, wasm, snippets })
}

/// wasm-opt in place, from a cache keyed by the input, the level, the parameters and wasm-opt's
/// version: a later build whose wasm did not change skips it (about a minute on 2 cores).
fn wasm_opt(wasm: &Path, level: &str, params: &[String], version: &str, cache: &Path) -> Result<()> {
    let input = read(wasm)?;
    let key = content_hash(&[&input, level.as_bytes(), params.join(" ").as_bytes(), version.as_bytes()]);
    let cached = cache.join(format!("{key}.wasm"));
    if !cached.is_file() {
        std::fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
        let optimised = cache.join(format!("{key}.partial.wasm"));
        let mut cmd = Command::new("wasm-opt");
        cmd.arg(format!("-O{level}")).arg("--output").arg(&optimised).arg(wasm).args(params);
        run_in(cache, &mut cmd)?;
        std::fs::rename(&optimised, &cached)?;
    }
    copy(&cached, wasm)
}

/// The `name` of a crate's `[package]`.
fn package_name(manifest: &Path) -> Result<String> {
    let text =
        std::fs::read_to_string(manifest).with_context(|| format!("cannot read {}", manifest.display()))?;
    let table: toml::Table =
        toml::from_str(&text).with_context(|| format!("{} is not valid TOML", manifest.display()))?;
    table
        .get("package")
        .and_then(|package| package.get("name"))
        .and_then(toml::Value::as_str)
        .map(str::to_owned)
        .with_context(|| format!("{} has no [package] name", manifest.display()))
}

/// 16 hex digits of the SHA-256 of the parts, in order: the gateway's immutable-file pattern.
fn content_hash(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        // Each part's length first, so that two splits of the same bytes differ.
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// A subresource-integrity value (`sha384-<base64>`), as browsers check it.
fn integrity(bytes: &[u8]) -> String {
    format!("sha384-{}", base64(&Sha384::digest(bytes)))
}

/// Written here rather than taken from a crate: `cargo xtask` compiles before anything else on a
/// fresh machine, so each dependency of its own is on the first run's path.
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

/// `dist` replaced by `stage`: the old build moves aside first and comes back if the new one cannot
/// take its place.
fn replace(dist: &Path, stage: &Path) -> Result<()> {
    let old = sibling(dist, "old")?;
    if old.exists() {
        std::fs::remove_dir_all(&old).with_context(|| format!("cannot remove {}", old.display()))?;
    }
    let had = dist.exists();
    if had {
        std::fs::rename(dist, &old).with_context(|| format!("cannot move {} aside", dist.display()))?;
    }
    if let Err(err) = std::fs::rename(stage, dist) {
        if had {
            let _ = std::fs::rename(&old, dist);
        }
        return Err(err).with_context(|| format!("cannot move the build to {}", dist.display()));
    }
    if had {
        std::fs::remove_dir_all(&old).with_context(|| format!("cannot remove {}", old.display()))?;
    }
    Ok(())
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(drop)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))
}

fn reset(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
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
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .and_then(Iterator::collect::<std::io::Result<_>>)
        .with_context(|| format!("cannot read {}", dir.display()))?;
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
mod tests;
