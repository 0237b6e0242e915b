//! `/vendor/`: the npm modules generated previews import (`react`, `react-dom/client`, …) and the
//! Tailwind script, built by the set-up into `preview.vendor_dir` (`cargo xtask setup
//! preview-packages`: `preview-packages/build.mjs`, pinned by its lockfile). The preview's import
//! map is made from `GET /vendor/manifest.json`.
//!
//! - **Only what the manifest lists is served.** A request's path is looked up, byte for byte, in
//!   the manifest's `files`; nothing from the request is ever joined onto a folder, so `..`,
//!   `%2e%2e`, absolute paths and files the set-up did not write answer 404. The manifest's own
//!   paths are checked when it is read (plain characters, no dot segments).
//! - **Cached for a year**: a file's path names its package's version (`/vendor/react@19.3.1/…`).
//!   The manifest itself changes with each set-up and is revalidated.
//! - **CORS here and nowhere else**: previews are sandboxed frames (`allow-scripts` only, origin
//!   `null`), and a module script from another origin loads only with CORS. These responses say
//!   `Access-Control-Allow-Origin: *`, not `null`: `null` is the origin of every sandboxed frame and
//!   `data:` page on any site, so it would admit exactly the same readers while looking narrower,
//!   and `*` is never honoured together with credentials, so no cookie-bearing read is possible.
//!   What is served is public npm code. Every other route keeps sending no CORS header, and `/ws`
//!   and `/api/*` keep refusing `Origin: null` ([`crate::access`]).
//! - Precompressed copies (`FILE.br`, `FILE.gz`, written by the set-up as for `dist/`) are sent
//!   by tower-http's `ServeFile`, as [`crate::static_files`] sends the app's.
//!
//! The manifest is read at start and again whenever its modification time changes, so a set-up
//! run while the gateway serves is picked up without a restart. A missing one is not an error:
//! `/vendor/` then answers 404 and the start's log says how to build it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tower::ServiceExt as _;
use tower_http::services::ServeFile;

use crate::AppState;
use crate::static_files::{self, Caching};

/// The URL path of the manifest.
pub const MANIFEST_PATH: &str = "/vendor/manifest.json";

/// The manifest format this gateway reads (`format` in the file).
pub const FORMAT: u32 = 1;

/// What to run when nothing is built.
const HOW_TO_BUILD: &str = "run `cargo xtask setup preview-packages`";

/// The served files of one manifest.
#[derive(Debug, Default)]
pub struct Files {
    /// URL path (`/vendor/react@19.3.1/index.js`) → file on disk.
    paths: HashMap<String, PathBuf>,
    /// Package name → version.
    packages: BTreeMap<String, String>,
    /// Whether a manifest was read (then it is served too).
    built: bool,
}

impl Files {
    /// The file served at URL path `path`, if the manifest lists it.
    pub fn get(&self, path: &str) -> Option<&Path> {
        self.paths.get(path).map(PathBuf::as_path)
    }

    /// Package name → version, as built.
    pub fn packages(&self) -> &BTreeMap<String, String> {
        &self.packages
    }
}

/// The part of `manifest.json` the gateway reads (the app reads `imports` and `tailwind`).
#[derive(Deserialize)]
struct Manifest {
    format: u32,
    packages: BTreeMap<String, String>,
    files: BTreeMap<String, serde::de::IgnoredAny>,
}

/// The paths of the manifest `text` read from `dir`, or why it cannot be used.
pub fn parse_manifest(text: &str, dir: &Path) -> Result<Files, String> {
    let manifest: Manifest = serde_json::from_str(text).map_err(|err| format!("not a manifest: {err}"))?;
    if manifest.format != FORMAT {
        return Err(format!("format {} (this gateway reads {FORMAT}); {HOW_TO_BUILD}", manifest.format));
    }
    let mut paths = HashMap::new();
    for path in manifest.files.into_keys() {
        let Some(relative) = path.strip_prefix("/vendor/").filter(|_| is_plain_path(&path)) else {
            return Err(format!("{path:?} is not a plain /vendor/ path"));
        };
        paths.insert(path.clone(), dir.join(relative));
    }
    Ok(Files { paths, packages: manifest.packages, built: true })
}

/// `/vendor/` and then only letters, digits and `@ . _ - /`, with no empty, `.` or `..` segment:
/// a path that means the same to every reader, decoded or not.
pub fn is_plain_path(path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/vendor/") else { return false };
    rest.bytes().all(|b| b.is_ascii_alphanumeric() || b"@._-/".contains(&b))
        && rest.split('/').all(|segment| !matches!(segment, "" | "." | ".."))
}

/// The built modules, read from `preview.vendor_dir`.
pub struct Vendor {
    dir: PathBuf,
    loaded: Mutex<Loaded>,
}

struct Loaded {
    /// The manifest's modification time when read (`None`: there was none).
    modified: Option<SystemTime>,
    files: Arc<Files>,
}

impl Vendor {
    /// Reads `dir/manifest.json` if there is one.
    pub fn open(dir: &Path) -> Self {
        let vendor = Self {
            dir: dir.to_owned(),
            loaded: Mutex::new(Loaded { modified: None, files: Arc::default() }),
        };
        vendor.files();
        vendor
    }

    /// The folder it serves.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The files of the current manifest, read again if it changed since.
    pub fn files(&self) -> Arc<Files> {
        let manifest = self.dir.join("manifest.json");
        let modified = std::fs::metadata(&manifest).and_then(|m| m.modified()).ok();
        let mut loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if loaded.modified != modified {
            let files = match modified.map(|_| std::fs::read_to_string(&manifest)) {
                None => Files::default(),
                Some(Ok(text)) => parse_manifest(&text, &self.dir).unwrap_or_else(|problem| {
                    tracing::warn!("preview modules: {} cannot be used: {problem}", manifest.display());
                    Files::default()
                }),
                Some(Err(err)) => {
                    tracing::warn!("preview modules: cannot read {}: {err}", manifest.display());
                    Files::default()
                }
            };
            *loaded = Loaded { modified, files: Arc::new(files) };
        }
        Arc::clone(&loaded.files)
    }

    /// What to say at start: `Ok` with a line when every package of `[preview] packages` is built,
    /// else `Err` with one warning per problem.
    pub fn start_report(&self, wanted: &[String]) -> Result<String, Vec<String>> {
        let files = self.files();
        if !files.built {
            return Err(vec![format!(
                "preview modules are not built ({} has no manifest.json): previews cannot import react or \
                 any other package, and /vendor/ answers 404; {HOW_TO_BUILD}",
                self.dir.display()
            )]);
        }
        let missing: Vec<String> = wanted
            .iter()
            .filter(|spec| {
                let (name, version) =
                    spec.rsplit_once('@').filter(|(n, _)| !n.is_empty()).unwrap_or((spec, ""));
                files.packages.get(name).is_none_or(|built| built != version)
            })
            .map(|spec| {
                format!(
                    "[preview] packages lists {spec}, which is not built (previews importing it fail); \
                     {HOW_TO_BUILD}"
                )
            })
            .collect();
        if !missing.is_empty() {
            return Err(missing);
        }
        Ok(format!("preview modules: {} packages from {}", files.packages.len(), self.dir.display()))
    }
}

/// `GET /vendor/…`: the manifest, or a file it lists; 404 for anything else.
pub async fn serve(State(state): State<AppState>, request: Request) -> Response {
    let files = state.vendor().files();
    let path = request.uri().path();
    let (file, caching, content_type) = if path == MANIFEST_PATH && files.built {
        (state.vendor().dir().join("manifest.json"), Caching::Revalidate, "application/json")
    } else if let Some(file) = files.get(path) {
        (file.to_owned(), Caching::Immutable, "text/javascript; charset=utf-8")
    } else {
        return with_cors((StatusCode::NOT_FOUND, "not found").into_response());
    };
    let file = ServeFile::new(file);
    let file = if static_files::plain() { file } else { file.precompressed_br().precompressed_gzip() };
    let mut response = match file.oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    };
    let status = response.status();
    let found = status.is_success() || status == StatusCode::NOT_MODIFIED;
    if status.is_success() {
        response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    static_files::set_cache_headers(
        response.headers_mut(),
        if found { caching } else { Caching::Revalidate },
    );
    with_cors(response)
}

/// Lets opaque-origin previews load the response (see the module's comment for why `*`).
fn with_cors(mut response: Response) -> Response {
    response.headers_mut().insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"{"format":1,"imports":{"react":"/vendor/react@19.3.1/index.js"},
        "packages":{"react":"19.3.1","@tailwindcss/browser":"4.3.4"},
        "tailwind":"/vendor/@tailwindcss/browser@4.3.4/index.global.js",
        "files":{"/vendor/react@19.3.1/index.js":{"bytes":1,"integrity":"x"},
                 "/vendor/@tailwindcss/browser@4.3.4/index.global.js":{"bytes":1,"integrity":"x"}}}"#;

    #[test]
    fn only_plain_vendor_paths_are_accepted() {
        for good in ["/vendor/react@19.3.1/index.js", "/vendor/@tailwindcss/browser@4.3.4/index.global.js"] {
            assert!(is_plain_path(good), "{good}");
        }
        for bad in [
            "/vendor/react@19.3.1/../../Cargo.toml",
            "/vendor/%2e%2e/Cargo.toml",
            "/vendor/./a.js",
            "/vendor//etc/passwd",
            "/vendor/a\\b.js",
            "/vendor/",
            "/other/a.js",
            "/vendor/a b.js",
            "/vendor/a.js?x",
        ] {
            assert!(!is_plain_path(bad), "{bad}");
        }
    }

    #[test]
    fn a_manifest_maps_its_paths_into_the_folder() {
        let files = parse_manifest(MANIFEST, Path::new("/srv/v")).expect("manifest");
        assert_eq!(
            files.get("/vendor/react@19.3.1/index.js"),
            Some(Path::new("/srv/v/react@19.3.1/index.js"))
        );
        assert_eq!(files.get("/vendor/react@19.3.1/../index.js"), None);
        assert_eq!(files.packages()["react"], "19.3.1");
    }

    #[test]
    fn a_manifest_with_a_bad_path_or_format_is_refused() {
        let escaping = MANIFEST.replace("/vendor/react@19.3.1/index.js\":{", "/vendor/../../etc/passwd\":{");
        assert!(parse_manifest(&escaping, Path::new("/srv/v")).is_err());
        let future = MANIFEST.replace("\"format\":1", "\"format\":2");
        assert!(parse_manifest(&future, Path::new("/srv/v")).expect_err("format").contains("setup"));
        assert!(parse_manifest("{}", Path::new("/srv/v")).is_err());
    }
}
