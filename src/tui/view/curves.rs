//! The curves pane: SYPD and CHSY against PEs per component; measured points marked, the
//! interpolation drawn as a line, the cursor configuration's PEs as vertical lines. ratatui has
//! no log axis, so the log scale plots log2(PEs) and writes PE labels.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::Span;
use ratatui::widgets::{Axis, Chart, Dataset, GraphType};
use ratatui::Frame;

use super::pane_block;
use crate::tui::app::{App, Pane};

/// Which quantity a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    Sypd,
    Chsy,
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let [sypd_area, chsy_area] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    chart(app, frame, sypd_area, Quantity::Sypd);
    chart(app, frame, chsy_area, Quantity::Chsy);
}

fn chart(app: &App, frame: &mut Frame, area: Rect, q: Quantity) {
    let scale = if app.log_scale { "log2 PEs" } else { "PEs" };
    let title = match q {
        Quantity::Sypd => format!(" Curves: SYPD vs {scale} "),
        Quantity::Chsy => format!(" CHSY vs {scale} "),
    };
    let block = pane_block(app, Pane::Curves, title);
    let x = |p: f64| if app.log_scale { p.max(1.0).log2() } else { p };
    let y = |p: f64, sypd: f64| match q {
        Quantity::Sypd => sypd,
        Quantity::Chsy => 24.0 * p / sypd,
    };
    // Points live here, before the datasets that borrow them.
    let lines: Vec<Vec<(f64, f64)>> = app
        .curves
        .iter()
        .map(|c| c.line.iter().map(|&(p, s)| (x(p), y(p, s))).collect())
        .collect();
    let measured: Vec<Vec<(f64, f64)>> = app
        .curves
        .iter()
        .map(|c| c.measured.iter().map(|&(p, s)| (x(p), y(p, s))).collect())
        .collect();
    let all = lines.iter().chain(&measured).flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(a, b) in all {
        if a.is_finite() && b.is_finite() {
            x0 = x0.min(a);
            x1 = x1.max(a);
            y0 = y0.min(b);
            y1 = y1.max(b);
        }
    }
    if x0 > x1 {
        frame.render_widget(block, area);
        return;
    }
    let y0 = (y0 * 0.95).max(0.0);
    let y1 = y1 * 1.05;
    let cursor = app.cursor_nproc();
    let markers: Vec<[(f64, f64); 2]> = cursor
        .iter()
        .map(|&p| [(x(f64::from(p)), y0), (x(f64::from(p)), y1)])
        .collect();

    let mut datasets = Vec::new();
    for (i, c) in app.curves.iter().enumerate() {
        let style = app.theme.fg(app.theme.component(i));
        datasets.push(
            Dataset::default()
                .name(c.name.clone())
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(style)
                .data(&lines[i]),
        );
        datasets.push(
            Dataset::default()
                .marker(Marker::Block)
                .graph_type(GraphType::Scatter)
                .style(style.add_modifier(Modifier::BOLD))
                .data(&measured[i]),
        );
        if let Some(m) = markers.get(i) {
            datasets.push(
                Dataset::default()
                    .marker(Marker::Dot)
                    .graph_type(GraphType::Line)
                    .style(style)
                    .data(m),
            );
        }
    }
    let pe_label = |v: f64| {
        let pes = if app.log_scale { v.exp2() } else { v };
        Span::raw(format!("{pes:.0}"))
    };
    let y_label = |v: f64| match q {
        Quantity::Sypd => Span::raw(format!("{v:.1}")),
        Quantity::Chsy => Span::raw(format!("{v:.0}")),
    };
    let chart = Chart::new(datasets)
        .block(block)
        .x_axis(
            Axis::default()
                .bounds([x0, x1])
                .style(Style::default())
                .labels(vec![pe_label(x0), pe_label((x0 + x1) / 2.0), pe_label(x1)]),
        )
        .y_axis(Axis::default().bounds([y0, y1]).labels(vec![
            y_label(y0),
            y_label((y0 + y1) / 2.0),
            y_label(y1),
        ]))
        .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)));
    frame.render_widget(chart, area);
}
