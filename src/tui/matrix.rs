//! The matrix part of the app: which components the axes show, the cursor configuration, the
//! scored slice through it, the marked configurations and the region zoom.

use autolb::predict::{Cell, Grid, MAX_COMPONENTS};

use super::ranking::Ranking;
use super::slice::{cloud_points_of, slice};

pub struct MatrixState {
    /// Components down the rows and across the columns of the matrix.
    pub axes: (usize, usize),
    /// The cursor configuration: a candidate index per component. Components not on the
    /// matrix axes stay fixed at theirs.
    pub cursor: Vec<usize>,
    pub grid: Grid,
    /// Marked configurations (PEs per component).
    pub marked: Vec<Vec<u32>>,
    /// The matrix shows the region around the cursor, one configuration per cell (`Z`).
    pub region: bool,
}

impl MatrixState {
    /// The first two components on the axes and the cursor at `cursor`, scored at once.
    pub fn new(ranking: &Ranking, cursor: Vec<usize>) -> MatrixState {
        let n = ranking.problem.components.len();
        let axes = (0, if n > 1 { 1 } else { 0 });
        let grid = slice(&ranking.problem, axes, &cursor, ranking.tts_w());
        MatrixState {
            axes,
            cursor,
            grid,
            marked: Vec::new(),
            region: false,
        }
    }

    /// Scores the slice through the cursor again (after the cursor, the axes or the ranking
    /// moved).
    pub fn regrid(&mut self, ranking: &Ranking) {
        self.grid = slice(&ranking.problem, self.axes, &self.cursor, ranking.tts_w());
    }

    /// The kept configurations of the slice as (cost, SYPD) for the trade-off's cloud.
    pub fn cloud_points(&self, ranking: &Ranking) -> Vec<(f64, f64)> {
        cloud_points_of(&ranking.problem, &self.grid, &self.cursor, ranking.tts_w())
    }

    /// The matrix cell at candidate `row` down and `col` across (every other component at the
    /// cursor): from the scored slice, or scored now when the slice is too large to keep.
    pub fn cell_at(&self, ranking: &Ranking, row: usize, col: usize) -> Cell {
        if !self.grid.cells.is_empty() {
            return self.grid.cell(row, col);
        }
        let (index, n) = self.index_at(row, col);
        ranking.problem.cell(&index[..n], ranking.tts_w())
    }

    /// The candidate indices of the matrix cell `(row, col)`, on the stack (the first `n`).
    pub fn index_at(&self, row: usize, col: usize) -> ([usize; MAX_COMPONENTS], usize) {
        let mut index = [0usize; MAX_COMPONENTS];
        let n = self.cursor.len();
        index[..n].copy_from_slice(&self.cursor);
        index[self.grid.rows] = row;
        index[self.grid.cols] = col;
        (index, n)
    }

    pub fn is_marked(&self, nproc: &[u32]) -> bool {
        self.marked.iter().any(|m| m == nproc)
    }

    /// Moves the cursor one candidate along an axis (`Up`/`Down` the rows, `Left`/`Right` the
    /// columns), within the candidates.
    pub fn step_cursor(&mut self, ranking: &Ranking, rows: bool, forward: bool) {
        let axis = if rows { self.axes.0 } else { self.axes.1 };
        let last = ranking.problem.components[axis].nproc.len() - 1;
        let i = &mut self.cursor[axis];
        *i = if forward {
            (*i + 1).min(last)
        } else {
            i.saturating_sub(1)
        };
    }

    /// The next component (skipping the other axis's) down the rows or across the columns;
    /// false with fewer than 3 components, where the axes cannot change.
    pub fn cycle_axis(&mut self, n: usize, rows: bool) -> bool {
        if n < 3 {
            return false;
        }
        let (mut r, mut c) = self.axes;
        let target = if rows { &mut r } else { &mut c };
        let other = if rows { self.axes.1 } else { self.axes.0 };
        let mut next = (*target + 1) % n;
        if next == other {
            next = (next + 1) % n;
        }
        *target = next;
        self.axes = (r, c);
        true
    }
}
