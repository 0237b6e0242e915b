//! The scanner against serde: what it reads, it reads as serde does; what it declines, serde decides.

use proptest::prelude::*;
use proptest::strategy::ValueTree;

use super::*;
use crate::providers::openai_chunk_scan;

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
        assert!(parse(&mut Templates::default(), data).is_ok(), "{what}: serde reads it");
    }
    for (what, data) in [
        ("a duplicate field", r#"{"model":"a","model":"b","choices":[]}"#),
        ("a trailing comma", r#"{"choices":[],}"#),
        ("a trailing comma in a list", r#"{"choices":[{"delta":{}},]}"#),
        ("a form feed as space", "{\"choices\":[]\u{c}}"),
        ("a quote's escape", r#"{"choices":[{"delta":{"content":"\'"}}]}"#),
        ("a point and no digits", r#"{"created":1.,"choices":[]}"#),
        ("an escaped key twice", r#"{"model":"a","mod\u0065l":"b","choices":[]}"#),
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
        assert_eq!(parse(&mut Templates::default(), data).err(), Some(ChunkError::Json), "{what}");
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
            "\\'",
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

/// `key` with `value`, present once in twenty: a duplicate, or a key written with an escape.
fn rare(key: &'static str, value: &'static str) -> BoxedStrategy<Option<(String, String)>> {
    prop::option::weighted(0.05, Just((key.to_owned(), value.to_owned()))).boxed()
}

fn delta() -> impl Strategy<Value = String> {
    object(vec![
        field("role", pick(&["\"assistant\""])),
        field("content", prop_oneof![4 => string(), 1 => pick(&["null", "[]"])]),
        field("reasoning_content", prop_oneof![3 => pick(&["null"]), 1 => string()]),
        rare("reasoning", "\"hm\""),
        rare("reasoning", "null"),
        rare("reasoning_details", "[{\"type\":\"reasoning.text\",\"text\":\"a\"}]"),
        rare("reasoning_details", "null"),
        field("tool_calls", pick(&["[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]"])),
        field("refusal", pick(&["null"])),
        rare("content", "\"again\""),
        rare("cont\\u0065nt", "\"escaped key\""),
    ])
}

fn choice() -> impl Strategy<Value = String> {
    object(vec![
        field("index", number()),
        field("delta", prop_oneof![4 => delta(), 1 => pick(&["null", "{}"])]),
        field("logprobs", pick(&["null", "{\"content\":[]}"])),
        field("finish_reason", prop_oneof![pick(&["null", "\"stop\"", "\"length\"", "1"]), string()]),
        field("stop_reason", pick(&["null", "\"</html>\"", "128001"])),
        rare("finish_reason", "null"),
        rare("delta", "{}"),
        rare("finish\\u005freason", "\"stop\""),
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
        rare("model", "\"again\""),
        rare("choices", "[]"),
        rare("usage", "null"),
        rare("error", "null"),
        rare("mod\\u0065l", "\"escaped key\""),
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
        mutation in prop::option::of((any::<usize>(), any::<u8>(), prop::sample::select(STRAY))),
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

/// A character a broken server might write anywhere.
const STRAY: &[char] = &[',', '}', ']', '"', '\\', '\u{1}', '\u{c}', 'x', ' ', '{', ':', '.', 'e', '\''];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_streams_template_reads_every_chunk_as_the_scanner_does(
        base in chunk(),
        texts in prop::collection::vec(string(), 1..6),
        strays in prop::collection::vec(
            prop::option::weighted(0.2, (any::<usize>(), any::<u8>(), prop::sample::select(STRAY))),
            6,
        ),
    ) {
        // One stream's chunks: the base with its text replaced, now and then one character of
        // the whole cut, added or the rest dropped.
        let Some((_, Some((open, close)))) = openai_chunk_scan::read_marked(&base) else {
            return Ok(());
        };
        let mut templates = Templates::default();
        for (text, stray) in texts.iter().zip(&strays) {
            let mut chunk = format!("{}{text}{}", &base[..open], &base[close + 1..]);
            if let Some((at, how, byte)) = *stray {
                chunk = mutated(chunk, at, how, byte);
            }
            prop_assert_eq!(templates.read(&chunk), openai_chunk_scan::read(&chunk), "{}", chunk);
        }
    }
}

#[test]
fn a_streams_chunks_after_the_first_are_read_by_its_template() {
    let chunk = |text: &str, finish: &str| {
        format!(
            r#"{{"choices":[{{"finish_reason":{finish},"index":0,"delta":{{"content":"{text}"}}}}],"created":1,"id":"c","model":"m","object":"chat.completion.chunk"}}"#
        )
    };
    let mut templates = Templates::default();
    let first = chunk("<p>", "null");
    assert!(templates.read(&first).is_some());
    for text in ["Hi", "", "a \\\"b\\\" \\ud83d\\ude00", "é"] {
        let next = chunk(text, "null");
        let read = templates.read(&next).expect("read");
        assert_eq!(read, openai_chunk_scan::read(&next).expect("the scanner reads it"), "{text}");
        assert!(read.model.is_some_and(|m| matches!(m, Cow::Borrowed("m"))), "the model from its place");
        assert_eq!(templates.misses(), 0, "{text}: read by the template");
    }
    let last = chunk("", "\"stop\"");
    assert_eq!(templates.read(&last), openai_chunk_scan::read(&last), "another shape is read afresh");
    assert_eq!(templates.misses(), 1);
}

#[test]
fn a_stream_whose_chunks_all_differ_around_the_text_stops_being_learnt() {
    // OpenAI pads every chunk with a different `obfuscation`.
    let mut templates = Templates::default();
    for i in 0..20 {
        let chunk =
            format!(r#"{{"choices":[{{"delta":{{"content":"t{i}"}}}}],"obfuscation":"{}"}}"#, "x".repeat(i));
        assert_eq!(templates.read(&chunk), openai_chunk_scan::read(&chunk), "{chunk}");
    }
    assert_eq!(templates.misses(), 8, "learning stopped after eight misses in a row");
}

#[test]
fn a_chunk_with_megabytes_around_its_text_is_not_kept() {
    let chunk = |text: &str| {
        format!(r#"{{"id":"{}","choices":[{{"delta":{{"content":"{text}"}}}}]}}"#, "i".repeat(1 << 20))
    };
    let mut templates = Templates::default();
    for text in ["a", "b"] {
        assert_eq!(templates.read(&chunk(text)), openai_chunk_scan::read(&chunk(text)));
        assert!(!templates.holds_one(), "nothing kept");
    }
}
