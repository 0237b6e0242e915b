//! `index.html`'s build instructions (Trunk's `<link data-trunk …>` tags) read into a plan, and the
//! built page written from it.
//!
//! `index.html` stays written for Trunk, so `trunk serve` keeps working for developers; this reads
//! the subset Flint uses and refuses anything else by name, so a tag added for Trunk alone cannot be
//! silently left out of the build that `cargo xtask` serves and tests.

use std::path::{Component, Path};

use anyhow::{Context, Result, bail};

/// One `<link data-trunk …>` tag of the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asset {
    /// A crate built to wasm: the page's app, or a worker the app starts itself.
    Rust(RustAsset),
    /// A stylesheet, copied under a hashed name and linked.
    Css { href: String },
    /// A folder copied under `target` (its own name when not given).
    CopyDir { href: String, target: Option<String> },
    /// A file copied beside the page.
    CopyFile { href: String },
}

/// A `rel="rust"` tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustAsset {
    /// The crate's `Cargo.toml`, relative to the page.
    pub manifest: String,
    /// The binary target (`data-bin`).
    pub bin: String,
    /// A worker keeps stable file names and gets no script tag; the app starts it.
    pub worker: bool,
    /// `data-loader-shim`: a `<bin>_loader.js` module that initialises the worker's wasm.
    pub loader_shim: bool,
    /// `data-wasm-opt`: `None` for `0` (not run), `""` when absent (plain `-O`, as Trunk does).
    pub wasm_opt: Option<String>,
    /// `data-wasm-opt-params`, split at whitespace.
    pub wasm_opt_params: Vec<String>,
    /// `data-keep-debug`: wasm-bindgen keeps the name sections (profiles name functions).
    pub keep_debug: bool,
}

/// Where a built asset goes in the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// The tag is removed: a worker, a copied file or folder.
    Nothing,
    /// The app: preloads in the head, and a module script where the tag was.
    App { js: String, wasm: String, preloads: Vec<Preload> },
    /// A stylesheet link where the tag was.
    Stylesheet { href: String, integrity: String },
}

/// A `<link rel="modulepreload">` (a module) or `<link rel="preload" as="fetch">` (the wasm).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preload {
    pub href: String,
    pub integrity: String,
    pub wasm: bool,
}

/// The page's `data-trunk` tags in order, each with the byte range of its text in the page; `page`
/// names the file in errors. Every `<link>`, `<script>` and `<style>` outside comments is looked at,
/// whatever its case, line breaks or attribute order, so a tag Trunk would build is either built here
/// or refused by name, never left in the page.
pub fn assets(html: &str, page: &str) -> Result<Vec<(std::ops::Range<usize>, Asset)>> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find('<').map(|i| i + from) {
        if lower[at..].starts_with("<!--") {
            from = lower[at..].find("-->").map_or(html.len(), |i| at + i + 3);
            continue;
        }
        let name_end =
            lower[at + 1..].find(|c: char| !c.is_ascii_alphanumeric()).map_or(html.len(), |i| at + 1 + i);
        let name = &lower[at + 1..name_end];
        if !matches!(name, "link" | "script" | "style") {
            from = at + 1;
            continue;
        }
        let end = html[at..]
            .find('>')
            .map(|i| at + i + 1)
            .with_context(|| format!("{page}: a <{name}> tag is not closed"))?;
        let tag = &html[at..end];
        // Only a tag with the attribute is parsed strictly: any other may be written as HTML allows.
        if lower[name_end..end]
            .split(|c: char| c.is_whitespace() || c == '=')
            .any(|word| word == "data-trunk")
        {
            if name != "link" {
                bail!("{page}: {tag}: cargo xtask builds <link data-trunk> tags only");
            }
            let inner = html[name_end..end - 1].trim_end_matches('/');
            let asset = attributes(inner).and_then(|attrs| asset(&attrs));
            found.push((at..end, asset.with_context(|| format!("{page}: {tag}"))?));
        }
        from = end;
    }
    Ok(found)
}

/// The wasm-opt levels Trunk accepts (`data-wasm-opt`); `0` turns it off.
const WASM_OPT_LEVELS: &[&str] = &["0", "1", "2", "3", "4", "s", "z"];

fn asset(attrs: &[(String, Option<String>)]) -> Result<Asset> {
    let get = |name: &str| attrs.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.clone());
    let has = |name: &str| attrs.iter().any(|(k, _)| k == name);
    let rel = get("rel").unwrap_or_default();
    let known: &[&str] = match rel.as_str() {
        "rust" => &[
            "data-bin",
            "data-type",
            "data-bindgen-target",
            "data-loader-shim",
            "data-wasm-opt",
            "data-wasm-opt-params",
            "data-keep-debug",
        ],
        "copy-dir" => &["data-target-path"],
        "css" | "copy-file" => &[],
        _ => bail!("cargo xtask does not build rel=\"{rel}\" (it builds rust, css, copy-dir and copy-file)"),
    };
    if let Some((name, _)) = attrs
        .iter()
        .find(|(k, _)| !["data-trunk", "rel", "href"].contains(&k.as_str()) && !known.contains(&k.as_str()))
    {
        bail!("cargo xtask does not know the attribute {name}");
    }
    let href = get("href").context("the tag has no href")?;
    Ok(match rel.as_str() {
        "rust" => {
            let worker = match get("data-type").as_deref() {
                None | Some("main") => false,
                Some("worker") => true,
                Some(other) => bail!("data-type=\"{other}\" is neither main nor worker"),
            };
            // A worker's default target in Trunk is no-modules; Flint's app imports ES modules.
            match get("data-bindgen-target").as_deref() {
                Some("web") => {}
                None if !worker => {}
                None => bail!(
                    "a worker needs data-bindgen-target=\"web\" (Trunk's default for workers is no-modules)"
                ),
                Some(other) => bail!("cargo xtask builds wasm-bindgen's web target only, not \"{other}\""),
            }
            // Absent, Trunk's release build runs plain `-O`.
            let level = get("data-wasm-opt").unwrap_or_default();
            if !level.is_empty() && !WASM_OPT_LEVELS.contains(&level.as_str()) {
                bail!("data-wasm-opt=\"{level}\" is not one of {}", WASM_OPT_LEVELS.join(", "));
            }
            RustAsset {
                manifest: href,
                bin: get("data-bin").context("a rust tag needs data-bin")?,
                worker,
                loader_shim: has("data-loader-shim"),
                wasm_opt: (level != "0").then_some(level),
                wasm_opt_params: get("data-wasm-opt-params")
                    .map(|p| p.split_whitespace().map(str::to_owned).collect())
                    .unwrap_or_default(),
                keep_debug: has("data-keep-debug"),
            }
            .into()
        }
        "copy-dir" => {
            let target = get("data-target-path");
            // The copy lands inside the build, never beside it.
            if target
                .as_deref()
                .is_some_and(|t| Path::new(t).components().any(|c| !matches!(c, Component::Normal(_))))
            {
                bail!("data-target-path must be a folder inside the build, not {target:?}");
            }
            Asset::CopyDir { href, target }
        }
        "css" => Asset::Css { href },
        _ => Asset::CopyFile { href },
    })
}

impl From<RustAsset> for Asset {
    fn from(rust: RustAsset) -> Self {
        Asset::Rust(rust)
    }
}

/// `name="value"` and bare `name` attributes. Values are taken as written (Flint's tags escape
/// nothing); a quote left open is an error.
fn attributes(text: &str) -> Result<Vec<(String, Option<String>)>> {
    let mut attrs = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let name_end = rest.find(|c: char| c == '=' || c.is_whitespace()).unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = &rest[name_end..];
        let value = if let Some(after) = rest.strip_prefix('=') {
            let quote =
                after.chars().next().filter(|c| *c == '"' || *c == '\'').context("an unquoted value")?;
            let body = &after[1..];
            let close = body.find(quote).context("a quote is not closed")?;
            rest = &body[close + 1..];
            Some(body[..close].to_owned())
        } else {
            None
        };
        attrs.push((name, value));
        rest = rest.trim_start();
    }
    Ok(attrs)
}

/// The page with each tag replaced by its output, and the app's preloads at the end of the head.
pub fn render(html: &str, outputs: &[(std::ops::Range<usize>, Output)]) -> Result<String> {
    let mut page = String::with_capacity(html.len() + 2048);
    let mut preloads = String::new();
    let mut from = 0;
    for (range, output) in outputs {
        page.push_str(&html[from..range.start]);
        match output {
            Output::Nothing => {}
            Output::Stylesheet { href, integrity } => {
                page.push_str(&format!(r#"<link rel="stylesheet" href="/{href}" integrity="{integrity}">"#));
            }
            Output::App { js, wasm, preloads: links } => {
                // The app's loader is inline; the gateway's policy allows it by its hash. Unlike
                // Trunk's it sets no `window.wasmBindings` and sends no `TrunkApplicationStarted`:
                // nothing in Flint reads either.
                page.push_str(&format!(
                    "<script type=\"module\">\nimport init from '/{js}';\nawait init({{ module_or_path: '/{wasm}' }});\n</script>"
                ));
                for link in links {
                    preloads.push_str(&if link.wasm {
                        format!(
                            r#"<link rel="preload" href="/{}" crossorigin="anonymous" integrity="{}" as="fetch" type="application/wasm">"#,
                            link.href, link.integrity
                        )
                    } else {
                        format!(
                            r#"<link rel="modulepreload" href="/{}" crossorigin="anonymous" integrity="{}">"#,
                            link.href, link.integrity
                        )
                    });
                    preloads.push('\n');
                }
            }
        }
        from = range.end;
    }
    page.push_str(&html[from..]);
    let head_end = page.find("</head>").context("index.html has no </head>")?;
    page.insert_str(head_end, &preloads);
    Ok(page)
}

#[cfg(test)]
#[path = "page_tests.rs"]
mod tests;
