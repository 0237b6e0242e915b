//! A picture in the prompt, for a code model that does not see: what the vision model is asked
//! (describe it well enough to rebuild it) and how its description reaches the code model. Here,
//! beside the other prompts, so the worker counts and the gateway's benchmarks send exactly this.

use crate::image::ImageData;
use crate::{ChatMessage, GenParams, Role, StartRequest};

/// What the vision model is told: a description a developer who cannot see the picture can build
/// from, in sections the code model can follow, with every visible word (models otherwise
/// paraphrase text, and a rebuilt page is judged by its words first).
pub const DESCRIBE_SYSTEM_PROMPT: &str = "You describe pictures of user interfaces (screenshots, mockups, \
hand-drawn sketches) for a front-end developer who cannot see them and must rebuild them exactly. Write \
plain text in these sections, without code:\n\
Layout: the regions from top to bottom and left to right, with their approximate position and size in \
pixels of the picture, and how they align.\n\
Components: each control, card, list, table, image or icon, in order, with its state (selected, \
disabled, checked).\n\
Text: every visible word, verbatim, in reading order, saying where it is.\n\
Colours: background, text, accent and border colours as hex values.\n\
Type: font family (or the closest common one), sizes in px and weights.\n\
Spacing: margins, gaps, corner radii and shadows.\n\
For a sketch, describe the intended interface, not the pen strokes. Do not guess at what is not \
visible.";

/// Longest description asked for: enough for a dense dashboard, short enough to stream in seconds
/// from a fast vision model.
pub const DESCRIBE_MAX_TOKENS: u32 = 1_500;

/// The request that asks `model` to describe `images` (the stream id is the page's to set).
pub fn describe_request(model: &str, images: &[ImageData]) -> StartRequest {
    let sizes: Vec<String> = images.iter().map(|i| format!("{} × {} px", i.width, i.height)).collect();
    let ask = if images.len() == 1 {
        format!("Describe this picture ({}) so it can be rebuilt exactly.", sizes[0])
    } else {
        format!(
            "Describe these {} pictures ({}), one after the other, so they can be rebuilt exactly.",
            images.len(),
            sizes.join(", ")
        )
    };
    let user = ChatMessage::with_images(Role::User, ask, images.to_vec());
    StartRequest {
        stream: 0,
        model: model.to_owned(),
        messages: vec![ChatMessage::new(Role::System, DESCRIBE_SYSTEM_PROMPT), user],
        params: GenParams {
            max_tokens: Some(DESCRIBE_MAX_TOKENS),
            temperature: Some(0.2),
            ..GenParams::default()
        },
    }
}

/// The prompt a code model that does not see is sent: the person's words, then the description of
/// their pictures as the vision model `by` gave it (or as the person edited it).
pub fn with_description(prompt: &str, description: &str, by: &str) -> String {
    format!(
        "{prompt}\n\nThe person attached a picture of what they want. You cannot see it; {by} described it \
         (build what it describes, with its exact texts, colours and layout):\n<picture-description>\n{}\n\
         </picture-description>",
        description.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::ImageType;

    fn image(width: u32, height: u32) -> ImageData {
        ImageData { media_type: ImageType::Png, data: "iVBORw0KGgo=".into(), width, height }
    }

    #[test]
    fn the_describe_request_carries_the_images_in_its_user_message_only() {
        let request = describe_request("cloud/gpt-4o", &[image(800, 600), image(10, 20)]);
        assert_eq!(request.model, "cloud/gpt-4o");
        assert_eq!(request.messages.len(), 2);
        assert!(request.messages[0].images.is_empty(), "the system prompt carries no image");
        assert_eq!(request.messages[1].images.len(), 2);
        assert!(request.messages[1].content.contains("800 × 600 px, 10 × 20 px"));
        assert_eq!(request.params.max_tokens, Some(DESCRIBE_MAX_TOKENS));
    }

    #[test]
    fn a_description_follows_the_prompt_and_names_who_wrote_it() {
        let text = with_description("Build this", "  Layout: a header.\n", "cloud/gpt-4o");
        assert!(text.starts_with("Build this\n\n"));
        assert!(text.contains("cloud/gpt-4o described it"));
        assert!(text.contains("<picture-description>\nLayout: a header.\n</picture-description>"));
    }
}
