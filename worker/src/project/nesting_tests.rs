use super::*;
use crate::project::transform;

/// A named construct and how to write it `depth` levels deep.
type Construct = (&'static str, fn(usize) -> String);

/// Each construct that makes oxc recurse.
fn constructs() -> Vec<Construct> {
    vec![
        ("parentheses", |d| format!("x = {}1{};", "(".repeat(d), ")".repeat(d))),
        ("arrays", |d| format!("x = {}1{};", "[".repeat(d), "]".repeat(d))),
        ("objects", |d| format!("x = {}1{};", "{a:".repeat(d), "}".repeat(d))),
        ("blocks", |d| format!("{}{}", "{".repeat(d), "}".repeat(d))),
        ("templates", |d| format!("x = {}1{};", "`${".repeat(d), "}`".repeat(d))),
        ("calls", |d| format!("x = {}1{};", "f(".repeat(d), ")".repeat(d))),
        ("jsx", |d| format!("x = {}{};", "<a>".repeat(d), "</a>".repeat(d))),
        ("jsx in braces", |d| format!("x = {}{};", "<a>{".repeat(d), "}</a>".repeat(d))),
        ("if", |d| format!("{}x;", "if (a) ".repeat(d))),
        ("else if", |d| format!("if (a) {{}}{}", " else if (a) {}".repeat(d))),
        ("not", |d| format!("x = {}a;", "!".repeat(d))),
        ("negation", |d| format!("x = {}a;", "- ".repeat(d))),
        ("ternary", |d| format!("x = {}c;", "a ? b : ".repeat(d))),
        ("arrows", |d| format!("x = {}c;", "a => ".repeat(d))),
        ("sum", |d| format!("x = {}c;", "a + ".repeat(d))),
        ("members", |d| format!("x = a{};", ".b".repeat(d))),
        ("method chain", |d| format!("x = a{};", ".b()".repeat(d))),
        ("assignments", |d| format!("{}c;", "a = ".repeat(d))),
        ("type arguments", |d| format!("let x: {}1{};", "A<".repeat(d), ">".repeat(d))),
        ("awaits", |d| format!("async () => {}x;", "await ".repeat(d))),
    ]
}

#[test]
fn real_components_are_far_below_the_limit() {
    for (name, text) in [
        ("todo", include_str!("../../tests/react/todo/App.tsx")),
        ("shop", include_str!("../../tests/react/shop/App.tsx")),
        ("button", include_str!("../../tests/react/shop/components/ui/button.tsx")),
    ] {
        assert_eq!(too_deep(text), None, "{name}");
        // With room to spare: the same file nested inside 80 more brackets still passes.
        let wrapped = format!("{}{text}{}", "(".repeat(80), ")".repeat(80));
        assert_eq!(too_deep(&wrapped), None, "{name} wrapped");
    }
}

#[test]
fn every_recursive_construct_is_refused_when_deep() {
    for (name, make) in constructs() {
        assert!(too_deep(&make(20_000)).is_some(), "{name} 20,000 deep");
        assert!(too_deep(&make(10)).is_none(), "{name} 10 deep");
    }
}

#[test]
fn what_passes_the_bound_builds_on_a_small_stack() {
    // The deepest version of each construct the bound lets through, transformed on a 1 MiB stack
    // (optimised code; an unoptimised test build has frames several times bigger): none may
    // overflow it.
    let stack = if cfg!(debug_assertions) { 16 << 20 } else { 1 << 20 };
    let worker = std::thread::Builder::new().stack_size(stack);
    let handle = worker
        .spawn(|| {
            for (name, make) in constructs() {
                let (mut lo, mut hi) = (1usize, 20_000usize);
                while lo < hi {
                    let mid = (lo + hi).div_ceil(2);
                    if too_deep(&make(mid)).is_none() { lo = mid } else { hi = mid - 1 }
                }
                let _ = transform("deep.tsx", &make(lo));
                assert!(transform("deep.tsx", &make(lo + 200)).is_err(), "{name}");
            }
        })
        .expect("thread");
    handle.join().expect("no overflow");
}

#[test]
fn the_error_points_where_it_gets_too_deep() {
    let source = format!("const a = 1;\nexport const x = {}1{};\n", "(".repeat(400), ")".repeat(400));
    let error = transform("deep.ts", &source).expect_err("too deep");
    assert_eq!(error.line, 2, "{error}");
    assert!(error.message.contains("nests too deeply"), "{error}");
}
