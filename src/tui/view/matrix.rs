//! The fittingness matrix: one component's PEs down, another's across, every other component
//! fixed at the cursor configuration. A custom widget that sets cell backgrounds: red -> green
//! by fittingness, grey when worse than the base case, blank over the budget. Top-N ranks
//! (digits), marks (`*`) and the cursor (`[]`) are glyphs, so the matrix reads without colour;
//! without colour, shades (`░▒▓█`) stand for fittingness. When the candidates outnumber the
//! screen cells, each screen cell stands for a block of candidates and shows its most telling
//! member (cursor, then best rank, then marked, then highest fittingness).

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use ratatui::Frame;

use super::pane_block;
use crate::tui::app::{App, Pane};
use crate::tui::theme::ColorDepth;
use autolb::predict::Cell;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let (r, c) = app.axes;
    let names = (
        &app.problem.components[r].name,
        &app.problem.components[c].name,
    );
    let title = format!(" Fittingness: {} ↓ × {} → ", names.0, names.1);
    let block = pane_block(app, Pane::Matrix, title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if app.problem.components.len() < 2 {
        frame.render_widget(
            Paragraph::new("one component: nothing to cross; see the top list"),
            inner,
        );
        return;
    }
    frame.render_widget(MatrixView { app }, inner);
}

/// The matrix proper, drawn into the pane's inner area.
pub struct MatrixView<'a> {
    pub app: &'a App,
}

/// How candidates map to screen cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub label_w: u16,
    pub cell_w: u16,
    /// Candidates per screen cell, down and across.
    pub row_block: usize,
    pub col_block: usize,
    pub shown_rows: usize,
    pub shown_cols: usize,
}

/// Fits `rows` x `cols` candidates into `width` x `height` cells (after a label column).
pub fn geometry(
    rows: usize,
    cols: usize,
    label_w: u16,
    width: u16,
    height: u16,
) -> Option<Geometry> {
    let avail_w = usize::from(width.checked_sub(label_w)?);
    let avail_h = usize::from(height);
    if avail_w == 0 || avail_h == 0 || rows == 0 || cols == 0 {
        return None;
    }
    let cell_w: u16 = if cols * 2 <= avail_w { 2 } else { 1 };
    let col_block = cols.div_ceil(avail_w / usize::from(cell_w));
    let row_block = rows.div_ceil(avail_h);
    Some(Geometry {
        label_w,
        cell_w,
        row_block,
        col_block,
        shown_rows: rows.div_ceil(row_block),
        shown_cols: cols.div_ceil(col_block),
    })
}

/// Priority of a candidate as its block's representative (higher wins).
fn priority(cell: &Cell, cursor: bool, rank: Option<usize>, marked: bool) -> (u8, i64) {
    if cursor {
        return (5, 0);
    }
    if let Some(r) = rank {
        return (4, -(r as i64));
    }
    if marked {
        return (3, 0);
    }
    match cell {
        Cell::Scored { fittingness, .. } => (2, (fittingness * 1e6) as i64),
        Cell::WorseThanBase { .. } => (1, 0),
        Cell::OverBudget => (0, 0),
    }
}

impl Widget for MatrixView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let grid = &app.grid;
        let (ra, ca) = app.axes;
        if area.height < 4 || area.width < 8 {
            return;
        }
        let label_w = grid
            .row_nproc
            .iter()
            .map(|p| p.to_string().len())
            .max()
            .unwrap_or(1) as u16
            + 1;
        let cells_h = area.height - 3;
        // With colour, each screen line holds two candidate rows (upper half block: foreground
        // = the upper row, background = the lower), doubling the vertical resolution.
        // Without colour the glyphs need whole cells.
        // Half blocks only pay when they show every candidate row on its own where whole cells
        // would have to merge rows (blocks are whole numbers of rows, so otherwise whole cells
        // use the height as well and keep room for glyphs).
        let rows = grid.row_nproc.len();
        let half_blocks = app.theme.depth != ColorDepth::Mono
            && rows > usize::from(cells_h)
            && rows <= 2 * usize::from(cells_h);
        let halves: usize = if half_blocks { 2 } else { 1 };
        let Some(g) = geometry(
            grid.row_nproc.len(),
            grid.col_nproc.len(),
            label_w,
            area.width,
            cells_h.saturating_mul(halves as u16),
        ) else {
            return;
        };

        let ranks: HashMap<(usize, usize), usize> = app
            .prediction
            .top
            .iter()
            .enumerate()
            .filter_map(|(i, cfg)| Some((on_plane(app, &cfg.nproc)?, i + 1)))
            .collect();
        let marked: Vec<(usize, usize)> =
            app.marked.iter().filter_map(|n| on_plane(app, n)).collect();
        let cursor = (app.cursor[ra], app.cursor[ca]);

        // Column labels: as many as fit without overlapping.
        let x0 = area.x + g.label_w;
        let mut next_free = x0;
        for sc in 0..g.shown_cols {
            let x = x0 + sc as u16 * g.cell_w;
            let label = grid.col_nproc[sc * g.col_block].to_string();
            if x >= next_free && x + label.len() as u16 <= area.right() {
                buf.set_string(x, area.y, &label, app.theme.dim());
                next_free = x + label.len() as u16 + 1;
            }
        }
        // The most telling candidate of the block at sub-row `sr`, column `sc`.
        let pick = |sr: usize, sc: usize| -> Option<((u8, i64), usize, usize)> {
            let mut best: Option<((u8, i64), usize, usize)> = None;
            for r in sr * g.row_block..((sr + 1) * g.row_block).min(grid.row_nproc.len()) {
                for c in sc * g.col_block..((sc + 1) * g.col_block).min(grid.col_nproc.len()) {
                    let p = priority(
                        &grid.cell(r, c),
                        (r, c) == cursor,
                        ranks.get(&(r, c)).copied(),
                        marked.contains(&(r, c)),
                    );
                    if best.is_none_or(|b| p > b.0) {
                        best = Some((p, r, c));
                    }
                }
            }
            best
        };
        let lines = g.shown_rows.div_ceil(halves);
        for line in 0..lines {
            let y = area.y + 1 + line as u16;
            let label = format!(
                "{:>w$}",
                grid.row_nproc[line * halves * g.row_block],
                w = usize::from(g.label_w) - 1
            );
            buf.set_string(area.x, y, &label, app.theme.dim());
            for sc in 0..g.shown_cols {
                let x = x0 + sc as u16 * g.cell_w;
                let top = pick(line * halves, sc);
                let bottom = if halves == 2 && line * 2 + 1 < g.shown_rows {
                    pick(line * 2 + 1, sc)
                } else {
                    None
                };
                // A cursor, rank or mark needs a whole cell for its glyph.
                let glyph = [top, bottom]
                    .into_iter()
                    .flatten()
                    .filter(|(p, _, _)| p.0 >= 3)
                    .max_by_key(|(p, _, _)| *p);
                if halves == 1 || glyph.is_some() {
                    let Some((_, r, c)) = glyph.or(top) else {
                        continue;
                    };
                    let (text, style) = cell_look(
                        app,
                        &grid.cell(r, c),
                        (r, c) == cursor,
                        ranks.get(&(r, c)).copied(),
                        marked.contains(&(r, c)),
                        g.cell_w,
                    );
                    buf.set_string(x, y, &text, style);
                    continue;
                }
                let colour = |o: Option<((u8, i64), usize, usize)>| {
                    o.and_then(|(_, r, c)| background(app, &grid.cell(r, c)))
                };
                let w = usize::from(g.cell_w);
                let (text, style) = match (colour(top), colour(bottom)) {
                    (Some(t), Some(b)) => ("▀".repeat(w), Style::default().fg(t).bg(b)),
                    (Some(t), None) => ("▀".repeat(w), Style::default().fg(t)),
                    (None, Some(b)) => ("▄".repeat(w), Style::default().fg(b)),
                    (None, None) => (" ".repeat(w), Style::default()),
                };
                buf.set_string(x, y, &text, style);
            }
        }
        let text_y = area.y + 1 + cells_h;
        Paragraph::new(cursor_line(app)).render(Rect::new(area.x, text_y, area.width, 1), buf);
        Paragraph::new(legend(app)).render(Rect::new(area.x, text_y + 1, area.width, 1), buf);
    }
}

/// The matrix cell `(row, column)` of a configuration given by PEs, if it lies on the plane
/// shown: every component off the axes at its cursor candidate.
fn on_plane(app: &App, nproc: &[u32]) -> Option<(usize, usize)> {
    let (ra, ca) = app.axes;
    let idx = crate::tui::app::index_of(&app.problem, nproc)?;
    let others_match = idx
        .iter()
        .enumerate()
        .all(|(k, &v)| k == ra || k == ca || v == app.cursor[k]);
    others_match.then_some((idx[ra], idx[ca]))
}

/// The colour a candidate's cell has (none over the budget or without colour).
fn background(app: &App, cell: &Cell) -> Option<Color> {
    match cell {
        Cell::Scored { fittingness, .. } => app.theme.fittingness(*fittingness),
        Cell::WorseThanBase { .. } => app.theme.worse(),
        Cell::OverBudget => None,
    }
}

/// Text and style of one screen cell.
fn cell_look(
    app: &App,
    cell: &Cell,
    cursor: bool,
    rank: Option<usize>,
    marked: bool,
    width: u16,
) -> (String, Style) {
    let theme = &app.theme;
    let mono = theme.depth == ColorDepth::Mono;
    let mut style = Style::default();
    if let Some(bg) = background(app, cell) {
        style = style.bg(bg).fg(Color::Black);
    }
    let w = usize::from(width);
    let glyph = if cursor {
        style = style.add_modifier(Modifier::BOLD);
        if mono {
            style = style.add_modifier(Modifier::REVERSED);
        }
        if w >= 2 {
            "[]".to_string()
        } else {
            "@".to_string()
        }
    } else if let Some(r) = rank {
        style = style.add_modifier(Modifier::BOLD);
        if w >= 2 {
            format!("{r:>2}")
        } else if r < 10 {
            r.to_string()
        } else {
            "+".into()
        }
    } else if marked {
        style = style.add_modifier(Modifier::BOLD);
        format!("{:>w$}", "*")
    } else if mono {
        let g = match cell {
            Cell::Scored { fittingness, .. } => match (fittingness * 4.0) as u8 {
                0 => "░",
                1 => "▒",
                2 => "▓",
                _ => "█",
            },
            Cell::WorseThanBase { .. } => "·",
            Cell::OverBudget => " ",
        };
        g.repeat(w)
    } else {
        " ".repeat(w)
    };
    (glyph, style)
}

/// The cursor cell's numbers as text (for colour-blind users and monochrome terminals).
pub fn cursor_line(app: &App) -> Line<'static> {
    let nproc = app.cursor_nproc();
    let mut text = app.describe(&nproc);
    match app.cursor_cell() {
        Cell::OverBudget => text.push_str(&format!(
            " · over the budget of {}",
            app.problem.settings.max_nproc
        )),
        Cell::WorseThanBase { sypd, chsy } => text.push_str(&format!(
            " · SYPD {sypd:.2} · CHSY {chsy:.0} · worse than base case"
        )),
        Cell::Scored {
            sypd,
            chsy,
            coupling_cost,
            fittingness,
        } => {
            text.push_str(&format!(
                " · SYPD {sypd:.2} · CHSY {chsy:.0} · cpl {:.1}% · FN {fittingness:.3}",
                coupling_cost * 100.0
            ));
            if let Some(r) = app.rank_of(&nproc) {
                text.push_str(&format!(" · #{r}"));
            }
        }
    }
    if app.is_marked(&nproc) {
        text.push_str(" · marked");
    }
    Line::from(Span::styled(
        text,
        Style::default().add_modifier(Modifier::BOLD),
    ))
}

fn legend(app: &App) -> Line<'static> {
    let theme = &app.theme;
    let mut spans = Vec::new();
    if theme.depth == ColorDepth::Mono {
        spans.push(Span::raw("░▒▓█ FN  · worse than base  "));
    } else {
        for f in [0.0, 0.25, 0.5, 0.75, 1.0] {
            spans.push(Span::styled(
                " ",
                Style::default().bg(theme.fittingness(f).unwrap_or(Color::Reset)),
            ));
        }
        spans.push(Span::raw(" FN  "));
        spans.push(Span::styled(
            " ",
            Style::default().bg(theme.worse().unwrap_or(Color::Reset)),
        ));
        spans.push(Span::raw(" worse than base  "));
    }
    spans.push(Span::raw(
        "blank over budget  1-9 top N  * marked  []/@ cursor",
    ));
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::geometry;

    #[test]
    fn geometry_fits_or_aggregates() {
        let g = geometry(40, 36, 5, 80, 40).unwrap();
        assert_eq!((g.cell_w, g.row_block, g.col_block), (2, 1, 1));
        let g = geometry(100, 100, 5, 60, 20).unwrap();
        assert_eq!(g.cell_w, 1);
        assert!(g.shown_cols <= 55 && g.shown_rows <= 20);
        assert_eq!((g.row_block, g.col_block), (5, 2));
        assert!(geometry(10, 10, 5, 5, 10).is_none());
        assert!(geometry(10, 10, 5, 20, 0).is_none());
    }
}
