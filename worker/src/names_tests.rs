//! Unit tests of the names read from answers, in the forms models write them.

use super::*;

fn named(language: &str, path: &str) -> (String, Option<String>) {
    (language.to_owned(), Some(path.to_owned()))
}

#[test]
fn a_fence_names_its_file_in_every_common_form() {
    assert_eq!(fence_info("tsx App.tsx"), named("tsx", "App.tsx"));
    assert_eq!(fence_info("App.tsx"), named("tsx", "App.tsx"));
    assert_eq!(fence_info("tsx:src/App.tsx"), named("tsx", "src/App.tsx"));
    assert_eq!(fence_info("tsx title=\"src/App.tsx\""), named("tsx", "src/App.tsx"));
    assert_eq!(
        fence_info("jsx filename='components/Nav.jsx' showLineNumbers"),
        named("javascript", "components/Nav.jsx")
    );
    assert_eq!(fence_info("tsx {title=\"App.tsx\"}"), named("tsx", "App.tsx"));
    assert_eq!(fence_info("{.css file=styles.css}"), named("css", "styles.css"));
    assert_eq!(fence_info("html ./index.html"), named("html", "index.html"));
    assert_eq!(fence_info("JS"), ("javascript".into(), None));
    assert_eq!(fence_info("tsx {1-3}"), ("tsx".into(), None), "line highlights are not a name");
    assert_eq!(fence_info(""), ("plaintext".into(), None));
    assert_eq!(fence_info("python"), ("python".into(), None));
}

#[test]
fn a_prose_line_names_the_block_below_it() {
    for (line, path) in [
        ("App.tsx", "App.tsx"),
        ("**App.tsx**", "App.tsx"),
        ("**`src/App.tsx`**", "src/App.tsx"),
        ("`components/Header.tsx`:", "components/Header.tsx"),
        ("### components/Header.tsx", "components/Header.tsx"),
        ("#### `src/index.css`", "src/index.css"),
        ("**File: src/App.tsx**", "src/App.tsx"),
        ("File: `App.tsx`", "App.tsx"),
        ("Filename: App.tsx", "App.tsx"),
        ("1. **App.tsx** (the root component)", "App.tsx"),
        ("- `components/TodoItem.tsx` — one row", "components/TodoItem.tsx"),
        ("2) **`Header.tsx`**:", "Header.tsx"),
        ("Create `src/components/Card.tsx`:", "src/components/Card.tsx"),
        ("And finally the styles in `index.css`:", "index.css"),
    ] {
        assert_eq!(label_path(line).as_deref(), Some(path), "{line}");
    }
}

#[test]
fn prose_that_only_mentions_files_names_nothing() {
    for line in [
        "Here is the app:",
        "Update `App.tsx` to import `Header.tsx`:",
        "`App.tsx` is the entry point and renders the list.",
        "### Chart.js",
        "Built with Node.js:",
        "See https://example.com/app.js",
        "**Note.**",
        "e.g.",
        "../secrets.txt",
        "---",
        "**Step 1**",
    ] {
        assert_eq!(label_path(line), None, "{line}");
    }
}

#[test]
fn a_first_line_comment_names_its_block() {
    for (line, path) in [
        ("// components/Header.tsx", "components/Header.tsx"),
        ("// filepath: src/App.tsx", "src/App.tsx"),
        ("// File: src/App.tsx", "src/App.tsx"),
        ("/* styles.css */", "styles.css"),
        ("<!-- index.html -->", "index.html"),
        ("# app.py", "app.py"),
        ("// utils/format.ts - date helpers", "utils/format.ts"),
    ] {
        assert_eq!(comment_path(line).as_deref(), Some(path), "{line}");
    }
    for line in [
        "// The root component",
        "import React from 'react';",
        "// see lib.ts for the rest",
        "#main.dark {",
        "/* ../../etc/passwd.txt */",
    ] {
        assert_eq!(comment_path(line), None, "{line}");
    }
}

#[test]
fn a_name_must_suit_the_blocks_language() {
    assert!(suits("tsx", "App.tsx"));
    assert!(suits("typescript", "components/Header.tsx"));
    assert!(suits("javascript", "App.jsx"));
    assert!(suits("plaintext", "index.css"));
    assert!(suits("css", "index.css"));
    assert!(!suits("tsx", "index.css"));
    assert!(!suits("bash", "App.tsx"));
    assert!(!suits("css", "main.dark"));
    assert!(suits("python", "app.py"));
}

#[test]
fn no_name_climbs_out_or_carries_markup() {
    for info in [
        "tsx ../../x.tsx",
        "tsx https://host/a.js",
        "tsx components/</script><script>x.tsx",
        "tsx title=\"/../a.tsx\"",
    ] {
        assert_eq!(fence_info(info).1, None, "{info}");
    }
    assert_eq!(label_path("**components//Header.tsx**"), None);
}
