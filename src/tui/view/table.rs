//! The iteration table: lb-iteration x test, filled in as runs finish; the best row marked
//! `★`. Columns are dropped from the least needed (job, step, coupling cost) when the pane is
//! narrow; the state and donor→recipient are never abbreviated. The table scrolls with the
//! selection and follows new rows only while the last row is selected.

use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Paragraph, Row, Table, TableState};
use ratatui::Frame;

use autolb::campaign::status::progress::duration_text;
use ratatui::text::Line;

use super::fit::{fit as fit_line, Item};

use super::{opt, pane_block};
use crate::tui::app::App;
use crate::tui::calibration::error_pct;
use crate::tui::campaign_view::IterRow;
use crate::tui::pane::Pane;

/// The donor→recipient header; `d→r` on the narrowest screens.
const DONOR_RECIPIENT: &str = "donor→recipient";

/// A column's cell text from the row's index and the row.
type CellText<'a> = Box<dyn Fn(usize, &IterRow) -> String + 'a>;

/// One column: header, the cell of a row, and how readily it is dropped (higher first).
struct Column<'a> {
    header: String,
    cell: CellText<'a>,
    drop_order: u8,
}

/// The columns in order; `names` are the components.
fn columns<'a>(app: &'a App, names: &[String]) -> Vec<Column<'a>> {
    let best = app.table.campaign.best;
    let rows = &app.table.campaign.rows;
    let labelled = rows.iter().any(|r| r.label.is_some());
    // Directories of runs outside a campaign have no decisions: the column may go first.
    let any_move = rows.iter().any(|r| r.donor.is_some());
    // The active model's error on each measured row, in per cent (a narrow column, dropped
    // first on a narrow pane).
    let model = app.ranking.active_model();
    let interp = app.ranking.problem.settings.interp;
    let same_order =
        app.table.campaign.components.is_empty() || *names == app.ranking.problem.names();
    // Computed per shown cell, not per row of the table: it estimates the row's SYPD.
    let error = move |r: &IterRow| -> Option<f64> {
        let measured = r.sypd?;
        same_order
            .then(|| error_pct(model, &app.ranking.inputs, interp, &r.nproc, measured))
            .flatten()
    };
    let mut cols = vec![
        Column {
            header: " ".into(),
            cell: Box::new(move |i, _| if best == Some(i) { "★" } else { " " }.into()),
            drop_order: 0,
        },
        Column {
            header: if labelled { "run" } else { "it/t" }.into(),
            cell: Box::new(|_, r| {
                r.label
                    .clone()
                    .unwrap_or_else(|| format!("{}/{}", r.iteration, r.test))
            }),
            drop_order: 0,
        },
    ];
    for (k, name) in names.iter().enumerate() {
        cols.push(Column {
            header: name.clone(),
            cell: Box::new(move |_, r| match r.nproc.get(k) {
                Some(&p) if p > 0 => app.table.campaign.pes_text(k, p),
                _ => "-".into(),
            }),
            drop_order: 0,
        });
    }
    cols.extend([
        Column {
            header: "SYPD".into(),
            cell: Box::new(|_, r| opt(r.sypd, 2)),
            drop_order: 0,
        },
        Column {
            header: "CHSY".into(),
            cell: Box::new(|_, r| opt(r.chsy, 0)),
            drop_order: 0,
        },
        Column {
            header: "cpl%".into(),
            cell: Box::new(|_, r| opt(r.coupling_cost.map(|c| c * 100.0), 1)),
            drop_order: 2,
        },
        Column {
            header: "err%".into(),
            cell: Box::new(move |_, r| match error(r) {
                Some(e) => format!("{e:+.1}"),
                None => "-".into(),
            }),
            drop_order: 6,
        },
        Column {
            header: "FN".into(),
            cell: Box::new(|_, r| opt(r.fittingness, 3)),
            drop_order: 0,
        },
        Column {
            header: DONOR_RECIPIENT.into(),
            cell: Box::new(|_, r| match (&r.donor, &r.recipient) {
                (Some(d), Some(t)) => format!("{d}→{t}"),
                _ => "-".into(),
            }),
            drop_order: if any_move { 0 } else { 5 },
        },
        Column {
            header: "step".into(),
            // A guided test has no step (0): a dash, like a row without one.
            cell: Box::new(|_, r| {
                r.step
                    .filter(|&s| s > 0)
                    .map_or("-".into(), |s| s.to_string())
            }),
            drop_order: 3,
        },
        Column {
            header: "state".into(),
            cell: Box::new(|_, r| r.state.clone()),
            drop_order: 0,
        },
        Column {
            header: "job".into(),
            cell: Box::new(|_, r| r.job.clone().unwrap_or_else(|| "-".into())),
            drop_order: 4,
        },
    ]);
    cols
}

/// Which columns the table shows, with their headers and widths.
///
/// Fitted over every row, so columns keep their width while the table scrolls; but only the
/// shown rows are formatted per frame. Formatting every row of a 3,000-run table on every
/// redraw (the 1 s tick included) made an idle app watching it cost 2 % of a core; the fit is
/// kept until a cell's input changes (see [`fingerprint`]).
#[derive(Debug, Clone, PartialEq)]
struct Fit {
    /// Indices into [`columns`] of the columns shown, in order.
    keep: Vec<usize>,
    header: Vec<String>,
    widths: Vec<u16>,
}

/// Fits the columns to `width`: drops columns from the least needed while the table is too
/// wide, then shortens the donor→recipient header, so the cells themselves are never cut.
fn fit(cols: &[Column], rows: &[IterRow], width: u16) -> Fit {
    let chars = |s: &str| s.chars().count();
    // A column's width does not depend on which others are kept: measure each cell once.
    let cell_widths: Vec<usize> = cols
        .iter()
        .map(|c| {
            rows.iter()
                .enumerate()
                .map(|(i, r)| chars(&(c.cell)(i, r)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut header: Vec<String> = cols.iter().map(|c| c.header.clone()).collect();
    let mut keep: Vec<usize> = (0..cols.len()).collect();
    loop {
        let widths: Vec<u16> = keep
            .iter()
            .map(|&k| cell_widths[k].max(chars(&header[k])).max(1) as u16)
            .collect();
        let total = widths.iter().map(|&w| u32::from(w)).sum::<u32>() + widths.len() as u32 - 1;
        let too_wide = total > u32::from(width);
        let droppable = keep
            .iter()
            .enumerate()
            .filter(|(_, &k)| cols[k].drop_order > 0)
            .max_by_key(|(_, &k)| cols[k].drop_order)
            .map(|(at, _)| at);
        // Last resort before ratatui squeezes cells: the long header's short form (the help's
        // legend explains it), so the cells themselves are never cut.
        let long_header = keep
            .iter()
            .copied()
            .find(|&k| header[k] == DONOR_RECIPIENT)
            .filter(|_| too_wide);
        match (droppable, long_header) {
            (Some(at), _) if too_wide => {
                keep.remove(at);
            }
            (None, Some(k)) => header[k] = "d→r".into(),
            _ => {
                return Fit {
                    header: keep.iter().map(|&k| header[k].clone()).collect(),
                    keep,
                    widths,
                }
            }
        }
    }
}

/// A hash of everything a cell's text depends on (every row field a [`columns`] cell reads,
/// the components, the best row, the model and curves behind `err%`) and the width: the
/// [`Fit`] is recomputed only when it changes. Far cheaper than formatting every cell.
fn fingerprint(app: &App, names: &[String], width: u16) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = Fnv::default();
    width.hash(&mut h);
    names.hash(&mut h);
    app.table.campaign.best.hash(&mut h);
    app.ranking.problem.names().hash(&mut h);
    format!(
        "{:?} {:?} {:?}",
        app.ranking.active_model(),
        app.ranking.problem.settings.interp,
        app.ranking.inputs
    )
    .hash(&mut h);
    // Field by field rather than through tuples of options: this runs for every row on each
    // redraw, in debug builds too.
    for r in &app.table.campaign.rows {
        h.write_u64(u64::from(r.iteration) << 32 | u64::from(r.test));
        h.write_usize(r.nproc.len());
        for &p in &r.nproc {
            h.write_u32(p);
        }
        for v in [r.sypd, r.chsy, r.coupling_cost, r.fittingness] {
            h.write_u64(u64::from(v.is_some()));
            h.write_u64(v.map_or(0, f64::to_bits));
        }
        h.write_u64(r.step.map_or(u64::MAX, u64::from));
        for s in [&r.label, &r.donor, &r.recipient, &r.job] {
            h.write_usize(s.as_ref().map_or(usize::MAX, String::len));
            h.write(s.as_deref().unwrap_or("").as_bytes());
        }
        h.write_usize(r.state.len());
        h.write(r.state.as_bytes());
    }
    h.finish()
}

/// FNV-1a over bytes and whole integers: a cache key, not a defence against chosen inputs,
/// and several times cheaper than the standard SipHash in a debug build, where the
/// fingerprint of every row runs on each redraw.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(u64::from(v));
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x0000_0100_0000_01b3);
    }
}

thread_local! {
    /// The last fit and the fingerprint it was made for (the view stays a function of the
    /// state: this only saves recomputing it).
    static LAST_FIT: std::cell::RefCell<Option<(u64, Fit)>> = const { std::cell::RefCell::new(None) };
}

/// The columns to show for `app` at `width`, from the last fit when nothing it depends on
/// changed.
fn fitted_columns<'a>(app: &'a App, width: u16) -> (Vec<Column<'a>>, Fit) {
    let view = &app.table.campaign;
    let names = if view.components.is_empty() {
        app.ranking.problem.names()
    } else {
        view.components.clone()
    };
    let cols = columns(app, &names);
    let key = fingerprint(app, &names, width);
    let fit = LAST_FIT.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((k, fit)) if *k == key => fit.clone(),
            _ => {
                let fit = fit(&cols, &view.rows, width);
                *last = Some((key, fit.clone()));
                fit
            }
        }
    });
    (cols, fit)
}

/// The cells of rows `indices` in the fitted columns.
fn cells(
    cols: &[Column],
    fit: &Fit,
    rows: &[IterRow],
    indices: impl Iterator<Item = usize>,
) -> Vec<Vec<String>> {
    indices
        .map(|i| {
            fit.keep
                .iter()
                .map(|&k| (cols[k].cell)(i, &rows[i]))
                .collect()
        })
        .collect()
}

/// The table as text cells with column widths fitted to `width` (for tests).
#[cfg(test)]
pub fn fitted(app: &App, width: u16) -> (Vec<String>, Vec<Vec<String>>, Vec<u16>) {
    let (cols, fit) = fitted_columns(app, width);
    let rows = cells(
        &cols,
        &fit,
        &app.table.campaign.rows,
        0..app.table.campaign.rows.len(),
    );
    (fit.header, rows, fit.widths)
}

/// The rows ratatui would show with the selection at `selected`, starting from the top (it
/// scrolls just far enough for the selected row to be the last shown): only these are
/// formatted.
fn shown_rows(len: usize, selected: usize, height: usize) -> std::ops::Range<usize> {
    if len == 0 {
        return 0..0;
    }
    let selected = selected.min(len - 1);
    let start = (selected + 1).saturating_sub(height);
    start..(start + height).min(len)
}

/// The progress line on the table's lower border: the iteration of at most N, the runs, the
/// time since the first run started, the iteration's ETA and the best FN per iteration, the
/// least needed giving way first (see `autolb::campaign::status::progress`).
pub fn progress_line(app: &App, width: usize) -> Option<Line<'static>> {
    let p = app.table.campaign.progress.as_ref()?;
    let now = app
        .ui
        .now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut items = Vec::new();
    if let Some(text) = p.iteration_text() {
        let short = format!("it {}", p.iteration.unwrap_or(0));
        items.push(Item::new(text, 10).or_short_early(short, 8));
    }
    let counts = p.counts();
    items.push(Item::new(counts.text(), 9).or_short_early(counts.short_text(), 5));
    if let Some(e) = p.elapsed_s(now) {
        items
            .push(Item::new(format!("{} elapsed", duration_text(e)), 6).or_short(duration_text(e)));
    }
    // Without a driver nothing finishes the iteration: no ETA rather than a wrong one.
    if let Some(eta) = p
        .iteration_eta_s()
        .filter(|_| !super::status::unattended(app))
    {
        items.push(
            Item::new(format!("iteration ETA {}", duration_text(eta)), 7)
                .or_short(format!("ETA {}", duration_text(eta))),
        );
    }
    if p.best_fn_by_iteration.len() > 1 {
        items.push(Item::new(format!("best FN {}", p.sparkline()), 4));
    }
    Some(fit_line(items, " · ", width))
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let view = &app.table.campaign;
    let mut title = match &view.dir {
        Some(d) => format!(" Iterations: {} ", d.display()),
        None => " Iterations ".to_string(),
    };
    if let Some(listing) = app.table.listing() {
        title.push_str(&format!("· {listing} "));
    }
    let block = pane_block(&app.ui, Pane::Table, title);
    if view.rows.is_empty() {
        let text = match &view.dir {
            Some(_) => "no runs yet: rows appear as runs write their timing output",
            None => "no campaign watched: autolb tui --campaign DIR",
        };
        frame.render_widget(Paragraph::new(text).block(block), area);
        return;
    }
    if app.table.visible.is_empty() {
        let text = format!(
            "no row matches the filter {:?}: / to change it (an empty query lists every row)",
            app.table.filter.as_ref().map_or("", |f| f.text.as_str())
        );
        frame.render_widget(
            Paragraph::new(text)
                .wrap(ratatui::widgets::Wrap { trim: true })
                .block(block),
            area,
        );
        return;
    }
    let (cols, fit) = fitted_columns(app, area.width.saturating_sub(2));
    // Below the borders and the header line.
    let height = block.inner(area).height.saturating_sub(1) as usize;
    let visible = &app.table.visible;
    let shown = shown_rows(visible.len(), app.table.selected, height);
    let first = shown.start;
    let rows = cells(
        &cols,
        &fit,
        &view.rows,
        visible[shown.clone()].iter().copied(),
    );
    let rows = rows.into_iter().enumerate().map(|(at, cells)| {
        let i = visible[first + at];
        let row = Row::new(cells);
        if view.best == Some(i) {
            row.style(app.ui.theme.best())
        } else if view.rows[i].failed > 0 {
            row.style(app.ui.theme.error())
        } else {
            row
        }
    });
    let block = match progress_line(app, usize::from(area.width.saturating_sub(4))) {
        Some(line) => block.title_bottom(line),
        None => block,
    };
    let mut table = Table::new(rows, fit.widths.into_iter().map(Constraint::Length))
        .header(Row::new(fit.header).style(app.ui.theme.dim()))
        .block(block);
    if app.ui.focus == Pane::Table {
        table = table.row_highlight_style(app.ui.theme.selected());
    }
    // The selection keeps the table's place: it follows new rows only while at the end.
    let mut state = TableState::default();
    state.select(Some(app.table.selected.saturating_sub(first)));
    frame.render_stateful_widget(table, area, &mut state);
}

#[cfg(test)]
mod tests {
    use super::shown_rows;
    use ratatui::backend::TestBackend;
    use ratatui::layout::Constraint;
    use ratatui::widgets::{Row, Table, TableState};
    use ratatui::Terminal;

    /// Only the shown rows are formatted, so the window must be the one ratatui itself scrolls
    /// to when given every row with the selection and no offset.
    #[test]
    fn the_formatted_window_is_the_one_ratatui_shows() {
        for len in [0usize, 1, 5, 12, 13, 40] {
            for height in [0u16, 1, 3, 12] {
                for selected in 0..len.max(1) + 2 {
                    let mut terminal = Terminal::new(TestBackend::new(10, height + 1)).unwrap();
                    let rows = (0..len).map(|i| Row::new([i.to_string()]));
                    let table = Table::new(rows, [Constraint::Length(4)]).header(Row::new(["h"]));
                    let mut state = TableState::default();
                    state.select(Some(selected));
                    terminal
                        .draw(|f| f.render_stateful_widget(table, f.area(), &mut state))
                        .unwrap();
                    let shown = shown_rows(len, selected, usize::from(height));
                    if len > 0 && height > 0 {
                        assert_eq!(
                            shown.start,
                            state.offset(),
                            "len {len} height {height} selected {selected}"
                        );
                    }
                    assert_eq!(
                        shown.len(),
                        len.min(usize::from(height)),
                        "len {len} height {height} selected {selected}"
                    );
                }
            }
        }
    }
}
