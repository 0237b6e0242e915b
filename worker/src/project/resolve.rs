//! Import specifiers → project paths or packages: plain string work, no parsing and no IO.
//!
//! A project path is `/`-separated, relative to the project root, without `.`, `..` or empty
//! segments (`src/components/Button.tsx`). Nothing here can name a path outside the root: a
//! specifier whose `..` climbs above it is refused ([`Target::Outside`]).

/// Extensions a module import may leave out, tried in this order (Vite's order, then `.mjs`).
pub const MODULE_EXTENSIONS: [&str; 5] = ["tsx", "ts", "jsx", "js", "mjs"];

/// Index files a directory import may name, tried in this order.
const INDEX_FILES: [&str; 4] = ["index.tsx", "index.ts", "index.jsx", "index.js"];

/// What an import specifier asks for, before looking at which files exist.
#[derive(Debug, PartialEq, Eq)]
pub enum Target {
    /// A file of the project: the normalised path, maybe without its extension (`components/Button`).
    /// `roots` lists the alternatives in order (the `@/` alias tries `src/` first, then the root).
    Project { roots: Vec<String> },
    /// A package from the vendored set: the whole specifier stays as written.
    Package { name: String },
    /// A URL (`https:`, `data:`, `blob:`, `node:` …, or `//host`): never loaded by a preview.
    Url,
    /// `..` climbs above the project root.
    Outside,
    /// Empty, or characters no package name has.
    Invalid,
}

/// Classifies `specifier` as imported by the file at project path `from`.
pub fn classify(from: &str, specifier: &str) -> Target {
    if specifier.is_empty() {
        return Target::Invalid;
    }
    if specifier.starts_with("//") || has_scheme(specifier) {
        return Target::Url;
    }
    let dir = from.rsplit_once('/').map_or("", |(dir, _)| dir);
    let project = |base: &str, rest: &str| match normalise(base, rest) {
        Some(path) => Target::Project { roots: vec![path] },
        None => Target::Outside,
    };
    if specifier == "." || specifier == ".." || specifier.starts_with("./") || specifier.starts_with("../") {
        return project(dir, specifier);
    }
    // Root-absolute (Vite serves `/src/App.tsx` from the project root); whatever it names must
    // still be a project file, so `/api/share` is refused as missing, never fetched.
    if let Some(rest) = specifier.strip_prefix('/') {
        return project("", rest);
    }
    // `@/` is the alias shadcn/ui and most Vite templates set up for `src/` (Next.js: the root).
    if let Some(rest) = specifier.strip_prefix("@/") {
        return match (normalise("src", rest), normalise("", rest)) {
            (Some(src), Some(root)) => Target::Project { roots: vec![src, root] },
            _ => Target::Outside,
        };
    }
    match package_name(specifier) {
        Some(name) => Target::Package { name: name.to_owned() },
        None => Target::Invalid,
    }
}

/// The npm package a bare specifier names: `@scope/pkg` for `@scope/pkg/sub`, `pkg` for
/// `pkg/sub`; `None` for what is not a package specifier (relative paths, URLs, odd characters).
pub fn package_name(specifier: &str) -> Option<&str> {
    // npm's rules, loosely: no leading dot, URL-safe characters (old names may have capitals).
    let valid = |s: &str| {
        !s.is_empty()
            && !s.starts_with('.')
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let mut parts = specifier.splitn(3, '/');
    let first = parts.next()?;
    let end = match first.strip_prefix('@') {
        Some(scope) => {
            let name = parts.next()?;
            (valid(scope) && valid(name)).then_some(first.len() + 1 + name.len())?
        }
        None => valid(first).then_some(first.len())?,
    };
    let rest = &specifier[end..];
    // A subpath may hold dots and dashes but nothing that would make it a URL or a query.
    let clean =
        rest.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/'));
    clean.then(|| &specifier[..end])
}

/// `base` joined with `rest` and normalised; `None` when `..` climbs above the root.
pub fn normalise(base: &str, rest: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in base.split('/').chain(rest.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// A file path as an answer names it (`./src/App.tsx`, `/App.tsx`, `src\App.tsx`) as a project
/// path; `None` when it is empty or climbs above the root.
pub fn project_path(name: &str) -> Option<String> {
    let path = normalise("", &name.trim().replace('\\', "/"))?;
    (!path.is_empty()).then_some(path)
}

/// The files a project import of `base` may mean, in the order they are tried: the exact path,
/// then each module extension added, then an index file inside it. A `.js`-style extension that
/// TypeScript's ESM convention writes for a `.ts` source (`./util.js` for `util.ts`) comes last.
pub fn candidates(base: &str) -> impl Iterator<Item = String> + '_ {
    let exact = std::iter::once(base.to_owned());
    let with_ext = MODULE_EXTENSIONS.iter().map(move |ext| format!("{base}.{ext}"));
    let index = INDEX_FILES.iter().map(move |file| match base {
        "" => (*file).to_owned(),
        base => format!("{base}/{file}"),
    });
    let ts_source =
        [("js", "ts"), ("js", "tsx"), ("jsx", "tsx")].into_iter().filter_map(move |(written, source)| {
            let stem = base.strip_suffix(written)?.strip_suffix('.')?;
            Some(format!("{stem}.{source}"))
        });
    exact.chain(with_ext).chain(index).chain(ts_source)
}

/// What kind of file a project path holds, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `.tsx .ts .jsx .js .mjs`: transformed to a module.
    Module,
    /// `.css`: collected as a style.
    Style,
    /// Anything else (`.html`, `.json`, `.md`, images): not importable.
    Other,
}

/// The kind of the file at `path`.
pub fn file_kind(path: &str) -> FileKind {
    let ext = path.rsplit_once('.').map_or("", |(_, ext)| ext);
    if MODULE_EXTENSIONS.contains(&ext) {
        FileKind::Module
    } else if ext == "css" {
        FileKind::Style
    } else {
        FileKind::Other
    }
}

/// `scheme:` at the start (RFC 3986: a letter, then letters, digits, `+ - .`).
fn has_scheme(specifier: &str) -> bool {
    let Some((scheme, _)) = specifier.split_once(':') else { return false };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
