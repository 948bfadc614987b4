//! The iteration table: lb-iteration x test, filled in as runs finish; the best row marked
//! `★`. Columns are dropped from the least needed (job, step, coupling cost) when the pane is
//! narrow; the state and donor→recipient are never abbreviated. The table scrolls with the
//! selection and follows new rows only while the last row is selected.

use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::{opt, pane_block};
use crate::tui::app::{App, Pane};
use crate::tui::campaign_view::IterRow;

/// The donor→recipient header; `d→r` on the narrowest screens.
const DONOR_RECIPIENT: &str = "donor→recipient";

/// A column's cell text from the row's index and the row.
type CellText = Box<dyn Fn(usize, &IterRow) -> String>;

/// One column: header, the cell of a row, and how readily it is dropped (higher first).
struct Column {
    header: String,
    cell: CellText,
    drop_order: u8,
}

/// The columns in order; `names` are the components.
fn columns(app: &App, names: &[String]) -> Vec<Column> {
    let best = app.campaign.best;
    let rows = &app.campaign.rows;
    let labelled = rows.iter().any(|r| r.label.is_some());
    // Directories of runs outside a campaign have no decisions: the column may go first.
    let any_move = rows.iter().any(|r| r.donor.is_some());
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
                Some(&p) if p > 0 => p.to_string(),
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
            header: "FN".into(),
            cell: Box::new(|_, r| opt(r.shown_fittingness.or(r.fittingness), 3)),
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
            cell: Box::new(|_, r| r.step.map_or("-".into(), |s| s.to_string())),
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

/// The table as text cells with column widths fitted to `width` (public for tests).
pub fn fitted(app: &App, width: u16) -> (Vec<String>, Vec<Vec<String>>, Vec<u16>) {
    let view = &app.campaign;
    let names = if view.components.is_empty() {
        app.problem.names()
    } else {
        view.components.clone()
    };
    let mut cols = columns(app, &names);
    let cells = |cols: &[Column]| -> Vec<Vec<String>> {
        view.rows
            .iter()
            .enumerate()
            .map(|(i, r)| cols.iter().map(|c| (c.cell)(i, r)).collect())
            .collect()
    };
    loop {
        let rows = cells(&cols);
        let widths: Vec<u16> = cols
            .iter()
            .enumerate()
            .map(|(k, c)| {
                rows.iter()
                    .map(|r| r[k].chars().count())
                    .chain([c.header.chars().count()])
                    .max()
                    .unwrap_or(1) as u16
            })
            .collect();
        let total: u16 = widths.iter().sum::<u16>() + widths.len() as u16 - 1;
        let droppable = cols
            .iter()
            .enumerate()
            .filter(|(_, c)| c.drop_order > 0)
            .max_by_key(|(_, c)| c.drop_order)
            .map(|(k, _)| k);
        // Last resort before ratatui squeezes cells: the long header's short form (the help's
        // legend explains it), so the cells themselves are never cut.
        let long_header = cols
            .iter()
            .position(|c| c.header == DONOR_RECIPIENT)
            .filter(|_| total > width);
        match (droppable, long_header) {
            (Some(k), _) if total > width => {
                cols.remove(k);
            }
            (None, Some(k)) => cols[k].header = "d→r".into(),
            _ => {
                let header = cols.iter().map(|c| c.header.clone()).collect();
                return (header, rows, widths);
            }
        }
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let view = &app.campaign;
    let title = match &view.dir {
        Some(d) => format!(" Iterations: {} ", d.display()),
        None => " Iterations ".to_string(),
    };
    let block = pane_block(app, Pane::Table, title);
    if view.rows.is_empty() {
        let text = match &view.dir {
            Some(_) => "no runs yet: rows appear as runs write their timing output",
            None => "no campaign watched: autolb tui --campaign DIR",
        };
        frame.render_widget(Paragraph::new(text).block(block), area);
        return;
    }
    let (header, rows, widths) = fitted(app, area.width.saturating_sub(2));
    let rows = rows.into_iter().enumerate().map(|(i, cells)| {
        let row = Row::new(cells);
        if view.best == Some(i) {
            row.style(app.theme.best())
        } else if view.rows[i].failed > 0 {
            row.style(app.theme.error())
        } else {
            row
        }
    });
    let mut table = Table::new(rows, widths.into_iter().map(Constraint::Length))
        .header(Row::new(header).style(app.theme.dim()))
        .block(block);
    if app.focus == Pane::Table {
        table = table.row_highlight_style(app.theme.selected());
    }
    // The selection keeps the table's place: it follows new rows only while at the end.
    let mut state = TableState::default();
    state.select(Some(app.table_selected));
    frame.render_stateful_widget(table, area, &mut state);
}
