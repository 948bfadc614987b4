//! Drawing: pure functions of the app state. Nothing here changes the state.

pub mod curves;
pub mod detail;
pub mod fit;
pub mod help;
pub mod legend;
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

use super::app::App;
use super::pane::Pane;
use super::ui::{Overlay, Shared, Ui};

/// Smallest terminal the panes fit in; below it the app says so instead of drawing.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 18;

/// Draws the whole screen: the panes, then the best-so-far line, the status line and the
/// hint bar, which are always visible (also when a pane is zoomed).
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
    let [main, best_area, status_area, hints_area] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    for (pane, rect) in layout(app, main) {
        render_pane(app, frame, pane, rect);
    }
    status::render_best(app, frame, best_area);
    status::render_status(app, frame, status_area);
    status::render_hints(&app.ui, frame, hints_area);

    match &app.ui.overlay {
        Overlay::None => {}
        Overlay::Help => help::render(&app.ui, frame, area),
        Overlay::Config(index) => detail::render_config(app, index, frame, area),
        Overlay::Row(i) => detail::render_row(app, *i, frame, area),
        Overlay::Logs(title, lines) => scrolled_popup(
            frame,
            area,
            96,
            &format!(" {title} (esc closes, ↑/↓ PgUp/PgDn Home/End) "),
            lines.iter().map(|l| Line::raw(l.clone())).collect(),
            app.ui.overlay_scroll,
        ),
    }
}

/// Below this many lines for the panes, the slider is one line and the top list is hidden
/// (zoom the slider pane to see it).
pub const COMPACT_BELOW: u16 = 30;

/// Lines the iteration table gets at least: two borders, a header and 8 rows.
pub const TABLE_MIN: u16 = 11;

/// Where each pane goes. A list, so a new pane is one more entry; a zoomed pane takes it all.
pub fn layout(app: &App, main: Rect) -> Vec<(Pane, Rect)> {
    if app.ui.zoomed {
        return vec![(app.ui.focus, main)];
    }
    let compact = main.height < COMPACT_BELOW;
    // The bar and the strip of TTS_w intervals under it; then the budget slider, the top-N
    // header and rows and the borders when there is room (compact: the status line carries
    // the budget).
    let slider_h = if compact {
        2
    } else {
        (app.ranking.prediction.top.len().min(5) as u16) + 6
    };
    // As many lines as the rows need (up to 2/5 of the height), never fewer than TABLE_MIN.
    let wanted = u16::try_from(app.table.campaign.rows.len())
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let table_h = match app.table.campaign.dir {
        // Nothing watched: the pane only says how to watch.
        None => 3,
        Some(_) => TABLE_MIN.max(wanted.min(main.height * 2 / 5)),
    };
    let [top, slider_area, table_area] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(slider_h),
        Constraint::Length(table_h),
    ])
    .areas(main);
    let curves_pct = if main.width < 100 { 35 } else { 40 };
    let [curves_area, matrix_area] = Layout::horizontal([
        Constraint::Percentage(curves_pct),
        Constraint::Percentage(100 - curves_pct),
    ])
    .areas(top);
    // The curves and the trade-off share a place: the one focused last is shown.
    let shared = match app.ui.shared {
        Shared::Curves => Pane::Curves,
        Shared::TradeOff => Pane::Front,
    };
    vec![
        (shared, curves_area),
        (Pane::Matrix, matrix_area),
        (Pane::Slider, slider_area),
        (Pane::Table, table_area),
    ]
}

/// Draws one pane into its place.
fn render_pane(app: &App, frame: &mut Frame, pane: Pane, rect: Rect) {
    match pane {
        Pane::Curves => curves::render(app, frame, rect),
        Pane::Front => trade_off::render(app, frame, rect),
        Pane::Matrix => matrix::render(app, frame, rect),
        Pane::Slider => slider::render(app, frame, rect),
        Pane::Table => table::render(app, frame, rect),
    }
}

/// A pane's block, its border bold when focused.
pub fn pane_block<'a>(ui: &Ui, pane: Pane, title: impl Into<Line<'a>>) -> Block<'a> {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Plain)
        .title(title);
    if ui.focus == pane {
        block
            .border_type(BorderType::Thick)
            .border_style(ui.theme.focused())
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

/// A centred popup of `lines` at most `w` wide, as tall as the text or the screen allows,
/// scrolled by `scroll` lines (clamped to the text), with `↑`/`↓ more` on its border when
/// there is more above or below.
pub fn scrolled_popup(
    frame: &mut Frame,
    area: Rect,
    w: u16,
    title: &str,
    lines: Vec<Line>,
    scroll: u16,
) {
    let text_w = w.min(area.width).saturating_sub(2).max(1);
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    // The paragraph's own count of its wrapped lines (ratatui's rendered-line-info).
    let height = u16::try_from(paragraph.line_count(text_w)).unwrap_or(u16::MAX);
    let inner = popup(frame, area, w, height.saturating_add(2), title);
    let max_scroll = height.saturating_sub(inner.height);
    let scroll = scroll.min(max_scroll);
    frame.render_widget(paragraph.scroll((scroll, 0)), inner);
    let mark = match (scroll > 0, scroll < max_scroll) {
        (true, true) => " ↑↓ more (pgup/pgdn) ",
        (false, true) => " ↓ more (↓/pgdn) ",
        (true, false) => " ↑ more (↑/pgup) ",
        (false, false) => "",
    };
    if !mark.is_empty() && inner.width > 20 {
        let len = mark.chars().count() as u16;
        let x = inner.right().saturating_sub(len);
        frame
            .buffer_mut()
            .set_string(x, inner.bottom(), mark, Style::default());
    }
}

/// `1.2`-style numbers for optional values.
pub fn opt(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "-".into(),
    }
}
