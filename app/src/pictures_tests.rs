use flint_protocol::image::{ImageData, ImageType};
use flint_protocol::{ChatMessage, ContextSource, ModelInfo, ModelList, Role, StartRequest, Tokenizer};

use super::*;

fn model(id: &str, vision: bool) -> ModelInfo {
    ModelInfo {
        id: id.into(),
        provider: id.split('/').next().unwrap_or(id).into(),
        model: id.into(),
        label: id.into(),
        context_window: 128_000,
        context_source: ContextSource::Configured,
        tokenizer: Tokenizer::Estimate,
        reasoning: false,
        user_key: false,
        vision,
        price: None,
        available: true,
        problem: None,
    }
}

fn list(vision_model: Option<&str>) -> ModelList {
    ModelList {
        models: vec![model("fast/spark", false), model("cloud/gpt-4o", true)],
        vision_model: vision_model.map(str::to_owned),
        ..ModelList::default()
    }
}

fn attached(id: u32, data: &str) -> Attached {
    Attached {
        id,
        name: format!("shot-{id}.png"),
        image: ImageData { media_type: ImageType::Png, data: data.into(), width: 100, height: 50 },
    }
}

fn done(key: u64, by: &str, text: &str) -> Description {
    Description { key, by: by.into(), text: text.into(), status: DescribeStatus::Done }
}

#[test]
fn a_picture_is_fitted_down_never_up_keeping_its_aspect() {
    assert_eq!(fit(800, 600), (800, 600), "small pictures are sent as they are");
    assert_eq!(fit(3136, 1000), (1568, 500), "the long side fits");
    let (w, h) = fit(2000, 2000);
    assert!(u64::from(w) * u64::from(h) <= FIT_PIXELS && w == h, "the pixel count fits: {w}×{h}");
    assert_eq!(fit(40_000, 1), (1568, 1), "a sliver keeps at least a pixel");
    assert_eq!(fit(0, 0), (1, 1));
}

#[test]
fn each_model_gets_the_pictures_its_way() {
    let with = list(Some("cloud/gpt-4o"));
    assert_eq!(route(&with, "cloud/gpt-4o"), Route::Sees);
    assert_eq!(route(&with, "fast/spark"), Route::Described { by: "cloud/gpt-4o".into() });
    assert_eq!(route(&list(None), "fast/spark"), Route::Blind);
    assert_eq!(route(&list(None), "gone/model"), Route::Blind, "a model not in the list does not see");
    assert_eq!(describer(&with, &["cloud/gpt-4o".into()]), None, "no description when every model sees");
    assert_eq!(describer(&with, &["cloud/gpt-4o".into(), "fast/spark".into()]), Some("cloud/gpt-4o".into()));
}

#[test]
fn a_run_waits_for_its_description_and_is_refused_without_a_vision_model() {
    let models = vec!["fast/spark".to_owned()];
    let blind = refusal(&list(None), &models, None).expect("refused");
    assert!(blind.contains("fast/spark does not see images") && blind.contains("[vision] model"), "{blind}");
    let with = list(Some("cloud/gpt-4o"));
    let waiting = refusal(&with, &models, None).expect("waits");
    assert!(waiting.contains("wait for cloud/gpt-4o's description"), "{waiting}");
    let streaming = Description { status: DescribeStatus::Streaming, ..done(1, "cloud/gpt-4o", "Layout") };
    assert!(refusal(&with, &models, Some(&streaming)).is_some(), "a description still streaming is not sent");
    let failed = Description { status: DescribeStatus::Failed("HTTP 500".into()), ..streaming.clone() };
    assert!(refusal(&with, &models, Some(&failed)).expect("refused").contains("Describe again"));
    assert!(
        refusal(&with, &models, Some(&done(1, "cloud/gpt-4o", "  "))).is_some(),
        "an empty one is not sent"
    );
    assert_eq!(refusal(&with, &models, Some(&done(1, "cloud/gpt-4o", "Layout: a header"))), None);
    assert_eq!(refusal(&with, &["cloud/gpt-4o".into()], None), None, "a model that sees needs none");
}

#[test]
fn the_same_pictures_and_model_share_a_key_and_nothing_else_does() {
    let a = [attached(1, "AAAA"), attached(2, "BBBB")];
    let same = [attached(7, "AAAA"), attached(8, "BBBB")];
    assert_eq!(key(&a, "m"), key(&same, "m"), "ids and names do not matter, the pixels do");
    assert_ne!(key(&a, "m"), key(&a, "n"));
    assert_ne!(key(&a, "m"), key(&[attached(1, "AAAA")], "m"));
    assert_ne!(key(&[attached(1, "AAAAB"), attached(2, "BBB")], "m"), key(&a, "m"), "boundaries count");
}

#[test]
fn a_request_gets_the_pictures_if_its_model_sees_else_their_description() {
    let pictures = JobPictures {
        images: vec![attached(1, "AAAA").image],
        seeing: vec!["cloud/gpt-4o".into()],
        description: Some(("Layout: a header".into(), "cloud/gpt-4o".into())),
    };
    let request = |model: &str| StartRequest {
        stream: 0,
        model: model.into(),
        messages: vec![ChatMessage::new(Role::System, "sys"), ChatMessage::new(Role::User, "Build this")],
        params: Default::default(),
    };
    let mut seeing = request("cloud/gpt-4o");
    pictures.dress(&mut seeing);
    assert_eq!(seeing.messages[1].images.len(), 1);
    assert_eq!(seeing.messages[1].content, "Build this", "a model that sees is not sent the description");
    let mut blind = request("fast/spark");
    pictures.dress(&mut blind);
    assert!(blind.messages.iter().all(|m| m.images.is_empty()), "a model that does not see gets no image");
    assert!(blind.messages[1].content.contains("Layout: a header"));
    let mut none = request("fast/spark");
    JobPictures::default().dress(&mut none);
    assert_eq!(none, request("fast/spark"), "no pictures, no change");
}
