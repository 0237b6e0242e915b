use super::*;

const PAGE: &str = r#"<html><head>
  <link data-trunk rel="rust" href="app/Cargo.toml" data-bin="flint-app" data-wasm-opt="s">
  <link data-trunk rel="rust" href="worker/Cargo.toml" data-bin="flint-worker" data-type="worker" data-bindgen-target="web" data-loader-shim data-wasm-opt="3">
  <link data-trunk rel="css" href="app/style.css">
  <link data-trunk rel="copy-dir" href="node_modules/monaco-editor/min/vs" data-target-path="vs-0.57.0">
  <link data-trunk rel="copy-file" href="public/preview.html">
</head><body></body></html>"#;

#[test]
fn the_page_tags_are_read_in_order() {
    let found = assets(PAGE, "index.html").unwrap();
    let kinds: Vec<&Asset> = found.iter().map(|(_, a)| a).collect();
    assert_eq!(
        kinds[0],
        &Asset::Rust(RustAsset {
            manifest: "app/Cargo.toml".into(),
            bin: "flint-app".into(),
            worker: false,
            loader_shim: false,
            wasm_opt: Some("s".into()),
            wasm_opt_params: vec![],
            keep_debug: false,
        })
    );
    let Asset::Rust(worker) = kinds[1] else { panic!("{:?}", kinds[1]) };
    assert!(worker.worker && worker.loader_shim);
    assert_eq!(worker.wasm_opt.as_deref(), Some("3"));
    assert_eq!(kinds[2], &Asset::Css { href: "app/style.css".into() });
    assert_eq!(
        kinds[3],
        &Asset::CopyDir {
            href: "node_modules/monaco-editor/min/vs".into(),
            target: Some("vs-0.57.0".into())
        }
    );
    assert_eq!(kinds[4], &Asset::CopyFile { href: "public/preview.html".into() });
    // Each range is exactly its tag.
    for (range, _) in &found {
        assert!(PAGE[range.clone()].starts_with("<link data-trunk") && PAGE[range.clone()].ends_with('>'));
    }
}

#[test]
fn what_the_build_does_not_do_is_refused_by_name() {
    for (tag, says) in [
        (r#"<link data-trunk rel="sass" href="a.scss">"#, r#"rel="sass""#),
        (
            r#"<link data-trunk rel="rust" href="a/Cargo.toml" data-bin="a" data-cargo-features="x">"#,
            "data-cargo-features",
        ),
        (r#"<link data-trunk rel="rust" href="w/Cargo.toml" data-bin="w" data-type="worker">"#, "no-modules"),
        (
            r#"<link data-trunk rel="rust" href="a/Cargo.toml" data-bin="a" data-wasm-opt="off">"#,
            r#"data-wasm-opt="off""#,
        ),
        (r#"<link data-trunk rel="css" href="a.css" data-integrity="none">"#, "data-integrity"),
        (r#"<link data-trunk rel="rust" href="a/Cargo.toml">"#, "data-bin"),
        (r#"<script data-trunk src="a.js"></script>"#, "<link data-trunk> tags only"),
        (r#"<link data-trunk rel="copy-dir" href="vs" data-target-path="../vs">"#, "inside the build"),
        (r#"<link data-trunk rel="css" href="a.css"#, "not closed"),
    ] {
        let err = format!("{:#}", assets(&format!("<head>{tag}</head>"), "page.html").unwrap_err());
        assert!(err.contains(says) && err.starts_with("page.html: "), "{tag}: {err}");
    }
}

#[test]
fn a_tag_is_found_however_it_is_written_and_not_inside_a_comment() {
    let page = "<HEAD>\n<!-- <link data-trunk rel=\"sass\" href=\"old.scss\"> -->\n\
                <LINK rel=\"css\"\n      data-trunk\thref=\"a.css\" />\n\
                <link rel=icon href=x.svg><script type=module>if (a<b) {}</script>\n</HEAD>";
    let found = assets(page, "index.html").unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1, Asset::Css { href: "a.css".into() });
    assert!(page[found[0].0.clone()].starts_with("<LINK") && page[found[0].0.clone()].ends_with("/>"));
    // Absent, wasm-opt runs at Trunk's default level; `0` turns it off.
    let levels: Vec<_> = assets(
        r#"<link data-trunk rel="rust" href="a/Cargo.toml" data-bin="a"><link data-trunk rel="rust" href="b/Cargo.toml" data-bin="b" data-wasm-opt="0">"#,
        "index.html",
    )
    .unwrap()
    .into_iter()
    .map(|(_, asset)| match asset {
        Asset::Rust(rust) => rust.wasm_opt,
        other => panic!("{other:?}"),
    })
    .collect();
    assert_eq!(levels, vec![Some(String::new()), None]);
}

#[test]
fn the_built_page_loads_the_app_and_drops_the_rest() {
    let found = assets(PAGE, "index.html").unwrap();
    let outputs: Vec<_> = found
        .into_iter()
        .map(|(range, asset)| {
            let output = match asset {
                Asset::Rust(r) if !r.worker => Output::App {
                    js: "flint-app-0123456789abcdef.js".into(),
                    wasm: "flint-app-0123456789abcdef_bg.wasm".into(),
                    preloads: vec![
                        Preload {
                            href: "flint-app-0123456789abcdef.js".into(),
                            integrity: "sha384-A".into(),
                            wasm: false,
                        },
                        Preload {
                            href: "flint-app-0123456789abcdef_bg.wasm".into(),
                            integrity: "sha384-B".into(),
                            wasm: true,
                        },
                    ],
                },
                Asset::Css { .. } => {
                    Output::Stylesheet { href: "style-00ff.css".into(), integrity: "sha384-C".into() }
                }
                _ => Output::Nothing,
            };
            (range, output)
        })
        .collect();
    let page = render(PAGE, &outputs).unwrap();
    assert!(!page.contains("data-trunk"), "{page}");
    assert!(page.contains("import init from '/flint-app-0123456789abcdef.js';"), "{page}");
    assert!(page.contains("await init({ module_or_path: '/flint-app-0123456789abcdef_bg.wasm' });"));
    assert!(page.contains(r#"<link rel="stylesheet" href="/style-00ff.css" integrity="sha384-C">"#));
    let head_end = page.find("</head>").unwrap();
    let preload = page.find(r#"rel="preload" href="/flint-app-0123456789abcdef_bg.wasm""#).unwrap();
    let module = page.find(r#"rel="modulepreload" href="/flint-app-0123456789abcdef.js""#).unwrap();
    assert!(module < preload && preload < head_end, "{page}");
    // The one inline script is the loader, so the gateway's policy hashes exactly it.
    assert_eq!(page.matches("<script").count(), 1);
}
