//! The help overlay: every key from the key table, and how to read the screen.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::popup;
use crate::tui::app::App;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let rows = app.keys.help_rows();
    let inner = popup(
        frame,
        area,
        92,
        rows.len() as u16 + 17,
        " Help (? or esc closes) ",
    );
    let key_w = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(4)
        + 2;
    let mut lines: Vec<Line> = rows
        .into_iter()
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(
                    format!("{k:>key_w$}  "),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::raw(d),
            ])
        })
        .collect();
    lines.push(Line::raw(""));
    for text in [
        "Curves: each component's SYPD and CHSY against its PEs; blocks are measured points, lines the interpolation, dotted verticals the cursor's PEs.",
        "Matrix: FN = TTS_w·SYPDn + (1−TTS_w)·(1−CHSYn), red (0) → green (1); grey = worse than the base case; blank = over the budget; digits = top N rank; * = marked; [] = cursor. With colour, a line may hold two PE rows (upper and lower half); its label is the upper one.",
        "Trade-off (Tab; in the curves' place): SYPD against CHSY; braille = kept configurations, • = the speed/cost front, letters = who wins some TTS_w (UPPER = now), @ = cursor, * = marked, M = measured. The strip under the slider shows the same letters per TTS_w.",
        "TTS_w 1 weighs only time to solution (speed), 0 only cost (CHSY). Moving it re-ranks at once.",
        "Iterations: one row per lb-iteration and test; rows fill in as runs finish; ★ = best FN so far.",
        "Keys can be rebound in keys.toml in the autolb configuration directory (see README).",
    ] {
        lines.push(Line::raw(text));
    }
    lines.push(Line::raw(format!(
        "Colours: {} (--no-color or NO_COLOR for none).",
        app.theme.depth.name()
    )));
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
