//! The TTS_w slider, the budget slider, and the top-N list they drive.

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table};
use ratatui::Frame;

use super::pane_block;
use crate::tui::app::App;
use crate::tui::keys::Action;
use crate::tui::pane::Pane;
use crate::tui::ranking::Ranking;

/// `cost ━━━━━●━━━━ speed` at `width` cells for the bar.
pub fn bar(tts_w: f64, width: usize) -> String {
    let width = width.max(3);
    let pos = (tts_w.clamp(0.0, 1.0) * (width - 1) as f64).round() as usize;
    (0..width)
        .map(|i| if i == pos { '●' } else { '━' })
        .collect()
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    if area.height < 3 {
        render_compact(app, frame, area);
        return;
    }
    let block = pane_block(&app.ui, Pane::Slider, " TTS_w, budget and top N ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let keys = &app.ui.keys;
    let mut help = format!(
        "  {}/{} ±0.05  {}/{} ±0.01",
        keys.first(Action::TtsDown),
        keys.first(Action::TtsUp),
        keys.first(Action::TtsFineDown),
        keys.first(Action::TtsFineUp)
    );
    let recommended = app
        .ranking
        .recommended()
        .map(|c| match against_answer(app, c) {
            Some(against) => format!(
                "   predicted #1: {} ({against})",
                app.ranking.describe_scored(c)
            ),
            // With node groups the recommendation is a node packing (the best line's): this
            // is the PE counts' #1.
            None if app.ranking.groups.is_some() => {
                format!("   #1 by PE count: {}", app.ranking.describe_scored(c))
            }
            None => format!("   recommended: {}", app.ranking.describe_scored(c)),
        })
        .unwrap_or_default();
    let fixed = 11 + 5 + 6 + recommended.chars().count();
    let room = usize::from(inner.width).saturating_sub(fixed);
    if room < help.chars().count() + 10 {
        help.clear();
    }
    let width = room.saturating_sub(help.chars().count()).clamp(3, 50);
    let line = Line::from(vec![
        Span::styled(
            format!("TTS_w {:.2} ", app.ranking.tts_w()),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw("cost "),
        Span::raw(bar(app.ranking.tts_w(), width)),
        Span::raw(" speed"),
        Span::styled(help, app.ui.theme.dim()),
        Span::styled(recommended, Style::default().add_modifier(Modifier::BOLD)),
    ]);
    frame.render_widget(Paragraph::new(line), Rect { height: 1, ..inner });
    if inner.height < 2 {
        return;
    }
    // The TTS_w intervals, cell for cell under the bar (which starts after "TTS_w 0.50 cost ").
    let (cells, jumps) = super::trade_off::strip(app, width);
    let strip = Line::from(vec![
        Span::styled(format!("{:<16}", "   winners"), app.ui.theme.dim()),
        Span::raw(cells),
        Span::styled(jumps, app.ui.theme.dim()),
    ]);
    frame.render_widget(
        Paragraph::new(strip),
        Rect {
            y: inner.y + 1,
            height: 1,
            ..inner
        },
    );
    if inner.height < 3 {
        return;
    }
    frame.render_widget(
        Paragraph::new(budget_line(app, usize::from(inner.width))),
        Rect {
            y: inner.y + 2,
            height: 1,
            ..inner
        },
    );
    if inner.height < 4 {
        return;
    }
    let names = app.ranking.problem.names();
    let billed = app.ranking.problem.cost_model.machine.is_some();
    let mut header: Vec<String> = vec!["#".into()];
    header.extend(names.iter().cloned());
    header.extend(["PEs", "SYPD", cost_header(&app.ranking), "cpl %", "FN"].map(String::from));
    if billed {
        header.push("idle".into());
    }
    header.push(String::new());
    let threaded = app.ranking.is_threaded();
    let rows = app.ranking.prediction.top.iter().enumerate().map(|(i, c)| {
        let mut cells: Vec<String> = vec![(i + 1).to_string()];
        // A hybrid component's cell is its ranks x threads per rank; PEs counts cores.
        let threads = app.ranking.threads_of(c);
        cells.extend(c.nproc.iter().zip(&threads).map(|(p, &t)| match t {
            1 => p.to_string(),
            t => format!("{}x{t}", p / t),
        }));
        cells.push(c.total_nproc.to_string());
        cells.push(format!("{:.2}", c.sypd));
        cells.push(crate::tui::budget::cost_text(
            app.ranking.problem.cost_model.cost,
            c.cost(),
        ));
        cells.push(format!("{:.1}", c.coupling_cost * 100.0));
        cells.push(format!("{:.3}", c.fittingness));
        if billed {
            cells.push(
                c.billing
                    .as_ref()
                    .map_or(String::new(), |b| b.idle_cores.to_string()),
            );
        }
        cells.push(if app.matrix.is_marked(&c.nproc) {
            "*".into()
        } else {
            String::new()
        });
        let row = Row::new(cells);
        if app.ui.focus == Pane::Slider && i == app.ranking.top_selected {
            row.style(app.ui.theme.selected())
        } else {
            row
        }
    });
    let mut widths = vec![Constraint::Length(3)];
    widths.extend(
        names
            .iter()
            .map(|n| Constraint::Length(n.len().max(if threaded { 7 } else { 5 }) as u16)),
    );
    widths.extend([6, 7, 7, 6, 6].map(Constraint::Length));
    if billed {
        widths.push(Constraint::Length(5));
    }
    widths.push(Constraint::Length(2));
    let table = Table::new(rows, widths).header(Row::new(header).style(app.ui.theme.dim()));
    let rest = Rect {
        y: inner.y + 3,
        height: inner.height - 3,
        ..inner
    };
    frame.render_widget(table, rest);
}

/// Beside a watched campaign's answer, how a predicted configuration compares with it, as
/// `campaign status` compares them ([`autolb::campaign::Answer::compare`]): `standalone model,
/// pred. -3.2 % SYPD vs best, not measured`; `None` without an answer.
fn against_answer(app: &App, c: &autolb::predict::Scored) -> Option<String> {
    let view = &app.table.campaign;
    let answer = view.answer.as_ref()?;
    let measured = view
        .measured
        .iter()
        .find(|(n, _)| *n == c.nproc)
        .map(|(_, m)| *m);
    let against = answer.compare(&c.nproc, c.sypd, c.chsy, measured);
    Some(format!(
        "{} model, {}",
        app.ranking.model,
        against.short_text()
    ))
}

/// The cost column's header: what FN weighs (CHSY, NHSY, kWh/SY).
pub fn cost_header(ranking: &Ranking) -> &'static str {
    ranking.problem.cost_model.cost.header()
}

/// Where the budget knob sits between the base case's PEs and the largest useful budget.
pub fn budget_fraction(ranking: &Ranking) -> f64 {
    let (low, high) = crate::tui::budget::budget_range(&ranking.problem, &ranking.inputs);
    let b = ranking.problem.settings.max_nproc;
    if high <= low {
        return 1.0;
    }
    (f64::from(b.saturating_sub(low)) / f64::from(high - low)).clamp(0.0, 1.0)
}

/// `budget 672 PEs ━━━●━━━ {/} ±48 · 27612 feasible, 18765 kept · cost node-hours $`: the
/// budget slider with the counts `autolb predict` prints for the same budget.
pub fn budget_line(app: &App, width: usize) -> Line<'static> {
    let p = &app.ranking.problem;
    let keys = &app.ui.keys;
    let label = format!("budget {} ", app.ranking.budget_text());
    let step = crate::tui::budget::budget_step(p);
    let unit = if p.cost_model.machine.is_some() {
        " (a node)"
    } else {
        ""
    };
    let moves = format!(
        " {}/{} ±{step}{unit}",
        keys.first(Action::BudgetDown),
        keys.first(Action::BudgetUp)
    );
    let counts = format!(" · {} feasible, {} kept", p.configurations, p.considered);
    let cost = if p.cost_model.available_costs().len() > 1 {
        format!(
            " · cost {} {}",
            p.cost_model.cost.label(),
            keys.first(Action::CycleCost)
        )
    } else {
        String::new()
    };
    let fixed = label.chars().count() + moves.chars().count() + counts.chars().count();
    let bar_w = width
        .saturating_sub(fixed + cost.chars().count())
        .clamp(3, 30);
    Line::from(vec![
        Span::styled(label, Style::default().add_modifier(Modifier::BOLD)),
        Span::raw(bar(budget_fraction(&app.ranking), bar_w)),
        Span::styled(moves, app.ui.theme.dim()),
        Span::raw(counts),
        Span::raw(cost),
    ])
}

/// The slider on one line, without a border (small terminals): the focus shows as `▶` and a
/// reversed label; the top list is one zoom (`z`) away.
fn render_compact(app: &App, frame: &mut Frame, area: Rect) {
    let focused = app.ui.focus == Pane::Slider;
    let label_style = if focused {
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
    } else {
        Style::default().add_modifier(Modifier::BOLD)
    };
    let recommended = app
        .ranking
        .recommended()
        .map(|c| match against_answer(app, c) {
            // Beside the campaign's answer: a prediction, by which model, against the answer.
            Some(against) => format!(
                "  predicted #1 of top {}: {} ({against})",
                app.ranking.prediction.top.len(),
                app.ranking.describe_scored(c)
            ),
            None => format!(
                "  #1 of top {}{}: {}",
                app.ranking.prediction.top.len(),
                if app.ranking.groups.is_some() {
                    " PE counts"
                } else {
                    ""
                },
                app.ranking.describe_scored(c)
            ),
        })
        .unwrap_or_default();
    let label = format!(
        "{}TTS_w {:.2} ",
        if focused { "▶" } else { " " },
        app.ranking.tts_w()
    );
    // The bar starts after the label and "cost "; the strip below lines up with it.
    let bar_at = label.chars().count() + 5;
    let fixed = bar_at + 6 + recommended.chars().count();
    let width = usize::from(area.width).saturating_sub(fixed).clamp(3, 40);
    let line = Line::from(vec![
        Span::styled(label, label_style),
        Span::raw("cost "),
        Span::raw(bar(app.ranking.tts_w(), width)),
        Span::raw(" speed"),
        Span::styled(recommended, app.ui.theme.dim()),
    ]);
    frame.render_widget(Paragraph::new(line), Rect { height: 1, ..area });
    if area.height >= 2 {
        let (cells, jumps) = super::trade_off::strip(app, width);
        let strip = Line::from(vec![
            Span::styled(format!("{:<bar_at$}", " winners"), app.ui.theme.dim()),
            Span::raw(cells),
            Span::styled(jumps, app.ui.theme.dim()),
        ]);
        frame.render_widget(
            Paragraph::new(strip),
            Rect {
                y: area.y + 1,
                height: 1,
                ..area
            },
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bar_puts_the_knob_at_the_value() {
        assert_eq!(super::bar(0.0, 5), "●━━━━");
        assert_eq!(super::bar(0.5, 5), "━━●━━");
        assert_eq!(super::bar(1.0, 5), "━━━━●");
    }
}
