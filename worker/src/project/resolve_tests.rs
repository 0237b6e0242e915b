use super::*;

fn project(roots: &[&str]) -> Target {
    Target::Project { roots: roots.iter().map(|r| (*r).to_owned()).collect() }
}

#[test]
fn relative_specifiers_resolve_against_the_importing_file() {
    assert_eq!(classify("App.tsx", "./components/Button"), project(&["components/Button"]));
    assert_eq!(classify("components/Button.tsx", "../lib/util.ts"), project(&["lib/util.ts"]));
    assert_eq!(classify("src/components/a/b.tsx", "../../App"), project(&["src/App"]));
    assert_eq!(classify("src/main.tsx", "./App"), project(&["src/App"]));
    assert_eq!(classify("components/index.ts", "."), project(&["components"]));
    assert_eq!(classify("App.tsx", "./a//b/./c"), project(&["a/b/c"]));
}

#[test]
fn root_absolute_and_alias_specifiers_start_at_the_root() {
    assert_eq!(classify("components/x.tsx", "/src/App.tsx"), project(&["src/App.tsx"]));
    assert_eq!(classify("components/x.tsx", "@/lib/utils"), project(&["src/lib/utils", "lib/utils"]));
}

#[test]
fn nothing_climbs_above_the_root() {
    assert_eq!(classify("App.tsx", "../x"), Target::Outside);
    assert_eq!(classify("components/a.tsx", "../../etc/passwd"), Target::Outside);
    assert_eq!(classify("a.tsx", "./b/../../c"), Target::Outside);
    assert_eq!(classify("a.tsx", "/../etc"), Target::Outside);
    assert_eq!(classify("a.tsx", "@/../../x"), Target::Outside);
    // Climbing and coming back down inside is fine.
    assert_eq!(classify("a/b.tsx", "../c/../d"), project(&["d"]));
}

#[test]
fn urls_are_never_project_files_or_packages() {
    for url in [
        "https://esm.sh/react",
        "http://localhost:8787/api/share",
        "data:text/javascript,alert(1)",
        "blob:https://x/123",
        "//evil.example/x.js",
        "node:fs",
        "javascript:alert(1)",
    ] {
        assert_eq!(classify("App.tsx", url), Target::Url, "{url}");
    }
}

#[test]
fn bare_specifiers_name_their_package() {
    let package = |name: &str| Target::Package { name: name.to_owned() };
    assert_eq!(classify("App.tsx", "react"), package("react"));
    assert_eq!(classify("App.tsx", "react-dom/client"), package("react-dom"));
    assert_eq!(classify("App.tsx", "@tanstack/react-query/x"), package("@tanstack/react-query"));
    assert_eq!(classify("App.tsx", "lucide-react"), package("lucide-react"));
    assert_eq!(classify("App.tsx", "date-fns/locale/en-US"), package("date-fns"));
    for invalid in ["", "@scope", "~/x", "#internal", "a b", "react?x", "react#y", "@/", ".hidden"] {
        assert!(!matches!(classify("App.tsx", invalid), Target::Package { .. }), "{invalid:?}");
    }
}

#[test]
fn package_name_of_bare_specifiers() {
    assert_eq!(package_name("react/jsx-dev-runtime"), Some("react"));
    assert_eq!(package_name("@radix-ui/react-dialog"), Some("@radix-ui/react-dialog"));
    assert_eq!(package_name("framer-motion"), Some("framer-motion"));
    assert_eq!(package_name("./x"), None);
    assert_eq!(package_name("@scope/"), None);
}

#[test]
fn candidates_try_exact_then_extensions_then_index() {
    let tried: Vec<String> = candidates("components/Button").collect();
    assert_eq!(
        tried,
        [
            "components/Button",
            "components/Button.tsx",
            "components/Button.ts",
            "components/Button.jsx",
            "components/Button.js",
            "components/Button.mjs",
            "components/Button/index.tsx",
            "components/Button/index.ts",
            "components/Button/index.jsx",
            "components/Button/index.js",
        ]
    );
    assert!(candidates("lib/util.js").any(|c| c == "lib/util.ts"));
    assert!(candidates("").any(|c| c == "index.tsx"));
}

#[test]
fn answer_file_names_become_project_paths() {
    assert_eq!(project_path("./src/App.tsx").as_deref(), Some("src/App.tsx"));
    assert_eq!(project_path("/App.tsx").as_deref(), Some("App.tsx"));
    assert_eq!(project_path("src\\components\\Nav.jsx").as_deref(), Some("src/components/Nav.jsx"));
    assert_eq!(project_path("../secret.ts"), None);
    assert_eq!(project_path(" "), None);
}

#[test]
fn file_kinds_by_extension() {
    assert_eq!(file_kind("a/b.tsx"), FileKind::Module);
    assert_eq!(file_kind("b.mjs"), FileKind::Module);
    assert_eq!(file_kind("index.css"), FileKind::Style);
    assert_eq!(file_kind("data.json"), FileKind::Other);
    assert_eq!(file_kind("Makefile"), FileKind::Other);
}
