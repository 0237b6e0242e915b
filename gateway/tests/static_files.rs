//! The built app's files: precompressed copies sent to browsers that accept them, hashed and
//! versioned files cached for a year, `index.html` revalidated, security headers kept on all.
//! The router is built in-process over a temporary `dist/`.

use std::path::PathBuf;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_SECURITY_POLICY, ETAG, HOST, IF_NONE_MATCH,
    VARY, X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, Request, StatusCode};
use flint_gateway::config::Config;
use flint_gateway::static_files::{IMMUTABLE, REVALIDATE};
use flint_gateway::{AppState, app};
use tower::ServiceExt as _;

const HASHED_JS: &str = "flint-app-e49ff100879c269b.js";
const INDEX: &str = "<!DOCTYPE html><title>Flint</title><script type=\"module\">import '/app.js';</script>";

/// A `dist/` with plain, `.br` and `.gz` versions of each file (each copy's body says which it is,
/// so a test sees which one was sent), and the router serving it.
struct Dist {
    dir: PathBuf,
    router: Router,
}

impl Dist {
    fn new(tag: &str) -> Self {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("flint-static-{tag}-{}-{nanos}", std::process::id()));
        for (path, body) in [
            (HASHED_JS, "console.log('app')"),
            ("flint-worker.js", "console.log('worker')"),
            ("vs-0.57.0/loader.js", "/* loader */"),
            ("index.html", INDEX),
        ] {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("dist folder");
            std::fs::write(&file, body).expect("write");
            std::fs::write(dir.join(format!("{path}.br")), format!("br:{path}")).expect("write");
            std::fs::write(dir.join(format!("{path}.gz")), format!("gz:{path}")).expect("write");
        }
        let mut config = Config::default();
        config.server.dist = dir.clone();
        // Never the user's data folder.
        config.share.database = dir.join("shares.sqlite3");
        let router = app(AppState::from_config(&config, &|_| None));
        Self { dir, router }
    }

    async fn get(&self, path: &str, headers: &[(&str, &str)]) -> (StatusCode, HeaderMap, String) {
        let mut request = Request::get(path).header(HOST, "127.0.0.1:8787");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = self
            .router
            .clone()
            .oneshot(request.body(Body::empty()).expect("request"))
            .await
            .expect("response");
        let (parts, body) = response.into_parts();
        let body = to_bytes(body, usize::MAX).await.expect("body");
        (parts.status, parts.headers, String::from_utf8_lossy(&body).into_owned())
    }
}

impl Drop for Dist {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn header(headers: &HeaderMap, name: impl axum::http::header::AsHeaderName) -> &str {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// The security headers every response carries (`headers.rs`).
fn assert_secured(headers: &HeaderMap, what: &str) {
    assert_eq!(header(headers, X_CONTENT_TYPE_OPTIONS), "nosniff", "{what}: nosniff missing");
    assert!(
        header(headers, CONTENT_SECURITY_POLICY).contains("frame-ancestors 'none'"),
        "{what}: no app CSP"
    );
}

#[tokio::test]
async fn brotli_is_sent_to_browsers_that_accept_it() {
    let dist = Dist::new("br");
    let (status, headers, body) =
        dist.get(&format!("/{HASHED_JS}"), &[("accept-encoding", "gzip, deflate, br")]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, format!("br:{HASHED_JS}"), "the .br copy is sent");
    assert_eq!(header(&headers, CONTENT_ENCODING), "br");
    assert!(header(&headers, VARY).to_ascii_lowercase().contains("accept-encoding"), "{headers:?}");
    assert!(
        header(&headers, "content-type").starts_with("text/javascript"),
        "type of the original: {headers:?}"
    );
    assert_secured(&headers, "a brotli file");
}

#[tokio::test]
async fn gzip_is_sent_to_browsers_without_brotli() {
    let dist = Dist::new("gz");
    let (status, headers, body) = dist.get("/flint-worker.js", &[("accept-encoding", "gzip")]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, "gz:flint-worker.js");
    assert_eq!(header(&headers, CONTENT_ENCODING), "gzip");
    assert!(header(&headers, VARY).to_ascii_lowercase().contains("accept-encoding"));
}

#[tokio::test]
async fn the_plain_file_is_sent_without_accept_encoding() {
    let dist = Dist::new("plain");
    let (status, headers, body) = dist.get(&format!("/{HASHED_JS}"), &[]).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "console.log('app')"));
    assert!(headers.get(CONTENT_ENCODING).is_none(), "{headers:?}");
    assert!(
        header(&headers, VARY).to_ascii_lowercase().contains("accept-encoding"),
        "caches must still vary"
    );
}

#[tokio::test]
async fn hashed_and_versioned_files_are_immutable_and_the_rest_revalidated() {
    let dist = Dist::new("cache");
    for (path, expected) in [
        (format!("/{HASHED_JS}"), IMMUTABLE),
        ("/vs-0.57.0/loader.js".to_owned(), IMMUTABLE),
        ("/flint-worker.js".to_owned(), REVALIDATE),
    ] {
        let (status, headers, _) = dist.get(&path, &[("accept-encoding", "br")]).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(header(&headers, CACHE_CONTROL), expected, "{path}");
        assert_secured(&headers, &path);
    }
    // A missing hashed file is not cached for a year.
    let (status, headers, _) = dist.get("/flint-app-0000000000000000.js", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(header(&headers, CACHE_CONTROL), REVALIDATE);
}

#[tokio::test]
async fn index_html_is_compressed_revalidated_and_keeps_its_policy() {
    let dist = Dist::new("index");
    for path in ["/", "/index.html", "/some/client/route"] {
        let (status, headers, body) = dist.get(path, &[("accept-encoding", "gzip, br")]).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(body, "br:index.html", "{path}: the .br copy");
        assert_eq!(header(&headers, CONTENT_ENCODING), "br", "{path}");
        assert_eq!(header(&headers, CACHE_CONTROL), REVALIDATE, "{path}");
        assert!(header(&headers, VARY).to_ascii_lowercase().contains("accept-encoding"), "{path}");
        assert!(header(&headers, "content-type").starts_with("text/html"), "{path}");
        assert_secured(&headers, path);
        // The policy allows the page's inline loader, hashed from the plain file.
        assert!(header(&headers, CONTENT_SECURITY_POLICY).contains("'sha256-"), "{path}: {headers:?}");
    }
    let (_, headers, body) = dist.get("/", &[("accept-encoding", "gzip")]).await;
    assert_eq!((body.as_str(), header(&headers, CONTENT_ENCODING)), ("gz:index.html", "gzip"));
    let (_, headers, body) = dist.get("/", &[]).await;
    assert_eq!(body, INDEX);
    assert!(headers.get(CONTENT_ENCODING).is_none());
}

#[tokio::test]
async fn an_unchanged_index_html_is_answered_with_304_and_its_policy() {
    let dist = Dist::new("etag");
    let (_, headers, _) = dist.get("/", &[("accept-encoding", "br")]).await;
    let etag = header(&headers, ETAG).to_owned();
    assert!(!etag.is_empty(), "index.html has an ETag");
    let (status, revalidated, body) =
        dist.get("/", &[("accept-encoding", "br"), ("if-none-match", &etag)]).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());
    // A 304's headers replace the cached ones: the inline loader must stay allowed.
    assert_eq!(header(&revalidated, CONTENT_SECURITY_POLICY), header(&headers, CONTENT_SECURITY_POLICY));
    assert_eq!(header(&revalidated, CACHE_CONTROL), REVALIDATE);

    // A rebuilt app is a new page, whatever the browser holds.
    std::fs::write(dist.dir.join("index.html"), format!("{INDEX}<!-- rebuilt -->")).expect("write");
    let (status, headers, body) = dist.get("/", &[(IF_NONE_MATCH.as_str(), &etag)]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.ends_with("<!-- rebuilt -->"), "the new page, not the older .br copy: {body}");
    assert_ne!(header(&headers, ETAG), etag);
    let (_, _, body) = dist.get("/", &[(ACCEPT_ENCODING.as_str(), "br")]).await;
    assert!(body.ends_with("<!-- rebuilt -->"), "a copy older than index.html is not sent: {body}");
}
