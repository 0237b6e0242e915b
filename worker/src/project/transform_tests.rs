use super::super::transform;
use super::*;

const TODO: &str = include_str!("../../tests/react/todo/App.tsx");

/// 1-based line of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    let at = text.find(needle).expect("needle in text");
    text[..at].lines().count() + usize::from(text[..at].ends_with('\n'))
}

#[test]
fn a_one_file_app_loses_its_types_and_keeps_its_logic() {
    let js = transform("App.tsx", TODO).expect("builds");
    for typed in ["interface Todo", "type Filter", "useState<Todo[]>", ": number", "as Filter[]"] {
        assert!(!js.contains(typed), "{typed} left in:\n{js}");
    }
    assert!(js.contains("useState("), "{js}");
    assert!(js.contains("import { Plus, Trash2, Check } from \"lucide-react\""), "{js}");
    assert!(js.contains("export default function App()"), "{js}");
}

#[test]
fn jsx_is_compiled_for_development_with_the_file_and_its_positions() {
    let js = transform("App.tsx", TODO).expect("builds");
    assert!(js.contains("from \"react/jsx-dev-runtime\""), "{js}");
    assert!(js.contains("jsxDEV("), "{js}");
    assert!(js.contains("\"App.tsx\""), "the file name is the project path:\n{js}");
    let h1 = line_of(TODO, "<h1");
    assert!(js.contains(&format!("lineNumber: {h1},")), "line {h1} of <h1>:\n{js}");
    assert!(js.contains("columnNumber: 9"), "<h1 starts at column 9:\n{js}");

    let nested = transform("components/Card.jsx", "export const Card = () => <div>hi</div>;\n").unwrap();
    assert!(nested.contains("\"components/Card.jsx\""), "{nested}");
    assert!(nested.contains("lineNumber: 1,") && nested.contains("columnNumber: 27"), "{nested}");
}

#[test]
fn typescript_only_syntax_is_stripped() {
    let source = r#"
enum Tone { Calm, Loud }
const pick = <T,>(items: T[]): T | undefined => items[0];
const config = { size: 3 } as const satisfies Record<string, number>;
let el = document.getElementById('root')!;
abstract class Base<T> { protected abstract get(): T; }
declare global { interface Window { flint?: string } }
export type { Tone as T2 };
export { pick, config, el, Base };
"#;
    let js = transform("lib.ts", source).expect("builds");
    for typed in ["<T,>", "as const", "satisfies", "abstract", "declare", "interface", "!;"] {
        assert!(!js.contains(typed), "{typed} left in:\n{js}");
    }
    assert!(js.contains("Tone[Tone[\"Calm\"] = 0]"), "enums become objects:\n{js}");
}

#[test]
fn plain_javascript_files_may_hold_jsx() {
    let js = transform("App.js", "export default function App() { return <p>hi</p>; }").unwrap();
    assert!(js.contains("jsxDEV(\"p\""), "{js}");
    assert!(transform("main.mjs", "export const x = <b />;").unwrap().contains("jsxDEV(\"b\""));
}

#[test]
fn a_syntax_error_is_reported_at_its_line_and_column() {
    // A model that forgot `}`: `{n</p>…` reads as `n < /p>…/`, a regular expression never closed.
    let source = "export default function App() {\n  const n = 1;\n  return <div className=\"p-4\">\n    <p>{n</p>\n  </div>;\n}\n";
    let error = transform("App.tsx", source).expect_err("a syntax error");
    assert_eq!(error.to_string(), "App.tsx:4:11: Unterminated regular expression");
    // A file cut mid-stream.
    let error =
        transform("App.tsx", "export default function App() {\n  return (\n    <div>\n      <h1>Hi</h1>\n")
            .unwrap_err();
    assert_eq!((error.line, error.column), (4, 18), "at the end of the last line:{error}");
}

#[test]
fn jsx_in_a_ts_file_is_an_error() {
    let error = transform("util.ts", "export const x = <div>hi</div>;\n").expect_err("no JSX in .ts");
    assert_eq!((error.line, error.path.as_str()), (1, "util.ts"), "{error}");
}

#[test]
fn errors_found_after_parsing_are_reported_too() {
    // Scope check: a `let` declared twice (oxc's first label is the first declaration).
    let error = transform("a.ts", "let a = 1;\nlet a = 2;\n").expect_err("redeclared");
    assert_eq!(error.to_string(), "a.ts:1:5: Identifier `a` has already been declared");
    // The JSX transform: React has no namespaced tags.
    let error = transform("b.tsx", "export const x = (\n  <svg:rect />\n);\n").expect_err("namespace");
    assert_eq!(error.line, 2, "{error}");
    let error = transform("c.jsx", "export const x = <li key />;\n").expect_err("valueless key");
    assert_eq!((error.line, error.column), (1, 22), "{error}");
}

#[test]
fn every_error_is_kept() {
    let mut keep = |_: Import<'_>| Rewrite::Keep;
    let errors = compile("a.tsx", "const = 1;\nlet b = ;\n", &mut keep).expect_err("two errors");
    assert!(!errors.is_empty());
    assert!(errors.iter().all(|e| e.line >= 1), "{errors:?}");
}

#[test]
fn imports_are_offered_after_the_transform_and_rewritten_in_place() {
    let source = r#"import React from 'react';
import type { Props } from './types';
import { Only } from './only-types';
import './index.css';
import Button from "./components/Button";
export * from './lib';
export { a as b } from './lib/a';
const Lazy = React.lazy(() => import('./pages/About'));
let x: Only = 1;
export default () => <Button><Lazy /></Button>;
"#;
    let mut seen = Vec::new();
    let mut on_import = |import: Import<'_>| {
        seen.push((import.specifier.to_owned(), import.kind, import.names.to_vec()));
        match import.specifier {
            "./index.css" => Rewrite::Drop,
            "react" | "react/jsx-dev-runtime" => Rewrite::Keep,
            other => Rewrite::To(format!("~/{}", other.trim_start_matches("./"))),
        }
    };
    let compiled = compile("App.tsx", source, &mut on_import).expect("builds");
    let js = compiled.js;
    let specifiers: Vec<&str> = seen.iter().map(|(s, ..)| s.as_str()).collect();
    // `./types` and `./only-types` are only used as types: gone before the rewrite sees them.
    assert_eq!(
        specifiers,
        [
            "react",
            "./index.css",
            "./components/Button",
            "react/jsx-dev-runtime",
            "./lib",
            "./lib/a",
            "./pages/About"
        ]
    );
    assert_eq!(seen[1].1, ImportKind::SideEffect);
    assert_eq!(seen[2].1, ImportKind::Bindings);
    assert_eq!(seen[4].1, ImportKind::ReExport);
    assert_eq!(seen[6].1, ImportKind::Dynamic);
    // The names each import takes: what a stand-in for a file not yet written must export.
    let names: Vec<Vec<String>> = seen.iter().map(|(.., names)| names.clone()).collect();
    let owned = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    assert_eq!(names[0], owned(&["default"]));
    assert!(names[1].is_empty() && names[6].is_empty());
    assert_eq!(names[2], owned(&["default"]));
    assert_eq!(names[4], owned(&["*"]));
    assert_eq!(names[5], owned(&["a"]));
    // `export *` makes what it exports unknown from the file alone.
    assert_eq!(compiled.exports, None);
    for rewritten in ["\"~/components/Button\"", "\"~/lib\"", "\"~/lib/a\"", "import(\"~/pages/About\")"] {
        assert!(js.contains(rewritten), "{rewritten} missing:\n{js}");
    }
    assert!(!js.contains("index.css") && !js.contains("./"), "{js}");
}

#[test]
fn a_module_says_what_it_exports() {
    let source = "import { B } from './b';\nexport const Stats = () => null;\nexport function useX() {}\n\
                  export { B as Badge };\nexport { C } from './c';\nexport default Stats;\nexport type T = 1;\n";
    let compiled = compile("a.tsx", source, &mut |_| Rewrite::Keep).expect("builds");
    let mut exports = compiled.exports.expect("no export *");
    exports.sort();
    assert_eq!(exports, ["Badge", "C", "Stats", "T", "default", "useX"]);
}

#[test]
fn the_specifier_offset_points_at_its_string() {
    let source = "const a = 1;\nimport x from './x';\nexport default x + a;\n";
    let mut offsets = Vec::new();
    let _ = compile("a.js", source, &mut |import| {
        offsets.push(import.offset);
        Rewrite::Keep
    });
    assert_eq!(offsets, [source.find("'./x'").unwrap() as u32]);
}

#[test]
fn only_module_files_are_transformed() {
    let error = transform("index.css", "body {}").expect_err("not a module");
    assert_eq!((error.line, error.to_string().starts_with("index.css: ")), (0, true), "{error}");
}

#[test]
fn a_huge_file_is_refused_before_parsing() {
    let huge = "// filler\n".repeat(5_000_000);
    let error = transform("App.tsx", &huge).expect_err("50 MB");
    assert!(error.to_string().starts_with("App.tsx: is 50.0 MB; the limit is 2 MiB"), "{error}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for depth in [1_000, 20_000] {
        let source = format!("export const x = {}1{};", "(".repeat(depth), ")".repeat(depth));
        let _ = transform("deep.ts", &source);
        let source = format!("export const x = {};", "[".repeat(depth));
        assert!(transform("deep.ts", &source).is_err());
    }
}

#[test]
fn each_html_element_carries_its_file_and_byte_range_and_components_do_not() {
    let source = "import { Card } from './Card';\nexport default () => <main className=\"p-4\"><Card/><b>hi</b></main>;\n";
    let js = transform("components/App.tsx", source).expect("builds");
    let main = source.find("<main").unwrap();
    let end = source.rfind(";\n").unwrap();
    assert!(js.contains(&format!("\"data-flint-src\": \"components/App.tsx:{main}:{end}\"")), "{js}");
    let b = source.find("<b>").unwrap();
    let b_end = source.find("</b>").unwrap() + 4;
    assert_eq!(&source[b..b_end], "<b>hi</b>");
    assert!(js.contains(&format!("\"components/App.tsx:{b}:{b_end}\"")), "{js}");
    assert_eq!(js.matches("data-flint-src").count(), 2, "the component is not stamped:\n{js}");
}
