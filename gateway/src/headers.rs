//! Security headers on every response.
//!
//! - The app's pages get a strict Content-Security-Policy: scripts only from the gateway itself
//!   (plus the app's inline loader in `index.html`, allowed by its hash), WebAssembly,
//!   styles inline (Monaco sets them), frames only from the gateway (the previews), no plugins, no
//!   `<base>`, no form posts, and no framing by anyone (`frame-ancestors 'none'`: another site
//!   cannot frame Flint and trick a click on Run or Share).
//! - The preview runtime (`preview.html`, where generated pages run) gets its own policy: a
//!   sandbox with scripts only, so it never has the gateway's origin even when opened as a tab, and
//!   framing by Flint alone. Generated pages may load what they like from the web; they cannot
//!   reach the gateway, whose origin check refuses their `Origin: null`.
//! - Everything: `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`, so no
//!   request that leaves a page carries Flint's address (a shared link's fragment is never sent
//!   anyway, but the path and the preview's address are nobody's business).

use axum::extract::Request;
use axum::http::header::{CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;
use sha2::{Digest, Sha256};

/// The files of the preview runtime: framed by the app, never given the app's origin.
pub const PREVIEW_PATHS: &[&str] = &["/preview.html"];

/// The preview runtime's policy.
pub const PREVIEW_CSP: &str = "sandbox allow-scripts; frame-ancestors 'self'";

/// The app's policy without any inline script (for responses other than `index.html`, such as
/// the worker's script, whose policy governs the worker).
pub fn app_csp(inline_script_hashes: &[String]) -> String {
    let hashes: String = inline_script_hashes.iter().map(|h| format!(" '{h}'")).collect();
    format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{hashes}; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; \
         frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

/// The `sha256-…` sources of every inline `<script>` in `html` (those without `src`), exactly as
/// the browser hashes them: the bytes between the tags.
pub fn inline_script_hashes(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut hashes = Vec::new();
    let mut from = 0;
    while let Some(rel) = lower[from..].find("<script") {
        let start = from + rel;
        let Some(open_end) = lower[start..].find('>').map(|i| start + i + 1) else { break };
        let Some(close) = lower[open_end..].find("</script").map(|i| open_end + i) else { break };
        let tag = &lower[start..open_end];
        if !has_attribute(tag, "src") {
            let digest = Sha256::digest(&html.as_bytes()[open_end..close]);
            hashes.push(format!("sha256-{}", base64::engine::general_purpose::STANDARD.encode(digest)));
        }
        from = close;
    }
    hashes
}

/// Whether the lower-cased start tag `tag` has attribute `name`.
fn has_attribute(tag: &str, name: &str) -> bool {
    tag.match_indices(name).any(|(at, _)| {
        let before = tag[..at].chars().next_back();
        let after = tag[at + name.len()..].trim_start().chars().next();
        before.is_some_and(char::is_whitespace) && matches!(after, Some('=' | '>' | '/') | None)
    })
}

/// The `security_headers` middleware: adds what a response lacks.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let preview = PREVIEW_PATHS.contains(&request.uri().path());
    let mut response = next.run(request).await;
    add_defaults(response.headers_mut(), preview);
    response
}

fn add_defaults(headers: &mut HeaderMap, preview: bool) {
    let set = |headers: &mut HeaderMap, name, value: &str| {
        if !headers.contains_key(&name)
            && let Ok(value) = HeaderValue::from_str(value)
        {
            headers.insert(name, value);
        }
    };
    set(headers, X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, REFERRER_POLICY, "no-referrer");
    if preview {
        set(headers, CONTENT_SECURITY_POLICY, PREVIEW_CSP);
        set(headers, X_FRAME_OPTIONS, "SAMEORIGIN");
    } else {
        set(headers, CONTENT_SECURITY_POLICY, &app_csp(&[]));
        set(headers, X_FRAME_OPTIONS, "DENY");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_scripts_are_hashed_and_external_ones_are_not() {
        let html = "<script src=\"vs/loader.js\"></script>\n<SCRIPT type=\"module\">import init from '/a.js';</SCRIPT>\
                    <script data-src=x>x</script>";
        let hashes = inline_script_hashes(html);
        assert_eq!(hashes.len(), 2, "{hashes:?}");
        let expected =
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(b"import init from '/a.js';"));
        assert_eq!(hashes[0], format!("sha256-{expected}"));
    }

    #[test]
    fn the_app_policy_is_strict_and_the_preview_is_sandboxed() {
        let csp = app_csp(&["sha256-abc".to_owned()]);
        for directive in ["frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "'sha256-abc'"] {
            assert!(csp.contains(directive), "{directive} missing from {csp}");
        }
        let scripts = csp.split(';').find(|d| d.trim().starts_with("script-src")).expect("script-src");
        assert!(!scripts.contains("'unsafe-inline'") && !scripts.contains("'unsafe-eval'"), "{scripts}");
        let mut headers = HeaderMap::new();
        add_defaults(&mut headers, true);
        assert_eq!(headers[CONTENT_SECURITY_POLICY], PREVIEW_CSP);
        assert_eq!(headers[REFERRER_POLICY], "no-referrer");
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'none'"));
        add_defaults(&mut headers, false);
        assert_eq!(headers[CONTENT_SECURITY_POLICY], "default-src 'none'", "a route's own policy is kept");
        assert_eq!(headers[X_FRAME_OPTIONS], "DENY");
        assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
}
