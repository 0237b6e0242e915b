//! Imports run one way: in each crate, within each module, the children's subtrees must not use
//! each other in a circle (`a` uses `b`, `b` uses `a`, possibly through others). A circle makes two
//! modules one in all but name: neither can be read, tested or replaced alone. Checked by
//! `cargo xtask lint` and, on the workspace's own crates, by this module's tests. The same lint
//! keeps `unsafe` code to the one file reviewed for it ([`unsafe_only_where_reviewed`]).
//!
//! The check reads paths, not types: `crate::a::b`, `super::x`, `self::x` outside comments and
//! outside `#[cfg(test)]` modules (tests may reach anywhere). A path names the longest module it
//! starts with; a parent using its own child (or a child its parent) is not a circle between
//! siblings and is allowed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};

/// A module's path inside its crate (`["run", "tiles"]`); the crate root is empty.
type ModPath = Vec<String>;

/// A circle found among the children of `parent`: each member and the members it uses.
#[derive(Debug, PartialEq, Eq)]
pub struct Circle {
    /// The module whose children form the circle (`""` for the crate root).
    pub parent: String,
    /// Each member of the circle with the other members it uses.
    pub uses: BTreeMap<String, BTreeSet<String>>,
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parent = if self.parent.is_empty() { "the crate root" } else { &self.parent };
        write!(f, "modules under {parent} use each other in a circle:")?;
        for (module, uses) in &self.uses {
            let uses: Vec<&str> = uses.iter().map(String::as_str).collect();
            write!(f, " {module} → {};", uses.join(", "))?;
        }
        Ok(())
    }
}

/// The module path of `file` (relative to `src/`): `run/tiles.rs` and `run/tiles/mod.rs` are
/// `run::tiles`; `lib.rs` and `main.rs` are the root.
fn module_of(file: &Path) -> ModPath {
    let mut parts: ModPath =
        file.with_extension("").iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("lib" | "main" | "mod")) {
        parts.pop();
    }
    parts
}

/// The source without comments and without what follows the first `#[cfg(test)]`.
fn code_of(source: &str) -> String {
    let source = source.split("#[cfg(test)]").next().unwrap_or_default();
    source.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// Every `crate::…`, `super::…` and `self::…` path in `code`, resolved from `module`.
fn paths_in(code: &str, module: &ModPath) -> Vec<ModPath> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let word_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(word_char(bytes[i - 1]) || bytes[i - 1] == b':');
        if !starts_word || !word_char(bytes[i]) {
            i += 1;
            continue;
        }
        let end =
            (i..bytes.len()).find(|&j| !(word_char(bytes[j]) || bytes[j] == b':')).unwrap_or(bytes.len());
        let path: Vec<&str> = code[i..end].split("::").filter(|s| !s.is_empty()).collect();
        i = end;
        let mut resolved: ModPath = match path.first() {
            Some(&"crate") => Vec::new(),
            Some(&"super") | Some(&"self") => module.clone(),
            _ => continue,
        };
        let mut rest = &path[1..];
        if path[0] == "super" {
            resolved.pop();
            while rest.first() == Some(&"super") {
                resolved.pop();
                rest = &rest[1..];
            }
        }
        resolved.extend(rest.iter().map(|s| (*s).to_owned()));
        found.push(resolved);
    }
    found
}

/// The circles among the modules of one crate, given each file's path under `src/` and source.
pub fn circles(files: &[(&Path, &str)]) -> Vec<Circle> {
    let modules: BTreeSet<ModPath> = files.iter().map(|(f, _)| module_of(f)).collect();
    let mut edges: BTreeSet<(ModPath, ModPath)> = BTreeSet::new();
    for (file, source) in files {
        let from = module_of(file);
        for path in paths_in(&code_of(source), &from) {
            let to = (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p));
            if let Some(to) = to.filter(|to| *to != from) {
                edges.insert((from.clone(), to));
            }
        }
    }
    let mut found = Vec::new();
    let parents: BTreeSet<ModPath> =
        modules.iter().filter(|m| !m.is_empty()).map(|m| m[..m.len() - 1].to_vec()).collect();
    for parent in parents {
        let n = parent.len();
        let child = |m: &ModPath| (m.len() > n && m[..n] == parent[..]).then(|| m[n].clone());
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in &edges {
            if let (Some(a), Some(b)) = (child(from), child(to))
                && a != b
            {
                graph.entry(a).or_default().insert(b);
            }
        }
        for component in strongly_connected(&graph) {
            let uses = component
                .iter()
                .map(|m| (m.clone(), graph[m].iter().filter(|u| component.contains(*u)).cloned().collect()))
                .collect();
            found.push(Circle { parent: parent.join("::"), uses });
        }
    }
    found
}

/// The groups of more than one node that reach each other (Tarjan's algorithm, iterative enough
/// for module graphs: recursion depth is the number of sibling modules).
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<BTreeSet<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut group = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    group.insert(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk =
        Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

/// The circles in the crate at `dir` (its `src/`).
pub fn check_crate(dir: &Path) -> Result<Vec<Circle>> {
    let src = dir.join("src");
    let mut files = Vec::new();
    for (path, source) in rust_files(&src)? {
        files.push((path.strip_prefix(&src)?.to_path_buf(), source));
    }
    let files: Vec<(&Path, &str)> = files.iter().map(|(p, s)| (p.as_path(), s.as_str())).collect();
    Ok(circles(&files))
}

/// Every `.rs` file under `dir` with its text (build output and npm's folders left out).
pub fn rust_files(dir: &Path) -> Result<Vec<(std::path::PathBuf, String)>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let path = entry?.path();
            let name = path.file_name().unwrap_or_default();
            if path.is_dir() && name != "target" && name != "node_modules" {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let source = std::fs::read_to_string(&path)?;
                files.push((path, source));
            }
        }
    }
    Ok(files)
}

/// The workspace's crates whose modules must not form circles.
pub const CRATES: &[&str] = &["app", "gateway", "worker", "protocol", "tests/upstream", "xtask"];

/// The one file allowed `unsafe` code (the workspace denies it): glibc's `malloc_trim`.
const UNSAFE_ALLOWED_IN: &str = "gateway/src/allocator.rs";

/// Fails when a file of the workspace at `root` other than [`UNSAFE_ALLOWED_IN`] loosens the
/// `unsafe_code` lint.
pub fn unsafe_only_where_reviewed(root: &Path) -> Result<()> {
    let mut found = Vec::new();
    for name in CRATES {
        for (path, source) in rust_files(&root.join(name))? {
            let relative = path.strip_prefix(root)?.to_string_lossy().replace('\\', "/");
            if relative != UNSAFE_ALLOWED_IN && names_the_unsafe_lint(&source) {
                found.push(relative);
            }
        }
    }
    if !found.is_empty() {
        anyhow::bail!(
            "unsafe code is allowed only in {UNSAFE_ALLOWED_IN}; these files allow the lint: {}",
            found.join(", ")
        );
    }
    Ok(())
}

/// Whether an attribute in `source` names the `unsafe_code` lint (`allow`, `expect`, `warn`,
/// `cfg_attr`, alone or among others): only an attribute can loosen the workspace's `deny`.
fn names_the_unsafe_lint(source: &str) -> bool {
    source.lines().map(str::trim_start).any(|line| line.starts_with('#') && line.contains("unsafe_code"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(files: &[(&str, &str)]) -> Vec<Circle> {
        let files: Vec<(&Path, &str)> = files.iter().map(|(p, s)| (Path::new(*p), *s)).collect();
        circles(&files)
    }

    #[test]
    fn siblings_that_use_each_other_are_a_circle() {
        let found = run(&[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "use crate::b::Thing;"),
            ("b/mod.rs", "mod inner;"),
            ("b/inner.rs", "use super::super::a::Other;"),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].parent, "");
        assert_eq!(
            found[0].to_string(),
            "modules under the crate root use each other in a circle: a → b; b → a;"
        );
    }

    #[test]
    fn one_way_imports_parents_and_children_comments_and_tests_are_not_circles() {
        let found = run(&[
            ("lib.rs", "pub mod a; pub mod b; use crate::a::A;"),
            ("a.rs", "use crate::b::B; use self::inner::X; mod inner;"),
            ("a/inner.rs", "use super::A;"),
            (
                "b.rs",
                "// see crate::a::A\n/// [`crate::a`]\nfn f() {}\n#[cfg(test)]\nmod tests { use crate::a::A; }",
            ),
        ]);
        assert_eq!(found, Vec::new());
    }

    #[test]
    fn a_circle_deep_inside_a_module_names_its_parent() {
        let found = run(&[
            ("lib.rs", "mod local;"),
            ("local/mod.rs", "mod engine; mod scheduler;"),
            ("local/engine.rs", "use super::scheduler::Run;"),
            ("local/scheduler.rs", "use crate::local::engine::Config;"),
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].parent, "local");
    }

    /// The workspace itself: each crate's imports run one way.
    #[test]
    fn the_workspace_has_no_circles() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let found: Vec<String> = CRATES
            .iter()
            .flat_map(|c| check_crate(&root.join(c)).unwrap().into_iter().map(move |x| format!("{c}: {x}")))
            .collect();
        assert!(found.is_empty(), "{}", found.join("\n"));
    }

    #[test]
    fn any_attribute_that_names_the_unsafe_lint_is_found() {
        for attribute in [
            "#[allow(unsafe_code)]",
            "  #![allow(unsafe_code)]",
            "#[allow(clippy::all, unsafe_code)]",
            "#[expect(unsafe_code, reason = \"ffi\")]",
            "#[cfg_attr(unix, allow(unsafe_code))]",
        ] {
            assert!(names_the_unsafe_lint(&format!("fn a() {{}}\n{attribute}\nfn b() {{}}")), "{attribute}");
        }
        assert!(!names_the_unsafe_lint("// unsafe_code is denied\nfn a() {}"));
    }
}
