//! The modules generated previews import (`react`, `react-dom/client`, `lucide-react`, …) and the
//! Tailwind script, built from npm at the versions pinned in `preview-packages/package-lock.json`
//! into `target/preview-vendor/` (the gateway's default `preview.vendor_dir`), which it serves at
//! `/vendor/`. No CDN is involved.
//!
//! The build (`preview-packages/build.mjs`, esbuild) takes a few seconds, `npm ci` a few more, so
//! it runs only when its recipe changed: the lockfile, the build scripts, or `[preview] packages`
//! in `flint.toml` (extra packages, installed beside the pinned ones from the npm registry). A
//! marker file in the output holds the recipe it was built from, as the real servers' environment
//! does. The output gets brotli and gzip copies (`compress.rs`), sent to browsers that accept them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use super::{root, run};

/// Brotli's quality for the modules: 9 is about ten times faster than 11 for a few per cent more
/// bytes (bench/vendor.md), and these files are fetched once and then cached for a year.
const BROTLI_QUALITY: i32 = 9;

/// The marker's name inside the output.
const MARKER: &str = "flint-recipe.txt";

/// The files whose content decides the output.
const RECIPE_FILES: &[&str] =
    &["preview-packages/package-lock.json", "preview-packages/build.mjs", "preview-packages/exports.mjs"];

/// Where the modules are written: the gateway's default `preview.vendor_dir`.
pub fn out_dir() -> PathBuf {
    root().join("target/preview-vendor")
}

/// Builds the vendored modules unless the output was built from the same recipe; returns its folder.
pub fn ensure() -> Result<PathBuf> {
    let out = out_dir();
    let extras = configured_packages(&root().join("flint.toml"))?;
    let recipe = recipe(&extras)?;
    if out.join("manifest.json").is_file()
        && std::fs::read_to_string(out.join(MARKER)).is_ok_and(|have| have == recipe)
    {
        return Ok(out);
    }
    let started = Instant::now();
    let packages = root().join("preview-packages");
    npm_ci(&packages)?;
    let mut build = Command::new("node");
    build.arg(packages.join("build.mjs")).arg("--out").arg(&out);
    let extra_dir = root().join("target/preview-extra");
    if extras.is_empty() {
        // Packages dropped from the list are not kept.
        let _ = std::fs::remove_dir_all(&extra_dir);
    } else {
        install_extras(&extra_dir, &extras)?;
        build.arg("--extra-dir").arg(&extra_dir);
        for package in &extras {
            build.args(["--extra", package]);
        }
    }
    run(&mut build)?;
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    // A cache of its own: `precompress` keeps in its cache only the copies of the folder it was
    // given, and dist/'s would be dropped.
    let done = crate::compress::precompress_up_to(
        &out,
        &root().join("target/preview-vendor-compressed"),
        threads,
        BROTLI_QUALITY,
    )?;
    std::fs::write(out.join(MARKER), recipe).context("writing the preview packages' marker file")?;
    println!(
        "preview packages: built in {:.1} s ({} files compressed in {:.1} s, {} from the cache) → {}",
        started.elapsed().as_secs_f64(),
        done.files,
        done.took.as_secs_f64(),
        done.cached,
        out.display()
    );
    Ok(out)
}

/// `npm ci` in `preview-packages/` when its lockfile is newer than what is installed.
fn npm_ci(packages: &Path) -> Result<()> {
    let installed =
        std::fs::metadata(packages.join("node_modules/.package-lock.json")).and_then(|m| m.modified());
    let wanted = std::fs::metadata(packages.join("package-lock.json")).and_then(|m| m.modified());
    if let (Ok(have), Ok(want)) = (installed, wanted)
        && have >= want
    {
        return Ok(());
    }
    println!("setup: installing the preview packages from preview-packages/package-lock.json");
    run(Command::new("npm").arg("ci").arg("--prefix").arg(packages).args(["--no-audit", "--no-fund"]))
}

/// `[preview] packages` into a folder of their own, made afresh, so `npm ci` above never sees them
/// and a package dropped from the list does not linger.
fn install_extras(dir: &Path, extras: &[String]) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("package.json"), "{\"private\": true}\n")?;
    println!("setup: installing [preview] packages {} from the npm registry", extras.join(" "));
    run(Command::new("npm")
        .arg("install")
        .arg("--prefix")
        .arg(dir)
        .args(["--no-audit", "--no-fund", "--no-package-lock", "--save-exact"])
        .args(extras))
}

/// What the output is made from; a change in any part rebuilds it.
fn recipe(extras: &[String]) -> Result<String> {
    let mut hash = Sha256::new();
    for file in RECIPE_FILES {
        let path = root().join(file);
        hash.update(std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?);
    }
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("files {hex}\nextra {}\n", extras.join(" ")))
}

/// `[preview] packages` of `flint.toml` (none when the file or the setting is absent).
pub fn configured_packages(config: &Path) -> Result<Vec<String>> {
    let text = match std::fs::read_to_string(config) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err).with_context(|| format!("reading {}", config.display())),
    };
    packages_in(&text).with_context(|| format!("{}: [preview] packages", config.display()))
}

/// The `[preview] packages` list of `flint.toml` text.
fn packages_in(text: &str) -> Result<Vec<String>> {
    let table: toml::Table = toml::from_str(text).context("not valid TOML")?;
    let Some(list) = table.get("preview").and_then(|p| p.get("packages")) else { return Ok(Vec::new()) };
    let Some(list) = list.as_array() else { bail!("must be a list of \"name@version\" strings") };
    let mut packages = Vec::new();
    for item in list {
        let Some(text) = item.as_str() else { bail!("{item} is not a \"name@version\" string") };
        packages.push(text.trim().to_owned());
    }
    packages.sort();
    packages.dedup();
    Ok(packages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_packages_are_read_from_flint_toml() {
        let text = "[server]\nlisten = \"127.0.0.1:8787\"\n[preview]\npackages = [\"b@1.0.0\", \" a@2.0.0 \", \"b@1.0.0\"]\n";
        assert_eq!(packages_in(text).expect("read"), ["a@2.0.0", "b@1.0.0"]);
        assert!(packages_in("[server]\n").expect("read").is_empty());
        assert!(packages_in("[preview]\npackages = \"a@1.0.0\"\n").is_err());
        assert!(packages_in("[preview]\npackages = [1]\n").is_err());
    }

    #[test]
    fn the_recipe_changes_with_the_extra_packages() {
        let plain = recipe(&[]).expect("recipe");
        assert_ne!(plain, recipe(&["a@1.0.0".to_owned()]).expect("recipe"));
        assert_eq!(plain, recipe(&[]).expect("recipe"));
    }
}
