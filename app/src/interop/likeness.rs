//! Typed access to "looks like the picture" drawings (`app/js/likeness.js`): a finished page drawn
//! by a hidden picture frame at the size of the prompt's picture, and the picture decoded to pixels,
//! both ready for the worker's comparison.

use flint_protocol::image::ImageData;
use flint_protocol::worker::RgbaImage;
use serde::Deserialize;
use wasm_bindgen::prelude::*;

// likeness.js imports the picture frames from picture.js. wasm-bindgen ships a JS file beside the
// others only when some Rust code names it, so it is named here; nothing in Rust calls it.
#[wasm_bindgen(module = "/js/picture.js")]
extern "C" {
    #[allow(dead_code)]
    type PictureFrames;
}

#[wasm_bindgen(module = "/js/likeness.js")]
extern "C" {
    /// A page waiting for its turn, or being drawn.
    type LikenessDrawing;

    #[wasm_bindgen(js_name = drawForLikeness)]
    fn draw_for_likeness(
        runtime_url: &str,
        doc: &str,
        media_type: &str,
        data: &str,
        width: u32,
        height: u32,
        on_done: &Closure<dyn FnMut(String)>,
    ) -> LikenessDrawing;

    #[wasm_bindgen(method)]
    fn dispose(this: &LikenessDrawing);
}

/// The picture and the page as pixels, for [`flint_protocol::worker::WorkerRequest::Likeness`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn {
    /// The prompt's picture, at most 320 px wide.
    pub mock: RgbaImage,
    /// The page, drawn at the picture's width (scaled as the picture is).
    pub page: RgbaImage,
}

/// What likeness.js answers: both images, or why the page could not be drawn. The sizes were
/// checked by picture.js; the worker checks them again before it decodes anything.
#[derive(Deserialize)]
struct Answer {
    mock: Option<RgbaImage>,
    page: Option<RgbaImage>,
    failed: Option<String>,
}

/// Reads likeness.js's JSON.
fn read(json: &str) -> Result<Drawn, String> {
    match serde_json::from_str::<Answer>(json) {
        Ok(Answer { mock: Some(mock), page: Some(page), .. }) => Ok(Drawn { mock, page }),
        Ok(Answer { failed: Some(why), .. }) => Err(why),
        _ => Err("The page's drawing came back in a shape Flint does not know.".into()),
    }
}

/// A page being drawn; dropping it stops the drawing (its callback is then never called).
pub struct Drawing {
    js: LikenessDrawing,
    _on_done: Closure<dyn FnMut(String)>,
}

impl Drop for Drawing {
    fn drop(&mut self) {
        self.js.dispose();
    }
}

/// Draws `doc` (served from `runtime_url`'s runtime) at `picture`'s size once a turn is free (at
/// most two pages are drawn at once); `on_done` gets both images or a sentence, once, never from
/// inside this call.
pub fn draw(
    runtime_url: &str,
    doc: &str,
    picture: &ImageData,
    on_done: impl FnOnce(Result<Drawn, String>) + 'static,
) -> Drawing {
    let mut on_done = Some(on_done);
    let callback = Closure::<dyn FnMut(String)>::new(move |json: String| {
        if let Some(done) = on_done.take() {
            done(read(&json));
        }
    });
    let media_type = picture.media_type.to_string();
    let js = draw_for_likeness(
        runtime_url,
        doc,
        &media_type,
        &picture.data,
        picture.width,
        picture.height,
        &callback,
    );
    Drawing { js, _on_done: callback }
}

#[cfg(test)]
mod tests {
    use super::read;

    #[test]
    fn a_drawing_is_read_or_said_why_not() {
        let both = r#"{"mock":{"width":1,"height":1,"rgba":"AAAAAA=="},"page":{"width":1,"height":1,"rgba":"AAAAAA=="}}"#;
        assert!(read(both).is_ok_and(|d| d.page.width == 1 && d.mock.rgba == "AAAAAA=="));
        assert_eq!(read(r#"{"failed":"The page reloaded."}"#), Err("The page reloaded.".into()));
        assert!(read("[]").is_err_and(|e| e.contains("shape")));
    }
}
