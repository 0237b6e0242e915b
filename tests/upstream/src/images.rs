//! Image parts in a request, checked the way the real APIs check them, and described for the
//! `see-images` script so a test can read what arrived.
//!
//! Chat completions takes `{"type":"text","text"}` and `{"type":"image_url","image_url":{"url"}}`
//! parts in a message's `content`; the Responses API takes `{"type":"input_text","text"}` and
//! `{"type":"input_image","image_url"}` (a string). Either answers a malformed part with a 400;
//! so does this double, and it also refuses any URL that is not a `data:` URL of PNG, JPEG, WebP or
//! GIF in base64, which is all Flint ever sends.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use flint_protocol::image;
use serde_json::Value;

/// Which API's part names to expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// `/v1/chat/completions`: `messages[].content`.
    Chat,
    /// `/v1/responses`, over HTTP or WebSocket: `input[].content`.
    Responses,
}

/// Every image of the request, as `image/png 64x48`, in order; or why a real API would answer 400.
pub(crate) fn seen(body: &Value, api: Api) -> Result<Vec<String>, String> {
    let (list, text_type, image_type) = match api {
        Api::Chat => ("messages", "text", "image_url"),
        Api::Responses => ("input", "input_text", "input_image"),
    };
    let Some(items) = body.get(list).and_then(Value::as_array) else { return Ok(Vec::new()) };
    let mut seen = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(parts) = item.get("content").and_then(Value::as_array) else { continue };
        for (j, part) in parts.iter().enumerate() {
            let at = format!("{list}[{i}].content[{j}]");
            let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
            // The Responses API echoes an assistant's earlier answer as `output_text`.
            if kind == text_type || (api == Api::Responses && kind == "output_text") {
                if !part.get("text").is_some_and(Value::is_string) {
                    return Err(format!("Missing required parameter: '{at}.text'."));
                }
                continue;
            }
            if kind != image_type {
                return Err(format!(
                    "Invalid value: '{kind}'. Supported values are: '{text_type}' and '{image_type}' ({at}.type)."
                ));
            }
            let url = match api {
                Api::Chat => part.pointer("/image_url/url"),
                Api::Responses => part.get("image_url"),
            };
            let Some(url) = url.and_then(Value::as_str) else {
                return Err(format!("Missing required parameter: '{at}.image_url'."));
            };
            seen.push(describe(url).map_err(|why| format!("Invalid image at {at}: {why}"))?);
        }
    }
    Ok(seen)
}

/// `data:image/png;base64,…` → `image/png 64x48`.
fn describe(url: &str) -> Result<String, String> {
    let rest = url.strip_prefix("data:").ok_or("only data: URLs are accepted here")?;
    let (media_type, data) = rest.split_once(";base64,").ok_or("the data URL is not base64")?;
    let claimed = image::ImageType::from_media_type(media_type)
        .ok_or("You uploaded an unsupported image. Supported formats: png, jpeg, gif, webp.")?;
    let bytes = STANDARD.decode(data).map_err(|_| "the image's base64 does not decode")?;
    let info = image::inspect(&bytes).map_err(|refusal| refusal.to_string())?;
    if info.kind != claimed {
        return Err(format!("the data URL says {claimed} but the bytes are {}", info.kind));
    }
    Ok(format!("{} {}x{}", info.kind, info.width, info.height))
}

/// What `see-images` answers: `saw 2 images: image/png 64x48, image/jpeg 10x10`.
pub(crate) fn answer(seen: &[String]) -> String {
    match seen.len() {
        0 => "saw 0 images".to_owned(),
        1 => format!("saw 1 image: {}", seen[0]),
        n => format!("saw {n} images: {}", seen.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PNG_64X48: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x40\0\0\0\x30\x08\x02\0\0\0\0\0\0\0";

    fn url() -> String {
        format!("data:image/png;base64,{}", STANDARD.encode(PNG_64X48))
    }

    #[test]
    fn well_formed_parts_are_described() {
        let chat = json!({ "messages": [
            { "role": "system", "content": "be brief" },
            { "role": "user", "content": [{ "type": "text", "text": "this" }, { "type": "image_url", "image_url": { "url": url() } }] },
        ] });
        assert_eq!(seen(&chat, Api::Chat), Ok(vec!["image/png 64x48".to_owned()]));
        let responses = json!({ "input": [{ "type": "message", "role": "user", "content": [
            { "type": "input_text", "text": "this" }, { "type": "input_image", "image_url": url() },
        ] }] });
        assert_eq!(answer(&seen(&responses, Api::Responses).unwrap()), "saw 1 image: image/png 64x48");
    }

    #[test]
    fn malformed_parts_are_refused() {
        let chat = |part: Value| json!({ "messages": [{ "role": "user", "content": [part] }] });
        for part in [
            json!({ "type": "image", "image_url": { "url": url() } }),
            json!({ "type": "image_url", "image_url": {} }),
            json!({ "type": "image_url", "image_url": url() }),
            json!({ "type": "image_url", "image_url": { "url": "https://example.com/a.png" } }),
            json!({ "type": "image_url", "image_url": { "url": "data:image/svg+xml;base64,PHN2Zy8+" } }),
            json!({ "type": "image_url", "image_url": { "url": "data:image/png;base64,!!!" } }),
            json!({ "type": "input_image", "image_url": url() }),
        ] {
            assert!(seen(&chat(part.clone()), Api::Chat).is_err(), "{part}");
        }
        let responses = json!({ "input": [{ "type": "message", "role": "user", "content": [
            { "type": "image_url", "image_url": { "url": url() } },
        ] }] });
        assert!(seen(&responses, Api::Responses).is_err());
    }
}
