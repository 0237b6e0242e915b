//! Precompressed copies of the built app: `FILE.br` (brotli) and `FILE.gz` (gzip) beside every
//! compressible file of `dist/`, which the gateway's `ServeDir` sends to browsers that accept them
//! (`gateway/src/static_files.rs`).
//!
//! Brotli's best quality (11) is slow, so it is spent where it pays: on the files a first visit
//! loads. Monaco's directory also holds 15 MB the page never asks for (the TypeScript, CSS, HTML and
//! JSON language workers, translations); files over [`BIG`] get quality 9, about ten times faster
//! for a few per cent more bytes. Files are spread over the machine's cores, and each copy is kept
//! in a cache keyed by its content (`target/precompressed/`), so a rebuild compresses only what
//! changed: Monaco's 25 MB once, then the app's two wasm files when they change.

use std::collections::HashSet;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use flate2::Compression;
use flate2::write::GzEncoder;
use sha2::{Digest as _, Sha256};

/// Extensions worth compressing (text and wasm; images and fonts other than TrueType are already
/// compressed).
const COMPRESSIBLE: &[&str] =
    &["js", "mjs", "wasm", "css", "html", "json", "svg", "ttf", "txt", "map", "xml"];

/// Below this a compressed copy saves less than a request's headers cost.
const SMALLEST: u64 = 1024;

/// A copy is kept only when it is at most this share of the original (in per cent).
const KEEP_AT_MOST_PERCENT: usize = 90;

/// Files larger than this are compressed at [`BIG_QUALITY`] rather than 11.
pub const BIG: u64 = 3 * 1024 * 1024;

/// Brotli quality for files over [`BIG`].
const BIG_QUALITY: i32 = 9;

/// What [`precompress`] did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Files given at least one compressed copy.
    pub files: usize,
    /// Their total size.
    pub original: u64,
    /// The total size of their brotli copies (or of the original, where none was kept).
    pub brotli: u64,
    /// Likewise for gzip.
    pub gzip: u64,
    /// Files whose copies came from the cache.
    pub cached: usize,
    /// Wall-clock time.
    pub took: Duration,
}

/// Brotli quality for a file of `len` bytes.
pub fn brotli_quality(len: u64) -> i32 {
    if len > BIG { BIG_QUALITY } else { 11 }
}

/// Whether `path` should get compressed copies (by its extension and size; never a copy itself).
pub fn is_compressible(path: &Path, len: u64) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    len >= SMALLEST && COMPRESSIBLE.contains(&ext.as_str())
}

/// Writes `.br` and `.gz` beside every compressible file under `dist`, on `threads` threads, taking
/// copies made before from `cache` (and leaving there only this build's).
pub fn precompress(dist: &Path, cache: &Path, threads: usize) -> Result<Summary> {
    precompress_up_to(dist, cache, threads, 11)
}

/// [`precompress`] with brotli's quality at most `max_quality`: for folders where a few per cent
/// of size is not worth brotli 11's time (the preview modules: 5 MB, loaded once a year).
pub fn precompress_up_to(dist: &Path, cache: &Path, threads: usize, max_quality: i32) -> Result<Summary> {
    fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
    let started = Instant::now();
    let mut files = Vec::new();
    walk(dist, &mut files)?;
    files.retain(|(path, len)| is_compressible(path, *len));
    // Largest first, so that no thread is left with a big file at the end.
    files.sort_by_key(|(_, len)| std::cmp::Reverse(*len));
    let queue = Mutex::new(files.into_iter());
    let summary = Mutex::new(Summary::default());
    let used = Mutex::new(HashSet::new());
    let poisoned = || anyhow::anyhow!("a compression thread panicked");
    std::thread::scope(|scope| -> Result<()> {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| -> Result<()> {
                    loop {
                        let next = queue.lock().map_err(|_| poisoned())?.next();
                        let Some((path, _)) = next else { return Ok(()) };
                        let sizes = compress_file(&path, cache, max_quality)?;
                        used.lock().map_err(|_| poisoned())?.extend(sizes.cache_entries);
                        let mut summary = summary.lock().map_err(|_| poisoned())?;
                        summary.cached += usize::from(sizes.from_cache);
                        if sizes.kept {
                            summary.files += 1;
                            summary.original += sizes.original;
                            summary.brotli += sizes.brotli;
                            summary.gzip += sizes.gzip;
                        }
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().map_err(|_| poisoned())??;
        }
        Ok(())
    })?;
    prune(cache, &used.into_inner().map_err(|_| poisoned())?)?;
    let mut summary = summary.into_inner().map_err(|_| poisoned())?;
    summary.took = started.elapsed();
    Ok(summary)
}

struct Sizes {
    kept: bool,
    from_cache: bool,
    original: u64,
    brotli: u64,
    gzip: u64,
    cache_entries: [String; 2],
}

fn compress_file(path: &Path, cache: &Path, max_quality: i32) -> Result<Sizes> {
    let data = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let original = data.len() as u64;
    let digest = hex(&Sha256::digest(&data));
    let quality = brotli_quality(original).min(max_quality);
    let br_entry = format!("{digest}.q{quality}.br");
    let gz_entry = format!("{digest}.gz");
    let (br, br_cached) = cached(&cache.join(&br_entry), || brotli(&data, quality))?;
    let (gz, gz_cached) = cached(&cache.join(&gz_entry), || gzip(&data))?;
    let brotli = keep(path, "br", &data, &br)?;
    let gzip = keep(path, "gz", &data, &gz)?;
    Ok(Sizes {
        kept: brotli.is_some() || gzip.is_some(),
        from_cache: br_cached && gz_cached,
        original,
        brotli: brotli.unwrap_or(original),
        gzip: gzip.unwrap_or(original),
        cache_entries: [br_entry, gz_entry],
    })
}

/// The cache entry at `entry`, or `make()` stored there; and whether it came from the cache.
fn cached(entry: &Path, make: impl FnOnce() -> Result<Vec<u8>>) -> Result<(Vec<u8>, bool)> {
    if let Ok(bytes) = fs::read(entry) {
        return Ok((bytes, true));
    }
    let bytes = make()?;
    // Written under a temporary name and renamed, so that an interrupted build leaves no torn entry.
    let partial = entry.with_extension("partial");
    fs::write(&partial, &bytes).with_context(|| format!("cannot write {}", partial.display()))?;
    fs::rename(&partial, entry).with_context(|| format!("cannot write {}", entry.display()))?;
    Ok((bytes, false))
}

/// Removes the cache entries this build did not use (earlier builds' wasm).
fn prune(cache: &Path, used: &HashSet<String>) -> Result<()> {
    for entry in fs::read_dir(cache).with_context(|| format!("cannot list {}", cache.display()))? {
        let entry = entry?;
        if !entry.file_name().to_str().is_some_and(|name| used.contains(name)) {
            let _ = fs::remove_file(entry.path());
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `compressed` as `path.ext` when it saves enough; its size if written.
fn keep(path: &Path, ext: &str, original: &[u8], compressed: &[u8]) -> Result<Option<u64>> {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    let target = PathBuf::from(name);
    if compressed.len() * 100 > original.len() * KEEP_AT_MOST_PERCENT {
        // A copy left from an earlier build would be served instead of this file.
        let _ = fs::remove_file(&target);
        return Ok(None);
    }
    // Under a temporary name, then renamed: `cargo xtask serve` compresses while the gateway already
    // serves dist/, and a half-written copy must never be sent.
    let mut partial = target.clone().into_os_string();
    partial.push(".partial");
    fs::write(&partial, compressed).with_context(|| format!("cannot write {}", target.display()))?;
    fs::rename(&partial, &target).with_context(|| format!("cannot write {}", target.display()))?;
    Ok(Some(compressed.len() as u64))
}

/// `data` compressed with brotli at `quality` (0–11), with the largest window browsers accept.
pub fn brotli(data: &[u8], quality: i32) -> Result<Vec<u8>> {
    let params =
        brotli::enc::BrotliEncoderParams { quality, lgwin: 24, size_hint: data.len(), ..Default::default() };
    let mut out = Vec::with_capacity(data.len() / 3);
    brotli::BrotliCompress(&mut &data[..], &mut out, &params).context("brotli failed")?;
    Ok(out)
}

/// `data` compressed with gzip at its best level.
pub fn gzip(data: &[u8]) -> Result<Vec<u8>> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(data.len() / 3), Compression::best());
    encoder.write_all(data)?;
    Ok(encoder.finish()?)
}

/// Every file under `dir` with its size, skipping compressed copies and hidden folders (`trunk build`
/// stages a build in `dist/.stage`).
fn walk(dir: &Path, files: &mut Vec<(PathBuf, u64)>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() && entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if kind.is_dir() {
            walk(&path, files)?;
        } else if kind.is_file() && !matches!(path.extension().and_then(|e| e.to_str()), Some("br" | "gz")) {
            files.push((path, entry.metadata()?.len()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    #[test]
    fn copies_are_written_for_compressible_files_that_shrink() {
        let root = std::env::temp_dir().join(format!("flint-compress-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let (dist, cache) = (root.join("dist"), root.join("cache"));
        fs::create_dir_all(dist.join("vs")).unwrap();
        let text = "function hello() { return 'world'; }\n".repeat(200);
        fs::write(dist.join("vs/app.js"), &text).unwrap();
        fs::write(dist.join("tiny.js"), "1").unwrap();
        fs::write(dist.join("photo.png"), &text).unwrap();
        // Scrambled bytes do not shrink: no copy, and one left from an earlier build is removed.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u8
            })
            .collect();
        fs::write(dist.join("noise.wasm"), &noise).unwrap();
        fs::write(dist.join("noise.wasm.br"), b"stale").unwrap();
        fs::create_dir_all(dist.join(".stage")).unwrap();
        fs::write(dist.join(".stage/next.js"), &text).unwrap();

        let summary = precompress(&dist, &cache, 2).unwrap();
        assert_eq!((summary.files, summary.cached), (1, 0), "{summary:?}");
        // Again: every copy comes from the cache, and entries no build uses are pruned.
        fs::write(cache.join("an-old-build.br"), b"old").unwrap();
        let summary = precompress(&dist, &cache, 2).unwrap();
        assert_eq!((summary.files, summary.cached), (1, 2), "{summary:?}");
        assert!(!cache.join("an-old-build.br").exists(), "an unused cache entry was kept");

        let br = fs::read(dist.join("vs/app.js.br")).unwrap();
        let mut plain = String::new();
        brotli::Decompressor::new(&br[..], 4096).read_to_string(&mut plain).unwrap();
        assert_eq!(plain, text);
        let gz = fs::read(dist.join("vs/app.js.gz")).unwrap();
        let mut plain = String::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut plain).unwrap();
        assert_eq!(plain, text);
        for absent in [
            "tiny.js.br",
            "photo.png.br",
            "noise.wasm.br",
            "noise.wasm.gz",
            "vs/app.js.br.br",
            ".stage/next.js.br",
        ] {
            assert!(!dist.join(absent).exists(), "{absent} should not exist");
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn big_files_get_a_faster_quality() {
        assert_eq!(brotli_quality(500_000), 11);
        assert_eq!(brotli_quality(BIG + 1), BIG_QUALITY);
    }
}
