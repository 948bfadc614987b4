//! The help overlay: every key from the key table, and how to read the screen.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::Frame;

use super::scrolled_popup;
use crate::tui::ui::Ui;

/// What the screen shows, after the keys (public for tests).
pub const READING: &[&str] = &[
    "Curves: each component's SYPD and CHSY against its PEs; blocks are measured points, lines the interpolation, dotted verticals the cursor's PEs. Each component has its own line glyph (• ∙ ·), so they differ without colour too.",
    "Matrix: FN = TTS_w·SYPDn + (1−TTS_w)·(1−CHSYn), red (0) → green (1); grey = worse than the base case; blank = over the budget. A row label gives the range of PEs its line covers (408-456) when a line holds several; the cursor's row and column labels show its exact PEs. Digits = top N rank; 1+ = rank 1 and more of the top N in one cell; * = marked; []/@ = cursor. z fills the screen with the matrix; Z shows the region around the cursor, one configuration per cell.",
    "Calibrated model (--measured, --model, or a watched campaign's recorded runs; M switches which one ranks): in Curves ▄ (▗ without colour) = a component's speed in a measured coupled run, ▞ = the calibrated curve, quarter blocks (▖) its 90 % band on tall charts with colour; err% in Iterations = the ranking model's signed error against the measured SYPD (dropped first when narrow); enter on a configuration that has run sets both predictions against the measurement.",
    "Trade-off (Tab; in the curves' place): SYPD against CHSY; braille = kept configurations, • = the speed/cost front, letters = who wins some TTS_w (UPPER = now), @ = cursor, * = marked, M = measured. The strip under the slider shows the same letters per TTS_w.",
    "TTS_w 1 weighs only time to solution (speed), 0 only cost (CHSY). Moving it re-ranks at once.",
    "Iterations: one row per lb-iteration and test (it/t); rows fill in as runs finish; d→r = donor→recipient on the narrowest screens. ★ = the campaign's best so far, also pinned on the line below the panes; ⚠ there = it rests on fewer runs than the repetitions asked.",
    "State: pending (no run started), running, done (measured; the test goes on with the next iteration), finished (measured; the step fell below minimum_step, so the test stopped there), failed (every run failed). done 1/2 ✗1 = 1 of 2 runs measured, 1 failed: enter on the row shows why. incoming = timing output still being written.",
    "FN in the table is normalised over the prediction's SYPD and CHSY ranges, widened only when a measured value falls outside them, so a row's FN stays put as other rows land. The campaign chooses its best (★) over the measured runs alone (user guide: docs/src/method/algorithm1.md), so ★ need not be the row with the highest FN shown.",
    "Status line: campaign state; 'no driver running' = no process holds the campaign (start one with autolb campaign run DIR); 'stalled' = a driver holds it and runs are queued, but for 15 minutes neither the driver nor any running run has written anything (a long batch queue, a hung driver, lost jobs).",
    "Keys can be rebound in keys.toml in the autolb configuration directory (user guide: docs/src/app/keys.md).",
];

pub fn render(ui: &Ui, frame: &mut Frame, area: Rect) {
    let rows = ui.keys.help_rows();
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
    for text in READING {
        lines.push(Line::raw(*text));
    }
    lines.push(Line::raw(format!(
        "Colours: {} (--no-color or NO_COLOR for none).",
        ui.theme.depth.name()
    )));
    scrolled_popup(
        frame,
        area,
        92,
        " Help (? or esc closes; ↑↓ pgup pgdn scroll) ",
        lines,
        ui.overlay_scroll,
    );
}
