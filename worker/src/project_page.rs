//! The preview page of a React project: its files built into modules ([`crate::project`]) and one
//! HTML document that runs them in the preview frame, with no bundler and no network for the
//! project's own files.
//!
//! The document carries an import map: each module as a `data:` URL under its `~/path` key, and
//! every bare import the modules make mapped to the gateway's vendored copy (the manifest the page
//! hands over as [`PreviewPackages`]). The preview frame writes the document like any finished
//! page; its base URL is the gateway's `preview.html`, so the vendored `/vendor/…` paths load from
//! the gateway (the only paths it serves to opaque-origin frames), and nothing else is fetched.
//! Tailwind's browser build styles the classes the components use.

use flint_protocol::language::is_project_file;
pub use flint_protocol::project::data_url;
use flint_protocol::project::{
    MOUNT_IMPORTS, MountSource, ProjectShape, ROOT_ID, mount_module, project_path, unbundle,
};
use flint_protocol::worker::{AnswerFile, PreviewPackages};

use crate::parser::StreamParser;
use crate::project::{EntryKind, ProjectBuild, ROOTS_KEY, ROOTS_MODULE, build, build_streaming, module_key};

/// Whether the answer is a project to build rather than a page to show: any TypeScript or JSX
/// file, or JavaScript that imports React.
pub fn is_project(parser: &StreamParser) -> bool {
    parser.files().iter().any(|f| is_project_file(f.name.as_deref(), &f.language, &f.content))
}

/// The answer's files as a project: `(path, text)`, complete lines only. A line cut mid-word
/// often still parses (`export default fun` is a reference to `fun`) and would run a page that
/// throws in place of the last good one.
pub fn project_files(parser: &StreamParser) -> Vec<(String, String)> {
    files_and_open(parser).0
}

/// [`project_files`], and the paths of those whose fence has not closed: the one being written (or
/// one the answer cut).
pub(crate) fn files_and_open(parser: &StreamParser) -> (Vec<(String, String)>, Vec<String>) {
    let mut files: Vec<(String, String)> = Vec::new();
    let mut open = Vec::new();
    for (i, file) in parser.files().iter().enumerate() {
        let taken: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        if let Some(path) = project_path(file.name.as_deref(), &file.language, i, &taken) {
            if !file.closed {
                open.push(path.clone());
            }
            files.push((path, parser.visible(Some(i)).0.to_owned()));
        }
    }
    (files, open)
}

/// The files an edit stream's text builds: a project's text ([`unbundle`]) is its files; a lone
/// component is `App.tsx`; `None` for anything else (a page).
pub fn edited_files(language: &str, text: &str) -> Option<Vec<(String, String)>> {
    if let Some(files) = unbundle(text) {
        return Some(files.into_iter().map(project_file).collect());
    }
    is_project_file(None, language, text).then(|| vec![("App.tsx".to_owned(), text.to_owned())])
}

/// An answer's file (a version's, a shared link's) as `(path, text)` for [`files_document`].
pub fn project_file(file: AnswerFile) -> (String, String) {
    let path = project_path(file.name.as_deref(), &file.language, 0, &[])
        .unwrap_or_else(|| file.name.clone().unwrap_or_default());
    (path, file.content)
}

/// The preview document of the project in `parser`, or the problems that keep it from running
/// (each a sentence starting with `file:line:column` where there is one). While it `streams`,
/// components not written yet stand in ([`build_streaming`]).
pub fn project_document(
    parser: &StreamParser,
    packages: &PreviewPackages,
    streams: bool,
) -> Result<String, Vec<String>> {
    let (files, open) = files_and_open(parser);
    if !streams {
        return files_document(&files, packages);
    }
    let built = build_streaming(&files, &open, parser.revision());
    page_of(built, &files, packages).map(|(document, _)| document)
}

/// The preview document of the project `files` (`(path, text)`), or the problems that keep it
/// from running.
pub fn files_document(files: &[(String, String)], packages: &PreviewPackages) -> Result<String, Vec<String>> {
    files_page(files, packages).map(|(document, _)| document)
}

/// [`files_document`], with what the build found (for an export of the project).
pub fn files_page(
    files: &[(String, String)],
    packages: &PreviewPackages,
) -> Result<(String, ProjectShape), Vec<String>> {
    page_of(build(files, None), files, packages)
}

fn page_of(
    built: ProjectBuild,
    files: &[(String, String)],
    packages: &PreviewPackages,
) -> Result<(String, ProjectShape), Vec<String>> {
    if !built.errors.is_empty() {
        return Err(built.errors.iter().map(ToString::to_string).collect());
    }
    let Some(entry) = &built.entry else {
        return Err(vec!["The answer has no component to show yet (App.tsx or main.tsx).".to_owned()]);
    };
    // The page imports the entry's default export: a file that has none yet (one just begun)
    // would run a page that fails to load.
    let entry_js = built.modules.iter().find(|m| m.path == entry.path).map_or("", |m| m.js.as_str());
    if entry.kind == EntryKind::Component
        && !entry_js.contains("export default")
        && !entry_js.contains(" as default")
    {
        return Err(vec![format!(
            "{}: has no default export (the component the preview shows).",
            entry.path
        )]);
    }
    let missing = missing_packages(&built, packages);
    if !missing.is_empty() {
        return Err(missing);
    }
    // Unnamed CSS blocks and CSS files no module imports still style the page, like a page's
    // own stylesheets.
    let imported: Vec<&str> = built.styles.iter().map(|(p, _)| p.as_str()).collect();
    let loose = files.iter().filter(|(p, _)| p.ends_with(".css") && !imported.contains(&p.as_str()));
    let loose: Vec<&(String, String)> = loose.collect();
    let styles: Vec<&str> = built
        .styles
        .iter()
        .map(|(_, css)| css.as_str())
        .chain(loose.iter().map(|(_, c)| c.as_str()))
        .collect();
    let shape = ProjectShape {
        paths: files.iter().map(|(p, _)| p.clone()).collect(),
        entry: entry.path.clone(),
        mounts: entry.kind == EntryKind::Mount,
        specifiers: built.specifiers.iter().cloned().collect(),
        packages: built.packages.iter().cloned().collect(),
        loose_styles: loose.iter().map(|(p, _)| p.clone()).collect(),
    };
    Ok((document(&built, &entry.path, entry.kind, &styles, packages), shape))
}

/// Each bare import the preview cannot resolve, as a sentence naming the package and the setting
/// that adds it.
fn missing_packages(built: &ProjectBuild, packages: &PreviewPackages) -> Vec<String> {
    if packages.imports.is_empty() {
        return vec![
            "React previews need the preview packages, which this gateway has not built: run `cargo xtask \
             setup preview-packages` and restart it."
                .to_owned(),
        ];
    }
    let needed = built.specifiers.iter().map(String::as_str).chain(MOUNT_IMPORTS);
    let mut missing: Vec<String> = needed
        .filter(|s| !packages.imports.contains_key(*s))
        .map(|s| {
            let package = crate::project::package_name(s).unwrap_or(s);
            format!(
                "[preview] '{s}' is not a package this preview has: add \"{package}\" to `[preview] packages` \
                 in flint.toml (installed by the next set-up)."
            )
        })
        .collect();
    missing.dedup();
    missing
}

fn document(
    built: &ProjectBuild,
    entry: &str,
    kind: EntryKind,
    styles: &[&str],
    packages: &PreviewPackages,
) -> String {
    // A streaming build's keys carry its generation: the entry's is the one its module has.
    let key =
        built.modules.iter().find(|m| m.path == entry).map_or_else(|| module_key(entry), |m| m.key.clone());
    let start = match kind {
        EntryKind::Mount => format!("import {};\n", js_string(&key)),
        EntryKind::Component => mount_module(&key, MountSource::Preview),
    };
    page(built, &start, styles, packages, "")
}

/// The document: the import map (every vendored module, then the built ones), Tailwind, the
/// styles (marked, so a swap replaces them), the root, `note`, and the `start` module.
pub(crate) fn page(
    built: &ProjectBuild,
    start: &str,
    styles: &[&str],
    packages: &PreviewPackages,
    note: &str,
) -> String {
    // Every vendored module, not only those the project names: they import each other
    // (`react-dom/client` imports `react-dom` and `react`), and only what is imported loads.
    let mut imports = serde_json::Map::new();
    for (specifier, url) in &packages.imports {
        imports.insert(specifier.clone(), url.clone().into());
    }
    if packages.imports.contains_key("react-dom/client") {
        imports.insert(ROOTS_KEY.to_owned(), data_url(ROOTS_MODULE).into());
    }
    for module in &built.modules {
        imports.insert(module.key.clone(), data_url(&module.js).into());
    }
    let map = serde_json::json!({ "imports": imports }).to_string();
    let mut html = String::with_capacity(map.len() + 1024);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str("<script type=\"importmap\">");
    html.push_str(&script_safe(&map));
    html.push_str("</script>\n");
    if let Some(tailwind) = &packages.tailwind {
        html.push_str("<script src=\"");
        html.push_str(&attribute_safe(tailwind));
        html.push_str("\"></script>\n");
    }
    for css in styles {
        html.push_str("<style data-flint-project>\n");
        html.push_str(&css.replace("</style", "<\\/style"));
        html.push_str("</style>\n");
    }
    html.push_str(&format!(
        "</head>\n<body>\n<div id=\"{ROOT_ID}\"></div>\n{note}<script type=\"module\">\n"
    ));
    html.push_str(&script_safe(start));
    html.push_str("</script>\n</body>\n</html>\n");
    html
}

/// `text` (JSON, or our own script whose only `<` are inside string literals) safe inside a
/// `<script>` element: each `<` becomes `\u003c`, which JSON and JS strings read as `<`, so no
/// `</script` or `<!--` in a path or a module can end the element or change how it parses.
fn script_safe(text: &str) -> String {
    text.replace('<', "\\u003c")
}

fn attribute_safe(text: &str) -> String {
    text.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;")
}

pub(crate) fn js_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

#[cfg(test)]
#[path = "project_page_tests.rs"]
mod tests;
