//! How the built app's files are served: precompressed, and cached for as long as they can be.
//!
//! - **Compression**: `cargo xtask` writes `FILE.br` and `FILE.gz` beside each compressible file of
//!   `dist/` at build time; [`serve_dir`] sends the copy the browser accepts (`Content-Encoding`),
//!   so nothing is compressed per request. `index.html` is served by [`crate::http`], which does
//!   the same.
//! - **Caching** ([`caching`]): a file whose name or folder changes whenever its content does is
//!   `immutable` for a year: the build's hashed outputs (`flint-app-<hex hash>.js`, `…_bg.wasm`,
//!   `style-<hex hash>.css`) and Monaco under its versioned folder (`vs-0.57.0/`). Everything else
//!   (`index.html`, the worker's unhashed files, wasm-bindgen's `snippets/`, `preview.html`) is
//!   `no-cache`: kept, but checked with the gateway on each use (`Last-Modified`, or `ETag` for
//!   `index.html`), which costs a 304 of a few hundred bytes when unchanged.
//! - Every file response says `Vary: Accept-Encoding`, so no shared cache hands a brotli body to a
//!   browser that did not ask for one.
//!
//! `FLINT_STATIC_PLAIN=1` serves the same files as before any of this (no compressed copies, no
//! `Cache-Control`, no `ETag`): the "before" of `tests/bench/load.mjs`.

use std::path::Path;
use std::sync::OnceLock;

use axum::extract::Request;
use axum::http::header::{ACCEPT_ENCODING, CACHE_CONTROL, VARY};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use tower_http::services::ServeDir;

/// `Cache-Control` of files whose name changes with their content.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `Cache-Control` of everything else: kept, but revalidated before each use.
pub const REVALIDATE: &str = "no-cache";

/// How long a browser may keep a file without asking again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// A year, never revalidated: the path names the content.
    Immutable,
    /// Revalidated on every use.
    Revalidate,
}

impl Caching {
    /// The `Cache-Control` value.
    pub fn header(self) -> &'static str {
        match self {
            Self::Immutable => IMMUTABLE,
            Self::Revalidate => REVALIDATE,
        }
    }
}

/// The caching of the file at URL path `path` (e.g. `/flint-app-e49ff100879c269b.js`).
pub fn caching(path: &str) -> Caching {
    let mut segments = path.trim_start_matches('/').split('/');
    let file = segments.next_back().unwrap_or_default();
    if segments.any(is_versioned_folder) || has_trunk_hash(file) {
        Caching::Immutable
    } else {
        Caching::Revalidate
    }
}

/// `name-1.2.3`: a folder named after a package's version (Monaco's `vs-0.57.0`).
fn is_versioned_folder(segment: &str) -> bool {
    let Some((name, version)) = segment.rsplit_once('-') else { return false };
    let parts: Vec<&str> = version.split('.').collect();
    !name.is_empty()
        && parts.len() == 3
        && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A build's content hash: `-` and 64 bits in lowercase hex (`cargo xtask` writes 16 digits; Trunk's
/// `filehash` writes `{:x}`, so up to 16; fewer than 12 is too rare to matter and too likely to be a
/// word), then the extension or wasm-bindgen's `_bg`.
fn has_trunk_hash(file: &str) -> bool {
    file.match_indices('-').any(|(at, _)| {
        let rest = &file.as_bytes()[at + 1..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)).count();
        (12..=16).contains(&digits) && matches!(rest.get(digits), Some(b'.' | b'_'))
    })
}

/// Whether `FLINT_STATIC_PLAIN=1` asked for files served as they were before precompression and
/// caching (read once).
pub fn plain() -> bool {
    static PLAIN: OnceLock<bool> = OnceLock::new();
    *PLAIN.get_or_init(|| std::env::var("FLINT_STATIC_PLAIN").is_ok_and(|v| v == "1"))
}

/// The built app's files, sending the precompressed copy the browser accepts.
pub fn serve_dir(dist: &Path) -> ServeDir {
    let files = ServeDir::new(dist);
    if plain() { files } else { files.precompressed_br().precompressed_gzip() }
}

/// Middleware for the files: their `Cache-Control` and `Vary`. A response that already has a
/// `Cache-Control` (the `index.html` fallback) keeps it; errors are never cached for long.
pub async fn cache_headers(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    if !plain() {
        let status = response.status();
        let found = status.is_success() || status == StatusCode::NOT_MODIFIED;
        let policy = if found { caching(&path) } else { Caching::Revalidate };
        set_cache_headers(response.headers_mut(), policy);
    }
    response
}

/// Adds `Cache-Control` (unless present) and `Vary: Accept-Encoding` (unless already said).
pub fn set_cache_headers(headers: &mut HeaderMap, policy: Caching) {
    headers.entry(CACHE_CONTROL).or_insert(HeaderValue::from_static(policy.header()));
    let varies = headers.get_all(VARY).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',').any(|name| name.trim().eq_ignore_ascii_case(ACCEPT_ENCODING.as_str()))
        })
    });
    if !varies {
        headers.append(VARY, HeaderValue::from_static("accept-encoding"));
    }
}

/// The precompressed encodings, best first: the `Content-Encoding` and the copy's extension.
pub const ENCODINGS: &[(&str, &str)] = &[("br", "br"), ("gzip", "gz")];

/// Whether the `Accept-Encoding` header `accept` allows `encoding` (listed, or `*`, with q > 0).
pub fn accepts(accept: &str, encoding: &str) -> bool {
    let mut star = false;
    for item in accept.split(',') {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or_default().trim();
        let refused = parts.any(|p| {
            let p = p.trim();
            p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")).and_then(|q| q.trim().parse::<f32>().ok())
                == Some(0.0)
        });
        if name.eq_ignore_ascii_case(encoding) {
            return !refused;
        }
        star |= name == "*" && !refused;
    }
    star
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_and_versioned_files_are_immutable() {
        for path in [
            "/flint-app-e49ff100879c269b.js",
            "/flint-app-e49ff100879c269b_bg.wasm",
            // A hash with leading zeros has fewer digits.
            "/flint-app-ddd3aae8fb3c291.js",
            "/style-aef3198cdf0e5e01.css",
            "/vs-0.57.0/loader.js",
            "/vs-0.57.0/editor/editor.main.css",
            "/vs-0.57.0/assets/editor.worker-_vAIFJDs.js",
        ] {
            assert_eq!(caching(path), Caching::Immutable, "{path}");
        }
    }

    #[test]
    fn files_whose_name_does_not_change_are_revalidated() {
        for path in [
            "/",
            "/index.html",
            "/flint-worker.js",
            "/flint-worker_bg.wasm",
            "/flint-worker_loader.js",
            "/preview.html",
            "/preview-runtime.js",
            "/idiomorph.min.js",
            // wasm-bindgen names this folder after the crate, not the content.
            "/snippets/flint-app-6a83bfd7bcb0b514/js/editor.js",
            "/vs/loader.js",
            "/vs-latest/loader.js",
            "/app-1.2/x.js",
            "/flint-app-E49FF100879C269B.js",
            "/flint-app-e49ff1.js",
            "/flint-app-e49ff100879c269b00.js",
            "/notes-deadbeefcafe",
        ] {
            assert_eq!(caching(path), Caching::Revalidate, "{path}");
        }
    }

    #[test]
    fn accept_encoding_is_read_with_its_weights() {
        assert!(accepts("gzip, deflate, br, zstd", "br"));
        assert!(accepts("gzip;q=1.0, br;q=0.5", "br"));
        assert!(!accepts("gzip, br;q=0", "br"));
        assert!(accepts("*", "gzip"));
        assert!(!accepts("*, gzip;q=0", "gzip"));
        assert!(!accepts("identity", "br"));
        assert!(!accepts("", "gzip"));
    }

    #[test]
    fn vary_is_said_once_and_a_routes_own_cache_control_is_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(VARY, HeaderValue::from_static("Origin, Accept-Encoding"));
        set_cache_headers(&mut headers, Caching::Immutable);
        assert_eq!(headers[CACHE_CONTROL], "no-store");
        assert_eq!(headers.get_all(VARY).iter().count(), 1);
        let mut headers = HeaderMap::new();
        set_cache_headers(&mut headers, Caching::Immutable);
        assert_eq!(headers[CACHE_CONTROL], IMMUTABLE);
        assert_eq!(headers[VARY], "accept-encoding");
    }
}
