//! The trade-off pane: SYPD against the cost FN weighs (CHSY, or the machine's bill after `$`)
//! for the speed/cost front, with the kept configurations
//! of the matrix slice faintly behind it, and the strip of TTS_w intervals under the slider.
//!
//! Glyphs carry the meaning, so it reads without colour: braille dots are kept configurations,
//! `•` the front, letters the configurations that win some TTS_w (the same letters as the strip
//! under the slider; upper case for the current recommendation), `@` the cursor, `*` marked,
//! `M` measured runs. The cursor is the matrix's, one configuration everywhere: walking the front
//! moves it in the matrix too, and a cursor off the front shows where it lies. Too low for a
//! readable plot (80x24 with a campaign), the pane says the same in words, one fact a line.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Line as Segment, Points};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::fit::{fit, Item};
use super::pane_block;
use crate::tui::app::App;
use crate::tui::pane::Pane;
use crate::tui::trade_off::winner_label;
use autolb::predict::{Cell, Scored};

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.trade_off;
    let cost = app.ranking.problem.cost_model.cost.header();
    // The model is named when `M` can switch it, and only where it fits.
    let mut title = format!(" Trade-off: SYPD vs {cost} ");
    let named = format!("{title}· {} ", app.ranking.model.label());
    if app.ranking.other_model.is_some() && named.chars().count() + 2 <= usize::from(area.width) {
        title = named;
    }
    let block = pane_block(&app.ui, Pane::Front, title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if t.front.is_empty() || inner.width < 16 {
        return;
    }
    // Too low for a readable plot (80x24 with a campaign): the same facts in words.
    if inner.height < SUMMARY_BELOW {
        frame.render_widget(
            Paragraph::new(summary(app, usize::from(inner.width))),
            inner,
        );
        return;
    }
    let [plot_row, x_labels, info] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    let [y_labels, plot] =
        Layout::horizontal([Constraint::Length(5), Constraint::Min(1)]).areas(plot_row);

    let points = t
        .cloud
        .iter()
        .copied()
        .chain(t.front.iter().map(|c| (c.cost(), c.sypd)))
        .chain(t.measured.iter().map(|m| (m.chsy, m.sypd)));
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let pad = |lo: f64, hi: f64| {
        let d = ((hi - lo) * 0.03).max(hi.abs() * 1e-3).max(1e-9);
        (lo - d, hi + d)
    };
    let ((x0, x1), (y0, y1)) = (pad(x0, x1), pad(y0, y1));

    let cursor = cursor_config(app);
    let faint = app.ui.theme.worse().unwrap_or(Color::Reset);
    let current = t.winner_at(app.ranking.tts_w());
    let front_xy: Vec<(f64, f64)> = t.front.iter().map(|c| (c.cost(), c.sypd)).collect();
    let canvas = Canvas::default()
        .marker(Marker::Braille)
        .x_bounds([x0, x1])
        .y_bounds([y0, y1])
        .paint(|ctx| {
            ctx.draw(&Points {
                coords: &t.cloud,
                color: faint,
            });
            for pair in front_xy.windows(2) {
                ctx.draw(&Segment {
                    x1: pair[0].0,
                    y1: pair[0].1,
                    x2: pair[1].0,
                    y2: pair[1].1,
                    color: Color::Reset,
                });
            }
            ctx.layer();
            for &(x, y) in &front_xy {
                ctx.print(x, y, "•");
            }
            for m in &t.measured {
                ctx.print(m.chsy, m.sypd, Span::styled("M", Style::new().bold()));
            }
            for c in t.front.iter().filter(|c| app.matrix.is_marked(&c.nproc)) {
                ctx.print(c.cost(), c.sypd, "*");
            }
            for (k, w) in t.winners.iter().enumerate() {
                let now = current == Some(k);
                let style = if now {
                    Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
                } else {
                    Style::new()
                };
                let label = winner_label(k, now);
                ctx.print(w.config.cost(), w.config.sypd, Span::styled(label, style));
            }
            // The cursor is the matrix's: `@` wherever it is, on the front or off it.
            if let Some(c) = &cursor {
                let style = if app.ui.focus == Pane::Front {
                    app.ui.theme.focused()
                } else {
                    Style::new().bold()
                };
                ctx.print(c.cost(), c.sypd, Span::styled("@", style));
            }
        });
    frame.render_widget(canvas, plot);

    let dim = app.ui.theme.dim();
    let y_text = vec![
        Line::styled(format!("{y1:>5.1}"), dim),
        Line::raw(""),
        Line::styled(" SYPD", dim),
    ];
    let mut y_lines = y_text;
    let below = usize::from(y_labels.height).saturating_sub(4);
    y_lines.extend(std::iter::repeat_n(Line::raw(""), below));
    y_lines.push(Line::styled(format!("{y0:>5.1}"), dim));
    frame.render_widget(Paragraph::new(y_lines), y_labels);

    let (left, right) = (format!("{x0:.0}"), format!("{x1:.0}"));
    let middle = cost;
    let room = usize::from(x_labels.width).saturating_sub(5 + left.len() + right.len());
    let gap = room.saturating_sub(middle.len());
    let x_line = format!(
        "{:5}{left}{}{middle}{}{right}",
        "",
        " ".repeat(gap / 2),
        " ".repeat(gap - gap / 2)
    );
    frame.render_widget(Paragraph::new(Line::styled(x_line, dim)), x_labels);
    frame.render_widget(
        Paragraph::new(info_line(app, usize::from(info.width))),
        info,
    );
}

/// Below this many inner lines the pane is a summary in words instead of a plot.
pub const SUMMARY_BELOW: u16 = 8;

/// The pane in words: the cursor, the front's span, who wins now, and the key that shows the
/// plot.
pub fn summary(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.trade_off;
    let cost = app.ranking.problem.cost_model.cost;
    let (lo, hi) = (t.front.first(), t.front.last());
    let mut lines = vec![info_line(app, width)];
    // One fact a line: the pane is narrow at 80 columns. The strip under the slider says
    // where the recommendation jumps.
    let one = |text: String| fit(vec![Item::new(text, 1)], " ", width);
    if let (Some(lo), Some(hi)) = (lo, hi) {
        lines.push(one(format!("front: {} points", t.front.len())));
        lines.push(one(format!("SYPD {:.1}-{:.1}", lo.sypd, hi.sypd)));
        lines.push(one(format!(
            "{} {}-{}",
            cost.header(),
            crate::tui::budget::cost_text(cost, lo.cost()),
            crate::tui::budget::cost_text(cost, hi.cost())
        )));
    }
    if let Some(k) = t.winner_at(app.ranking.tts_w()) {
        let pes = t.winners[k]
            .config
            .nproc
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("+");
        lines.push(one(format!("now {} {pes}", winner_label(k, true))));
    }
    let zoom = app.ui.keys.first(crate::tui::keys::Action::Zoom);
    lines.push(one(format!("{zoom}: the plot")));
    lines
}

/// The cursor configuration scored, unless it is over the budget (then it has no place on
/// the pane).
fn cursor_config(app: &App) -> Option<Scored> {
    match app.cursor_cell() {
        Cell::OverBudget => None,
        _ => Some(
            app.ranking
                .problem
                .score(&app.matrix.cursor, app.ranking.tts_w()),
        ),
    }
}

/// The cursor's configuration and, when it wins some TTS_w, where; laid out into `width`.
fn info_line(app: &App, width: usize) -> Line<'static> {
    let t = &app.trade_off;
    let Some(c) = cursor_config(app) else {
        return Line::raw("@ over the budget");
    };
    let pes = c
        .nproc
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join("+");
    let mut items = vec![
        Item::styled(format!("@ {pes}"), Style::new().bold(), 10),
        Item::new(format!("{:.2} SYPD", c.sypd), 9),
        Item::new(
            format!(
                "{} {}",
                crate::tui::budget::cost_text(app.ranking.problem.cost_model.cost, c.cost()),
                app.ranking.problem.cost_model.cost.header()
            ),
            7,
        ),
    ];
    if let Some(k) = t.winner_of(&c.nproc) {
        items.push(
            Item::new(
                format!(
                    "{} wins {}{:.2},{:.2}]",
                    winner_label(k, false),
                    if k == 0 { '[' } else { '(' },
                    t.winners[k].tts_w_from,
                    t.winners[k].tts_w_to
                ),
                6,
            )
            .or_short(format!("{} wins", winner_label(k, false))),
        );
    } else if !t.front.iter().any(|f| f.nproc == c.nproc) {
        items.push(Item::new("off the front", 5));
    }
    if app.matrix.is_marked(&c.nproc) {
        items.push(Item::new("*", 8));
    }
    fit(items, " ", width)
}

/// The strip of TTS_w intervals under the slider's bar of `width` cells: at each cell the letter
/// of the configuration that wins there, then where the recommendation jumps next.
pub fn strip(app: &App, width: usize) -> (String, String) {
    let t = &app.trade_off;
    let width = width.max(3);
    let cells: String = (0..width)
        .map(|i| {
            let w = i as f64 / (width - 1) as f64;
            t.winner_at(w)
                .map(crate::tui::trade_off::winner_cell)
                .unwrap_or(' ')
        })
        .collect();
    let mut jumps = Vec::new();
    if let Some(k) = t.winner_at(app.ranking.tts_w()) {
        let here = &t.winners[k];
        if k > 0 {
            jumps.push(format!("◂{:.2}", here.tts_w_from));
        }
        if here.tts_w_to < 1.0 {
            jumps.push(format!("{:.2}▸", here.tts_w_to));
        }
    }
    let next = if jumps.is_empty() {
        String::new()
    } else {
        format!(" jumps at {}", jumps.join(" "))
    };
    (cells, next)
}
