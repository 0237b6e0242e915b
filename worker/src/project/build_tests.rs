use super::*;
use crate::project::{EntryKind, ProjectBuild};

/// The multi-file fixture: what a model answers for "a small shop in React with Tailwind".
fn shop() -> Vec<(&'static str, &'static str)> {
    macro_rules! files {
        ($($path:literal),*) => { vec![$(($path, include_str!(concat!("../../tests/react/shop/", $path)))),*] };
    }
    files!(
        "main.tsx",
        "App.tsx",
        "App.css",
        "index.css",
        "types.ts",
        "vite.config.ts",
        "components/index.ts",
        "components/Header.tsx",
        "components/ProductCard.tsx",
        "components/ui/button.tsx",
        "lib/utils.ts",
        "lib/format.ts"
    )
}

const TODO: &str = include_str!("../../tests/react/todo/App.tsx");

fn module<'b>(built: &'b ProjectBuild, path: &str) -> &'b str {
    &built.modules.iter().find(|m| m.path == path).unwrap_or_else(|| panic!("{path} built")).js
}

fn errors(built: &ProjectBuild) -> Vec<String> {
    built.errors.iter().map(ToString::to_string).collect()
}

#[test]
fn a_one_file_app_is_a_component_entry() {
    let built = build(&[("App.tsx", TODO)], None);
    assert_eq!(errors(&built), Vec::<String>::new());
    let entry = built.entry.as_ref().expect("an entry");
    assert_eq!((entry.path.as_str(), entry.kind), ("App.tsx", EntryKind::Component));
    assert_eq!(built.modules.len(), 1);
    assert_eq!(built.modules[0].key, "~/App.tsx");
    assert_eq!(built.packages.iter().collect::<Vec<_>>(), ["lucide-react", "react"]);
    assert!(built.specifiers.contains("react/jsx-dev-runtime"), "{:?}", built.specifiers);
}

#[test]
fn a_multi_file_app_resolves_and_rewrites_every_project_import() {
    let built = build(&shop(), None);
    assert_eq!(errors(&built), Vec::<String>::new());
    let entry = built.entry.as_ref().expect("an entry");
    assert_eq!((entry.path.as_str(), entry.kind), ("main.tsx", EntryKind::Mount));

    let main = module(&built, "main.tsx");
    assert!(main.contains("from \"~/App.tsx\""), "{main}");
    // Its root is made through the client that keeps roots for a swap to unmount.
    assert!(
        main.contains("from \"@flint/react-dom-client\"") && !main.contains("\"react-dom/client\""),
        "{main}"
    );
    assert!(built.specifiers.contains("react-dom/client"), "{:?}", built.specifiers);
    assert!(!main.contains("index.css"), "styles leave the JS:\n{main}");
    let app = module(&built, "App.tsx");
    for key in ["\"~/components/index.ts\"", "\"~/components/ui/button.tsx\"", "\"~/lib/format.ts\""] {
        assert!(app.contains(key), "{key} in:\n{app}");
    }
    let index = module(&built, "components/index.ts");
    assert!(
        index.contains("\"~/components/Header.tsx\"") && index.contains("\"~/components/ProductCard.tsx\"")
    );
    assert!(module(&built, "components/ProductCard.tsx").contains("\"~/lib/format.ts\""));
    for m in &built.modules {
        assert!(
            !m.js.contains("from \"./") && !m.js.contains("from \"../") && !m.js.contains("\"@/"),
            "{}",
            m.js
        );
    }

    // Only what the entry reaches: types (imported as types) and the Vite config are left out.
    let mut paths: Vec<&str> = built.modules.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(built.modules.last().map(|m| m.path.as_str()), Some("main.tsx"));
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "App.tsx",
            "components/Header.tsx",
            "components/ProductCard.tsx",
            "components/index.ts",
            "components/ui/button.tsx",
            "lib/format.ts",
            "lib/utils.ts",
            "main.tsx"
        ]
    );
    // A module comes after every module it imports.
    let at = |path: &str| built.modules.iter().position(|m| m.path == path).expect("built");
    assert!(at("lib/utils.ts") < at("lib/format.ts") && at("lib/format.ts") < at("App.tsx"));
    assert!(at("components/ui/button.tsx") < at("components/ProductCard.tsx"));

    // `App.css` is imported by `App.tsx`, which runs before `main.tsx` imports `index.css`.
    let styles: Vec<&str> = built.styles.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(styles, ["App.css", "index.css"]);
    assert!(built.styles[1].1.contains("@import \"tailwindcss\""));
    assert_eq!(
        built.packages.iter().collect::<Vec<_>>(),
        ["clsx", "framer-motion", "lucide-react", "react", "react-dom", "tailwind-merge"]
    );
    assert!(built.specifiers.contains("react-dom/client"));
}

#[test]
fn positions_name_each_file_by_its_project_path() {
    let built = build(&shop(), None);
    let header = module(&built, "components/Header.tsx");
    assert!(header.contains("\"components/Header.tsx\""), "{header}");
    let source = shop().into_iter().find(|(p, _)| *p == "components/Header.tsx").unwrap().1;
    let h1 = source.lines().position(|l| l.contains("<h1")).unwrap() + 1;
    assert!(header.contains(&format!("lineNumber: {h1},")), "{header}");
}

#[test]
fn a_syntax_error_names_its_file_and_keeps_the_rest() {
    let mut files = shop();
    let broken = "export default function Header() {\n  return (\n    <header>\n      <h1>{title</h1>\n";
    files.retain(|(p, _)| *p != "components/Header.tsx");
    files.push(("components/Header.tsx", broken));
    let built = build(&files, None);
    assert_eq!(built.errors.len(), 1, "{:?}", errors(&built));
    let error = &built.errors[0];
    assert_eq!((error.path.as_str(), error.line), ("components/Header.tsx", 4), "{error}");
    assert!(built.modules.iter().any(|m| m.path == "App.tsx"));
    assert!(!built.modules.iter().any(|m| m.path == "components/Header.tsx"));
}

#[test]
fn a_missing_relative_import_is_an_error_at_its_line() {
    let app = "import { useState } from 'react';\n\nimport Chart from './components/Chart';\n\nexport default () => <Chart />;\n";
    let built = build(&[("App.tsx", app)], None);
    assert_eq!(errors(&built), ["App.tsx:3:19: './components/Chart' is not in this project"]);
    assert!(built.modules.is_empty(), "nothing half-rewritten is handed out");
}

#[test]
fn escapes_from_the_project_are_refused() {
    let cases = [
        (
            "import secret from '../../etc/passwd'; console.log(secret);",
            "'../../etc/passwd' leaves the project",
        ),
        ("import '../outside';", "'../outside' leaves the project"),
        ("import share from '/api/share'; share();", "'/api/share' is not in this project"),
        ("import React from 'https://esm.sh/react'; React.x();", "'https://esm.sh/react' is a URL"),
        ("import 'data:text/javascript,alert(1)';", "is a URL"),
        ("import x from '//evil.example/x.js'; x();", "is a URL"),
        ("const m = import('blob:https://x/1');", "is a URL"),
        ("export * from 'http://localhost:8787/api/history';", "is a URL"),
    ];
    for (line, expected) in cases {
        let built = build(&[("App.tsx", format!("{line}\nexport default () => <p />;\n"))], None);
        let found = errors(&built);
        assert!(
            found.len() == 1 && found[0].starts_with("App.tsx:1:") && found[0].contains(expected),
            "{line}: {found:?}"
        );
    }
}

#[test]
fn imports_used_only_as_types_are_never_resolved() {
    // TypeScript drops them, so the preview never loads them: no error for what is not there.
    let app = "import type { Props } from './types';\nimport { Missing } from './missing';\nlet p: Props | Missing;\nexport default () => <p />;\n";
    assert_eq!(errors(&build(&[("App.tsx", app)], None)), Vec::<String>::new());
}

#[test]
fn an_import_cycle_builds_each_module_once() {
    let a = "import { b } from './b';\nexport const a = () => b();\nexport default () => <p>{a()}</p>;\n";
    let b = "import { a } from './a';\nexport const b = () => 1;\nexport const c = () => a;\n";
    let built = build(&[("a.tsx", a), ("b.ts", b)], Some("a.tsx"));
    assert_eq!(errors(&built), Vec::<String>::new());
    let paths: Vec<&str> = built.modules.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["b.ts", "a.tsx"]);
    assert!(module(&built, "b.ts").contains("\"~/a.tsx\""));
    // A module importing itself.
    let selfish = "import * as me from './self';\nexport const x = 1;\nexport default () => me.x;\n";
    assert!(build(&[("self.ts", selfish)], None).errors.is_empty());
}

#[test]
fn packages_are_collected_by_name() {
    let app = r#"import { createRoot } from 'react-dom/client';
import { useQuery } from '@tanstack/react-query/x';
import { format } from 'date-fns';
import 'react-toastify/dist/ReactToastify.css';
export default function App() { useQuery(); return <p>{format(new Date(), 'p')}</p>; }
createRoot(document.getElementById('root')).render(<App />);
"#;
    let built = build(&[("App.jsx", app)], None);
    assert_eq!(errors(&built), Vec::<String>::new());
    assert_eq!(
        built.packages.iter().collect::<Vec<_>>(),
        ["@tanstack/react-query", "date-fns", "react", "react-dom"]
    );
    assert!(built.specifiers.contains("@tanstack/react-query/x"));
    assert_eq!(built.package_styles.iter().collect::<Vec<_>>(), ["react-toastify/dist/ReactToastify.css"]);
    // It imports react-dom: it mounts itself even though it is named App.
    assert_eq!(built.entry.map(|e| e.kind), Some(EntryKind::Mount));
}

#[test]
fn the_entry_is_found_by_name() {
    let component = "export default () => <p />;";
    let entry = |files: &[(&str, &str)]| build(files, None).entry.map(|e| (e.path, e.kind));
    let mount = |p: &str| Some((p.to_owned(), EntryKind::Mount));
    let comp = |p: &str| Some((p.to_owned(), EntryKind::Component));
    assert_eq!(
        entry(&[("src/App.tsx", component), ("src/main.tsx", "import './App';")]),
        mount("src/main.tsx")
    );
    assert_eq!(entry(&[("App.jsx", component), ("components/Nav.jsx", component)]), comp("App.jsx"));
    assert_eq!(entry(&[("Dashboard.tsx", component)]), comp("Dashboard.tsx"));
    assert_eq!(entry(&[("./index.jsx", component)]), comp("index.jsx"));
    assert_eq!(entry(&[("a.tsx", component), ("b.tsx", component)]), None);
    assert_eq!(entry(&[("index.html", "<div id=root>")]), None);
    let asked = build(&[("a.tsx", component), ("b.tsx", component)], Some("./b.tsx"));
    assert_eq!(asked.entry.map(|e| e.path).as_deref(), Some("b.tsx"));
    assert_eq!(
        errors(&build(&[("a.tsx", component)], Some("c.tsx"))),
        ["c.tsx: is not a module of this project"]
    );
}

#[test]
fn dynamic_imports_and_aliases_resolve_too() {
    let app = r#"import { lazy, Suspense } from 'react';
import { cn } from '@/lib/utils';
import { helper } from './lib/helper.js';
const About = lazy(() => import('./pages/About'));
export default () => <Suspense><About className={cn(helper)} /></Suspense>;
"#;
    let files = [
        ("src/App.tsx", app),
        ("src/lib/utils.ts", "export const cn = (...c: string[]) => c.join(' ');"),
        ("src/lib/helper.ts", "export const helper = 'x';"),
        ("src/pages/About.tsx", "export default () => <h1>About</h1>;"),
    ];
    let built = build(&files, None);
    assert_eq!(errors(&built), Vec::<String>::new());
    let js = module(&built, "src/App.tsx");
    for key in ["\"~/src/lib/utils.ts\"", "\"~/src/lib/helper.ts\"", "import(\"~/src/pages/About.tsx\")"] {
        assert!(js.contains(key), "{key} in:\n{js}");
    }
    assert_eq!(built.modules.last().map(|m| m.path.as_str()), Some("src/pages/About.tsx"));
}

#[test]
fn only_modules_and_side_effect_styles_can_be_imported() {
    let cases = [
        ("import styles from './App.module.css'; styles.a;", "CSS modules are not supported"),
        ("import data from './data.json'; data.x;", "'./data.json' is not a module"),
        ("import logo from './logo.svg'; logo;", "'./logo.svg' is not in this project"),
    ];
    for (line, expected) in cases {
        let files = [
            ("App.tsx", format!("{line}\nexport default () => <p />;\n")),
            ("App.module.css", ".a {}".to_owned()),
            ("data.json", "{}".to_owned()),
        ];
        let found = errors(&build(&files, None));
        assert!(found.len() == 1 && found[0].contains(expected), "{line}: {found:?}");
    }
}

#[test]
fn oversized_files_and_projects_are_refused() {
    let big = format!("export const s = '{}';\n", "x".repeat(3 << 20));
    let built =
        build(&[("App.tsx", "import { s } from './big';\nexport default () => s;"), ("big.ts", &big)], None);
    assert_eq!(errors(&built), ["big.ts: is 3.1 MB; the limit is 2 MiB"]);
    let part = "x".repeat(1 << 20);
    let files: Vec<(String, &str)> = (0..9).map(|i| (format!("f{i}.ts"), part.as_str())).collect();
    assert_eq!(errors(&build(&files, None)), ["this project is 9.4 MB; the limit is 8 MiB"]);
}

#[test]
fn paths_outside_the_project_are_not_files_of_it() {
    let built =
        build(&[("../escape.tsx", "export default 1;"), ("App.tsx", "export default () => <p />;")], None);
    assert_eq!(errors(&built), ["../escape.tsx: is not a path inside the project"]);
}

/// Every prefix of `text` cut at every 97th byte (on a character boundary).
fn cuts(text: &str) -> impl Iterator<Item = &str> {
    (0..text.len()).step_by(97).map(move |mut at| {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        &text[..at]
    })
}

#[test]
fn a_file_cut_anywhere_gives_an_answer_not_a_panic() {
    let mut builds = 0;
    for cut in cuts(TODO) {
        let built = build(&[("App.tsx", cut)], None);
        assert!(built.entry.is_some());
        builds += 1;
    }
    let files = shop();
    for (i, (path, text)) in files.iter().enumerate() {
        for cut in cuts(text) {
            let mut streamed: Vec<(&str, &str)> = files[..i].to_vec();
            streamed.push((path, cut));
            let _ = build(&streamed, None);
            builds += 1;
        }
    }
    assert!(builds > 80, "{builds}");
}
