//! An image shrunk onto a grid of cells, each the average colour of the pixels it covers.

use super::Rgba;

/// One cell's average colour, composited over white, each channel 0–1.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cell {
    /// Red.
    pub r: f32,
    /// Green.
    pub g: f32,
    /// Blue.
    pub b: f32,
}

impl Cell {
    /// Its luminance (Rec. 709 weights on the stored channels).
    pub fn luma(self) -> f32 {
        0.2126 * self.r + 0.7152 * self.g + 0.0722 * self.b
    }

    /// How far apart two colours are, 0–1 (Euclidean in RGB, scaled to the cube's diagonal).
    pub fn distance(self, other: Cell) -> f32 {
        let (dr, dg, db) = (self.r - other.r, self.g - other.g, self.b - other.b);
        ((dr * dr + dg * dg + db * db) / 3.0).sqrt()
    }

    /// How coloured it is (max minus min channel).
    pub fn chroma(self) -> f32 {
        self.r.max(self.g).max(self.b) - self.r.min(self.g).min(self.b)
    }
}

/// Cells in rows, `columns` wide.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    columns: usize,
    cells: Vec<Cell>,
}

impl Grid {
    /// `image` averaged onto `columns` cells across, square cells, at most `max_rows` rows (the
    /// rest of a tall image is left out).
    pub fn from_rgba(image: &Rgba, columns: usize, max_rows: usize) -> Self {
        let (width, height) = (image.width() as usize, image.height() as usize);
        let cell = width as f64 / columns as f64;
        let uncapped = ((height as f64 / cell).round() as usize).max(1);
        let rows = uncapped.min(max_rows);
        let mut sums = vec![[0f64; 4]; columns * rows];
        // Which column each pixel x falls in, once per image rather than per pixel.
        let column_of: Vec<usize> = (0..width).map(|x| x * columns / width).collect();
        let data = image.data();
        for y in 0..height {
            // Rows spread evenly over the height; a taller image keeps square cells and loses the
            // rows past `max_rows` instead of being squeezed into them.
            let row = if uncapped > max_rows { (y as f64 / cell) as usize } else { y * rows / height };
            if row >= rows {
                break;
            }
            let line = &data[y * width * 4..(y + 1) * width * 4];
            for (x, px) in line.chunks_exact(4).enumerate() {
                let alpha = f64::from(px[3]) / 255.0;
                let sum = &mut sums[row * columns + column_of[x]];
                // Over white, as the page's canvas and a transparent PNG's viewer both show it.
                sum[0] += f64::from(px[0]) / 255.0 * alpha + (1.0 - alpha);
                sum[1] += f64::from(px[1]) / 255.0 * alpha + (1.0 - alpha);
                sum[2] += f64::from(px[2]) / 255.0 * alpha + (1.0 - alpha);
                sum[3] += 1.0;
            }
        }
        let cells = sums
            .into_iter()
            .map(|[r, g, b, n]| {
                let n = n.max(1.0);
                Cell { r: (r / n) as f32, g: (g / n) as f32, b: (b / n) as f32 }
            })
            .collect();
        Self { columns, cells }
    }

    /// Cells across.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Rows of cells.
    pub fn rows(&self) -> usize {
        self.cells.len() / self.columns.max(1)
    }

    /// The cell at column `x`, row `y`.
    pub fn at(&self, x: usize, y: usize) -> Cell {
        self.cells[y * self.columns + x]
    }

    /// Row `y`'s cells.
    pub fn row(&self, y: usize) -> &[Cell] {
        &self.cells[y * self.columns..(y + 1) * self.columns]
    }

    /// Extended to `rows` rows with its background: the median-luminance cell of its bottom row,
    /// so a footer's edge or a lone button does not paint the whole extension.
    pub fn extended(&self, rows: usize) -> Self {
        let mut cells = self.cells.clone();
        if rows > self.rows() {
            let mut bottom = self.row(self.rows() - 1).to_vec();
            bottom.sort_by(|a, b| a.luma().total_cmp(&b.luma()));
            let background = bottom[bottom.len() / 2];
            cells.resize(rows * self.columns, background);
        }
        Self { columns: self.columns, cells }
    }

    /// Moved `dx` cells right and `dy` down; the edge cells fill what is uncovered.
    pub fn shifted(&self, dx: isize, dy: isize) -> Self {
        let (columns, rows) = (self.columns as isize, self.rows() as isize);
        let mut cells = Vec::with_capacity(self.cells.len());
        for y in 0..rows {
            for x in 0..columns {
                let (sx, sy) = ((x - dx).clamp(0, columns - 1), (y - dy).clamp(0, rows - 1));
                cells.push(self.cells[(sy * columns + sx) as usize]);
            }
        }
        Self { columns: self.columns, cells }
    }

    /// Half the size each way (each cell the mean of up to four); odd edges keep their half cells.
    pub fn halved(&self) -> Self {
        let columns = self.columns.div_ceil(2);
        let rows = self.rows().div_ceil(2);
        let mut cells = Vec::with_capacity(columns * rows);
        for y in 0..rows {
            for x in 0..columns {
                let mut sum = Cell::default();
                let mut n = 0.0;
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let (sx, sy) = (2 * x + dx, 2 * y + dy);
                    if sx < self.columns && sy < self.rows() {
                        let c = self.at(sx, sy);
                        sum.r += c.r;
                        sum.g += c.g;
                        sum.b += c.b;
                        n += 1.0;
                    }
                }
                cells.push(Cell { r: sum.r / n, g: sum.g / n, b: sum.b / n });
            }
        }
        Self { columns, cells }
    }
}
