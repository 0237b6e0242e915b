//! Everything that touches JavaScript: Monaco, the preview frames, the parser worker, the socket,
//! `fetch`, the saved session (IndexedDB), downloads and a few browser facts. Each submodule offers typed Rust
//! functions; the rest of the app never handles a `JsValue`.

pub mod clipboard;
pub mod diff_view;
pub mod download;
pub mod editor;
pub mod http;
pub mod images;
pub mod keys;
pub mod likeness;
pub mod own_keys;
pub mod preview;
pub mod resize;
pub mod store;
pub mod worker;

/// The seed a benchmark fixed for every run (`globalThis.__flintSeed`, set before the app starts),
/// so that its runs are repeatable; `None` for a person, whose runs get a random seed.
pub fn bench_seed() -> Option<u64> {
    let value = js_sys::Reflect::get(&js_sys::global(), &"__flintSeed".into()).ok()?.as_f64()?;
    (value.is_finite() && value >= 0.0).then_some(value as u64)
}

/// Milliseconds on the page's monotonic clock (`performance.now()`).
pub fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}

/// Milliseconds since the Unix epoch, on the wall clock (history keys).
pub fn epoch_ms() -> u64 {
    js_sys::Date::now() as u64
}

/// A wall-clock time (ms since the epoch) as the browser's locale writes it.
///
/// One `Intl.DateTimeFormat`, made once ([`warm_local_time`] makes it while the page is idle):
/// `toLocaleString` builds a formatter on every call, 30–97 ms the first time in the browser
/// benchmark's profile, and the end of each run writes a new version's time. Remembered per
/// instant as well, since the versions bar renders every version's time again as it changes.
pub fn local_time(epoch_ms: u64) -> String {
    thread_local! {
        static FORMAT: js_sys::Function = {
            let options = js_sys::Object::new();
            for (key, value) in [
                ("year", "numeric"),
                ("month", "numeric"),
                ("day", "numeric"),
                ("hour", "numeric"),
                ("minute", "2-digit"),
                ("second", "2-digit"),
            ] {
                let _ = js_sys::Reflect::set(&options, &key.into(), &value.into());
            }
            js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &options).format()
        };
        static SEEN: std::cell::RefCell<std::collections::HashMap<u64, String>> = Default::default();
    }
    SEEN.with_borrow_mut(|seen| {
        if seen.len() > 4_096 {
            seen.clear();
        }
        seen.entry(epoch_ms)
            .or_insert_with(|| {
                let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(epoch_ms as f64));
                FORMAT
                    .with(|format| format.call1(&wasm_bindgen::JsValue::NULL, &date))
                    .ok()
                    .and_then(|text| text.as_string())
                    .unwrap_or_default()
            })
            .clone()
    })
}

/// Makes [`local_time`]'s formatter once the page is idle, so no run's end pays for it.
pub fn warm_local_time() {
    use wasm_bindgen::JsCast;
    let Some(window) = web_sys::window() else { return };
    let warm = wasm_bindgen::closure::Closure::once_into_js(|| {
        local_time(epoch_ms());
    });
    let idle = js_sys::Reflect::get(&window, &"requestIdleCallback".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    match idle {
        Some(idle) => {
            let _ = idle.call1(&window, &warm);
        }
        None => {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(warm.unchecked_ref(), 500);
        }
    }
}

/// Runs `f` once the next frame has painted: a timeout queued from that frame's animation
/// callback runs after its paint.
pub fn after_paint(f: impl FnOnce() + 'static) {
    leptos::prelude::request_animation_frame(move || {
        leptos::prelude::set_timeout(f, std::time::Duration::ZERO);
    });
}

/// A random number in `0.0..1.0` (for reconnect jitter).
pub fn random() -> f64 {
    js_sys::Math::random()
}

/// Whether the browser believes it has a network.
pub fn online() -> bool {
    web_sys::window().is_none_or(|w| w.navigator().on_line())
}

/// The page's scheme (`http:`/`https:`) and host (`name:port`).
pub fn page_origin() -> (String, String) {
    let location = web_sys::window().map(|w| w.location());
    let protocol = location.as_ref().and_then(|l| l.protocol().ok()).unwrap_or_else(|| "http:".into());
    let host = location.and_then(|l| l.host().ok()).unwrap_or_else(|| "127.0.0.1:8787".into());
    (protocol, host)
}

/// The page's `location.hash` (`#…`), empty when it has none.
pub fn page_hash() -> String {
    web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default()
}

/// Takes the fragment off the address bar without reloading or adding a history entry: a shared
/// link's `#p=…` has been read, and left there it would be the page's base URL, visible to
/// whatever reads `document.URL` or a referrer.
pub fn forget_page_hash() {
    let Some(window) = web_sys::window() else { return };
    let location = window.location();
    let path = location.pathname().unwrap_or_else(|_| "/".into());
    let search = location.search().unwrap_or_default();
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}{search}")),
        );
    }
}

/// The page's origin (`http://host:port`) and path (`/`), without its query or fragment.
pub fn page_address() -> (String, String) {
    let location = web_sys::window().map(|w| w.location());
    let origin = location.as_ref().and_then(|l| l.origin().ok()).unwrap_or_default();
    let pathname = location.and_then(|l| l.pathname().ok()).unwrap_or_else(|| "/".into());
    (origin, pathname)
}
