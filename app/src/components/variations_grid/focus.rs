//! Moving around the grid from the keyboard: arrows move between tiles, Enter zooms the focused tile
//! to the whole workspace and Esc brings the grid back. Heard on the grid itself, so these keys mean
//! nothing while focus is in the prompt, the editor or elsewhere.

use leptos::html::Div;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, KeyboardEvent};

use crate::variations::grid::{Move, grid_columns, neighbour};

/// The zoomed tile, if one is.
#[derive(Clone, Copy)]
pub(super) struct Zoom {
    /// Its key; a key no longer among the tiles (a new run replaced them) counts as none.
    pub(super) key: RwSignal<Option<u64>>,
}

/// The tile that holds `target` (the tile itself or something in it), by its key.
fn tile_key_of(target: Option<web_sys::EventTarget>) -> Option<(u64, bool)> {
    let element = target?.dyn_into::<Element>().ok()?;
    let tile = element.closest("[data-tile-key]").ok().flatten()?;
    let key = tile.get_attribute("data-tile-key")?.parse().ok()?;
    Some((key, tile == element))
}

/// Puts the keyboard focus on tile `key` inside `grid`.
pub(super) fn focus_tile(grid: NodeRef<Div>, key: u64) {
    let Some(grid) = grid.get_untracked() else { return };
    let found = grid.query_selector(&format!("[data-tile-key=\"{key}\"]")).ok().flatten();
    if let Some(tile) = found.and_then(|t| t.dyn_into::<HtmlElement>().ok()) {
        let _ = tile.focus();
    }
}

/// Handles a key pressed in the grid; `shown` are the keys of the tiles on screen, in order.
pub(super) fn on_grid_key(ev: &KeyboardEvent, grid: NodeRef<Div>, zoom: Zoom, shown: &[u64]) {
    if ev.ctrl_key() || ev.meta_key() || ev.alt_key() || ev.shift_key() {
        return;
    }
    let Some((key, on_tile)) = tile_key_of(ev.target()) else { return };
    let Some(index) = shown.iter().position(|k| *k == key) else { return };
    let zoomed = zoom.key.get_untracked().is_some_and(|k| shown.contains(&k));
    let target = match ev.key().as_str() {
        // Enter on a button inside the tile is that button's; on the tile itself it zooms.
        "Enter" if on_tile && !zoomed => {
            zoom.key.set(Some(key));
            Some(key)
        }
        "Escape" if zoomed => {
            zoom.key.set(None);
            Some(key)
        }
        other => Move::from_key(other).and_then(|step| {
            // Zoomed, left and right show the neighbour zoomed; up and down have nowhere to go.
            if zoomed && !matches!(step, Move::Left | Move::Right) {
                return None;
            }
            let next = shown[neighbour(index, step, shown.len(), grid_columns(shown.len()))];
            if zoomed {
                zoom.key.set(Some(next));
            }
            Some(next)
        }),
    };
    if let Some(next) = target {
        ev.prevent_default();
        // Esc here is the grid's: the window's own Esc (stop the fix attempt) is not meant.
        ev.stop_propagation();
        focus_tile(grid, next);
    }
}
