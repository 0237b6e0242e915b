//! The scanner against serde: what it reads, it reads as serde does; what it declines, serde decides.

use proptest::prelude::*;
use proptest::strategy::ValueTree;

use super::*;

/// The scanner's reading of `data`, checked against serde's.
fn scanned(data: &str) -> Option<Chunk<'_>> {
    let chunk: Chunk<'_> = openai_chunk_scan::read(data)?.into();
    let serde: Result<Chunk<'_>, _> = serde_json::from_str(data);
    assert_eq!(serde.as_ref().ok(), Some(&chunk), "serde reads {data:?} otherwise");
    Some(chunk)
}

#[test]
fn every_servers_common_chunk_is_read_by_the_scanner_as_serde_reads_it() {
    for (server, data) in [
        (
            "OpenAI",
            r#"{"id":"chatcmpl-C1","object":"chat.completion.chunk","created":1757000000,"model":"gpt-4.1-mini","service_tier":"default","system_fingerprint":"fp_6f2eabb9a5","choices":[{"index":0,"delta":{"content":" <div class=\"card\">\n"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Q2x"}"#,
        ),
        (
            "OpenAI, the last choice",
            r#"{"id":"chatcmpl-C1","object":"chat.completion.chunk","created":1757000000,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}"#,
        ),
        (
            "llama.cpp's server",
            r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"é😀"}}],"created":1757000000,"id":"chatcmpl-x","model":"gpt-3.5-turbo","system_fingerprint":"b6000-abc","object":"chat.completion.chunk","timings":{"prompt_n":3,"predicted_per_second":41.25}}"#,
        ),
        (
            "vLLM",
            r#"{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1757000000,"model":"Qwen/Qwen2.5-Coder-7B","choices":[{"index":0,"delta":{"content":"\u003cp\u003e"},"logprobs":null,"finish_reason":null,"stop_reason":null}]}"#,
        ),
        (
            "Groq",
            r#"{"id":"chatcmpl-g","object":"chat.completion.chunk","created":1757000000,"model":"openai/gpt-oss-20b","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":null},"logprobs":null,"finish_reason":null}],"x_groq":{"id":"req_01"}}"#,
        ),
        (
            "Ollama",
            "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1757000000,\"model\":\"qwen2.5-coder\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\\t\\\\ \"},\"finish_reason\":null}]}",
        ),
        (
            "spaced out",
            " {\n \"choices\" : [ { \"delta\" : { \"content\" : \"a\" } , \"finish_reason\" : null } ] }\r\n",
        ),
        (
            "llama-cpp-python (Python's json.dumps: spaces, every non-ASCII character escaped)",
            r#"{"id": "chatcmpl-168fdd83", "model": "x", "created": 1796676736, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "\ud83d\udc69 \u2610 \u00e9"}, "logprobs": null, "finish_reason": null}]}"#,
        ),
        ("no choices", r#"{"choices":null,"model":null}"#),
        ("an empty list", r#"{"choices":[],"usage":null,"error":null}"#),
    ] {
        assert!(scanned(data).is_some(), "{server}: {data}");
    }
}

#[test]
fn other_shapes_go_to_serde_and_what_is_not_json_fails_there() {
    for (what, data) in [
        ("reasoning", r#"{"choices":[{"delta":{"reasoning_content":"Plan"}}]}"#),
        ("usage", r#"{"choices":[],"usage":{"completion_tokens":9}}"#),
        ("an error", r#"{"error":{"message":"overloaded"}}"#),
        ("a chunk as a list", r#"[null,[]]"#),
        ("a choice as a list", r#"{"choices":[[{"content":"x"},"stop"]]}"#),
        ("deep", &format!(r#"{{"x":{}1{},"choices":[]}}"#, "[".repeat(40), "]".repeat(40))),
    ] {
        assert_eq!(openai_chunk_scan::read(data), None, "{what}");
        assert!(parse(data).is_ok(), "{what}: serde reads it");
    }
    for (what, data) in [
        ("a duplicate field", r#"{"model":"a","model":"b","choices":[]}"#),
        ("a trailing comma", r#"{"choices":[],}"#),
        ("a control byte", "{\"choices\":[{\"delta\":{\"content\":\"a\u{1}\"}}]}"),
        ("a bad escape", r#"{"choices":[{"delta":{"content":"\x"}}]}"#),
        ("a lone surrogate", r#"{"choices":[{"delta":{"content":"\ud800"}}]}"#),
        ("a first half before another first half", r#"{"choices":[{"delta":{"content":"\ud83d\ud83d"}}]}"#),
        ("a second half alone", r#"{"choices":[{"delta":{"content":"\udc69"}}]}"#),
        ("a leading zero", r#"{"created":012,"choices":[]}"#),
        ("cut short", r#"{"choices":[{"delta":{"content":"a"#),
        ("something after", r#"{"choices":[]} {}"#),
        ("a type serde refuses", r#"{"choices":[{"finish_reason":1}]}"#),
        ("empty", ""),
    ] {
        assert_eq!(openai_chunk_scan::read(data), None, "{what}");
        assert_eq!(parse(data).err(), Some(ChunkError::Json), "{what}");
    }
}

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(options).prop_map(str::to_owned)
}

/// A JSON string's text: escapes of every kind, raw non-ASCII, and (rarely) what the scanner declines.
fn string() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(
        &[
            "a",
            "<div class=\\\"x\\\">",
            "\\n",
            "\\\\",
            "\\/",
            "\\u00e9",
            "\\u0041",
            "é",
            "😀",
            " ",
            "\\t",
            "\\b\\f\\r",
            "\\u0000",
            "\\ud83d\\ude00",
            "\\ud800",
            "\\udc69",
            "\\uD83D\\uDC69",
        ][..],
    );
    prop::collection::vec(piece, 0..5).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

fn number() -> impl Strategy<Value = String> {
    pick(&["0", "-1", "1757000000", "1.5", "2e3", "-0.25E-2"])
}

/// An object of some of `fields`, in any order, joined with random whitespace.
fn object(fields: Vec<BoxedStrategy<Option<(String, String)>>>) -> impl Strategy<Value = String> {
    (fields, pick(&["", " ", "\n  "])).prop_flat_map(|(fields, space)| {
        let fields: Vec<String> =
            fields.into_iter().flatten().map(|(k, v)| format!("{space}\"{k}\"{space}:{space}{v}")).collect();
        Just(fields).prop_shuffle().prop_map(|fields| format!("{{{}}}", fields.join(",")))
    })
}

/// `key` with a value, present seven times in ten.
fn field(
    key: &'static str,
    value: impl Strategy<Value = String> + 'static,
) -> BoxedStrategy<Option<(String, String)>> {
    prop::option::weighted(0.7, value.prop_map(move |v| (key.to_owned(), v))).boxed()
}

fn delta() -> impl Strategy<Value = String> {
    object(vec![
        field("role", pick(&["\"assistant\""])),
        field("content", prop_oneof![4 => string(), 1 => pick(&["null", "[]"])]),
        field("reasoning_content", prop_oneof![3 => pick(&["null"]), 1 => string()]),
        field("tool_calls", pick(&["[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]"])),
        field("refusal", pick(&["null"])),
    ])
}

fn choice() -> impl Strategy<Value = String> {
    object(vec![
        field("index", number()),
        field("delta", prop_oneof![4 => delta(), 1 => pick(&["null", "{}"])]),
        field("logprobs", pick(&["null", "{\"content\":[]}"])),
        field("finish_reason", prop_oneof![pick(&["null", "\"stop\"", "\"length\"", "1"]), string()]),
        field("stop_reason", pick(&["null", "\"</html>\"", "128001"])),
    ])
}

fn chunk() -> impl Strategy<Value = String> {
    let choices = prop::collection::vec(choice(), 0..3).prop_map(|c| format!("[{}]", c.join(",")));
    object(vec![
        field("id", string()),
        field("object", pick(&["\"chat.completion.chunk\""])),
        field("created", number()),
        field("model", prop_oneof![4 => string(), 1 => pick(&["null", "7"])]),
        field("system_fingerprint", prop_oneof![string(), pick(&["null"])]),
        field("choices", prop_oneof![6 => choices, 1 => pick(&["null", "{}"])]),
        field("usage", pick(&["null", "null", "{\"completion_tokens\":3}"])),
        field("error", pick(&["null", "null", "{\"message\":\"x\"}"])),
        field(
            "x_groq",
            pick(&["{\"id\":\"req_1\",\"usage\":{\"queue_time\":0.01,\"x\":[true,false,null]}}"]),
        ),
        prop::option::weighted(0.05, Just(("model".to_owned(), "\"again\"".to_owned()))).boxed(),
    ])
}

/// `text` with one character cut, added or the rest dropped, as a broken server or network might.
fn mutated(text: String, at: usize, how: u8, byte: char) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = at % (chars.len() + 1);
    let mut out: Vec<char> = chars.clone();
    match how % 3 {
        0 => out.truncate(at),
        1 if at < chars.len() => {
            out.remove(at);
        }
        _ => out.insert(at, byte),
    }
    out.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn what_the_scanner_reads_serde_reads_the_same(
        text in chunk(),
        mutation in prop::option::of((any::<usize>(), any::<u8>(), prop::sample::select(&[',', '}', ']', '"', '\\', '\u{1}', 'x', ' ', '{', ':'][..]))),
    ) {
        let text = match mutation {
            Some((at, how, byte)) => mutated(text, at, how, byte),
            None => text,
        };
        // `scanned` fails the test when serde reads it otherwise or refuses it.
        let _ = scanned(&text);
    }

    #[test]
    fn any_text_is_read_as_serde_reads_it_or_declined(text in "\\PC{0,200}") {
        let _ = scanned(&text);
    }
}

#[test]
fn the_generated_chunks_exercise_both_paths() {
    // Else the property above could pass with the scanner declining everything.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut read, mut declined) = (0, 0);
    for _ in 0..2000 {
        let text = chunk().new_tree(&mut runner).expect("a chunk").current();
        if scanned(&text).is_some() { read += 1 } else { declined += 1 }
    }
    assert!(read > 300 && declined > 300, "read {read}, declined {declined}");
}
