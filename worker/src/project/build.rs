//! A project's files to the modules its entry reaches: the entry chosen, each reached file
//! transformed once (so import cycles end), its imports resolved and rewritten, styles and packages
//! collected, and the modules put in the order they would run.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

use super::pending::{StandIn, stand_in};
use super::resolve::{self, FileKind, Target};
use super::transform::{self, Import, ImportKind, Rewrite};
use super::{
    Entry, EntryKind, MAX_FILE_BYTES, MAX_PROJECT_BYTES, Module, ProjectBuild, TransformError, module_key,
    too_big,
};

/// Entry files that mount the app themselves, in the order they are looked for; each is tried at
/// the root, then under `src/`.
const MOUNT_NAMES: [&str; 8] =
    ["main.tsx", "main.jsx", "main.ts", "main.js", "index.tsx", "index.jsx", "index.ts", "index.js"];

/// Entry files that are the app's root component, looked for when no mount file is there.
const COMPONENT_NAMES: [&str; 4] = ["App.tsx", "App.jsx", "App.ts", "App.js"];

/// The key of the module at `path` in a build of `generation` (`None`: a finished answer's).
fn key_of(generation: Option<u64>, path: &str) -> String {
    match generation {
        Some(generation) => super::streaming_key(generation, path),
        None => module_key(path),
    }
}

/// What a module imports, in source order.
enum Dep {
    Module(String),
    Style(String),
}

/// Builds the project `files` (`(path, text)`; a later file of the same path replaces an earlier
/// one) from `entry`, or from the entry found by name when it is `None`: `main.*`/`index.*` (root,
/// then `src/`), else `App.*`, else the only module there is.
pub fn build<P: AsRef<str>, T: AsRef<str>>(files: &[(P, T)], entry: Option<&str>) -> ProjectBuild {
    build_with(files, entry, None)
}

/// Builds the project of an answer still streaming: a file it has not finished (`open`, project
/// paths) that does not build yet, or lacks a name its importers take, and a file its code imports
/// but it has not begun, stand in as placeholders that say so ([`super::pending`]), so the app
/// renders as far as it is written. Only components stand in: a file whose importers take
/// anything else (`useTodos`, `formatDate`, `* as api`) is an error as in [`build`].
///
/// Its module keys carry `generation` (`~7/App.tsx`, see [`super::streaming_key`]): a preview frame
/// that runs one streaming build adds the next one's modules to its import map, where a key it has
/// already mapped could not be mapped anew.
pub fn build_streaming<P: AsRef<str>, T: AsRef<str>>(
    files: &[(P, T)],
    open: &[String],
    generation: u64,
) -> ProjectBuild {
    build_with(files, None, Some((open, generation)))
}

fn build_with<P: AsRef<str>, T: AsRef<str>>(
    files: &[(P, T)],
    entry: Option<&str>,
    streaming: Option<(&[String], u64)>,
) -> ProjectBuild {
    let open = streaming.map(|(open, _)| open);
    let generation = streaming.map(|(_, generation)| generation);
    let mut out = ProjectBuild::default();
    let total: usize = files.iter().map(|(_, text)| text.as_ref().len()).sum();
    if total > MAX_PROJECT_BYTES {
        out.errors.push(TransformError {
            path: String::new(),
            line: 0,
            column: 0,
            message: format!("this project {}", too_big(total, MAX_PROJECT_BYTES)),
        });
        return out;
    }
    let mut project: BTreeMap<String, &str> = BTreeMap::new();
    for (name, text) in files {
        match resolve::project_path(name.as_ref()) {
            Some(path) => {
                project.insert(path, text.as_ref());
            }
            None => {
                out.errors.push(TransformError::whole_file(name.as_ref(), "is not a path inside the project"))
            }
        }
    }
    let Some(entry_path) = find_entry(&project, entry, &mut out.errors) else { return out };

    let mut graph = Graph {
        project: &project,
        built: BTreeMap::new(),
        deps: BTreeMap::new(),
        dynamic: Vec::new(),
        entry: entry_path.clone(),
        open,
        generation,
        wanted: BTreeMap::new(),
        exports: BTreeMap::new(),
        stand_ins: BTreeMap::new(),
    };
    let mut mounts = false;
    let mut queue = VecDeque::from([entry_path.clone()]);
    let mut queued = HashSet::from([entry_path.clone()]);
    while let Some(path) = queue.pop_front() {
        let mut deps = Vec::new();
        let found = graph.build_one(&path, &mut deps, &mut out);
        mounts |= path == entry_path && found.mounts;
        for next in found.modules {
            if queued.insert(next.clone()) {
                queue.push_back(next);
            }
        }
        graph.deps.insert(path, deps);
    }
    graph.settle(&mut out);
    let stem = entry_path.rsplit('/').next().unwrap_or_default().split('.').next().unwrap_or_default();
    let kind = if mounts || stem == "main" { EntryKind::Mount } else { EntryKind::Component };
    graph.order(&entry_path, &mut out);
    out.entry = Some(Entry { path: entry_path, kind });
    out
}

/// The entry's project path, or `None` with an error saying why there is none.
fn find_entry(
    project: &BTreeMap<String, &str>,
    asked: Option<&str>,
    errors: &mut Vec<TransformError>,
) -> Option<String> {
    let is_module = |path: &str| project.contains_key(path) && resolve::file_kind(path) == FileKind::Module;
    if let Some(asked) = asked {
        let path = resolve::project_path(asked).filter(|p| is_module(p));
        if path.is_none() {
            errors.push(TransformError::whole_file(asked, "is not a module of this project"));
        }
        return path;
    }
    let named = |names: &[&str]| {
        ["", "src/"]
            .iter()
            .flat_map(|dir| names.iter().map(move |name| format!("{dir}{name}")))
            .find(|path| is_module(path))
    };
    let mut modules = project.keys().filter(|path| is_module(path));
    let only = match (modules.next(), modules.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    };
    let found = named(&MOUNT_NAMES).or_else(|| named(&COMPONENT_NAMES)).or(only);
    if found.is_none() {
        errors.push(TransformError {
            path: String::new(),
            line: 0,
            column: 0,
            message: "no entry: name a file main.tsx (it mounts the app) or App.tsx (its default export is the app)"
                .into(),
        });
    }
    found
}

/// What building one module found.
#[derive(Default)]
struct Found {
    /// Project modules it imports, to build next.
    modules: Vec<String>,
    /// It imports `react-dom`: it mounts the app itself.
    mounts: bool,
}

struct Graph<'p> {
    project: &'p BTreeMap<String, &'p str>,
    /// Built JavaScript by path.
    built: BTreeMap<String, String>,
    /// Each visited module's imports in source order.
    deps: BTreeMap<String, Vec<Dep>>,
    /// Modules only imported dynamically, in the order found.
    dynamic: Vec<String>,
    /// The entry's path: it never stands in.
    entry: String,
    /// While the answer streams: the files it has not finished.
    open: Option<&'p [String]>,
    /// While the answer streams: the build's generation, in its module keys.
    generation: Option<u64>,
    /// The names each module's importers take (for stand-ins).
    wanted: BTreeMap<String, BTreeSet<String>>,
    /// What each open file that built exports (`None`: not known).
    exports: BTreeMap<String, Option<Vec<String>>>,
    /// Files that may stand in, by path.
    stand_ins: BTreeMap<String, StandIn>,
}

impl Graph<'_> {
    /// Transforms the module at `path` and resolves its imports into `deps` and `out`.
    fn build_one(&mut self, path: &str, deps: &mut Vec<Dep>, out: &mut ProjectBuild) -> Found {
        let mut found = Found::default();
        let Some(&source) = self.project.get(path) else { return found };
        if source.len() > MAX_FILE_BYTES {
            out.errors.push(TransformError::whole_file(path, too_big(source.len(), MAX_FILE_BYTES)));
            return found;
        }
        let mut errors = Vec::new();
        let mut on_import = |import: Import<'_>| {
            let refuse = |message: String| TransformError::at(path, source, import.offset, message);
            let spec = import.specifier;
            match resolve::classify(path, spec) {
                Target::Project { roots } => {
                    let hit = roots
                        .iter()
                        .flat_map(|root| resolve::candidates(root))
                        .find(|c| self.project.contains_key(c));
                    let Some(target) = hit else {
                        let error = refuse(format!("'{spec}' is not in this project"));
                        if self.open.is_none() || import.kind == ImportKind::Dynamic {
                            errors.push(error);
                            return Rewrite::Keep;
                        }
                        // Not written yet: a style comes with its file; a module stands in.
                        let root = roots.first().cloned().unwrap_or_default();
                        if import.kind == ImportKind::SideEffect && root.ends_with(".css") {
                            return Rewrite::Drop;
                        }
                        let stand = format!("{root}.pending");
                        self.wanted.entry(stand.clone()).or_default().extend(import.names.iter().cloned());
                        self.stand_ins.insert(stand.clone(), StandIn { label: root, errors: vec![error] });
                        deps.push(Dep::Module(stand.clone()));
                        return Rewrite::To(key_of(self.generation, &stand));
                    };
                    match (resolve::file_kind(&target), import.kind) {
                        (FileKind::Module, kind) => {
                            let key = key_of(self.generation, &target);
                            if kind == ImportKind::Dynamic {
                                self.dynamic.push(target.clone());
                            } else {
                                deps.push(Dep::Module(target.clone()));
                                let wanted = self.wanted.entry(target.clone()).or_default();
                                wanted.extend(import.names.iter().cloned());
                            }
                            found.modules.push(target);
                            Rewrite::To(key)
                        }
                        (FileKind::Style, ImportKind::SideEffect) => {
                            deps.push(Dep::Style(target));
                            Rewrite::Drop
                        }
                        (FileKind::Style, _) => {
                            errors.push(refuse(format!(
                                "'{spec}': a CSS file is imported only for its effect (import '{spec}'); CSS modules are not supported"
                            )));
                            Rewrite::Keep
                        }
                        (FileKind::Other, _) => {
                            errors.push(refuse(format!(
                                "'{spec}' is not a module: only .tsx .ts .jsx .js .mjs and .css files can be imported"
                            )));
                            Rewrite::Keep
                        }
                    }
                }
                Target::Package { name } => {
                    // A package's stylesheet (`some-lib/dist/styles.css`) cannot be a module: kept
                    // aside for the preview, like the project's own styles.
                    if import.kind == ImportKind::SideEffect && spec.ends_with(".css") {
                        out.package_styles.insert(spec.to_owned());
                        return Rewrite::Drop;
                    }
                    found.mounts |= name == "react-dom";
                    out.specifiers.insert(spec.to_owned());
                    out.packages.insert(name);
                    if spec == "react-dom/client" {
                        // Its roots kept for a swap to unmount (`roots`).
                        return Rewrite::To(super::ROOTS_KEY.to_owned());
                    }
                    Rewrite::Keep
                }
                Target::Url => {
                    errors.push(refuse(format!(
                        "'{spec}' is a URL: a preview loads only this project's files and vendored packages"
                    )));
                    Rewrite::Keep
                }
                Target::Outside => {
                    errors.push(refuse(format!("'{spec}' leaves the project")));
                    Rewrite::Keep
                }
                Target::Invalid => {
                    errors.push(refuse(format!("'{spec}' is not a valid import")));
                    Rewrite::Keep
                }
            }
        };
        let compiled = transform::compile(path, source, &mut on_import);
        let open = path != self.entry && self.open.is_some_and(|open| open.iter().any(|p| p == path));
        match compiled {
            Ok(compiled) if errors.is_empty() => {
                self.built.insert(path.to_owned(), compiled.js);
                if open {
                    self.exports.insert(path.to_owned(), compiled.exports);
                }
                return found;
            }
            Ok(_) => {}
            Err(found) => errors = found,
        }
        if open {
            // Cut mid-statement, most likely: it stands in until it builds, and what it imports
            // waits with it.
            self.stand_ins.insert(path.to_owned(), StandIn { label: path.to_owned(), errors });
            deps.clear();
            return Found::default();
        }
        out.errors.append(&mut errors);
        found
    }

    /// Decides the stand-ins once every importer has said what it takes: an open file that built
    /// but lacks a name taken from it stands in too; a stand-in is built when every name taken
    /// from it is a component's (or the default export), and is its errors otherwise.
    fn settle(&mut self, out: &mut ProjectBuild) {
        for (path, exports) in &self.exports {
            let (Some(exports), Some(wanted)) = (exports, self.wanted.get(path)) else { continue };
            if let Some(name) = wanted.iter().find(|name| !exports.contains(name)) {
                let error = TransformError::whole_file(path, format!("does not export '{name}' yet"));
                self.stand_ins.insert(path.clone(), StandIn { label: path.clone(), errors: vec![error] });
            }
        }
        let no_names = BTreeSet::new();
        for (path, stand) in std::mem::take(&mut self.stand_ins) {
            let names = self.wanted.get(&path).unwrap_or(&no_names);
            match stand_in(&stand.label, names) {
                Some(js) => {
                    self.built.insert(path.clone(), js);
                    self.deps.insert(path, Vec::new());
                    out.pending.push(stand.label);
                }
                None => {
                    self.built.remove(&path);
                    out.errors.extend(stand.errors);
                }
            }
        }
    }

    /// Puts the built modules and the styles in `out` in the order they would run: depth first,
    /// imports in source order, a module after what it imports (ES module evaluation order, which
    /// is also the order a bundler applies imported CSS in). Modules only imported dynamically
    /// come after.
    fn order(mut self, entry: &str, out: &mut ProjectBuild) {
        let mut seen: HashSet<String> = HashSet::new();
        let mut styles_seen: HashSet<String> = HashSet::new();
        let roots: Vec<String> =
            std::iter::once(entry.to_owned()).chain(std::mem::take(&mut self.dynamic)).collect();
        for root in roots {
            if !seen.insert(root.clone()) {
                continue;
            }
            // An explicit stack (path, next import to look at): a long chain of files must not
            // overflow the worker's stack.
            let mut stack: Vec<(String, usize)> = vec![(root, 0)];
            while let Some((path, next)) = stack.last_mut() {
                let dep = self.deps.get(path.as_str()).and_then(|deps| deps.get(*next));
                *next += 1;
                match dep {
                    Some(Dep::Module(target)) => {
                        if seen.insert(target.clone()) {
                            let target = target.clone();
                            stack.push((target, 0));
                        }
                    }
                    Some(Dep::Style(target)) => {
                        if styles_seen.insert(target.clone()) {
                            let css = self.project.get(target.as_str()).copied().unwrap_or_default();
                            out.styles.push((target.clone(), css.to_owned()));
                        }
                    }
                    None => {
                        let path = std::mem::take(path);
                        stack.pop();
                        if let Some(js) = self.built.remove(&path) {
                            out.modules.push(Module { key: key_of(self.generation, &path), path, js });
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
