//! The iteration table: lb-iteration x test, filled in as runs finish; the best row highlighted.

use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::{opt, pane_block};
use crate::tui::app::{App, Pane};

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let view = &app.campaign;
    let title = match &view.dir {
        Some(d) => format!(" Iterations: {} ({}) ", d.display(), view.state),
        None => format!(" Iterations ({}) ", view.state),
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
    let names = if view.components.is_empty() {
        app.problem.names()
    } else {
        view.components.clone()
    };
    let mut header: Vec<String> = vec!["it".into(), "test".into()];
    header.extend(names.iter().cloned());
    header.extend(
        [
            "SYPD",
            "CHSY",
            "cpl %",
            "FN",
            "donor→recipient",
            "step",
            "state",
            "job",
            "",
        ]
        .map(String::from),
    );
    // Only the rows that fit are built: a campaign directory with thousands of runs would
    // otherwise format every row on every redraw (the idle app's main cost at scale). The
    // window is where ratatui would scroll to: the selection at the bottom edge when the pane
    // has focus, else the newest rows.
    let visible = usize::from(area.height.saturating_sub(3)).max(1);
    let first = if app.focus == Pane::Table {
        app.table_selected.saturating_sub(visible - 1)
    } else {
        view.rows.len().saturating_sub(visible)
    };
    let rows = view.rows.iter().enumerate().skip(first).take(visible).map(|(i, r)| {
        let mut cells: Vec<String> = vec![r.iteration.to_string(), r.test.to_string()];
        cells.extend((0..names.len()).map(|k| match r.nproc.get(k) {
            Some(&p) if p > 0 => p.to_string(),
            _ => "-".into(),
        }));
        cells.push(opt(r.sypd, 2));
        cells.push(opt(r.chsy, 0));
        cells.push(opt(r.coupling_cost.map(|c| c * 100.0), 1));
        cells.push(opt(r.fittingness, 3));
        cells.push(match (&r.donor, &r.recipient) {
            (Some(d), Some(t)) => format!("{d}→{t}"),
            _ => "-".into(),
        });
        cells.push(r.step.map_or("-".into(), |s| s.to_string()));
        cells.push(r.state.clone());
        cells.push(r.job.clone().unwrap_or_else(|| "-".into()));
        let best = view.best == Some(i);
        cells.push(if best {
            "★ best".into()
        } else {
            String::new()
        });
        let row = Row::new(cells);
        if best {
            row.style(app.theme.best())
        } else {
            row
        }
    });
    let mut widths = vec![Constraint::Length(3), Constraint::Length(4)];
    widths.extend(
        names
            .iter()
            .map(|n| Constraint::Length(n.len().max(5) as u16)),
    );
    widths.extend([6, 7, 6, 6, 16, 5, 10, 10, 6].map(Constraint::Length));
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(app.theme.dim()))
        .block(block)
        .row_highlight_style(app.theme.selected());
    let mut state = TableState::default();
    if app.focus == Pane::Table {
        state.select(app.table_selected.checked_sub(first));
    }
    frame.render_stateful_widget(table, area, &mut state);
}
