//! A React answer's preview page: built from the streamed files, with an import map of data URLs
//! and vendored packages, and the problems that keep it from running.

use std::collections::BTreeMap;

use super::*;

fn packages() -> PreviewPackages {
    let imports: BTreeMap<String, String> = [
        ("react", "/vendor/react@19.3.1/react.js"),
        ("react/jsx-dev-runtime", "/vendor/react@19.3.1/jsx-dev-runtime.js"),
        ("react-dom/client", "/vendor/react-dom@19.3.1/client.js"),
        ("lucide-react", "/vendor/lucide-react@1.79.0/lucide-react.js"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_owned(), b.to_owned()))
    .collect();
    PreviewPackages {
        imports,
        tailwind: Some("/vendor/@tailwindcss/browser@4.3.4/tailwind.js".into()),
        packages: BTreeMap::new(),
    }
}

fn parse(text: &str) -> StreamParser {
    let mut p = StreamParser::new();
    p.push(text);
    p.finish();
    p
}

const APP: &str = "Here it is.\n\n```tsx App.tsx\nimport { useState } from 'react';\nimport { Plus } from 'lucide-react';\n\
import Button from './components/Button';\n\nexport default function App() {\n  const [n, setN] = useState<number>(0);\n  \
return <main className=\"p-4\"><Button onClick={() => setN(n + 1)}><Plus /> {n}</Button></main>;\n}\n```\n\n\
```tsx components/Button.tsx\ntype Props = { onClick: () => void; children: React.ReactNode };\n\
export default function Button({ onClick, children }: Props) {\n  return <button className=\"rounded bg-blue-600\" onClick={onClick}>{children}</button>;\n}\n```\n";

#[test]
fn a_react_answer_is_a_project_and_a_page_is_not() {
    assert!(is_project(&parse(APP)));
    assert!(!is_project(&parse("```html\n<p>hi</p>\n```\n")));
    assert!(is_project(&parse("```jsx\nimport React from 'react';\nexport default () => <p/>;\n```\n")));
}

#[test]
fn the_page_maps_every_module_and_package_and_mounts_the_app() {
    let doc = project_document(&parse(APP), &packages(), false).expect("it builds");
    let start = doc.find("<script type=\"importmap\">").unwrap() + "<script type=\"importmap\">".len();
    let end = start + doc[start..].find("</script>").unwrap();
    let map: serde_json::Value = serde_json::from_str(&doc[start..end]).expect("the import map is JSON");
    let imports = map["imports"].as_object().unwrap();
    for key in ["react", "react/jsx-dev-runtime", "react-dom/client", "lucide-react"] {
        assert_eq!(imports[key], packages().imports[key], "{key}");
    }
    let button = imports["~/components/Button.tsx"].as_str().unwrap();
    assert!(button.starts_with("data:text/javascript;charset=utf-8,"));
    assert!(!button.contains('\n') && !button.contains('#'), "line breaks and # are encoded");
    assert!(imports["~/App.tsx"].as_str().unwrap().contains("~/components/Button.tsx"));
    assert!(doc.contains("<script src=\"/vendor/@tailwindcss/browser@4.3.4/tailwind.js\"></script>"));
    assert!(doc.contains("import App from \"~/App.tsx\""));
    assert!(doc.contains("<div id=\"root\"></div>"));
}

#[test]
fn a_file_cut_mid_stream_or_broken_is_a_problem_with_its_place() {
    let cut = &APP[..APP.find("return <main").unwrap() + 20];
    let mut p = StreamParser::new();
    p.push(cut);
    let why = project_document(&p, &packages(), true).unwrap_err();
    assert!(why[0].starts_with("App.tsx:"), "{why:?}");
    let broken = APP.replace("const [n, setN]", "const [n, setN] = = ");
    let why = project_document(&parse(&broken), &packages(), false).unwrap_err();
    assert!(why[0].starts_with("App.tsx:6:"), "{why:?}");
}

#[test]
fn while_it_streams_a_component_not_written_yet_stands_in_and_once_whole_it_is_an_error() {
    // `App.tsx` has streamed; `components/Button.tsx` has not begun, then is cut mid-line.
    let app_only = &APP[..APP.find("```tsx components/").unwrap()];
    let mut p = StreamParser::new();
    p.push(app_only);
    let doc = project_document(&p, &packages(), true).expect("the app renders with a stand-in");
    assert!(doc.contains("/components/Button.pending\""), "{doc}");
    let why = project_document(&p, &packages(), false).unwrap_err();
    assert!(why[0].contains("'./components/Button' is not in this project"), "{why:?}");
    p.push(
        "```tsx components/Button.tsx
type Props = { onClick: () => void; children: React.ReactNode };
export default function Button(",
    );
    let doc = project_document(&p, &packages(), true).expect("the cut file stands in");
    assert!(doc.contains("/components/Button.tsx\"") && doc.contains("is not written yet"), "{doc}");
    p.push(
        "{ onClick, children }: Props) {\n  return <button onClick={onClick}>{children}</button>;\n}\n```\n",
    );
    p.finish();
    let doc = project_document(&p, &packages(), false).expect("whole");
    assert!(!doc.contains("is not written yet"), "nothing stands in once whole");
}

#[test]
fn a_streaming_build_versions_its_keys() {
    let mut p = StreamParser::new();
    p.push(APP);
    let live = project_document(&p, &packages(), true).expect("builds");
    let generation = p.revision();
    assert!(live.contains(&format!("import App from \"~{generation}/App.tsx\"")), "{live}");
    assert!(!live.contains("\"~/"), "a frame that ran an earlier build must not meet a key it has mapped");
    let whole = project_document(&parse(APP), &packages(), false).expect("builds");
    assert!(whole.contains("import App from \"~/App.tsx\""), "a finished page keeps plain keys");
}

#[test]
fn a_package_the_preview_lacks_is_named_with_the_setting_that_adds_it() {
    let app = APP.replace("'lucide-react'", "'@tanstack/react-query/devtools'");
    let why = project_document(&parse(&app), &packages(), false).unwrap_err();
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(
        why[0].contains("'@tanstack/react-query/devtools'") && why[0].contains("\"@tanstack/react-query\"")
    );
    assert!(why[0].contains("[preview] packages"));
    let none = project_document(&parse(APP), &PreviewPackages::default(), false).unwrap_err();
    assert!(none[0].contains("cargo xtask setup preview-packages"), "{none:?}");
}

#[test]
fn nothing_in_a_path_or_a_module_can_end_the_script_elements() {
    // The stream parser takes no such name (`crate::names`), but a project read back from a link or
    // the history names its files as it likes.
    let hostile = "components/</script><script>x";
    let files: Vec<(String, String)> = project_files(&parse(APP))
        .into_iter()
        .map(|(path, text)| {
            let text = text
                .replace("components/Button", hostile)
                .replace("{n}</Button>", "{'</script><!--'}</Button>");
            (path.replace("components/Button", hostile), text)
        })
        .collect();
    assert!(files.iter().any(|(path, _)| path.starts_with(hostile)));
    let doc = files_document(&files, &packages()).expect("it builds");
    assert_eq!(doc.matches("</script>").count(), 3, "importmap, tailwind, mount:\n{doc}");
    assert!(!doc.contains("<!--"));
}

#[test]
fn data_urls_keep_the_text_byte_for_byte() {
    let js = "a%b#c\nd\te — ü \u{1}";
    let url = data_url(js);
    let body = url.strip_prefix("data:text/javascript;charset=utf-8,").unwrap();
    let mut bytes = Vec::new();
    let raw = body.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            bytes.push(u8::from_str_radix(&body[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            bytes.push(raw[i]);
            i += 1;
        }
    }
    assert_eq!(String::from_utf8(bytes).unwrap(), js);
}

const ONE_FILE: &str = "import { useState } from 'react';\n\nexport default function App() {\n  const [n, setN] = useState(0);\n  \
return <button onClick={() => setN(n + 1)}>Clicks: {n}</button>;\n}\n";

fn session() -> crate::session::Session {
    let mut s = crate::session::Session::new();
    s.handle(flint_protocol::worker::WorkerRequest::Packages(packages()), 0.0);
    s
}

#[test]
fn the_page_of_a_projects_files_is_built_on_request_or_says_why_not() {
    use crate::session::Next;
    use flint_protocol::worker::WorkerRequest;
    let mut s = session();
    let file = AnswerFile::named("App.tsx", "tsx", ONE_FILE, true);
    match s.handle(WorkerRequest::Page { id: 7, files: vec![file.clone()], packages: None }, 1.0) {
        Next::Page(7, Ok((page, shape))) => {
            assert!(page.contains("<script type=\"importmap\">"));
            assert_eq!((shape.entry.as_str(), shape.mounts), ("App.tsx", false));
            assert_eq!(shape.packages, ["react"]);
        }
        other => panic!("{other:?}"),
    }
    let broken = AnswerFile { content: ONE_FILE.replace("useState(0)", "useState(0"), ..file };
    match s.handle(WorkerRequest::Page { id: 8, files: vec![broken], packages: None }, 2.0) {
        Next::Page(8, Err(problems)) => assert!(problems[0].starts_with("App.tsx:4:"), "{problems:?}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_warm_page_is_built_on_request_while_the_gateway_serves_react() {
    use crate::session::{Next, Session};
    use flint_protocol::worker::WorkerRequest;
    match session().handle(WorkerRequest::WarmPage { id: 3 }, 1.0) {
        Next::Page(3, Ok((page, _))) => {
            assert!(
                page.contains("import \"react-dom/client\";") && page.contains("data-flint-warm"),
                "{page}"
            );
            assert!(page.contains("import \"lucide-react\";"), "the package most apps import is loaded too");
        }
        other => panic!("{other:?}"),
    }
    // No packages yet (or a gateway without them): no page, and why.
    match Session::new().handle(WorkerRequest::WarmPage { id: 4 }, 1.0) {
        Next::Page(4, Err(why)) => assert!(why[0].contains("no React"), "{why:?}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_edit_of_a_react_component_previews_as_its_built_page() {
    use crate::session::Next;
    use flint_protocol::worker::WorkerRequest;
    let mut s = session();
    s.handle(WorkerRequest::Reset { stream: 2, preview_only: false, base: Some(ONE_FILE.into()) }, 0.0);
    let answer = "<<<<<<< SEARCH\n  return <button onClick={() => setN(n + 1)}>Clicks: {n}</button>;\n=======\n  \
return <button onClick={() => setN(n + 2)}>Taps: {n}</button>;\n>>>>>>> REPLACE\n";
    s.text(2, answer, 1.0);
    let mut pages = Vec::new();
    for at in [20.0, 300.0, 600.0] {
        pages.extend(s.flush(at).into_iter().filter_map(|u| u.preview.map(|p| (p, u.live))));
    }
    if let Next::Send(updates) = s.handle(WorkerRequest::Finish { stream: 2 }, 900.0) {
        pages.extend(updates.into_iter().filter_map(|u| u.preview.map(|p| (p, u.live))));
    }
    let (last, live) = pages.last().expect("a preview");
    assert!(live, "an edited component's page runs");
    assert!(last.contains("<script type=\"importmap\">"), "built, not shown as text: {last}");
    assert!(last.contains("Taps"), "the edit is in the page");
}

#[test]
fn a_line_cut_mid_word_is_not_built_and_an_entry_needs_its_default_export() {
    // `export default fun` parses (a reference to `fun`) and would run a page that throws.
    let mut p = StreamParser::new();
    p.push("```tsx App.tsx\nexport default fun");
    assert!(project_document(&p, &packages(), true).is_err(), "the cut line was built");
    let empty = parse("```tsx App.tsx\nconst x = 1;\n```\n");
    let why = project_document(&empty, &packages(), false).unwrap_err();
    assert!(why[0].contains("default export"), "{why:?}");
}

#[test]
fn a_file_written_again_is_the_main_file_in_its_last_version() {
    let p = parse(
        "```tsx App.tsx\nexport default () => <p>one</p>;\n```\nBetter:\n```tsx App.tsx\nexport default () => <p>two</p>;\n```\n",
    );
    let main = p.main_file().expect("a main file");
    assert!(p.files()[main].content.contains("two"));
}

#[test]
fn a_kept_project_reads_back_as_the_files_it_was_made_of() {
    // The app keeps a project as `bundle`'s text and sends it back as an edit's base: the parser
    // must read it as the same files, in the same order, the first one main.
    let answer = parse(APP);
    let files: Vec<AnswerFile> = answer
        .files()
        .iter()
        .enumerate()
        .map(|(i, f)| AnswerFile {
            name: f.name.clone(),
            language: f.language.clone(),
            content: f.content.clone(),
            main: answer.main_file() == Some(i),
        })
        .collect();
    let kept = flint_protocol::project::bundle(&files).expect("a project");
    let reread = parse(&kept);
    assert_eq!(project_files(&reread), project_files(&answer));
    assert_eq!(edited_files("plaintext", &kept).as_ref(), Some(&project_files(&answer)));
    assert_eq!(edited_files("html", "<p>a page</p>"), None);
}

#[test]
fn a_page_asked_with_packages_of_its_own_is_built_with_them() {
    use crate::session::Next;
    use flint_protocol::worker::WorkerRequest;
    let mut s = session();
    let file = AnswerFile::named("App.tsx", "tsx", ONE_FILE, true);
    let mut inline = packages();
    for url in inline.imports.values_mut() {
        *url = data_url("export const x = 1;");
    }
    inline.tailwind = Some(data_url("/* tailwind */"));
    match s.handle(WorkerRequest::Page { id: 9, files: vec![file], packages: Some(inline) }, 1.0) {
        Next::Page(9, Ok((page, shape))) => {
            assert!(!page.contains("/vendor/"), "{page}");
            assert!(
                page.contains("<script src=\"data:text/javascript;charset=utf-8,/* tailwind */\"></script>")
            );
            assert_eq!(shape.specifiers, ["react", "react/jsx-dev-runtime"]);
        }
        other => panic!("{other:?}"),
    }
}
