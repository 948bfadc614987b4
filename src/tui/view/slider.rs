//! The TTS_w slider and the top-N list it drives.

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table};
use ratatui::Frame;

use super::pane_block;
use crate::tui::app::{App, Pane};
use crate::tui::keys::Action;

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
    let block = pane_block(app, Pane::Slider, " TTS_w and top N ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let keys = &app.keys;
    let mut help = format!(
        "  {}/{} ±0.05  {}/{} ±0.01",
        keys.first(Action::TtsDown),
        keys.first(Action::TtsUp),
        keys.first(Action::TtsFineDown),
        keys.first(Action::TtsFineUp)
    );
    let recommended = app
        .recommended()
        .map(|c| format!("   recommended: {}", app.describe(&c.nproc)))
        .unwrap_or_default();
    let fixed = 11 + 5 + 6 + recommended.chars().count();
    let room = usize::from(inner.width).saturating_sub(fixed);
    if room < help.chars().count() + 10 {
        help.clear();
    }
    let width = room.saturating_sub(help.chars().count()).clamp(3, 50);
    let line = Line::from(vec![
        Span::styled(
            format!("TTS_w {:.2} ", app.tts_w()),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw("cost "),
        Span::raw(bar(app.tts_w(), width)),
        Span::raw(" speed"),
        Span::styled(help, app.theme.dim()),
        Span::styled(recommended, Style::default().add_modifier(Modifier::BOLD)),
    ]);
    frame.render_widget(Paragraph::new(line), Rect { height: 1, ..inner });
    if inner.height < 2 {
        return;
    }
    let names = app.problem.names();
    let mut header: Vec<String> = vec!["#".into()];
    header.extend(names.iter().cloned());
    header.extend(["PEs", "SYPD", "CHSY", "cpl %", "FN", ""].map(String::from));
    let rows = app.prediction.top.iter().enumerate().map(|(i, c)| {
        let mut cells: Vec<String> = vec![(i + 1).to_string()];
        cells.extend(c.nproc.iter().map(u32::to_string));
        cells.push(c.total_nproc.to_string());
        cells.push(format!("{:.2}", c.sypd));
        cells.push(format!("{:.0}", c.chsy));
        cells.push(format!("{:.1}", c.coupling_cost * 100.0));
        cells.push(format!("{:.3}", c.fittingness));
        cells.push(if app.is_marked(&c.nproc) {
            "*".into()
        } else {
            String::new()
        });
        let row = Row::new(cells);
        if app.focus == Pane::Slider && i == app.top_selected {
            row.style(app.theme.selected())
        } else {
            row
        }
    });
    let mut widths = vec![Constraint::Length(3)];
    widths.extend(
        names
            .iter()
            .map(|n| Constraint::Length(n.len().max(5) as u16)),
    );
    widths.extend([6, 7, 7, 6, 6, 2].map(Constraint::Length));
    let table = Table::new(rows, widths).header(Row::new(header).style(app.theme.dim()));
    let rest = Rect {
        y: inner.y + 1,
        height: inner.height - 1,
        ..inner
    };
    frame.render_widget(table, rest);
}

/// The slider on one line, without a border (small terminals): the focus shows as `▶` and a
/// reversed label; the top list is one zoom (`z`) away.
fn render_compact(app: &App, frame: &mut Frame, area: Rect) {
    let focused = app.focus == Pane::Slider;
    let label_style = if focused {
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
    } else {
        Style::default().add_modifier(Modifier::BOLD)
    };
    let recommended = app
        .recommended()
        .map(|c| {
            format!(
                "  #1 of top {}: {}",
                app.prediction.top.len(),
                app.describe(&c.nproc)
            )
        })
        .unwrap_or_default();
    let label = format!(
        "{}TTS_w {:.2} ",
        if focused { "▶" } else { " " },
        app.tts_w()
    );
    let fixed = label.chars().count() + 5 + 6 + recommended.chars().count();
    let width = usize::from(area.width).saturating_sub(fixed).clamp(3, 40);
    let line = Line::from(vec![
        Span::styled(label, label_style),
        Span::raw("cost "),
        Span::raw(bar(app.tts_w(), width)),
        Span::raw(" speed"),
        Span::styled(recommended, app.theme.dim()),
    ]);
    frame.render_widget(Paragraph::new(line), area);
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
