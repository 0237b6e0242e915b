//! No log level prints a secret: the real binary at `RUST_LOG=trace` serves a tab that sends its
//! own key and a prompt and then resumes with its token, and none of them is in its output, in
//! clear or as the hex of a frame's payload.

mod binary;
mod common;

use binary::Binary;
use common::{Client, KEY, KEY_ENV};
use flint_protocol::image::{ImageData, ImageType};
use flint_protocol::{ChatMessage, ClientMessage, ResumeRequest, Role, Secret, ServerMessage, StartRequest};
use flint_scripted_upstream::{Options, ScriptedUpstream, fixtures_dir};

const OWN_KEY: &str = "sk-own-trace-5a4b3c2d1e0f9a8b7c6d";
const PROMPT: &str = "a page about the heron-coloured garden of Quillmere 7731";

/// A 64 × 48 PNG's header with a tail no log line could hold by chance.
fn image() -> ImageData {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x40\0\0\0\x30\x08\x02\0\0\0\0\0\0\0".to_vec();
    png.extend(b"Quillmere heron 7731 image tail");
    let data = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, png);
    ImageData { media_type: ImageType::Png, data, width: 64, height: 48 }
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// A gateway relaying to `upstream`'s `counter@5000`, which takes people's own keys and pictures.
fn config(upstream: &ScriptedUpstream) -> String {
    format!(
        r#"
[[providers]]
kind = "openai"
name = "scripted"
base_url = "{}"
api_key_env = "{KEY_ENV}"
allow_user_keys = true
models = [{{ id = "counter@5000", context_window = 8192, vision = true }}]
"#,
        upstream.base_url()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn at_trace_the_log_holds_no_key_resume_token_or_prompt() {
    let upstream = ScriptedUpstream::start(Options::new(fixtures_dir())).await.expect("upstream starts");
    let gw = Binary::start("trace", &config(&upstream), "", "trace", &[(KEY_ENV, KEY)]);

    let mut tab = Client::connect(gw.addr).await;
    let hello: ServerMessage = serde_json::from_str(&tab.raw[0]).expect("hello");
    let ServerMessage::Hello { resume: Some(token), .. } = hello else {
        panic!("no resume token: {hello:?}")
    };
    tab.send(&ClientMessage::UseKey { provider: "scripted".into(), key: Some(Secret::new(OWN_KEY)) }).await;
    let start = StartRequest {
        stream: 1,
        model: "scripted/counter@5000".into(),
        messages: vec![ChatMessage::with_images(Role::User, PROMPT, vec![image()])],
        params: Default::default(),
    };
    tab.send(&ClientMessage::Start(start)).await;
    let (done, _) = tab.collect(&[1]).await;
    assert!(matches!(done[0].1.end, ServerMessage::Done { .. }), "{:?}", done[0].1.end);
    assert!(upstream.requests().iter().any(|r| r.key_tail.as_deref() == Some(&OWN_KEY[OWN_KEY.len() - 4..])));
    drop(tab);
    // The page comes back and resumes with its token.
    let mut again = Client::connect(gw.addr).await;
    again.send(&ClientMessage::Resume(ResumeRequest { token: token.clone(), streams: Vec::new() })).await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), again.next_or_closed()).await;
    drop(again);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;

    let output = gw.output();
    assert!(output.contains("TRACE") || output.contains("DEBUG"), "the gateway logged at trace:\n{output}");
    assert!(output.contains("1 image, 1 KB"), "the image is logged by count and size:\n{output}");
    for (what, secret) in [
        ("the person's own key", OWN_KEY),
        ("the operator's key", KEY),
        ("the prompt", PROMPT),
        ("the resume token", token.expose()),
        ("the image's data", &image().data),
    ] {
        for form in [secret.to_owned(), hex(secret)] {
            let at = output.find(&form);
            let around = at
                .and_then(|at| output.get(at.saturating_sub(300)..(at + form.len() + 100).min(output.len())));
            assert!(
                at.is_none(),
                "{what} is in the log at trace:\n…{}…",
                around.unwrap_or("(not printable)")
            );
        }
    }
}

/// The log without the terminal's colour codes.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
        } else {
            out.push(c);
        }
    }
    out
}

/// At the default level no span is made per connection or stream (the registry keeps a slot and a
/// hash map for every span it held at once: after 2,000 streams that pinned 14 MB for good,
/// `bench/scale.md`), and each line still names its connection and stream.
#[tokio::test(flavor = "multi_thread")]
async fn at_info_each_line_names_its_connection_and_stream_without_a_span() {
    let upstream = ScriptedUpstream::start(Options::new(fixtures_dir())).await.expect("upstream starts");
    let gw = Binary::start("info", &config(&upstream), "", "info", &[(KEY_ENV, KEY)]);
    let mut tab = Client::connect(gw.addr).await;
    let start = StartRequest {
        stream: 7,
        model: "scripted/counter@5000".into(),
        messages: vec![ChatMessage::new(Role::User, "count")],
        params: Default::default(),
    };
    tab.send(&ClientMessage::Start(start)).await;
    let (done, _) = tab.collect(&[7]).await;
    assert!(matches!(done[0].1.end, ServerMessage::Done { .. }), "{:?}", done[0].1.end);
    drop(tab);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;

    let output = plain(&gw.output());
    assert!(!output.contains("serve_socket{") && !output.contains("run{"), "a span at info:\n{output}");
    let line = |message: &str| {
        output
            .lines()
            .find(|l| l.contains(message))
            .unwrap_or_else(|| panic!("no `{message}` line:\n{output}"))
    };
    for message in [": connected", ": stream start", ": stream done", ": socket dropped"] {
        assert!(line(message).contains("conn="), "`{message}` names no connection:\n{output}");
    }
    for message in [": stream start", ": stream done"] {
        assert!(line(message).contains("stream=7"), "`{message}` names no stream:\n{output}");
    }
}
