//! The fittingness matrix: one component's PEs down, another's across, every other component
//! fixed at the cursor configuration. A custom widget that sets cell backgrounds: red -> green
//! by fittingness, grey when worse than the base case, blank over the budget. Top-N ranks
//! (digits), marks (`*`) and the cursor (`[]`/`@`) are glyphs, so the matrix reads without
//! colour; without colour, shades (`░▒▓█`) stand for fittingness.
//!
//! It tells the truth about its cells: when the candidates outnumber the screen, each line
//! (column) covers a run of candidates spread evenly over the whole pane, and its label gives
//! the range it covers (`408-456`). A cell holding several top-N configurations shows the best
//! rank with `+` (`1+`), so no top-N configuration is hidden. The cursor moves by
//! configuration: its row and column labels (highlighted) show the range they cover, like every
//! label, its exact PEs are in the cursor line below, and its cell takes the cursor
//! configuration's colour. `Z` shows the region around the cursor, one configuration per cell.
//!
//! With `[[queue]]` tables (and no chosen queue), a configuration that fits no queue is drawn
//! dark grey (`×` without colour): no queue would accept the job. The colours follow the cost
//! chosen with `$` (core-hours, node-hours, energy), since FN weighs it.
//!
//! A slice too large to score ahead (more than [`crate::tui::slice::KEPT_GRID_CELLS`] cells, e.g.
//! step 1 over thousands of PEs) is scored as it is drawn; a screen cell covering more than
//! [`SAMPLES`] x [`SAMPLES`] configurations then takes the colour of the fittest of an evenly
//! spread [`SAMPLES`] x [`SAMPLES`] sample of them (first and last included). The top-N ranks,
//! marks and the cursor are still placed exactly.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use ratatui::Frame;

use super::fit::{fit, Item};
use super::pane_block;
use crate::tui::app::App;
use crate::tui::matrix::MatrixState;
use crate::tui::pane::Pane;
use crate::tui::slice::{quick, Quick};
use crate::tui::theme::ColorDepth;
use autolb::machine::CostKind;
use autolb::predict::Cell;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let (r, c) = app.matrix.axes;
    let names = (
        &app.ranking.problem.components[r].name,
        &app.ranking.problem.components[c].name,
    );
    let mut items = vec![
        Item::new(format!("Fittingness: {} ↓ × {} →", names.0, names.1), 9)
            .or_short_early(format!("FN: {} ↓ × {} →", names.0, names.1), 5),
    ];
    if app.ranking.groups.is_some() {
        // The file packs nodes: the recommendation is a node packing, the cells are PE counts.
        items.push(Item::new("PE counts, not node packings", 7).or_short("PE counts"));
    }
    let block = pane_block(&app.ui, Pane::Matrix, "");
    let inner = block.inner(area);
    // The title sits between the corners, a space either side and a border cell at the end.
    let title_w = usize::from(area.width).saturating_sub(5);
    let title = |items: Vec<Item>| {
        let mut line = fit(items, " · ", title_w);
        line.spans.insert(0, Span::raw(" "));
        line.spans.push(Span::raw(" "));
        line
    };
    if app.ranking.problem.components.len() < 2 {
        frame.render_widget(block.title(title(items)), area);
        frame.render_widget(
            Paragraph::new("one component: nothing to cross; see the top list"),
            inner,
        );
        return;
    }
    if let Some(g) = geometry_for(&app.matrix, inner) {
        let per_cell = (max_len(&g.rows), max_len(&g.cols));
        if app.matrix.region {
            items.push(Item::new("around the cursor", 6).or_short("region"));
            items.push(Item::new("Z: all", 6));
        } else if per_cell != (1, 1) {
            items.push(
                Item::new(format!("≤{}×{} per cell", per_cell.0, per_cell.1), 5)
                    .or_short(format!("≤{}×{}", per_cell.0, per_cell.1)),
            );
            items.push(Item::new("Z: 1 each", 6));
        }
    }
    frame.render_widget(block.title(title(items)), area);
    frame.render_widget(MatrixView { app }, inner);
}

fn max_len(spans: &[Range<usize>]) -> usize {
    spans.iter().map(|r| r.len()).max().unwrap_or(1)
}

/// The matrix proper, drawn into the pane's inner area.
pub struct MatrixView<'a> {
    pub app: &'a App,
}

/// How candidates map to screen cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    pub label_w: u16,
    pub cell_w: u16,
    /// The candidates each screen line covers, top to bottom.
    pub rows: Vec<Range<usize>>,
    /// The candidates each screen column covers, left to right.
    pub cols: Vec<Range<usize>>,
    /// Lines below the matrix: the cursor's numbers, then the legend when there is room.
    pub legend: bool,
}

/// Spreads `n` candidates over at most `cells` screen cells: one each when they fit, else
/// every cell used, each covering `n / cells` candidates or one more.
pub fn split(n: usize, cells: usize) -> Vec<Range<usize>> {
    if cells == 0 || n == 0 {
        return Vec::new();
    }
    if n <= cells {
        return (0..n).map(|i| i..i + 1).collect();
    }
    (0..cells)
        .map(|k| k * n / cells..(k + 1) * n / cells)
        .collect()
}

/// `cells` consecutive candidates of `n`, one per cell, around `cursor` (the `Z` region).
pub fn window(n: usize, cells: usize, cursor: usize) -> Vec<Range<usize>> {
    let len = cells.min(n);
    let start = cursor.saturating_sub(len / 2).min(n - len);
    (start..start + len).map(|i| i..i + 1).collect()
}

/// The columns whose label is drawn, for labels `label_lens` long in a pane `width` wide:
/// every `stride`-th from the first, `stride` the fewest columns that hold the longest label and
/// a space, so labels are evenly spaced whatever their lengths; none reaching the pane's last
/// cell, so no label touches the border.
fn labelled_columns(g: &Geometry, label_lens: &[usize], width: u16) -> Vec<usize> {
    let cell = usize::from(g.cell_w).max(1);
    let longest = label_lens.iter().copied().max().unwrap_or(1);
    let stride = (longest + 1).div_ceil(cell);
    let room = usize::from(width).saturating_sub(usize::from(g.label_w) + 1);
    (0..label_lens.len())
        .step_by(stride)
        .filter(|&k| k * cell + label_lens[k] <= room)
        .collect()
}

/// A row label: the PEs a line covers, `408` or `408-456`.
fn range_label(nproc: &[u32], span: &Range<usize>) -> String {
    let first = nproc[span.start];
    let last = nproc[span.end - 1];
    if span.len() == 1 {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

/// Fits the grid's candidates into `area`: a label column, a column-label line on top, the
/// cursor line (and the legend when there is room) below; cells 2 to 4 wide.
pub fn geometry_for(matrix: &MatrixState, area: Rect) -> Option<Geometry> {
    let grid = &matrix.grid;
    let (nr, nc) = (grid.row_nproc.len(), grid.col_nproc.len());
    if area.height < 4 || area.width < 8 || nr == 0 || nc == 0 {
        return None;
    }
    let legend = area.height >= 10;
    let cells_h = usize::from(area.height - 2 - u16::from(legend));
    let (ra, ca) = matrix.axes;
    let rows = if matrix.region {
        window(nr, cells_h, matrix.cursor[ra])
    } else {
        split(nr, cells_h)
    };
    let label_w = rows
        .iter()
        .map(|r| range_label(&grid.row_nproc, r).len().max(4))
        .max()
        .unwrap_or(4) as u16
        + 1;
    let avail_w = usize::from(area.width.checked_sub(label_w)?);
    if avail_w < 2 {
        return None;
    }
    // Wide enough cells to hold `1+` or `[]`; wider (up to 4) when the columns leave room, so
    // the matrix fills its pane.
    let fit = avail_w / nc;
    let (cell_w, across) = if fit >= 2 {
        (fit.min(4), nc)
    } else {
        (2, avail_w / 2)
    };
    let cols = if matrix.region {
        window(nc, across, matrix.cursor[ca])
    } else {
        split(nc, across)
    };
    Some(Geometry {
        label_w,
        cell_w: cell_w as u16,
        rows,
        cols,
        legend,
    })
}

/// What one screen cell holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellContent {
    pub cursor: bool,
    /// Top-N ranks of the configurations in it, best first.
    pub ranks: Vec<usize>,
    pub marked: bool,
    /// The candidate whose colour the cell takes: the cursor's, else the best ranked, else
    /// the fittest.
    pub shown: Option<(usize, usize)>,
}

/// The top-N configurations (with their rank) and the marked ones that lie on the plane
/// shown, as matrix cells; found once per frame.
pub struct OnPlane {
    pub ranked: Vec<(usize, (usize, usize))>,
    pub marked: Vec<(usize, usize)>,
}

impl OnPlane {
    pub fn of(app: &App) -> OnPlane {
        OnPlane {
            ranked: app
                .ranking
                .prediction
                .top
                .iter()
                .enumerate()
                .filter_map(|(i, cfg)| Some((i + 1, on_plane(app, &cfg.nproc)?)))
                .collect(),
            marked: app
                .matrix
                .marked
                .iter()
                .filter_map(|n| on_plane(app, n))
                .collect(),
        }
    }
}

/// Gathers a screen cell's candidates.
#[cfg(test)]
pub fn content(app: &App, rows: &Range<usize>, cols: &Range<usize>) -> CellContent {
    content_in(app, &OnPlane::of(app), rows, cols)
}

/// Candidates per axis a screen cell of a slice scored as drawn looks at, at most.
pub const SAMPLES: usize = 4;

/// The candidates of `span` a screen cell looks at for its colour: all of them when the slice
/// is scored ahead, else at most [`SAMPLES`] spread evenly.
fn looked_at(app: &App, span: &Range<usize>) -> Vec<usize> {
    if !app.matrix.grid.cells.is_empty() {
        return span.clone().collect();
    }
    crate::tui::slice::spread(span.len(), SAMPLES)
        .into_iter()
        .map(|k| span.start + k)
        .collect()
}

/// The order in which a screen cell picks the candidate it shows: scored by FN, then worse
/// than the base case, then fitting no queue, then over the budget. A slice too large to keep
/// is scored with [`quick`] (no allocation; the same answer as the problem's cell).
fn standing(app: &App, r: usize, c: usize) -> f64 {
    let (value, sypd) = if app.matrix.grid.cells.is_empty() {
        let (index, n) = app.matrix.index_at(r, c);
        match quick(&app.ranking.problem, &index[..n], app.ranking.tts_w()) {
            Quick::Kept {
                sypd, fittingness, ..
            } => (fittingness, sypd),
            Quick::Worse { sypd } => (-1.0, sypd),
            Quick::Over => return -2.0,
        }
    } else {
        match app.matrix.grid.cell(r, c) {
            Cell::Scored {
                fittingness, sypd, ..
            } => (fittingness, sypd),
            Cell::WorseThanBase { sypd, .. } => (-1.0, sypd),
            Cell::OverBudget => return -2.0,
        }
    };
    if app.ranking.problem.cost_model.queues.is_empty() {
        return value;
    }
    let (ra, ca) = app.matrix.axes;
    let mut index = app.matrix.cursor.clone();
    index[ra] = r;
    index[ca] = c;
    if app
        .ranking
        .fits_no_queue(&app.ranking.nproc_of(&index), sypd)
    {
        -1.5
    } else {
        value
    }
}

/// Whether the candidate at `(r, c)` fits no queue (see [`App::fits_no_queue`]).
pub fn queue_less(app: &App, r: usize, c: usize, cell: &Cell) -> bool {
    let sypd = match *cell {
        Cell::Scored { sypd, .. } | Cell::WorseThanBase { sypd, .. } => sypd,
        Cell::OverBudget => return false,
    };
    if app.ranking.problem.cost_model.queues.is_empty() {
        return false;
    }
    let (ra, ca) = app.matrix.axes;
    let mut index = app.matrix.cursor.clone();
    index[ra] = r;
    index[ca] = c;
    app.ranking
        .fits_no_queue(&app.ranking.nproc_of(&index), sypd)
}

fn content_in(app: &App, plane: &OnPlane, rows: &Range<usize>, cols: &Range<usize>) -> CellContent {
    let (ra, ca) = app.matrix.axes;
    let cursor = (app.matrix.cursor[ra], app.matrix.cursor[ca]);
    let mut out = CellContent {
        cursor: rows.contains(&cursor.0) && cols.contains(&cursor.1),
        ..CellContent::default()
    };
    let mut fittest: Option<(f64, (usize, usize))> = None;
    let across = looked_at(app, cols);
    for r in looked_at(app, rows) {
        for &c in &across {
            let score = standing(app, r, c);
            if fittest.is_none_or(|(f, _)| score > f) {
                fittest = Some((score, (r, c)));
            }
        }
    }
    let inside = |(r, c): (usize, usize)| rows.contains(&r) && cols.contains(&c);
    let ranked: Vec<&(usize, (usize, usize))> =
        plane.ranked.iter().filter(|(_, rc)| inside(*rc)).collect();
    out.ranks = ranked.iter().map(|(rank, _)| *rank).collect();
    out.marked = plane.marked.iter().any(|rc| inside(*rc));
    out.shown = if out.cursor {
        Some(cursor)
    } else if let Some((_, rc)) = ranked.first() {
        Some(*rc)
    } else {
        fittest.map(|(_, rc)| rc)
    };
    out
}

impl Widget for MatrixView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let grid = &app.matrix.grid;
        let (ra, ca) = app.matrix.axes;
        let Some(g) = geometry_for(&app.matrix, area) else {
            return;
        };
        let cursor = (app.matrix.cursor[ra], app.matrix.cursor[ca]);
        let label_style = app.ui.theme.dim();
        let cursor_label = Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED);
        let x0 = area.x + g.label_w;
        let col_x = |k: usize| x0 + k as u16 * g.cell_w;

        // Column labels: the start of the cursor's column first, then the evenly spaced ones
        // it leaves clear. Labels give what a line or column covers; the cursor's exact PEs
        // are in the cursor line. The pane's last cell stays blank, off the border.
        let labels: Vec<String> = g
            .cols
            .iter()
            .map(|span| grid.col_nproc[span.start].to_string())
            .collect();
        let last = area.right().saturating_sub(1);
        let mut taken = None;
        if let Some(k) = g.cols.iter().position(|c| c.contains(&cursor.1)) {
            let label = &labels[k];
            let x = col_x(k).min(last.saturating_sub(label.len() as u16));
            buf.set_string(x, area.y, label, cursor_label);
            taken = Some((x, x + label.len() as u16));
        }
        let lens: Vec<usize> = labels.iter().map(String::len).collect();
        for k in labelled_columns(&g, &lens, area.width) {
            let x = col_x(k);
            let end = x + lens[k] as u16;
            if taken.is_none_or(|(a, b)| end < a || x > b) {
                buf.set_string(x, area.y, &labels[k], label_style);
            }
        }
        let plane = OnPlane::of(app);
        for (line, rspan) in g.rows.iter().enumerate() {
            let y = area.y + 1 + line as u16;
            let w = usize::from(g.label_w) - 1;
            if rspan.contains(&cursor.0) {
                let range = range_label(&grid.row_nproc, rspan);
                let pointed = format!("▸{range}");
                let label = if pointed.chars().count() <= w {
                    pointed
                } else {
                    range
                };
                buf.set_string(area.x, y, format!("{label:>w$}"), cursor_label);
            } else {
                let label = range_label(&grid.row_nproc, rspan);
                buf.set_string(area.x, y, format!("{label:>w$}"), label_style);
            }
            for (k, cspan) in g.cols.iter().enumerate() {
                let c = content_in(app, &plane, rspan, cspan);
                let (text, style) = cell_look(app, &c, g.cell_w);
                buf.set_string(col_x(k), y, &text, style);
            }
        }
        let text_y = area.y + 1 + g.rows.len() as u16;
        let bottom = area.bottom();
        if text_y < bottom {
            Paragraph::new(cursor_line(app, &g, usize::from(area.width)))
                .render(Rect::new(area.x, text_y, area.width, 1), buf);
        }
        if g.legend && text_y + 1 < bottom {
            Paragraph::new(legend(app, usize::from(area.width)))
                .render(Rect::new(area.x, text_y + 1, area.width, 1), buf);
        }
    }
}

/// The matrix cell `(row, column)` of a configuration given by PEs, if it lies on the plane
/// shown: every component off the axes at its cursor candidate.
fn on_plane(app: &App, nproc: &[u32]) -> Option<(usize, usize)> {
    let (ra, ca) = app.matrix.axes;
    let idx = crate::tui::ranking::index_of(&app.ranking.problem, nproc)?;
    let others_match = idx
        .iter()
        .enumerate()
        .all(|(k, &v)| k == ra || k == ca || v == app.matrix.cursor[k]);
    others_match.then_some((idx[ra], idx[ca]))
}

/// The colour a candidate's cell has (none over the budget or without colour).
fn background(app: &App, cell: &Cell, no_queue: bool) -> Option<Color> {
    match cell {
        _ if no_queue => app.ui.theme.no_queue(),
        Cell::Scored { fittingness, .. } => app.ui.theme.fittingness(*fittingness),
        Cell::WorseThanBase { .. } => app.ui.theme.worse(),
        Cell::OverBudget => None,
    }
}

/// The rank glyph of a cell: the best rank, with `+` when the cell holds more of the top N.
pub fn rank_label(ranks: &[usize]) -> Option<String> {
    let best = ranks.first()?;
    Some(if ranks.len() > 1 {
        format!("{best}+")
    } else {
        best.to_string()
    })
}

/// Without colour, the shade standing for a fittingness: `░` (below 0.25) to `█` (0.75 up).
pub fn shade(fittingness: f64) -> &'static str {
    match (fittingness * 4.0) as u8 {
        0 => "░",
        1 => "▒",
        2 => "▓",
        _ => "█",
    }
}

/// Without colour, a configuration worse than the base case.
pub const WORSE_GLYPH: &str = "·";
/// Without colour, a configuration no queue would accept.
pub const NO_QUEUE_GLYPH: &str = "×";

/// Text and style of one screen cell.
fn cell_look(app: &App, c: &CellContent, width: u16) -> (String, Style) {
    let theme = &app.ui.theme;
    let mono = theme.depth == ColorDepth::Mono;
    let cell = c.shown.map(|(r, col)| app.cell_at(r, col));
    let no_queue = match (c.shown, &cell) {
        (Some((r, col)), Some(cell)) => queue_less(app, r, col, cell),
        _ => false,
    };
    let mut style = Style::default();
    if let Some(bg) = cell
        .as_ref()
        .and_then(|cell| background(app, cell, no_queue))
    {
        let fg = if no_queue { Color::White } else { Color::Black };
        style = style.bg(bg).fg(fg);
    }
    let w = usize::from(width);
    let rank = rank_label(&c.ranks);
    // A mark shows on every cell: after the rank when there is room, else in its place.
    let ranked = |r: &str| -> String {
        if !c.marked {
            return if r.len() <= w {
                format!("{r:>w$}")
            } else {
                format!("{:>w$}", "+")
            };
        }
        let best = r.trim_end_matches('+');
        [format!("{r}*"), format!("{best}*"), "*".to_string()]
            .into_iter()
            .find(|t| t.len() <= w)
            .map(|t| format!("{t:>w$}"))
            .unwrap_or_else(|| "*".repeat(w.min(1)))
    };
    let glyph = if c.cursor {
        style = style.add_modifier(Modifier::BOLD);
        if mono {
            style = style.add_modifier(Modifier::REVERSED);
        }
        match (&rank, w) {
            // A ranked cell keeps its rank in sight; the cursor shows as underlined reverse.
            (Some(r), _) if r.len() <= w || c.marked => {
                style = style.add_modifier(Modifier::REVERSED | Modifier::UNDERLINED);
                ranked(r)
            }
            (_, 1) if c.marked => "*".to_string(),
            (_, 1) => "@".to_string(),
            (_, 2) if c.marked => "@*".to_string(),
            (_, w) if c.marked => format!("{:<w$}", "[*]"),
            (_, w) => format!("{:<w$}", "[]"),
        }
    } else if let Some(r) = rank {
        style = style.add_modifier(Modifier::BOLD);
        ranked(&r)
    } else if c.marked {
        style = style.add_modifier(Modifier::BOLD);
        format!("{:>w$}", "*")
    } else if mono {
        let g = match cell {
            Some(_) if no_queue => NO_QUEUE_GLYPH,
            Some(Cell::Scored { fittingness, .. }) => shade(fittingness),
            Some(Cell::WorseThanBase { .. }) => WORSE_GLYPH,
            _ => " ",
        };
        g.repeat(w)
    } else {
        " ".repeat(w)
    };
    (glyph, style)
}

/// The cursor cell's numbers as items (for colour-blind users and monochrome terminals): its
/// exact PEs, SYPD, FN and rank stay longest; CHSY, coupling, idle cores and the cell's range
/// give way first on a narrow pane.
pub fn cursor_items(app: &App, g: &Geometry) -> Vec<Item> {
    let nproc = app.cursor_nproc();
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let short_pes = nproc
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join("+");
    // The names give way before the figures: `408+240` still says the exact PEs.
    let mut items = vec![
        Item::styled(app.ranking.describe_index(&app.matrix.cursor), bold, 10)
            .or_short_early(short_pes, 6),
    ];
    let cell = app.cursor_cell();
    let no_queue = match cell {
        Cell::Scored { sypd, .. } | Cell::WorseThanBase { sypd, .. } => {
            app.ranking.fits_no_queue(&nproc, sypd)
        }
        Cell::OverBudget => false,
    };
    if no_queue {
        items.push(Item::styled("fits no queue", bold, 7));
    }
    // The cost FN weighs: CHSY, or the bill with its idle cores and queue.
    let bill = |items: &mut Vec<Item>| {
        let c = app
            .ranking
            .problem
            .score(&app.matrix.cursor, app.ranking.tts_w());
        match &c.billing {
            Some(b) if app.ranking.problem.cost_model.cost != CostKind::CoreHours => {
                items.push(Item::styled(
                    format!(
                        "{} {}",
                        app.ranking.problem.cost_model.cost.header(),
                        crate::tui::budget::cost_text(app.ranking.problem.cost_model.cost, b.cost),
                    ),
                    bold,
                    5,
                ));
                items.push(Item::styled(format!("idle {}", b.idle_cores), bold, 3));
            }
            Some(b) if app.ranking.problem.cost_model.machine.is_some() => {
                items.push(Item::styled(format!("CHSY {:.0}", c.chsy), bold, 5));
                items.push(Item::styled(format!("idle {}", b.idle_cores), bold, 3));
            }
            _ => items.push(Item::styled(format!("CHSY {:.0}", c.chsy), bold, 5)),
        }
    };
    match cell {
        Cell::OverBudget => items.push(
            Item::styled(
                format!(
                    "over the budget of {}",
                    app.ranking.problem.settings.max_nproc
                ),
                bold,
                9,
            )
            .or_short("over budget"),
        ),
        Cell::WorseThanBase { sypd, .. } => {
            items.push(Item::styled(format!("SYPD {sypd:.2}"), bold, 9));
            bill(&mut items);
            items.push(Item::styled("worse than base case", bold, 8).or_short("worse than base"));
        }
        Cell::Scored {
            sypd,
            coupling_cost,
            fittingness,
            ..
        } => {
            items.push(Item::styled(format!("SYPD {sypd:.2}"), bold, 9));
            bill(&mut items);
            items.push(Item::styled(
                format!("cpl {:.1}%", coupling_cost * 100.0),
                bold,
                4,
            ));
            items.push(Item::styled(format!("FN {fittingness:.3}"), bold, 9));
            if let Some(r) = app.ranking.rank_of(&nproc) {
                items.push(Item::styled(format!("#{r}"), bold, 8));
            }
        }
    }
    if app.matrix.is_marked(&nproc) {
        items.push(Item::styled("marked", bold, 7).or_short("*"));
    }
    // The cursor's cell may hold more: say which range it covers.
    let (ra, ca) = app.matrix.axes;
    let span = |spans: &[Range<usize>], i: usize| spans.iter().find(|s| s.contains(&i)).cloned();
    if let (Some(r), Some(c)) = (
        span(&g.rows, app.matrix.cursor[ra]),
        span(&g.cols, app.matrix.cursor[ca]),
    ) {
        if r.len() > 1 || c.len() > 1 {
            let names = &app.ranking.problem.components;
            items.push(Item::styled(
                format!(
                    "cell {} {} × {} {}",
                    names[ra].name,
                    range_label(&app.matrix.grid.row_nproc, &r),
                    names[ca].name,
                    range_label(&app.matrix.grid.col_nproc, &c)
                ),
                bold,
                2,
            ));
        }
    }
    items
}

/// The cursor line laid out into `width` columns (see [`cursor_items`]).
pub fn cursor_line(app: &App, g: &Geometry, width: usize) -> Line<'static> {
    fit(cursor_items(app, g), " · ", width)
}

/// The matrix legend's items: the colours (or shades) first, then the glyphs.
pub fn legend_items(app: &App) -> Vec<Item> {
    let theme = &app.ui.theme;
    let queues = !app.ranking.problem.cost_model.queues.is_empty();
    let mut items = Vec::new();
    if theme.depth == ColorDepth::Mono {
        items.push(Item::new("░▒▓█ FN", 9));
        items.push(Item::new("· worse than base", 6).or_short("· worse"));
        if queues {
            items.push(Item::new("× no queue", 8));
        }
    } else {
        let mut swatch: Vec<Span<'static>> = [0.0, 0.25, 0.5, 0.75, 1.0]
            .into_iter()
            .map(|f| {
                Span::styled(
                    " ",
                    Style::default().bg(theme.fittingness(f).unwrap_or(Color::Reset)),
                )
            })
            .collect();
        swatch.push(Span::raw(" FN"));
        items.push(Item::spans(swatch, 9));
        let worse = Style::default().bg(theme.worse().unwrap_or(Color::Reset));
        items.push(Item::spans(
            vec![Span::styled(" ", worse), Span::raw(" worse than base")],
            6,
        ));
        if queues {
            let none = Style::default().bg(theme.no_queue().unwrap_or(Color::Reset));
            items.push(Item::spans(
                vec![Span::styled(" ", none), Span::raw(" no queue")],
                8,
            ));
        }
    }
    items.push(Item::new("blank over budget", 3).or_short("blank over"));
    items.push(Item::new("1-9 top N (1+ and more)", 8).or_short("1-9 top N"));
    items.push(Item::new("* marked", 7));
    items.push(Item::new("[]/@/reverse cursor", 5).or_short("[] cursor"));
    items
}

fn legend(app: &App, width: usize) -> Line<'static> {
    fit(legend_items(app), "  ", width)
}

#[cfg(test)]
mod tests {
    use super::{rank_label, split, window};

    #[test]
    fn split_uses_every_cell_and_covers_every_candidate_once() {
        assert_eq!(split(3, 5), vec![0..1, 1..2, 2..3]);
        for (n, cells) in [(41, 5), (41, 19), (100, 7), (40, 39), (7, 7)] {
            let s = split(n, cells);
            assert_eq!(s.len(), cells.min(n), "{n} over {cells}");
            assert_eq!(s[0].start, 0);
            assert_eq!(s.last().unwrap().end, n);
            for w in s.windows(2) {
                assert_eq!(w[0].end, w[1].start, "no gap, no overlap");
            }
            let (lo, hi) = (
                s.iter().map(|r| r.len()).min().unwrap(),
                s.iter().map(|r| r.len()).max().unwrap(),
            );
            assert!(hi - lo <= 1 && lo >= 1, "even: {s:?}");
        }
        assert!(split(5, 0).is_empty());
    }

    #[test]
    fn the_region_is_one_candidate_per_cell_around_the_cursor() {
        assert_eq!(
            window(41, 5, 20),
            (18..23).map(|i| i..i + 1).collect::<Vec<_>>()
        );
        assert_eq!(window(41, 5, 0)[0], 0..1);
        assert_eq!(window(41, 5, 40).last().unwrap().clone(), 40..41);
        assert_eq!(window(3, 5, 1).len(), 3);
    }

    #[test]
    fn a_cell_with_several_ranks_shows_the_best_with_a_plus() {
        assert_eq!(rank_label(&[]), None);
        assert_eq!(rank_label(&[3]).as_deref(), Some("3"));
        assert_eq!(rank_label(&[1, 3]).as_deref(), Some("1+"));
    }
}
