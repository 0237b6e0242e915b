//! Pictures the person attaches: taken from a paste, a drop or a file input, checked, decoded,
//! downscaled and re-encoded (`js/images.js`). The header is read in Rust first, with the rule the
//! gateway applies again on receipt (`flint_protocol::image`), so a decompression bomb, a
//! 30,000-px side or an SVG is refused before the browser decodes a pixel.

use flint_protocol::image::{self, ImageData, ImageType, MAX_SEND_BYTES, MAX_SOURCE_BYTES};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::Blob;

#[wasm_bindgen(module = "/js/images.js")]
extern "C" {
    #[wasm_bindgen(js_name = imageFiles)]
    fn image_files(event: &web_sys::Event) -> js_sys::Array;
    #[wasm_bindgen(js_name = dragsFiles)]
    fn drags_files(event: &web_sys::Event) -> bool;
    #[wasm_bindgen(js_name = inputFiles)]
    fn input_files(input: &web_sys::HtmlInputElement) -> js_sys::Array;
    #[wasm_bindgen(js_name = fileName)]
    fn file_name(blob: &Blob, fallback: &str) -> String;
    #[wasm_bindgen(js_name = blobBytes)]
    fn blob_bytes(blob: &Blob) -> js_sys::Promise;
    fn decode(blob: &Blob) -> js_sys::Promise;
    fn encode(bitmap: &JsValue, width: u32, height: u32, max_bytes: u32) -> js_sys::Promise;
}

/// A file that may be a picture, with its name.
pub struct PictureFile {
    blob: Blob,
    /// The file's name ("pasted image" when it has none).
    pub name: String,
}

/// The files a paste or a drop carries (none: the event is not about files).
pub fn files_of_event(event: &web_sys::Event) -> Vec<PictureFile> {
    wrap(image_files(event))
}

/// Whether a drag carries files.
pub fn is_file_drag(event: &web_sys::Event) -> bool {
    drags_files(event)
}

/// The files an `<input type=file>` holds (it is emptied, so the same file can be picked again).
pub fn files_of_input(input: &web_sys::HtmlInputElement) -> Vec<PictureFile> {
    wrap(input_files(input))
}

fn wrap(files: js_sys::Array) -> Vec<PictureFile> {
    files
        .iter()
        .filter_map(|f| f.dyn_into::<Blob>().ok())
        .map(|blob| PictureFile { name: file_name(&blob, "pasted image"), blob })
        .collect()
}

/// `file` as a model is sent it, at the size `fit` chooses for its decoded size; or why not, as a
/// sentence about the file.
pub async fn prepare(file: &PictureFile, fit: impl Fn(u32, u32) -> (u32, u32)) -> Result<ImageData, String> {
    let size = file.blob.size();
    if size > MAX_SOURCE_BYTES as f64 {
        return Err(format!(
            "it is {:.1} MB; the most Flint reads is {} MB (crop it or export it smaller)",
            size / 1e6,
            MAX_SOURCE_BYTES / 1_000_000
        ));
    }
    let bytes =
        JsFuture::from(blob_bytes(&file.blob)).await.map_err(|_| "the browser could not read the file")?;
    let bytes = js_sys::Uint8Array::new(&bytes).to_vec();
    image::inspect(&bytes).map_err(|refusal| refusal.to_string())?;
    drop(bytes);
    let bitmap = JsFuture::from(decode(&file.blob)).await.map_err(|e| said(&e))?;
    let side = |name: &str| js_sys::Reflect::get(&bitmap, &name.into()).ok().and_then(|v| v.as_f64());
    let (Some(w), Some(h)) = (side("width"), side("height")) else {
        return Err("the browser decoded it without a size".into());
    };
    let (width, height) = fit(w as u32, h as u32);
    let encoded =
        JsFuture::from(encode(&bitmap, width, height, MAX_SEND_BYTES as u32)).await.map_err(|e| said(&e))?;
    let pair = js_sys::Array::from(&encoded);
    let media_type = match pair.get(0).as_string().as_deref() {
        Some("image/png") => ImageType::Png,
        Some("image/jpeg") => ImageType::Jpeg,
        _ => return Err("the browser encoded it in an unexpected format".into()),
    };
    let data = pair.get(1).as_string().unwrap_or_default();
    let image = ImageData { media_type, data, width, height };
    // What leaves the page is checked by the rule the gateway applies on receipt.
    image::check_sent(&image).map_err(|refusal| refusal.to_string())?;
    Ok(image)
}

/// An Error's message (what `js/images.js` rejects with is a sentence).
fn said(error: &JsValue) -> String {
    js_sys::Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| "the browser could not read it as a picture".into())
}

#[wasm_bindgen(module = "/js/sketch.js")]
extern "C" {
    type SketchPad;
    #[wasm_bindgen(js_name = startSketch)]
    fn start_sketch(canvas: &web_sys::HtmlCanvasElement) -> SketchPad;
    #[wasm_bindgen(method, js_name = setTool)]
    fn set_tool(this: &SketchPad, name: &str);
    #[wasm_bindgen(method)]
    fn undo(this: &SketchPad);
    #[wasm_bindgen(method)]
    fn clear(this: &SketchPad);
    #[wasm_bindgen(method, js_name = isEmpty)]
    fn is_empty(this: &SketchPad) -> bool;
    #[wasm_bindgen(method, js_name = toBlob)]
    fn to_blob(this: &SketchPad) -> js_sys::Promise;
}

/// What the pen draws on the sketch pad.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SketchTool {
    /// Free lines.
    Pen,
    /// Rectangles, for a layout's regions.
    Box,
}

/// A sketch pad drawing on a canvas.
pub struct Sketch(SketchPad);

impl Sketch {
    /// Starts drawing on `canvas` (white, empty).
    pub fn start(canvas: &web_sys::HtmlCanvasElement) -> Self {
        Self(start_sketch(canvas))
    }

    /// Chooses what the pen draws.
    pub fn tool(&self, tool: SketchTool) {
        self.0.set_tool(match tool {
            SketchTool::Pen => "pen",
            SketchTool::Box => "box",
        });
    }

    /// Takes back the last stroke.
    pub fn undo(&self) {
        self.0.undo();
    }

    /// Wipes the pad.
    pub fn clear(&self) {
        self.0.clear();
    }

    /// The drawing as a picture file; `None` while nothing is drawn.
    pub async fn picture(&self) -> Option<PictureFile> {
        if self.0.is_empty() {
            return None;
        }
        let blob = JsFuture::from(self.0.to_blob()).await.ok()?.dyn_into::<Blob>().ok()?;
        Some(PictureFile { blob, name: "sketch".into() })
    }
}
