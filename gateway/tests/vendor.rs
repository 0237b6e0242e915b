//! `/vendor/`: the modules previews import. Only the manifest's files are served, cached for a
//! year, with CORS for opaque-origin previews; no path trick reaches another file; no other route
//! gains CORS, and `/api/*` still refuses `Origin: null`. Requests are written by hand on a real
//! socket, so paths reach the gateway exactly as sent (an HTTP client would tidy `..` away).

mod common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use flint_gateway::static_files::{IMMUTABLE, REVALIDATE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const REACT: &str = "/vendor/react@19.3.1/index.js";
const JSX_DEV: &str = "/vendor/react@19.3.1/jsx-dev-runtime.js";
const TAILWIND: &str = "/vendor/@tailwindcss/browser@4.3.4/index.global.js";

/// A built vendor folder inside a scratch folder that also holds files it must never serve: a
/// secret beside it, and files in it the manifest does not list.
struct Built {
    root: PathBuf,
}

impl Built {
    fn new(tag: &str) -> Self {
        let root = std::env::temp_dir().join(format!("flint-vendor-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("vendor");
        let write = |path: &str, body: &str| {
            let file = dir.join(path.trim_start_matches("/vendor/"));
            std::fs::create_dir_all(file.parent().expect("parent")).expect("folder");
            std::fs::write(file, body).expect("write");
        };
        let manifest = format!(
            r#"{{"format":1,"imports":{{"react":"{REACT}","react/jsx-dev-runtime":"{JSX_DEV}"}},
               "packages":{{"react":"19.3.1","@tailwindcss/browser":"4.3.4"}},"tailwind":"{TAILWIND}",
               "files":{{"{REACT}":{{"bytes":25,"integrity":"sha384-x"}},"{JSX_DEV}":{{"bytes":1,"integrity":"sha384-x"}},
                         "{TAILWIND}":{{"bytes":1,"integrity":"sha384-x"}}}}}}"#
        );
        write("/vendor/manifest.json", &manifest);
        write(REACT, "export const React = 'plain';");
        write(&format!("{REACT}.br"), "br copy of react");
        write(JSX_DEV, "export const jsxDEV = 1;");
        write(TAILWIND, "/* tailwind */");
        write("/vendor/react@19.3.1/unlisted.js", "unlisted");
        write("/vendor/secret.txt", "unlisted secret");
        std::fs::write(root.join("Cargo.toml"), "outside secret").expect("write");
        Self { root }
    }

    fn dir(&self) -> PathBuf {
        self.root.join("vendor")
    }
}

impl Drop for Built {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// `method path` with `headers`, sent as written, on a fresh connection.
async fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
    let mut socket = TcpStream::connect(addr).await.expect("connects");
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n", addr.port());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await.expect("sends");
    let mut raw = Vec::new();
    socket.read_to_end(&mut raw).await.expect("reads");
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("status");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer { status, headers, body: body.to_owned() }
}

async fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Answer {
    request(addr, "GET", path, headers).await
}

async fn gateway(dir: &Path) -> common::Gateway {
    let dir = dir.to_owned();
    common::start_with(move |config| config.preview.vendor_dir = dir).await
}

#[tokio::test]
async fn the_manifest_is_served_revalidated_with_cors() {
    let built = Built::new("manifest");
    let gw = gateway(&built.dir()).await;
    let answer = get(gw.addr, "/vendor/manifest.json", &[("Origin", "null")]).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let manifest: serde_json::Value = serde_json::from_str(&answer.body).expect("JSON");
    assert_eq!(manifest["imports"]["react"], REACT);
    assert_eq!(manifest["tailwind"], TAILWIND);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(answer.header("cache-control"), Some(REVALIDATE), "it changes with each set-up");
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
}

#[tokio::test]
async fn a_listed_module_is_javascript_cached_for_a_year_with_cors() {
    let built = Built::new("module");
    let gw = gateway(&built.dir()).await;
    for path in [REACT, JSX_DEV, TAILWIND] {
        let answer = get(gw.addr, path, &[("Origin", "null")]).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        assert_eq!(answer.header("content-type"), Some("text/javascript; charset=utf-8"), "{path}");
        assert_eq!(answer.header("cache-control"), Some(IMMUTABLE), "{path}");
        assert_eq!(answer.header("access-control-allow-origin"), Some("*"), "{path}");
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"), "{path}");
    }
    let plain = get(gw.addr, REACT, &[]).await;
    assert_eq!(plain.body, "export const React = 'plain';");
    // The set-up's brotli copy, as for dist/.
    let br = get(gw.addr, REACT, &[("Accept-Encoding", "gzip, br")]).await;
    assert_eq!((br.header("content-encoding"), br.body.as_str()), (Some("br"), "br copy of react"));
    assert_eq!(br.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert!(br.header("vary").is_some_and(|v| v.to_ascii_lowercase().contains("accept-encoding")));
    let head = request(gw.addr, "HEAD", REACT, &[]).await;
    assert_eq!((head.status, head.body.as_str()), (200, ""));
}

#[tokio::test]
async fn paths_outside_the_manifest_are_not_found() {
    let built = Built::new("paths");
    let gw = gateway(&built.dir()).await;
    for path in [
        "/vendor/react@19.3.1/../../Cargo.toml",
        "/vendor/react@19.3.1/../secret.txt",
        "/vendor/../Cargo.toml",
        "/vendor/%2e%2e/Cargo.toml",
        "/vendor/react@19.3.1/%2e%2e/%2e%2e/Cargo.toml",
        "/vendor/react@19.3.1/%2E%2E%2F%2E%2E%2FCargo.toml",
        "/vendor/..%2fCargo.toml",
        "/vendor/react@19.3.1/..%5c..%5cCargo.toml",
        "/vendor//etc/passwd",
        "/vendor/%2fetc%2fpasswd",
        "/vendor/secret.txt",
        "/vendor/react@19.3.1/unlisted.js",
        "/vendor/react@18.3.1/index.js",
        "/vendor/react@19.3.1/index.js.br",
        "/vendor/react@19.3.1/index.js/",
        "/vendor/react@19.3.1/./index.js",
        "/vendor/react%4019.3.1/index.js",
        "/vendor/REACT@19.3.1/index.js",
        "/vendor/react@19.3.1/",
        "/vendor/",
        "/vendor",
    ] {
        let answer = get(gw.addr, path, &[("Origin", "null")]).await;
        assert_eq!(answer.status, 404, "{path} answered {}: {}", answer.status, answer.body);
        assert!(!answer.body.contains("secret") && !answer.body.contains("unlisted"), "{path}");
    }
    // Absolute URLs in the request line name the same paths.
    let absolute = format!("http://127.0.0.1:{}/vendor/react@19.3.1/../../Cargo.toml", gw.addr.port());
    assert_eq!(get(gw.addr, &absolute, &[]).await.status, 404);
}

#[tokio::test]
async fn a_preview_loads_modules_but_nothing_else_gets_cors_and_the_api_still_refuses_it() {
    let built = Built::new("origin");
    let gw = gateway(&built.dir()).await;
    let null = [("Origin", "null"), ("Sec-Fetch-Site", "cross-site")];
    assert_eq!(get(gw.addr, REACT, &null).await.status, 200, "a sandboxed preview's module request");
    for (method, path) in [
        ("GET", "/api/models"),
        ("GET", "/api/history"),
        ("POST", "/api/share"),
        ("POST", "/api/access"),
        ("GET", "/ws"),
    ] {
        let answer = request(gw.addr, method, path, &null).await;
        assert_eq!(answer.status, 403, "{method} {path} from Origin: null: {}", answer.body);
        assert!(answer.body.contains("Origin: null"), "{method} {path}: {}", answer.body);
        assert_eq!(answer.header("access-control-allow-origin"), None, "{method} {path}");
    }
    // The same-origin page still gets the API, without CORS headers either.
    let own = format!("http://127.0.0.1:{}", gw.addr.port());
    let models = get(gw.addr, "/api/models", &[("Origin", &own)]).await;
    assert_eq!(models.status, 200);
    for (path, origin) in [
        ("/api/models", own.as_str()),
        ("/healthz", "null"),
        ("/metrics", "null"),
        ("/s/abc", "null"),
        ("/", "null"),
        ("/preview.html", "null"),
    ] {
        let answer = get(gw.addr, path, &[("Origin", origin)]).await;
        let cors: Vec<_> = answer.headers.keys().filter(|n| n.starts_with("access-control-")).collect();
        assert!(cors.is_empty(), "{path} answered with {cors:?}");
    }
}

#[tokio::test]
async fn with_sign_in_required_previews_still_load_modules_and_not_the_api() {
    let built = Built::new("tokens");
    let dir = built.dir();
    let (gw, _store, _token) =
        common::tokens::with_tokens("vendor", move |config| config.preview.vendor_dir = dir).await;
    // A sandboxed frame sends no cookie: the public modules must not need one.
    assert_eq!(get(gw.addr, REACT, &[("Origin", "null")]).await.status, 200);
    assert_eq!(get(gw.addr, "/vendor/manifest.json", &[]).await.status, 200);
    assert_eq!(get(gw.addr, "/api/models", &[("Origin", "null")]).await.status, 403);
    assert_eq!(get(gw.addr, "/api/models", &[]).await.status, 401);
}

#[tokio::test]
async fn without_a_build_the_gateway_serves_the_app_and_vendor_is_not_found() {
    let missing = std::env::temp_dir().join(format!("flint-vendor-none-{}", std::process::id()));
    let gw = gateway(&missing).await;
    assert_eq!(get(gw.addr, "/healthz", &[]).await.status, 200);
    for path in ["/vendor/manifest.json", REACT] {
        let answer = get(gw.addr, path, &[]).await;
        assert_eq!(answer.status, 404, "{path}");
        assert_eq!(answer.header("access-control-allow-origin"), Some("*"), "a preview sees the 404");
    }
    let warnings = gw.state.vendor().start_report(&[]).expect_err("nothing is built");
    assert!(warnings[0].contains("cargo xtask setup preview-packages"), "{warnings:?}");
}

#[tokio::test]
async fn packages_listed_in_the_config_but_not_built_are_warned_about() {
    let built = Built::new("report");
    let gw = gateway(&built.dir()).await;
    let ok = gw.state.vendor().start_report(&["react@19.3.1".to_owned()]).expect("react is built");
    assert!(ok.contains("2 packages"), "{ok}");
    let warnings = gw
        .state
        .vendor()
        .start_report(&["react@18.3.1".to_owned(), "canvas-confetti@1.9.3".to_owned()])
        .expect_err("neither is built");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[1].contains("canvas-confetti@1.9.3") && warnings[1].contains("setup preview-packages"));
}

#[tokio::test]
async fn a_set_up_run_while_serving_is_picked_up_without_a_restart() {
    let built = Built::new("rebuilt");
    let gw = gateway(&built.dir()).await;
    let next = "/vendor/react@19.3.2/index.js";
    assert_eq!(get(gw.addr, next, &[]).await.status, 404);
    let manifest = built.dir().join("manifest.json");
    let text = std::fs::read_to_string(&manifest).expect("manifest").replace("19.3.1", "19.3.2");
    std::fs::create_dir_all(built.dir().join("react@19.3.2")).expect("folder");
    std::fs::write(built.dir().join("react@19.3.2/index.js"), "export const v = 2;").expect("write");
    std::fs::write(&manifest, text).expect("write");
    // A later modification time whatever the file system's clock granularity.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options().write(true).open(&manifest).expect("open").set_modified(later).expect("touch");
    assert_eq!(get(gw.addr, next, &[]).await.body, "export const v = 2;");
    assert_eq!(get(gw.addr, REACT, &[]).await.status, 404, "the old build is no longer listed");
}
