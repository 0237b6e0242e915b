//! How a prompt fans out: one generation, variations of one model, or a compare of several.

use leptos::prelude::*;

/// How a prompt fans out: how many variations, or which models to race side by side.
#[derive(Debug, Clone, Copy)]
pub struct FanOut {
    /// Variations per prompt, `1..=MAX_VARIATIONS` (remembered with the session).
    pub count: RwSignal<u8>,
    /// Compare mode: race the models in `compared` instead of varying one.
    pub compare: RwSignal<bool>,
    /// The models to race (2–4 make a compare).
    pub compared: RwSignal<Vec<String>>,
    /// The preview pane shows the tiles rather than the current version.
    pub show_tiles: RwSignal<bool>,
    /// Best of N: the tiles are sampled for a page that works, only the best is shown, and once one
    /// passes every check the others still streaming are stopped.
    pub best_of: RwSignal<bool>,
}

/// Provides a fresh [`FanOut`] (one generation, no compare) and returns it.
pub fn provide_fan_out() -> FanOut {
    let fan_out = FanOut {
        count: RwSignal::new(1),
        compare: RwSignal::new(false),
        compared: RwSignal::new(Vec::new()),
        show_tiles: RwSignal::new(false),
        best_of: RwSignal::new(false),
    };
    provide_context(fan_out);
    fan_out
}

/// The [`FanOut`] provided by the app.
pub fn expect_fan_out() -> FanOut {
    expect_context::<FanOut>()
}
