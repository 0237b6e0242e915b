//! The warm page: what a React answer's preview runs before its first build. It maps the vendored
//! packages, loads Tailwind, and imports React, React DOM's client, the JSX runtime and the
//! vendored packages the answer's import lines name so far: fetching and compiling them is most of
//! a fresh frame's start (React's development build, and lucide-react's 1.1 MB of icons, take
//! 100–200 ms each to compile here), so the first build is then swapped into a frame that has them
//! ([`flint_protocol::frames::ToFrame::Swap`]).
//!
//! It is made once the first file is past its imports (models write them first, a few dozen
//! tokens), so that they are known; or at once for a stream whose answer has no lines yet to wait
//! for, never later than [`WAIT_LINES`] complete lines into the first file.

use flint_protocol::project::MOUNT_IMPORTS;
use flint_protocol::worker::PreviewPackages;

use crate::parser::StreamParser;
use crate::project::{FileKind, ProjectBuild, Target, classify, file_kind};
use crate::project_page::{files_and_open, js_string, page};

/// Shown by the warm page until the first build is swapped in (or, if the answer never builds,
/// beside the error).
const WARM_NOTE: &str = "<p data-flint-warm style=\"margin:1rem;color:#6b7280;font:14px system-ui,sans-serif\">\
                         The app shows here as soon as its first component builds.</p>\n";

/// Complete lines of the first file after which the warm page is made even if it still reads as
/// imports.
const WAIT_LINES: usize = 40;

/// The warm page for the answer in `parser` once its first file is past its imports; `None` before
/// that, or when the gateway has no React to load.
pub fn warm_page(parser: &StreamParser, packages: &PreviewPackages) -> Option<String> {
    let (files, _) = files_and_open(parser);
    // The first module (a model may begin with `package.json` or a stylesheet).
    let is_module = |path: &str| file_kind(path) == FileKind::Module;
    let (_, first) = files.iter().find(|(path, _)| is_module(path)).or(files.first())?;
    let lines: Vec<&str> = first.lines().collect();
    if lines.len() < WAIT_LINES && !lines.iter().any(|line| is_code(line)) {
        return None;
    }
    let mut preload: Vec<&str> = Vec::new();
    for (_, text) in &files {
        for spec in text.lines().filter_map(imported) {
            if packages.imports.contains_key(spec)
                && !MOUNT_IMPORTS.contains(&spec)
                && !preload.contains(&spec)
            {
                preload.push(spec);
            }
        }
    }
    warm_document(packages, &preload)
}

/// What a frame made ready before the answer exists preloads besides React: lucide-react, the first
/// library the React system prompt names (`flint_protocol::prompt`) and the slowest a small app
/// imports (1.1 MB of icons, 150–200 ms to compile here: most of what a ready frame still spent on
/// a one-file app's first build, `bench/first-preview.md`).
pub const READY_PRELOAD: &[&str] = &["lucide-react"];

/// The page a frame is made ready with before the answer exists: [`warm_document`] with the
/// [`READY_PRELOAD`] packages the gateway serves.
pub fn ready_document(packages: &PreviewPackages) -> Option<String> {
    let preload: Vec<&str> =
        READY_PRELOAD.iter().copied().filter(|s| packages.imports.contains_key(*s)).collect();
    warm_document(packages, &preload)
}

/// The warm page importing React's three entries and `preload` (vendored specifiers).
pub fn warm_document(packages: &PreviewPackages, preload: &[&str]) -> Option<String> {
    if MOUNT_IMPORTS.iter().any(|s| !packages.imports.contains_key(*s)) {
        return None;
    }
    let all = MOUNT_IMPORTS.iter().chain(preload);
    let start: String = all.map(|s| format!("import {};\n", js_string(s))).collect();
    Some(page(&ProjectBuild::default(), &start, &[], packages, WARM_NOTE))
}

/// Whether a line of a module is past its imports: a declaration or statement, not an import, a
/// comment, a blank, a `'use client'` or the rest of a multi-line import.
fn is_code(line: &str) -> bool {
    let line = line.trim();
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| line.starts_with(p));
    starts(&[
        "const ",
        "let ",
        "var ",
        "function ",
        "async function ",
        "class ",
        "interface ",
        "enum ",
        "type ",
    ]) || starts(&["export default", "export function", "export const", "export async", "export class"])
        || starts(&["export interface", "export type ", "export enum", "declare "])
}

/// The bare specifier a line imports from (`import x from 'y'`, `} from "y";`, `import 'y'`), if any.
fn imported(line: &str) -> Option<&str> {
    let line = line.trim();
    let rest = if let Some(at) = line.find(" from ") {
        &line[at + 6..]
    } else if let Some(rest) = line.strip_prefix("} from ") {
        rest
    } else {
        line.strip_prefix("import ")?
    };
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let spec = rest[1..].split(quote).next()?;
    // The build's own rule for what is a package (not a project file, a URL or a module key).
    matches!(classify("", spec), Target::Package { .. }).then_some(spec)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn packages() -> PreviewPackages {
        let imports: BTreeMap<String, String> =
            ["react", "react/jsx-dev-runtime", "react-dom/client", "lucide-react", "clsx"]
                .iter()
                .map(|s| ((*s).to_owned(), format!("/vendor/{s}.js")))
                .collect();
        PreviewPackages { imports, ..Default::default() }
    }

    fn streamed(text: &str) -> StreamParser {
        let mut parser = StreamParser::new();
        parser.push(text);
        parser
    }

    #[test]
    fn the_warm_page_waits_for_the_imports_and_loads_the_vendored_ones_they_name() {
        let head = "```tsx App.tsx\nimport { useState } from 'react';\nimport {\n  Activity,\n} from \"lucide-react\";\n\
                    import './index.css';\nimport { Stats } from './components/Stats';\nimport x from 'left-pad';\n";
        assert_eq!(warm_page(&streamed(head), &packages()), None, "still in its imports");
        let page =
            warm_page(&streamed(&format!("{head}\nconst TICKETS = [\n")), &packages()).expect("past them");
        for import in ["import \"react-dom/client\";", "import \"lucide-react\";"] {
            assert!(page.contains(import), "{import}: {page}");
        }
        assert_eq!(page.matches("import \"react-dom/client\";").count(), 1, "each once");
        assert!(!page.contains("left-pad"), "only vendored packages");
        assert!(!page.contains("./components") && !page.contains("index.css"));
        assert!(page.contains("import \"react/jsx-dev-runtime\";") && page.contains("data-flint-warm"));
        assert!(!page.contains("~/"), "no module of the project: it has not built yet");
        assert_eq!(
            warm_page(&streamed(&format!("{head}\nconst A = 1;\n")), &PreviewPackages::default()),
            None
        );
    }

    #[test]
    fn a_first_file_of_imports_alone_still_warms_after_enough_lines() {
        let many: String = (0..WAIT_LINES).map(|i| format!("import A{i} from 'clsx';\n")).collect();
        assert!(warm_page(&streamed(&format!("```tsx App.tsx\n{many}")), &packages()).is_some());
    }

    #[test]
    fn import_lines_are_read_for_their_bare_specifier() {
        assert_eq!(imported("import { a } from 'clsx';"), Some("clsx"));
        assert_eq!(imported("} from \"lucide-react\";"), Some("lucide-react"));
        assert_eq!(imported("import 'react-dom/client';"), Some("react-dom/client"));
        assert_eq!(imported("import B from './B';"), None);
        assert_eq!(imported("import C from '@/lib/c';"), None);
        assert_eq!(imported("const from = 1;"), None);
        assert!(
            is_code("export default function App() {")
                && !is_code("import x from 'y';")
                && !is_code("  Activity,")
        );
    }
}
