//! Drawing: pure functions of the app state. Nothing here changes the state.

pub mod curves;
pub mod detail;
pub mod help;
pub mod matrix;
pub mod slider;
pub mod status;
pub mod table;
pub mod trade_off;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::app::{App, Overlay, Pane, Shared};

/// Smallest terminal the panes fit in; below it the app says so instead of drawing.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 18;

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "terminal too small: {}x{}, need {MIN_WIDTH}x{MIN_HEIGHT} (q quits)",
            area.width, area.height
        );
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    }
    let [main, status_area, hints_area] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    // Bar, the strip of TTS_w intervals, the top-N header and rows, borders.
    let slider_height = (app.prediction.top.len().min(5) as u16) + 5;
    let [top, slider_area, table_area] = Layout::vertical([
        Constraint::Percentage(50),
        Constraint::Length(slider_height),
        Constraint::Min(4),
    ])
    .areas(main);
    let [curves_area, matrix_area] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(top);

    match app.shared {
        Shared::Curves => curves::render(app, frame, curves_area),
        Shared::TradeOff => trade_off::render(app, frame, curves_area),
    }
    matrix::render(app, frame, matrix_area);
    slider::render(app, frame, slider_area);
    table::render(app, frame, table_area);
    status::render_status(app, frame, status_area);
    status::render_hints(app, frame, hints_area);

    match &app.overlay {
        Overlay::None => {}
        Overlay::Help => help::render(app, frame, area),
        Overlay::Config(index) => detail::render_config(app, index, frame, area),
        Overlay::Row(i) => detail::render_row(app, *i, frame, area),
    }
}

/// A pane's block, its border bold when focused.
pub fn pane_block<'a>(app: &App, pane: Pane, title: impl Into<Line<'a>>) -> Block<'a> {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Plain)
        .title(title);
    if app.focus == pane {
        block
            .border_type(BorderType::Thick)
            .border_style(app.theme.focused())
    } else {
        block.border_style(Style::default())
    }
}

/// A centred popup of at most `w` x `h`, cleared.
pub fn popup(frame: &mut Frame, area: Rect, w: u16, h: u16, title: &str) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .title(title.to_string());
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    inner
}

/// `1.2`-style numbers for optional values.
pub fn opt(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "-".into(),
    }
}
