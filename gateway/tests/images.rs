//! Images in a prompt (issue 28), over real sockets against the scripted upstream: a model that
//! sees gets exactly the image parts its API takes (chat completions, the Responses API over HTTP
//! and WebSocket); a model that does not see, the embedded one included, is refused before any
//! upstream call; forged images are refused with their sentence and the socket stays open; image
//! tokens count toward the day's quota.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::{Client, Gateway, start_upstream_with};
use flint_gateway::config::{
    Config, ModelConfig, PersonLimits, ProviderConfig, ResponsesConfig, ResponsesTransport,
};
use flint_protocol::image::{ImageData, ImageType};
use flint_protocol::{ChatMessage, ClientMessage, ErrorCode, GenParams, Role, ServerMessage, StartRequest};
use flint_scripted_upstream::{Options, fixtures_dir};
use serde_json::json;

/// A PNG's signature and IHDR: all a header reader needs, and all the upstream checks.
fn png(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    bytes.extend(width.to_be_bytes());
    bytes.extend(height.to_be_bytes());
    bytes.extend(b"\x08\x02\0\0\0\0\0\0\0");
    bytes
}

/// A JPEG's start and a baseline frame header.
fn jpeg(width: u16, height: u16) -> Vec<u8> {
    let mut bytes = b"\xff\xd8\xff\xc0\x00\x0b\x08".to_vec();
    bytes.extend(height.to_be_bytes());
    bytes.extend(width.to_be_bytes());
    bytes.extend(b"\x01\x01\x11\x00\xff\xd9");
    bytes
}

fn image(media_type: ImageType, bytes: &[u8], width: u32, height: u32) -> ImageData {
    ImageData { media_type, data: STANDARD.encode(bytes), width, height }
}

fn two_images() -> Vec<ImageData> {
    vec![image(ImageType::Png, &png(64, 48), 64, 48), image(ImageType::Jpeg, &jpeg(10, 10), 10, 10)]
}

fn data_url(image: &ImageData) -> String {
    format!("data:{};base64,{}", image.media_type.media_type(), image.data)
}

/// What the upstream's `see-images` answers for [`two_images`].
const SAW_TWO: &str = "saw 2 images: image/png 64x48, image/jpeg 10x10";

fn model(id: &str, vision: Option<bool>) -> ModelConfig {
    ModelConfig {
        id: id.into(),
        label: None,
        context_window: Some(8192),
        tokenizer: None,
        reasoning: Some(false),
        vision,
        price: None,
    }
}

/// The scripted chat-completions provider, plus `see-images` (marked as seeing) and `counter`
/// (which does not see).
fn chat(config: &mut Config) {
    if let ProviderConfig::Openai(scripted) = &mut config.providers[0] {
        scripted.models = vec![model("see-images", Some(true)), model("counter@20000", None)];
    }
}

/// The same models behind a Responses provider over `transport`.
fn responses(config: &mut Config, transport: ResponsesTransport) {
    chat(config);
    let ProviderConfig::Openai(scripted) = &config.providers[0] else { panic!("the scripted provider") };
    let responses = ResponsesConfig {
        name: "scripted".into(),
        base_url: scripted.base_url.clone(),
        api_key_env: scripted.api_key_env.clone(),
        api_key: None,
        models: scripted.models.clone(),
        transport,
        max_concurrent: None,
        allow_user_keys: false,
        stall_timeout_secs: None,
        reasoning_summary: None,
        websocket_max_age: None,
    };
    config.providers = vec![ProviderConfig::Responses(responses)];
}

async fn gateway(configure: impl FnOnce(&mut Config)) -> Gateway {
    start_upstream_with(Options::new(fixtures_dir()), configure).await
}

fn start(stream: u32, model: &str, images: Vec<ImageData>) -> ClientMessage {
    ClientMessage::Start(StartRequest {
        stream,
        model: format!("scripted/{model}"),
        messages: vec![
            ChatMessage::new(Role::System, "build pages"),
            ChatMessage::with_images(Role::User, "make this", images),
        ],
        params: GenParams { max_tokens: Some(100), ..GenParams::default() },
    })
}

/// Runs one stream to its end: its text, or the error frame's code and message.
async fn run(client: &mut Client, start: ClientMessage) -> Result<String, (ErrorCode, String)> {
    let ClientMessage::Start(request) = &start else { panic!("a start") };
    let stream = request.stream;
    client.send(&start).await;
    let (mut done, _) = client.collect(&[stream]).await;
    let outcome = done.remove(0).1;
    match outcome.end {
        ServerMessage::Done { .. } => Ok(outcome.text),
        ServerMessage::Error { code, message, .. } => Err((code, message)),
        other => panic!("unexpected end {other:?}"),
    }
}

#[tokio::test]
async fn chat_completions_get_image_url_parts_and_plain_messages_stay_strings() {
    let gw = gateway(chat).await;
    let mut client = Client::connect(gw.addr).await;
    let images = two_images();
    assert_eq!(run(&mut client, start(1, "see-images", images.clone())).await.as_deref(), Ok(SAW_TWO));
    let log = gw.upstream.requests();
    assert_eq!(log[0].status, 200);
    let messages = &log[0].body["messages"];
    assert_eq!(messages[0], json!({ "role": "system", "content": "build pages" }), "no images: a string");
    assert_eq!(
        messages[1],
        json!({ "role": "user", "content": [
            { "type": "text", "text": "make this" },
            { "type": "image_url", "image_url": { "url": data_url(&images[0]) } },
            { "type": "image_url", "image_url": { "url": data_url(&images[1]) } },
        ] })
    );
}

async fn responses_get_input_image_parts(transport: ResponsesTransport) {
    let gw = gateway(|c| responses(c, transport)).await;
    let mut client = Client::connect(gw.addr).await;
    let images = two_images();
    assert_eq!(run(&mut client, start(1, "see-images", images.clone())).await.as_deref(), Ok(SAW_TWO));
    let log = gw.upstream.requests();
    let input = &log[0].body["input"];
    assert_eq!(input[0], json!({ "type": "message", "role": "system", "content": "build pages" }));
    assert_eq!(
        input[1],
        json!({ "type": "message", "role": "user", "content": [
            { "type": "input_text", "text": "make this" },
            { "type": "input_image", "image_url": data_url(&images[0]) },
            { "type": "input_image", "image_url": data_url(&images[1]) },
        ] })
    );
}

#[tokio::test]
async fn responses_over_http_get_input_image_parts() {
    responses_get_input_image_parts(ResponsesTransport::Http).await;
}

#[tokio::test]
async fn responses_over_websocket_get_input_image_parts() {
    responses_get_input_image_parts(ResponsesTransport::Websocket).await;
}

#[tokio::test]
async fn a_model_that_does_not_see_is_never_sent_an_image() {
    let gw = gateway(chat).await;
    let mut client = Client::connect(gw.addr).await;
    let (code, message) =
        run(&mut client, start(1, "counter@20000", two_images())).await.expect_err("refused");
    assert_eq!(code, ErrorCode::ImagesNotSeen);
    assert!(message.contains("scripted/counter@20000 does not see images"), "{message}");
    assert!(message.contains("no [vision] model"), "{message}");
    assert!(gw.upstream.requests().is_empty(), "the upstream was called: {:?}", gw.upstream.requests());
    // The socket stays open: the same text without images runs.
    assert!(run(&mut client, start(2, "counter@20000", Vec::new())).await.is_ok());
}

#[tokio::test]
async fn the_refusal_names_the_vision_model_when_one_is_configured() {
    let gw = gateway(|c| {
        chat(c);
        c.vision.model = Some("scripted/see-images".into());
    })
    .await;
    let models: flint_protocol::ModelList = reqwest::get(format!("http://{}/api/models", gw.addr))
        .await
        .expect("GET /api/models")
        .json()
        .await
        .expect("a model list");
    assert_eq!(models.vision_model.as_deref(), Some("scripted/see-images"));
    let seeing: Vec<(&str, bool)> = models.models.iter().map(|m| (m.id.as_str(), m.vision)).collect();
    assert!(
        seeing.contains(&("scripted/see-images", true))
            && seeing.contains(&("scripted/counter@20000", false))
    );
    let mut client = Client::connect(gw.addr).await;
    let (code, message) =
        run(&mut client, start(1, "counter@20000", two_images())).await.expect_err("refused");
    assert_eq!(code, ErrorCode::ImagesNotSeen);
    assert!(message.contains("scripted/see-images (the [vision] model) describes them"), "{message}");
    assert!(gw.upstream.requests().is_empty());
}

#[cfg(feature = "local")]
#[tokio::test]
async fn the_embedded_model_never_sees() {
    use flint_gateway::config::LocalConfig;
    let local = LocalConfig { model_path: Some("/nonexistent/model.gguf".into()), ..LocalConfig::default() };
    let id = format!("{}/{}", local.name, local.model);
    let gw = gateway(|c| c.providers.push(ProviderConfig::Local(local))).await;
    let mut client = Client::connect(gw.addr).await;
    let start = ClientMessage::Start(StartRequest {
        stream: 1,
        model: id.clone(),
        messages: vec![ChatMessage::with_images(Role::User, "make this", two_images())],
        params: GenParams::default(),
    });
    let (code, message) = run(&mut client, start).await.expect_err("refused");
    assert_eq!(code, ErrorCode::ImagesNotSeen);
    assert!(message.starts_with(&format!("{id} does not see images")), "{message}");
}

#[tokio::test]
async fn forged_images_are_refused_with_their_sentence_and_the_socket_stays_open() {
    let gw = gateway(chat).await;
    let mut client = Client::connect(gw.addr).await;
    let honest = image(ImageType::Png, &png(64, 48), 64, 48);
    let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>";
    let cases = [
        (ImageData { data: "iVBOR!!!w0KGgo=".into(), ..honest.clone() }, "not valid base64"),
        (image(ImageType::Png, svg, 64, 48), "SVG can carry scripts"),
        (
            image(ImageType::Png, &png(64, 48), 640, 480),
            "says it is 640 × 480 px but its header says 64 × 48",
        ),
        (image(ImageType::Jpeg, &png(64, 48), 64, 48), "says it is image/jpeg but its bytes are image/png"),
        (image(ImageType::Png, &png(4096, 64), 4096, 64), "at most 2048 px a side"),
        (image(ImageType::Png, &png(30_000, 200), 30_000, 200), "16384 px a side"),
    ];
    for (n, (forged, sentence)) in cases.into_iter().enumerate() {
        let stream = u32::try_from(n).expect("few") + 1;
        let (code, message) =
            run(&mut client, start(stream, "see-images", vec![forged])).await.expect_err("refused");
        assert_eq!(code, ErrorCode::ImageRefused, "{message}");
        assert!(message.contains(sentence), "{message:?} should say {sentence:?}");
    }
    let five = vec![honest.clone(); 5];
    let (code, message) = run(&mut client, start(20, "see-images", five)).await.expect_err("refused");
    assert_eq!(code, ErrorCode::ImageRefused);
    assert!(message.contains("carries 5 images; the most is 4"), "{message}");
    assert!(gw.upstream.requests().is_empty(), "a forged image reached the upstream");
    assert_eq!(
        run(&mut client, start(21, "see-images", vec![honest])).await.as_deref(),
        Ok("saw 1 image: image/png 64x48")
    );
}

#[tokio::test]
async fn image_tokens_count_toward_the_days_quota() {
    let gw = gateway(|c| {
        chat(c);
        c.limits.signed_in =
            PersonLimits { sockets: 0, streams: 0, starts_per_minute: 0, tokens_per_day: 10_000 };
    })
    .await;
    let mut client = Client::connect(gw.addr).await;
    assert!(matches!(client.next().await, ServerMessage::Quota { used: 0, .. }));
    // Two small images: 85 + 170 tokens each by the tile rule; the answer itself is about 15.
    assert_eq!(run(&mut client, start(1, "see-images", two_images())).await.as_deref(), Ok(SAW_TWO));
    drop(client);
    let mut again = Client::connect(gw.addr).await;
    let ServerMessage::Quota { used, .. } = again.next().await else { panic!("the quota follows Hello") };
    assert!((510..610).contains(&used), "the images' 510 tokens and the answer's few are charged: {used}");
}

#[test]
fn the_default_frame_limit_admits_the_most_images_a_request_may_carry() {
    use flint_protocol::image::{MAX_REQUEST_IMAGE_BYTES, MAX_SEND_BYTES};
    let heavy = image(ImageType::Png, &vec![0; MAX_SEND_BYTES], 1, 1);
    let count = MAX_REQUEST_IMAGE_BYTES / MAX_SEND_BYTES;
    let frame = serde_json::to_string(&start(1, "see-images", vec![heavy; count])).expect("serialises");
    let limit = flint_gateway::config::ServerConfig::default().max_frame_bytes;
    // Room left for 2 MiB of text, the limit before images.
    assert!(frame.len() + 2 * 1024 * 1024 <= limit, "{} bytes of images, limit {limit}", frame.len());
}

#[tokio::test]
async fn a_continuation_carries_the_images_of_the_original_messages() {
    let gw = gateway(|c| {
        if let ProviderConfig::Openai(scripted) = &mut c.providers[0] {
            scripted.models = vec![model("counter@20000", Some(true))];
        }
    })
    .await;
    let mut client = Client::connect(gw.addr).await;
    let ClientMessage::Start(mut request) = start(1, "counter@20000", two_images()) else {
        panic!("a start")
    };
    request.params = GenParams { max_tokens: Some(10), auto_continue: Some(1), ..GenParams::default() };
    assert!(run(&mut client, ClientMessage::Start(request)).await.is_ok());
    let log = gw.upstream.requests();
    assert_eq!(log.len(), 2, "cut at 10 tokens, then continued once: {log:?}");
    for record in &log {
        let parts = record.body["messages"][1]["content"].as_array().expect("the images' message has parts");
        let images = parts.iter().filter(|p| p["type"] == "image_url").count();
        assert_eq!(images, 2, "request {} carries the images: {parts:?}", record.id);
    }
}
