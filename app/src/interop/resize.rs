//! An element's size as it changes (a `ResizeObserver`), for scaling a tile's page to its tile.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{Element, ResizeObserver, ResizeObserverEntry};

/// Watches one element's content box; stops when dropped.
pub struct SizeWatch {
    observer: Option<ResizeObserver>,
    _callback: Closure<dyn FnMut(js_sys::Array)>,
}

impl Drop for SizeWatch {
    fn drop(&mut self) {
        if let Some(observer) = &self.observer {
            observer.disconnect();
        }
    }
}

/// Calls `on_size(width, height)` with `element`'s content box in CSS pixels: once soon after, and
/// again whenever it changes (not on every frame: the browser calls only after a layout that moved it).
pub fn watch_size(element: &Element, mut on_size: impl FnMut(f64, f64) + 'static) -> SizeWatch {
    let callback = Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
        let last = entries.iter().filter_map(|e| e.dyn_into::<ResizeObserverEntry>().ok()).next_back();
        if let Some(entry) = last {
            let rect = entry.content_rect();
            on_size(rect.width(), rect.height());
        }
    });
    let observer = ResizeObserver::new(callback.as_ref().unchecked_ref()).ok();
    if let Some(observer) = &observer {
        observer.observe(element);
    }
    SizeWatch { observer, _callback: callback }
}
