//! Page-wide shortcuts heard before Monaco: the editor claims many chords for itself (Ctrl+Shift+L
//! is its "select all occurrences") and stops them from bubbling, so a shortcut that must work
//! while typing code listens in the capture phase on the window.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::KeyboardEvent;

/// A capture-phase `keydown` listener on the window; removed when dropped.
pub struct KeyListener {
    callback: Closure<dyn FnMut(KeyboardEvent)>,
}

impl Drop for KeyListener {
    fn drop(&mut self) {
        if let Some(window) = web_sys::window() {
            let _ = window.remove_event_listener_with_callback_and_bool(
                "keydown",
                self.callback.as_ref().unchecked_ref(),
                true,
            );
        }
    }
}

/// Calls `on_key` for every key pressed anywhere on the page, before any element sees it.
pub fn on_key_capture(on_key: impl FnMut(KeyboardEvent) + 'static) -> KeyListener {
    let callback = Closure::<dyn FnMut(KeyboardEvent)>::new(on_key);
    if let Some(window) = web_sys::window() {
        let _ = window.add_event_listener_with_callback_and_bool(
            "keydown",
            callback.as_ref().unchecked_ref(),
            true,
        );
    }
    KeyListener { callback }
}

/// Ctrl+Shift+L, or Cmd+Shift+L on a Mac: the Spark/Deep toggle (the Codex extension's chord).
pub fn is_profile_toggle(ev: &KeyboardEvent) -> bool {
    (ev.ctrl_key() || ev.meta_key()) && ev.shift_key() && !ev.alt_key() && ev.key().eq_ignore_ascii_case("l")
}

/// Whether a key press belongs to a text field or the code editor (single-key shortcuts leave it).
pub fn typing(ev: &KeyboardEvent) -> bool {
    let Some(target) = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return false };
    matches!(target.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
        || target.closest(".monaco-editor").ok().flatten().is_some()
}
