//! The JavaScript tables of frame messages, checked against the types in `frames.rs`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::*;

/// Every message kind twice: with every optional field set, and with none. The `match` makes a
/// new variant fail to compile here until it has its examples.
fn to_frame_examples() -> Vec<(ToFrame, ToFrame)> {
    let all = [
        ToFrame::Connect,
        ToFrame::Snapshot { html: "<p>".into() },
        ToFrame::Append { at: 3, text: "hi".into() },
        ToFrame::Run { doc: "<p>hi".into() },
        ToFrame::Swap { doc: "<p>hi".into() },
        ToFrame::Check {
            doc: "<p>hi".into(),
            expect: vec![CheckExpect { id: "clock".into(), selector: None, ticks: Some(true) }],
        },
        ToFrame::Pick { on: true },
        ToFrame::Ping { id: 1 },
        ToFrame::Picture { doc: "<p>hi".into(), width: 640, max_height: 2560 },
    ];
    all.into_iter()
        .map(|m| match m {
            ToFrame::Connect
            | ToFrame::Snapshot { .. }
            | ToFrame::Append { .. }
            | ToFrame::Run { .. }
            | ToFrame::Swap { .. }
            | ToFrame::Check { .. }
            | ToFrame::Pick { .. }
            | ToFrame::Picture { .. }
            | ToFrame::Ping { .. } => (m.clone(), m),
        })
        .collect()
}

fn from_frame_examples() -> Vec<(FromFrame, FromFrame)> {
    let all = [
        FromFrame::Ready,
        FromFrame::Applied { ms: 1.5, whole: Some(true), resync: Some(false) },
        FromFrame::Console { level: "log".into(), text: "hi".into() },
        FromFrame::Loaded,
        FromFrame::Swapped { ok: true },
        FromFrame::Gone,
        FromFrame::Pong { id: 2 },
        FromFrame::Picked {
            path: Some(vec![PickStep { index: 0, tag: "p".into() }]),
            id: Some("a".into()),
            src: Some("App.tsx:0:9".into()),
            cancelled: Some(true),
        },
        FromFrame::Checked {
            results: Some(vec![json!({"id": "buttons", "ok": true})]),
            text: Some("hi".into()),
            ms: Some(3.0),
            failed: Some("stopped".into()),
        },
        FromFrame::Pixels {
            width: Some(320),
            height: Some(240),
            page_height: Some(480),
            rgba: Some("AAAA".into()),
            ms: Some(4.0),
            failed: Some("not drawn".into()),
        },
    ];
    all.into_iter()
        .map(|m| {
            let bare = match &m {
                FromFrame::Applied { ms, .. } => FromFrame::Applied { ms: *ms, whole: None, resync: None },
                FromFrame::Picked { .. } => {
                    FromFrame::Picked { path: None, id: None, src: None, cancelled: None }
                }
                FromFrame::Checked { .. } => {
                    FromFrame::Checked { results: None, text: None, ms: None, failed: None }
                }
                FromFrame::Pixels { .. } => FromFrame::Pixels {
                    width: None,
                    height: None,
                    page_height: None,
                    rgba: None,
                    ms: None,
                    failed: None,
                },
                FromFrame::Ready
                | FromFrame::Console { .. }
                | FromFrame::Loaded
                | FromFrame::Swapped { .. }
                | FromFrame::Gone
                | FromFrame::Pong { .. } => m.clone(),
            };
            (m, bare)
        })
        .collect()
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The table the JavaScript side holds: kind → field → type, `?` after the type of a field that may
/// be left out (or null).
fn table<T: Serialize>(examples: &[(T, T)]) -> Value {
    let mut kinds = BTreeMap::new();
    for (full, bare) in examples {
        let (Value::Object(full), Value::Object(bare)) =
            (serde_json::to_value(full).unwrap(), serde_json::to_value(bare).unwrap())
        else {
            panic!("a frame message is not an object")
        };
        let kind = full["flint"].as_str().expect("tagged by `flint`").to_owned();
        let mut fields = Map::new();
        for (name, value) in full.iter().filter(|(name, _)| *name != "flint") {
            let optional = if bare.contains_key(name) { "" } else { "?" };
            fields.insert(name.clone(), Value::String(format!("{}{optional}", json_type(value))));
        }
        kinds.insert(kind, Value::Object(fields));
    }
    serde_json::to_value(kinds).unwrap()
}

/// The table written in `source` between `// frame-messages:begin` and `// frame-messages:end`.
fn js_table(source: &str) -> Value {
    let begin = source.find("// frame-messages:begin").expect("the table's begin marker");
    let end = source.find("// frame-messages:end").expect("the table's end marker");
    let block = &source[begin..end];
    let open = block.find('{').expect("a table");
    let close = block.rfind('}').expect("a table");
    serde_json::from_str(&block[open..=close]).expect("the table is JSON")
}

fn assert_same(file: &str, source: &str, expected: &Value) {
    let found = js_table(source);
    assert!(
        &found == expected,
        "{file}'s table differs from protocol/src/frames.rs; it should read:\n{}",
        serde_json::to_string_pretty(expected).unwrap()
    );
}

#[test]
fn the_frames_table_matches_the_types() {
    let source = include_str!("../../public/preview-messages.js");
    assert_same("public/preview-messages.js", source, &table(&to_frame_examples()));
}

#[test]
fn the_pages_table_matches_the_types() {
    let source = include_str!("../../app/js/frame_messages.js");
    assert_same("app/js/frame_messages.js", source, &table(&from_frame_examples()));
}

#[test]
fn every_example_reads_back_as_itself() {
    for (full, bare) in to_frame_examples() {
        for m in [full, bare] {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<ToFrame>(&text).unwrap(), m);
        }
    }
    for (full, bare) in from_frame_examples() {
        for m in [full, bare] {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<FromFrame>(&text).unwrap(), m);
        }
    }
}

#[test]
fn what_the_frames_send_today_reads() {
    // As preview-pick.js sends an element without an id, and the runtime an append's reply.
    let picked = r#"{"flint":"picked","path":[{"index":1,"tag":"button"}],"id":null}"#;
    assert!(matches!(serde_json::from_str::<FromFrame>(picked), Ok(FromFrame::Picked { id: None, .. })));
    let applied = r#"{"flint":"applied","ms":0,"resync":true}"#;
    assert!(matches!(
        serde_json::from_str::<FromFrame>(applied),
        Ok(FromFrame::Applied { resync: Some(true), .. })
    ));
    // An unknown kind or a mistyped field is refused.
    assert!(serde_json::from_str::<ToFrame>(r#"{"flint":"navigate","url":"x"}"#).is_err());
    assert!(serde_json::from_str::<ToFrame>(r#"{"flint":"append","at":"3","text":"x"}"#).is_err());
}
