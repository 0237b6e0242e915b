//! The variations grid's geometry, plain and tested natively: how many columns, which tile an arrow
//! key reaches, and how a page laid out at a device's width is scaled into its tile.

/// Columns for `tiles` tiles in the whole workspace (a landscape window): as square a layout as
/// fits, so that 4 tiles are 2 × 2 (each page twice as large as in one row of 4) and 10 are 5 × 2.
pub fn grid_columns(tiles: usize) -> usize {
    match tiles {
        0 | 1 => 1,
        2 | 4 => 2,
        3 | 5 | 6 => 3,
        7 | 8 => 4,
        _ => 5,
    }
}

/// Where an arrow key (or Home / End) moves in the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// The tile before, wrapping to the previous row's last.
    Left,
    /// The tile after, wrapping to the next row's first.
    Right,
    /// The tile above.
    Up,
    /// The tile below (or the last one, from above a short last row).
    Down,
    /// The first tile.
    First,
    /// The last tile.
    Last,
}

impl Move {
    /// The move a key asks for, `None` for other keys.
    pub fn from_key(key: &str) -> Option<Self> {
        Some(match key {
            "ArrowLeft" => Self::Left,
            "ArrowRight" => Self::Right,
            "ArrowUp" => Self::Up,
            "ArrowDown" => Self::Down,
            "Home" => Self::First,
            "End" => Self::Last,
            _ => return None,
        })
    }
}

/// The tile `step` reaches from tile `index` of `count` laid out in `columns`; at an edge it stays.
pub fn neighbour(index: usize, step: Move, count: usize, columns: usize) -> usize {
    let last = count.saturating_sub(1);
    let columns = columns.max(1);
    let index = index.min(last);
    match step {
        Move::Left => index.saturating_sub(1),
        Move::Right => (index + 1).min(last),
        Move::Up => index.checked_sub(columns).unwrap_or(index),
        // From a row above a short last row, Down lands on the last tile rather than nowhere.
        Move::Down if index / columns < last / columns => (index + columns).min(last),
        Move::Down => index,
        Move::First => 0,
        Move::Last => last,
    }
}

/// How a page laid out at `device` CSS pixels wide is shown in a box of `width` × `height`: the
/// page's frame keeps the device's width and is scaled down to the box (never up: a zoomed tile
/// wider than the device shows the page at its real size, centred).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// The CSS scale applied to the frame.
    pub scale: f64,
    /// The frame's layout width (the device's).
    pub width: f64,
    /// The frame's layout height: the box's height at that scale, so the page fills the box.
    pub height: f64,
    /// Space left of the frame, when the box is wider than the device.
    pub left: f64,
}

/// The fit of a `device`-wide page into a `width` × `height` box (a box not laid out yet, of zero
/// width, gets scale 1: nothing is shown until it has a size).
pub fn fit(width: f64, height: f64, device: f64) -> Fit {
    let device = device.max(1.0);
    let scale = if width > 0.0 { (width / device).min(1.0) } else { 1.0 };
    Fit {
        scale,
        width: device,
        height: height.max(0.0) / scale,
        left: ((width - device * scale) / 2.0).max(0.0),
    }
}

/// The part of a model's name a tile shows under its title (`groq/llama-3.3-70b` → `llama-3.3-70b`);
/// the whole name is its tooltip.
pub fn short_model(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_keep_tiles_near_square_in_a_wide_workspace() {
        let cols: Vec<_> = (1..=10).map(grid_columns).collect();
        assert_eq!(cols, [1, 2, 3, 2, 3, 3, 4, 4, 5, 5]);
        assert_eq!(grid_columns(0), 1);
        for n in 1..=10_usize {
            assert!(n.div_ceil(grid_columns(n)) <= 2, "{n} tiles take more than two rows");
        }
    }

    #[test]
    fn arrows_move_within_the_grid_and_stop_at_its_edges() {
        // 10 tiles in 5 columns: 0..4 above 5..9.
        assert_eq!(neighbour(0, Move::Right, 10, 5), 1);
        assert_eq!(neighbour(4, Move::Right, 10, 5), 5, "right wraps to the next row");
        assert_eq!(neighbour(9, Move::Right, 10, 5), 9);
        assert_eq!(neighbour(0, Move::Left, 10, 5), 0);
        assert_eq!(neighbour(2, Move::Down, 10, 5), 7);
        assert_eq!(neighbour(7, Move::Up, 10, 5), 2);
        assert_eq!(neighbour(2, Move::Up, 10, 5), 2);
        assert_eq!(neighbour(7, Move::Down, 10, 5), 7);
        assert_eq!(neighbour(6, Move::First, 10, 5), 0);
        assert_eq!(neighbour(1, Move::Last, 10, 5), 9);
        // 3 tiles in 2 columns: from tile 1 (top right), Down reaches the short last row's only tile.
        assert_eq!(neighbour(1, Move::Down, 3, 2), 2);
        assert_eq!(neighbour(0, Move::Down, 3, 2), 2);
        assert_eq!(neighbour(5, Move::Left, 3, 2), 1, "an index past the end is the last tile");
        assert_eq!(neighbour(0, Move::Down, 0, 5), 0);
    }

    #[test]
    fn keys_name_moves() {
        assert_eq!(Move::from_key("ArrowDown"), Some(Move::Down));
        assert_eq!(Move::from_key("End"), Some(Move::Last));
        assert_eq!(Move::from_key("Enter"), None);
    }

    #[test]
    fn a_desktop_page_is_scaled_down_to_its_tile_and_never_up() {
        let tile = fit(256.0, 150.0, 1280.0);
        assert!((tile.scale - 0.2).abs() < 1e-9);
        assert_eq!(tile.width, 1280.0);
        assert!((tile.height - 750.0).abs() < 1e-9, "the frame is as tall as the tile at that scale");
        assert_eq!(tile.left, 0.0);
        let zoomed = fit(1380.0, 600.0, 1280.0);
        assert_eq!(zoomed.scale, 1.0);
        assert_eq!(zoomed.height, 600.0);
        assert_eq!(zoomed.left, 50.0, "centred");
        let unlaid = fit(0.0, 0.0, 390.0);
        assert_eq!((unlaid.scale, unlaid.height), (1.0, 0.0));
    }

    #[test]
    fn the_short_model_name_drops_the_provider() {
        assert_eq!(short_model("groq/llama-3.3-70b"), "llama-3.3-70b");
        assert_eq!(short_model("local"), "local");
        assert_eq!(short_model("a/b/c"), "c");
    }
}
