//! Differences a person can name, read from the two grids: the height, bands of the page whose
//! colour is wrong, a column at one side that only one of them has.

use super::grid::{Cell, Grid};
use super::{Finding, Rgba};

/// Smallest height difference worth a word: a few lines of text, or a twentieth of the picture.
const HEIGHT_SLACK_PX: f32 = 16.0;
const HEIGHT_SLACK_SHARE: f32 = 0.05;
/// Horizontal bands the picture is read in.
const BANDS: usize = 8;
/// Colour distance from which a band or a column reads as another colour.
const DIFFERENT: f32 = 0.2;
/// Colour distance between a side column and the middle that makes it a column of its own.
const COLUMN_EDGE: f32 = 0.08;

/// Every finding, unordered.
pub fn describe(mock: &Rgba, page: &Rgba, a: &Grid, b: &Grid) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(height(mock, page));
    let px_per_cell = mock.width() as f32 / a.columns() as f32;
    // Only the picture's own rows: past its end, the height finding says it all.
    let rows = ((mock.height() as f32 / px_per_cell).round() as usize).clamp(1, a.rows());
    findings.extend(bands(a, b, rows, px_per_cell));
    findings.extend(columns(a, b, rows, px_per_cell));
    findings
}

/// The page's height against the picture's, in the picture's pixels.
fn height(mock: &Rgba, page: &Rgba) -> Option<Finding> {
    let mock_height = mock.height() as f32;
    let page_height = page.height() as f32 * mock.width() as f32 / page.width() as f32;
    let diff = page_height - mock_height;
    if diff.abs() <= HEIGHT_SLACK_PX.max(HEIGHT_SLACK_SHARE * mock_height) {
        return None;
    }
    let way = if diff > 0.0 { "taller" } else { "shorter" };
    Some(Finding {
        text: format!(
            "the page is {} px {way} than the picture ({} px against {} px)",
            diff.abs().round(),
            page_height.round(),
            mock_height.round()
        ),
        weight: (diff.abs() / mock_height).min(1.0),
    })
}

/// Runs of bands whose colour differs, each one finding.
fn bands(a: &Grid, b: &Grid, rows: usize, px_per_cell: f32) -> Vec<Finding> {
    let bands = BANDS.min(rows);
    let mut out: Vec<Finding> = Vec::new();
    let mut run: Option<(usize, usize, String, String, f32)> = None;
    for band in 0..=bands {
        let this = (band < bands).then(|| {
            let (from, to) = (band * rows / bands, (band + 1) * rows / bands);
            let (ca, cb) = (mean(a, from..to, 0..a.columns()), mean(b, from..to, 0..b.columns()));
            let (na, nb) = (colour_name(ca), colour_name(cb));
            (ca.distance(cb) >= DIFFERENT && na != nb).then_some((from, to, na, nb, ca.distance(cb)))
        });
        match (run.take(), this.flatten()) {
            (Some(r), Some(t)) if r.2 == t.2 && r.3 == t.3 => run = Some((r.0, t.1, r.2, r.3, r.4.max(t.4))),
            (previous, next) => {
                if let Some((from, to, na, nb, distance)) = previous {
                    let place = place(from, to, rows);
                    let (top, bottom) =
                        ((from as f32 * px_per_cell).round(), (to as f32 * px_per_cell).round());
                    out.push(Finding {
                        text: format!(
                            "the {place} band ({top}–{bottom} px) is {na} in the picture and {nb} in the page"
                        ),
                        weight: distance * (to - from) as f32 / rows as f32 + 0.1,
                    });
                }
                run = next;
            }
        }
    }
    out
}

/// A column at the left or the right that one image has and the other lacks.
fn columns(a: &Grid, b: &Grid, rows: usize, px_per_cell: f32) -> Vec<Finding> {
    let mut out = Vec::new();
    for side in [Side::Left, Side::Right] {
        let (in_mock, in_page) = (side_column(a, rows, side), side_column(b, rows, side));
        let name = side.name();
        let text = match (in_mock, in_page) {
            (Some(width), None) => format!(
                "the picture has a column at the {name} (about {} px wide) that the page lacks",
                (width as f32 * px_per_cell).round()
            ),
            (None, Some(width)) => format!(
                "the page has a column at the {name} (about {} px wide) that the picture lacks",
                (width as f32 * px_per_cell).round()
            ),
            _ => continue,
        };
        out.push(Finding { text, weight: 0.5 });
    }
    out
}

#[derive(Clone, Copy)]
enum Side {
    Left,
    Right,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }
}

/// The width in cells of a column of its own colour along one side, running the height: the
/// outermost column differs from the background, and the edge is where the columns, taken inwards,
/// turn back to it. A margin is background, not a column.
fn side_column(grid: &Grid, rows: usize, side: Side) -> Option<usize> {
    let columns = grid.columns();
    let at = |i: usize| match side {
        Side::Left => i,
        Side::Right => columns - 1 - i,
    };
    let background = background(grid, rows);
    let outer = mean(grid, 0..rows, at(0)..at(0) + 1);
    if outer.distance(background) < COLUMN_EDGE {
        return None;
    }
    let edge = (1..columns / 2).find(|&i| {
        let c = mean(grid, 0..rows, at(i)..at(i) + 1);
        c.distance(background) < c.distance(outer)
    })?;
    (edge >= 2).then_some(edge)
}

/// The commonest colour of the top and bottom rows (cells rounded to 16 levels a channel): the
/// page's own background shows there, around a sidebar and between cards, more than anywhere else.
fn background(grid: &Grid, rows: usize) -> Cell {
    let key =
        |c: &Cell| ((c.r * 15.0).round() as u32, (c.g * 15.0).round() as u32, (c.b * 15.0).round() as u32);
    let mut counts: std::collections::HashMap<(u32, u32, u32), (u32, Cell)> =
        std::collections::HashMap::new();
    for y in [0, rows.saturating_sub(1)] {
        for c in grid.row(y) {
            counts.entry(key(c)).or_insert((0, *c)).0 += 1;
        }
    }
    counts.into_values().max_by_key(|(n, c)| (*n, key(c))).map_or(Cell { r: 1.0, g: 1.0, b: 1.0 }, |(_, c)| c)
}

fn mean(grid: &Grid, rows: std::ops::Range<usize>, columns: std::ops::Range<usize>) -> Cell {
    let mut sum = Cell::default();
    let mut n = 0.0;
    for y in rows {
        for c in &grid.row(y)[columns.clone()] {
            sum.r += c.r;
            sum.g += c.g;
            sum.b += c.b;
            n += 1.0;
        }
    }
    let n = f32::max(n, 1.0);
    Cell { r: sum.r / n, g: sum.g / n, b: sum.b / n }
}

/// Where rows `from..to` of `rows` lie, in words.
fn place(from: usize, to: usize, rows: usize) -> &'static str {
    let centre = (from + to) as f32 / 2.0 / rows as f32;
    if from == 0 {
        "top"
    } else if to >= rows {
        "bottom"
    } else if centre < 0.5 {
        "upper"
    } else {
        "lower"
    }
}

/// A colour as a person would name it at a glance.
fn colour_name(c: Cell) -> String {
    let luma = c.luma();
    if c.chroma() < 0.15 {
        return if luma < 0.3 {
            "dark"
        } else if luma > 0.75 {
            "light"
        } else {
            "grey"
        }
        .into();
    }
    let (r, g, b) = (c.r, c.g, c.b);
    let max = r.max(g).max(b);
    let delta = c.chroma();
    let hue = if max == r {
        60.0 * (((g - b) / delta).rem_euclid(6.0))
    } else if max == g {
        60.0 * ((b - r) / delta + 2.0)
    } else {
        60.0 * ((r - g) / delta + 4.0)
    };
    let name = match hue {
        h if !(20.0..340.0).contains(&h) => "red",
        h if h < 45.0 => "orange",
        h if h < 70.0 => "yellow",
        h if h < 160.0 => "green",
        h if h < 200.0 => "teal",
        h if h < 255.0 => "blue",
        h if h < 290.0 => "purple",
        _ => "pink",
    };
    let tone = if luma < 0.3 {
        "dark "
    } else if luma > 0.75 {
        "light "
    } else {
        ""
    };
    format!("{tone}{name}")
}
