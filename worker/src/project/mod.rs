//! Projects: the files of a React (TSX/JSX/TS) answer turned into browser modules a preview frame
//! can run with no bundler and no network for the project's own files.
//!
//! [`transform()`] turns one file into JavaScript (types stripped, JSX compiled with the automatic
//! runtime in development mode: `jsxDEV` from `react/jsx-dev-runtime`, each element with
//! `{ fileName, lineNumber, columnNumber }`, `fileName` being the project path). [`build()`] does it for
//! every file the entry reaches, resolves their imports and rewrites each project import to the
//! imported file's **module key**.
//!
//! # Module keys and the preview's import map
//!
//! A project file's key is `~/` followed by its project path: `components/Button.tsx` is imported as
//! `~/components/Button.tsx` ([`module_key`]). The key is a *bare* specifier to the browser (it does
//! not start with `/`, `./` or `../` and has no scheme), so the frame's import map alone decides
//! what it loads: it is never resolved against the frame's URL, and one the map lacks fails with
//! "Failed to resolve module specifier" instead of fetching anything. npm names cannot start with
//! `~`, so keys never meet a package. The frame maps every module and every vendored import:
//!
//! ```json
//! { "imports": {
//!     "~/main.tsx": "blob:…", "~/App.tsx": "blob:…", "~/components/Button.tsx": "blob:…",
//!     "react": "<vendored>/react.js", "react/jsx-dev-runtime": "<vendored>/react-jsx-dev-runtime.js",
//!     "react-dom/client": "<vendored>/react-dom-client.js", "lucide-react": "<vendored>/lucide-react.js"
//! } }
//! ```
//!
//! then starts the entry: `import "~/main.tsx"` for [`EntryKind::Mount`], or for
//! [`EntryKind::Component`] imports the default export of `~/App.tsx` and renders it itself.
//! [`ProjectBuild::specifiers`] lists every bare specifier the modules import (for the map's
//! entries), [`ProjectBuild::packages`] their packages (to check against the vendored set).
//!
//! # What resolves
//!
//! Relative specifiers (`./components/Button`, `../lib/util.ts`) resolve against the importing file;
//! root-absolute ones (`/src/App.tsx`) and the `@/` alias (shadcn/ui's, `src/` then the root)
//! against the project root. Each tries the exact path, then `.tsx .ts .jsx .js .mjs`, then
//! `/index.{tsx,ts,jsx,js}` (and `./util.js` finds `util.ts`, TypeScript's ESM convention). `.css`
//! imports are collected as styles, in the order the modules would run, and removed from the JS.
//! Anything else is an error naming the file, line and specifier: a file the project lacks, `..`
//! above the root, any URL (`https:`, `data:`, `blob:`, `//host`). Nothing is ever rewritten to a
//! path that was not found.
//!
//! Every input is answered, never with a panic: a file cut mid-stream is a syntax error like any
//! other, and the caller keeps its last good build while [`ProjectBuild::errors`] is not empty.

mod build;
mod nesting;
mod pending;
mod resolve;
mod roots;
mod stamp;
mod transform;

use std::collections::BTreeSet;
use std::fmt;

pub use build::{build, build_streaming};
pub use resolve::package_name;
pub(crate) use resolve::{FileKind, Target, classify, file_kind};
pub use roots::{ROOTS_KEY, ROOTS_MODULE};

/// A file over this many bytes is not built (models write pages of tens of KB; a 50 MB "file" is
/// an attack on the worker's memory, not a component).
pub const MAX_FILE_BYTES: usize = 2 << 20;

/// A project over this many bytes in all is not built.
pub const MAX_PROJECT_BYTES: usize = 8 << 20;

/// Why a file (or the project) did not build.
///
/// `line` and `column` are 1-based (columns in UTF-16 units, as the editor counts); 0 when the
/// error is about the whole file. An empty `path` means the whole project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransformError {
    /// The project path (`components/Button.tsx`).
    pub path: String,
    /// 1-based line, or 0.
    pub line: u32,
    /// 1-based column, or 0.
    pub column: u32,
    /// What is wrong, in the parser's words or ours.
    pub message: String,
}

impl TransformError {
    fn whole_file(path: &str, message: impl Into<String>) -> Self {
        Self { path: path.to_owned(), line: 0, column: 0, message: message.into() }
    }

    fn at(path: &str, source: &str, offset: u32, message: impl Into<String>) -> Self {
        let (line, column) = line_column(source, offset);
        Self { path: path.to_owned(), line, column, message: message.into() }
    }
}

impl fmt::Display for TransformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.path.as_str(), self.line) {
            ("", _) => write!(f, "{}", self.message),
            (path, 0) => write!(f, "{path}: {}", self.message),
            (path, line) => write!(f, "{path}:{line}:{}: {}", self.column, self.message),
        }
    }
}

impl std::error::Error for TransformError {}

/// One built module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// The project path (`components/Button.tsx`).
    pub path: String,
    /// Its module key (`~/components/Button.tsx`), what other modules import.
    pub key: String,
    /// The JavaScript.
    pub js: String,
}

/// How the preview starts a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// The entry mounts itself (`main.tsx` with `createRoot(…).render(…)`): import it.
    Mount,
    /// The entry is a component (`App.tsx`): import its default export and render it.
    Component,
}

/// The file a project starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its project path.
    pub path: String,
    /// How to start it.
    pub kind: EntryKind,
}

/// A project built for a preview. It is runnable when `errors` is empty; otherwise `modules` holds
/// what did build, for reports, and the caller keeps showing its last good build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectBuild {
    /// Every module the entry reaches, in the order they would first run: what a module imports
    /// before it, the entry last, then what is only imported with `import()`.
    pub modules: Vec<Module>,
    /// `(path, css)` of every style the modules import, in the order a bundler would apply them.
    pub styles: Vec<(String, String)>,
    /// Where the preview starts; `None` when the project has no module to start from.
    pub entry: Option<Entry>,
    /// The packages the modules import (`react`, `react-dom`, `@tanstack/react-query`).
    pub packages: BTreeSet<String>,
    /// The bare specifiers as written (`react`, `react-dom/client`, `react/jsx-dev-runtime`).
    pub specifiers: BTreeSet<String>,
    /// Packages' stylesheets imported for their effect (`react-toastify/dist/ReactToastify.css`),
    /// removed from the JS like the project's own styles.
    pub package_styles: BTreeSet<String>,
    /// What stands in for a file the streaming answer has not written yet (its path, or the
    /// import's root when it has not begun); empty once the answer is whole.
    pub pending: Vec<String>,
    /// Every error met building the files the entry reaches (a file it does not reach, such as a
    /// `vite.config.ts`, is never built), in the order they were built; empty when the build is good.
    pub errors: Vec<TransformError>,
}

/// The key a project file is imported by in built modules: `~/` + its project path.
pub fn module_key(path: &str) -> String {
    format!("~/{path}")
}

/// The key of a project file in a streaming build of `generation`: `~7/components/Button.tsx`.
/// Still bare and still never a package's (npm names cannot start with `~`).
pub fn streaming_key(generation: u64, path: &str) -> String {
    format!("~{generation}/{path}")
}

/// One file to JavaScript with its imports as written (no resolution): TypeScript stripped, JSX
/// in development mode. The first error, if any (see [`build()`] for all of them).
pub fn transform(path: &str, source: &str) -> Result<String, TransformError> {
    if source.len() > MAX_FILE_BYTES {
        return Err(TransformError::whole_file(path, too_big(source.len(), MAX_FILE_BYTES)));
    }
    let compiled = transform::compile(path, source, &mut |_| transform::Rewrite::Keep);
    compiled.map(|compiled| compiled.js).map_err(|mut errors| {
        // `compile` never returns an empty list; the fallback only keeps this total.
        if errors.is_empty() {
            TransformError::whole_file(path, "did not build")
        } else {
            errors.swap_remove(0)
        }
    })
}

fn too_big(len: usize, limit: usize) -> String {
    format!("is {:.1} MB; the limit is {} MiB", len as f64 / 1e6, limit >> 20)
}

/// 1-based line and UTF-16 column of byte `offset` in `source` (clamped to the text).
fn line_column(source: &str, offset: u32) -> (u32, u32) {
    let mut at = (offset as usize).min(source.len());
    while !source.is_char_boundary(at) {
        at -= 1;
    }
    let before = &source[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let column = before[line_start..].encode_utf16().count() + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}
