//! The wire format of `ClientMessage` and `ServerMessage`: tags, defaults, and what older peers send.

use super::*;

#[test]
fn client_frames_are_tagged_by_type() {
    let json = r#"{"type":"start","stream":7,"model":"local/smollm2",
        "messages":[{"role":"user","content":"hi"}]}"#;
    let msg: ClientMessage = serde_json::from_str(json).expect("valid start frame");
    let ClientMessage::Start(start) = msg else { panic!("expected start, got {msg:?}") };
    assert_eq!(start.stream, 7);
    assert_eq!(start.params, GenParams::default());
    assert_eq!(start.messages[0].role, Role::User);
}

#[test]
fn a_model_without_a_context_source_reads_as_configured() {
    let old = r#"{"id":"p/m","provider":"p","model":"m","label":"m","context_window":8192,"available":true}"#;
    let info: ModelInfo = serde_json::from_str(old).expect("an older gateway's entry parses");
    assert_eq!(info.context_source, ContextSource::Configured);
    let guessed = ModelInfo { context_source: ContextSource::Guess, ..info };
    let json = serde_json::to_string(&guessed).expect("serialises");
    assert!(json.contains(r#""context_source":"guess""#), "{json}");
}

#[test]
fn tokenizer_is_guessed_from_the_model_name() {
    assert_eq!(Tokenizer::guess("gpt-5-codex"), Tokenizer::O200k);
    assert_eq!(Tokenizer::guess("openai/gpt-4o-mini"), Tokenizer::O200k);
    assert_eq!(Tokenizer::guess("o3-mini"), Tokenizer::O200k);
    assert_eq!(Tokenizer::guess("cerebras/gpt-oss-120b"), Tokenizer::O200k);
    assert_eq!(Tokenizer::guess("llama-3.3-70b"), Tokenizer::Estimate);
    assert_eq!(Tokenizer::guess("qwen-3-coder-480b"), Tokenizer::Estimate);
}

#[test]
fn a_key_is_never_shown_by_debug() {
    let json = r#"{"type":"use_key","provider":"openai","key":"sk-live-123456"}"#;
    let msg: ClientMessage = serde_json::from_str(json).expect("valid frame");
    let shown = format!("{msg:?}");
    assert!(!shown.contains("sk-live"), "{shown}");
    let ClientMessage::UseKey { key: Some(key), .. } = msg else { panic!("{msg:?}") };
    assert_eq!(key.expose(), "sk-live-123456");
}

#[test]
fn a_resume_request_round_trips_and_hides_its_token() {
    let json = r#"{"type":"resume","token":"t0k3n","streams":[{"stream":3,"last_seq":7},{"stream":4}]}"#;
    let msg: ClientMessage = serde_json::from_str(json).expect("valid resume frame");
    assert!(!format!("{msg:?}").contains("t0k3n"), "{msg:?}");
    let ClientMessage::Resume(ref resume) = msg else { panic!("{msg:?}") };
    assert_eq!(resume.token.expose(), "t0k3n");
    assert_eq!(
        resume.streams,
        [ResumeStream { stream: 3, last_seq: Some(7) }, ResumeStream { stream: 4, last_seq: None }]
    );
    let back = serde_json::to_string(&msg).expect("serialises");
    assert_eq!(serde_json::from_str::<ClientMessage>(&back).expect("parses"), msg);
}

#[test]
fn hello_carries_a_resume_token_only_when_there_is_one() {
    let old = r#"{"type":"hello","protocol":1,"gateway":"0.1.0"}"#;
    let ServerMessage::Hello { resume, .. } = serde_json::from_str(old).expect("an older hello parses")
    else {
        panic!("not a hello")
    };
    assert!(resume.is_none());
    let ServerMessage::Hello { history, .. } = serde_json::from_str(old).expect("parses") else {
        panic!("not a hello")
    };
    assert!(!history, "an older hello does not offer history sync");
    let hello = ServerMessage::Hello {
        protocol: 1,
        gateway: "x".into(),
        resume: Some(Secret::new("abc")),
        history: true,
    };
    let json = serde_json::to_string(&hello).expect("serialises");
    assert!(json.contains(r#""resume":"abc""#) && json.contains(r#""history":true"#), "{json}");
    assert_eq!(serde_json::from_str::<ServerMessage>(&json).expect("parses"), hello);
    let error = r#"{"type":"error","stream":2,"code":"resume_expired","message":"run again"}"#;
    let ServerMessage::Error { code, .. } = serde_json::from_str(error).expect("parses") else {
        panic!("not an error")
    };
    assert_eq!(code, ErrorCode::ResumeExpired);
}

#[test]
fn an_older_done_parses_without_reasoning_figures() {
    let old = r#"{"type":"done","stream":1,"finish":"stop","usage":{"completion_tokens":5},
        "metrics":{"ttft_ms":1.0,"total_ms":2.0,"tokens_per_s":3.0}}"#;
    let ServerMessage::Done { usage, metrics, .. } = serde_json::from_str(old).expect("parses") else {
        panic!("not a done")
    };
    assert_eq!((usage.reasoning_tokens, metrics.ttfr_ms), (None, None));
    let json = serde_json::to_string(&Usage { completion_tokens: 5, ..Usage::default() }).unwrap();
    assert_eq!(json, r#"{"completion_tokens":5}"#, "absent figures are left out");
    let empty = ServerMessage::Thinking { stream: 1, tokens: 3, from: 0, text: String::new() };
    let json = serde_json::to_string(&empty).unwrap();
    assert_eq!(json, r#"{"type":"thinking","stream":1,"tokens":3,"from":0}"#);
}

#[test]
fn unknown_type_is_rejected() {
    assert!(serde_json::from_str::<ClientMessage>(r#"{"type":"explode"}"#).is_err());
}

#[test]
fn server_frames_round_trip() {
    let frames = [
        ServerMessage::Delta { stream: 1, seq: 3, text: "<b>".into() },
        ServerMessage::Queued { stream: 2, ahead: 4 },
        ServerMessage::Thinking { stream: 2, tokens: 40, from: 0, text: "Plan: a grid".into() },
        ServerMessage::Thinking { stream: 2, tokens: 41, from: 12, text: String::new() },
        ServerMessage::Stalled { stream: 2, silent_secs: 12, provider: "groq".into() },
        ServerMessage::Quota { used: 1_200, limit: 50_000, resets_in_ms: 3_600_000 },
        ServerMessage::Error {
            stream: None,
            code: ErrorCode::BadFrame,
            message: "not JSON".into(),
            retry_after_ms: None,
        },
    ];
    for frame in frames {
        let json = serde_json::to_string(&frame).expect("serialises");
        assert_eq!(serde_json::from_str::<ServerMessage>(&json).expect("parses"), frame);
    }
    let json = serde_json::to_string(&ServerMessage::Pong { nonce: 9 }).unwrap();
    assert_eq!(json, r#"{"type":"pong","nonce":9}"#);
    let json = serde_json::to_string(&ServerMessage::Queued { stream: 2, ahead: 0 }).unwrap();
    assert_eq!(json, r#"{"type":"queued","stream":2,"ahead":0}"#);
}

#[test]
fn old_frames_without_images_still_parse_and_frames_without_images_are_unchanged() {
    let old = r#"{"type":"start","stream":1,"model":"p/m","messages":[{"role":"user","content":"hi"}]}"#;
    let ClientMessage::Start(start) =
        serde_json::from_str::<ClientMessage>(old).expect("an old start parses")
    else {
        panic!("a start")
    };
    assert!(start.messages[0].images.is_empty());
    let json = serde_json::to_string(&start.messages[0]).expect("serialises");
    assert_eq!(json, r#"{"role":"user","content":"hi"}"#, "no images key when there are none");
    let image =
        image::ImageData { media_type: image::ImageType::Png, data: "AAAA".into(), width: 1, height: 1 };
    let with = ChatMessage::with_images(Role::User, "this", vec![image.clone()]);
    let back: ChatMessage =
        serde_json::from_str(&serde_json::to_string(&with).expect("serialises")).expect("parses");
    assert_eq!(back.images, vec![image]);
}

#[test]
fn vision_is_guessed_for_known_models_only() {
    for seeing in [
        "gpt-4o",
        "gpt-4.1-mini",
        "gpt-5.3-codex",
        "o3",
        "o4-mini",
        "claude-3-5-sonnet",
        "claude-sonnet-4-5",
        "gemini-2.5-pro",
        "llava:13b",
        "qwen2.5-vl-7b-instruct",
        "llama-3.2-11b-vision-instruct",
        "llama3.2-vision",
        "meta-llama/llama-4-scout",
        "pixtral-12b",
        "gemma-3-27b-it",
        "gemma3:4b",
        "minicpm-v",
        "moondream",
        "internvl2-8b",
        "phi-3.5-vision-instruct",
        "phi-4-multimodal-instruct",
    ] {
        assert!(guess_vision(seeing), "{seeing} sees");
    }
    for blind in [
        "gpt-5.3-codex-spark",
        "gpt-oss-120b",
        "llama-3.3-70b",
        "qwen2.5-coder:7b",
        "gemma-3-1b-it",
        "gemma3:270m",
        "smollm2-135m-instruct",
        "o1-mini",
    ] {
        assert!(!guess_vision(blind), "{blind} does not see");
    }
    let old = r#"{"id":"p/m","provider":"p","model":"m","label":"m","context_window":1,"available":true}"#;
    assert!(!serde_json::from_str::<ModelInfo>(old).expect("an old entry parses").vision);
}
