//! The Vite project of a React answer: its layout, what Flint adds and what it never overwrites.

use super::*;

fn file(name: &str, content: &str, main: bool) -> AnswerFile {
    let language = if name.ends_with(".css") { "css" } else { "tsx" };
    AnswerFile { name: Some(name.into()), language: language.into(), content: content.into(), main }
}

fn versions() -> BTreeMap<String, String> {
    [("react", "19.3.1"), ("react-dom", "19.3.1"), ("clsx", "2.1.1"), ("@tailwindcss/browser", "4.3.4")]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect()
}

/// The fixture's project (tests/fixtures/react-files.md), as the worker shapes it.
fn todo_app() -> (Vec<AnswerFile>, ProjectShape) {
    let files = vec![
        file("App.tsx", "import './index.css';\nexport default function App() { return <p/>; }\n", true),
        file("components/Header.tsx", "export function Header() {}\n", false),
        file("components/TodoList.tsx", "import clsx from 'clsx';\n", false),
        file("index.css", ".app {}\n", false),
    ];
    let shape = ProjectShape {
        paths: files.iter().map(|f| f.name.clone().unwrap()).collect(),
        entry: "App.tsx".into(),
        mounts: false,
        specifiers: vec!["clsx".into(), "react".into(), "react/jsx-dev-runtime".into()],
        packages: vec!["clsx".into(), "react".into()],
        loose_styles: Vec::new(),
    };
    (files, shape)
}

fn names(project: &[(String, String)]) -> Vec<&str> {
    project.iter().map(|(p, _)| p.as_str()).collect()
}

fn text<'a>(project: &'a [(String, String)], path: &str) -> &'a str {
    &project.iter().find(|(p, _)| p == path).unwrap_or_else(|| panic!("no {path}")).1
}

#[test]
fn a_component_app_gets_a_main_that_mounts_it_and_its_files_under_src() {
    let (files, shape) = todo_app();
    let project = vite_project(&files, &shape, &versions(), "a-react-todo-app").unwrap();
    assert_eq!(
        names(&project),
        [
            "package.json",
            "README.md",
            "index.html",
            "vite.config.ts",
            "tsconfig.json",
            ".gitignore",
            "src/main.tsx",
            "src/tailwind.css",
            "src/App.tsx",
            "src/components/Header.tsx",
            "src/components/TodoList.tsx",
            "src/index.css",
        ]
    );
    assert_eq!(text(&project, "src/main.tsx"), mount_module("./App.tsx", MountSource::Tsx));
    assert_eq!(text(&project, "src/App.tsx"), files[0].content, "the project's files are as they were");
    let html = text(&project, "index.html");
    assert!(html.contains("<div id=\"root\"></div>"), "{html}");
    assert!(html.contains("<script type=\"module\" src=\"/src/main.tsx\"></script>"), "{html}");
    assert!(html.contains("<link rel=\"stylesheet\" href=\"/src/tailwind.css\">"), "{html}");
    assert_eq!(text(&project, "src/tailwind.css"), TAILWIND_CSS);
    assert!(text(&project, "vite.config.ts").contains("\"@\": fileURLToPath(new URL(\"./src\""));
    assert!(text(&project, "README.md").contains("npm install && npm run dev"));
}

#[test]
fn package_json_pins_react_and_the_imported_packages_at_the_vendored_versions() {
    let (files, shape) = todo_app();
    let project = vite_project(&files, &shape, &versions(), "A React todo app!").unwrap();
    let json: serde_json::Value = serde_json::from_str(text(&project, "package.json")).expect("valid JSON");
    assert_eq!(json["name"], "areacttodoapp");
    assert_eq!(
        json["dependencies"],
        serde_json::json!({ "clsx": "2.1.1", "react": "19.3.1", "react-dom": "19.3.1" }),
        "no Tailwind browser build, no package the project does not import"
    );
    assert_eq!(json["devDependencies"]["vite"], "8.3.8");
    assert_eq!(json["devDependencies"]["@vitejs/plugin-react"], "6.3.0");
    assert_eq!(json["devDependencies"]["@tailwindcss/vite"], "4.3.5");
    assert_eq!(json["devDependencies"]["tailwindcss"], "4.3.5");
    assert!(json["devDependencies"].get("typescript").is_none());
    assert_eq!(json["scripts"]["dev"], "vite");
    assert_eq!(json["scripts"]["build"], "vite build");
    assert_eq!(json["scripts"]["preview"], "vite preview");
}

#[test]
fn a_package_without_a_vendored_version_is_a_sentence_naming_it() {
    let (files, mut shape) = todo_app();
    shape.packages.push("canvas-confetti".into());
    let err = vite_project(&files, &shape, &versions(), "x").unwrap_err();
    assert!(err.to_string().contains("canvas-confetti") && err.to_string().contains("[preview] packages"));
}

#[test]
fn an_entry_that_mounts_itself_is_loaded_as_it_is() {
    let main = "import { createRoot } from 'react-dom/client';\nimport App from './App';\n\
                createRoot(document.getElementById('app')!).render(<App />);\n";
    let files =
        vec![file("src/main.tsx", main, false), file("src/App.tsx", "export default () => null;\n", true)];
    let shape = ProjectShape {
        paths: vec!["src/main.tsx".into(), "src/App.tsx".into()],
        entry: "src/main.tsx".into(),
        mounts: true,
        ..ProjectShape::default()
    };
    let project = vite_project(&files, &shape, &versions(), "x").unwrap();
    assert_eq!(text(&project, "src/main.tsx"), main, "the model's main.tsx is not replaced");
    assert_eq!(project.iter().filter(|(p, _)| p.ends_with("main.tsx")).count(), 1);
    assert!(text(&project, "index.html").contains("src=\"/src/main.tsx\""));
    assert!(names(&project).contains(&"src/App.tsx"), "a project already in src/ stays there");
}

#[test]
fn what_flint_adds_yields_to_the_projects_own_files() {
    let files = vec![
        file("App.tsx", "export default () => null;\n", true),
        file("tailwind.css", "/* mine */\n", false),
        file("index.html", "<!-- the model's -->\n", false),
        file("package.json", "{}\n", false),
        file("../../etc/evil.tsx", "x\n", false),
    ];
    let shape = ProjectShape {
        paths: files.iter().map(|f| f.name.clone().unwrap()).collect(),
        entry: "App.tsx".into(),
        loose_styles: vec!["tailwind.css".into()],
        ..ProjectShape::default()
    };
    let project = vite_project(&files, &shape, &versions(), "x").unwrap();
    assert_eq!(text(&project, "src/tailwind.css"), "/* mine */\n");
    assert_eq!(text(&project, "src/tailwind-2.css"), TAILWIND_CSS);
    assert_eq!(text(&project, "src/index.html"), "<!-- the model's -->\n");
    assert_eq!(text(&project, "src/package.json"), "{}\n");
    assert!(text(&project, "index.html").contains("<div id=\"root\">"), "the root page is Flint's");
    assert!(names(&project).contains(&"src/etc/evil.tsx"), "{:?}", names(&project));
    assert!(project.iter().all(|(p, _)| !p.contains("..") && !p.starts_with('/')));
    let html = text(&project, "index.html");
    assert!(
        html.contains("href=\"/src/tailwind-2.css\"") && html.contains("href=\"/src/tailwind.css\""),
        "{html}"
    );
    let mut paths = names(&project);
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), project.len(), "every path once");
}

#[test]
fn the_same_project_gives_the_same_zip() {
    let (files, shape) = todo_app();
    let zip = vite_zip(&files, &shape, &versions(), "todo").unwrap();
    assert_eq!(vite_zip(&files, &shape, &versions(), "todo").unwrap(), zip);
}
