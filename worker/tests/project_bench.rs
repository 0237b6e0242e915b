//! Speed of building React projects (issue 27) against its targets, as rows of the worker's
//! benchmark table (`bench/worker-text.md`).
//!
//! Not a timed test: both entries are `#[ignore]`d and only print. In headless Chromium, inside a
//! dedicated worker as in the product (`cargo xtask bench worker-text` runs this and `text_bench`
//! and writes the table):
//!
//! ```text
//! CHROMEDRIVER=/usr/bin/chromedriver \
//! CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//! cargo test --release -p flint-worker --target wasm32-unknown-unknown --test project_bench \
//!   -- --include-ignored --nocapture
//! ```
//!
//! Natively: `cargo test --release -p flint-worker --test project_bench -- --ignored --nocapture`.
//! Inputs are generated deterministically (`project_inputs`).

use flint_worker::project::{build, transform};

mod bench_rows;
mod project_inputs;

use bench_rows::{Row, now_ms, print, time};
use project_inputs::{big_file, project};

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// The most stack-hungry constructs (see `project/nesting.rs`), `depth` levels deep.
const DEEP: [fn(usize) -> String; 7] = [
    |d| format!("x = {}1{};", "(".repeat(d), ")".repeat(d)),
    |d| format!("x = {}1{};", "{a:".repeat(d), "}".repeat(d)),
    |d| format!("x = {}1{};", "`${".repeat(d), "}`".repeat(d)),
    |d| format!("x = {}{};", "<a>{".repeat(d), "}</a>".repeat(d)),
    |d| format!("x = {}c;", "a ? b : ".repeat(d)),
    |d| format!("x = {}c;", "a => ".repeat(d)),
    |d| format!("let x: {}1{};", "A<".repeat(d), ">".repeat(d)),
];

/// The deepest version of `make` the nesting bound lets through.
fn deepest_accepted(make: fn(usize) -> String) -> String {
    let refused =
        |d: usize| transform("deep.tsx", &make(d)).is_err_and(|e| e.message.contains("nests too deeply"));
    let (mut lo, mut hi) = (1usize, 2_000usize);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if refused(mid) { hi = mid - 1 } else { lo = mid }
    }
    make(lo)
}

fn bench() {
    let file = big_file(1_000);
    let lines = file.lines().count();
    // A fresh instance first: V8 compiles wasm functions on their first call (baseline code) and
    // optimises them once they are hot, so the first calls are slower than the rest.
    // A small component first, as a warm-up at idle would: how much of the first call's cost is
    // compiling the code rather than the file's size.
    let small = include_str!("react/todo/App.tsx");
    let start = now_ms();
    assert!(transform("App.tsx", small).is_ok());
    let warm_up = now_ms() - start;
    let start = now_ms();
    assert!(transform("App.tsx", &file).is_ok());
    let first = now_ms() - start;
    let cold = time(60, 1, || assert!(transform("App.tsx", &file).is_ok()));
    let one = time(30, 1, || assert!(transform("App.tsx", &file).is_ok()));

    let files = project(10);
    let modules = files.iter().filter(|(p, _)| p.ends_with(".tsx") || p.ends_with(".ts")).count();
    let project_lines: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
    let built = build(&files, None);
    assert!(built.errors.is_empty(), "{:?}", built.errors);
    assert_eq!(built.modules.len(), modules);
    let ten = time(30, 1, || assert!(build(&files, None).errors.is_empty()));

    // A streamed snapshot: a component file cut mid-line, so the build ends in a syntax error
    // after building everything else.
    let mut cut = files.clone();
    if let Some((_, part)) = cut.iter_mut().rev().find(|(p, _)| p.starts_with("components/")) {
        part.truncate(part.len() / 2);
    }
    let streaming = time(30, 1, || assert!(!build(&cut, None).errors.is_empty()));

    // Stack: the deepest input the bound accepts must not trap the worker (a test of the bound
    // in the browser's wasm engine, timed because it is cheap to).
    let deep: Vec<String> = DEEP.iter().map(|make| deepest_accepted(*make)).collect();
    let stack = time(5, 1, || {
        for source in &deep {
            let _ = transform("deep.tsx", source);
        }
    });

    let rows = [
        Row {
            name: format!("a fresh worker's first transform: a {}-line component", small.lines().count()),
            target: "once",
            samples: vec![warm_up],
        },
        Row {
            name: format!("then a {lines}-line TSX file ({} KB), its first call", file.len() / 1000),
            target: "once",
            samples: vec![first],
        },
        Row {
            name: "the same, the next 60 calls (while V8 optimises)".into(),
            target: "warming",
            samples: cold,
        },
        Row { name: "the same, the 30 calls after those".into(), target: "≤ 5", samples: one },
        Row {
            name: format!(
                "build a {modules}-file project ({project_lines} lines, {} styles)",
                built.styles.len()
            ),
            target: "≤ 15",
            samples: ten,
        },
        Row {
            name: "the same project with a component cut mid-stream (a syntax error)".into(),
            target: "≤ 15",
            samples: streaming,
        },
        Row {
            name: format!(
                "the deepest nesting accepted, {} constructs, transformed without a trap",
                deep.len()
            ),
            target: "no trap",
            samples: stack,
        },
    ];
    let mut table = String::from(
        "| benchmark | target (ms) | median (ms) | p95 (ms) | samples |\n|---|---|---|---|---|\n",
    );
    for row in &rows {
        table.push_str(&row.cells());
        table.push('\n');
    }
    print(&table);
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen_test::wasm_bindgen_test]
#[ignore = "a benchmark: run with --include-ignored"]
fn project_build_speed() {
    bench();
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn project_build_speed() {
    bench();
}
