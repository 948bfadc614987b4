//! The help overlay: every key from the key table, every glyph (the rows of the keys page,
//! see [`super::legend`]), and how to read the screen.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::Frame;

use super::scrolled_popup;
use crate::tui::theme::ColorDepth;
use crate::tui::ui::Ui;

/// What the screen shows, after the keys (public for tests).
pub const READING: &[&str] = &[
    "Curves: each component's SYPD and CHSY against its PEs; blocks are measured points, lines the interpolation, dotted verticals the cursor's PEs. Each component has its own line glyph (• ∙ ·), so they differ without colour too.",
    "Matrix: FN = TTS_w·SYPDn + (1−TTS_w)·(1−CHSYn), red (0) → green (1); grey = worse than the base case; blank = over the budget. A row label gives the range of PEs its line covers (408-456) when a line holds several, the cursor's too (highlighted, ▸); the cursor's exact PEs are in the line under the matrix. Digits = top N rank; 1+ = rank 1 and more of the top N in one cell; * = marked; []/@ = cursor. z fills the screen with the matrix; Z shows the region around the cursor, one configuration per cell.",
    "Calibrated model (--measured, --model, or a watched campaign's recorded runs; M switches which one ranks): in Curves ▄ (▗ without colour) = a component's speed in a measured coupled run, ▞ = the calibrated curve, quarter blocks (▖) its 90 % band on tall charts with colour; err% in Iterations = the ranking model's signed error against the measured SYPD (dropped first when narrow); enter on a configuration that has run sets both predictions against the measurement.",
    "Trade-off (Tab; in the curves' place): SYPD against CHSY; braille = kept configurations, • = the speed/cost front, letters = who wins some TTS_w (UPPER = now), @ = cursor (the matrix's: moving it in one pane moves it in all), * = marked, M = measured. The strip under the slider shows the same letters per TTS_w.",
    "TTS_w 1 weighs only time to solution (speed), 0 only cost (CHSY). Moving it re-ranks at once.",
    "Iterations: one row per lb-iteration and test (it/t); rows fill in as runs finish; d→r = donor→recipient on the narrowest screens. ★ = the campaign's best so far, also pinned on the line below the panes; ⚠ there = it rests on fewer runs than the repetitions asked.",
    "State: pending (no run started), running, done (measured; the test goes on with the next iteration), finished (measured; the step fell below minimum_step, so the test stopped there), failed (every run failed). done 1/2 ✗1 = 1 of 2 runs measured, 1 failed: enter on the row shows why. incoming = timing output still being written; unreadable = output unchanged for 2 polls that still does not parse (enter shows why).",
    "FN of a measured row is the campaign's: normalised over every configuration it measured, at its TTS_w; the table, the best line (★), the detail view, campaign status and the report give the same number. The TTS_w and budget sliders never change it; a best over the what-if budget is flagged on the best line.",
    "Status line: the campaign's driver, from the heartbeat it writes every 2 s (driver.json; campaign status says the same): 'running (driver pid N, seen 2 s ago)'; 'driver lost (pid N gone 40 s ago ...)' = its last beat is over 10 s old or its pid is gone (killed, node crash): resume with autolb campaign run DIR; 'no driver running' = none started or the last one stopped cleanly; 'workflow manager starts the runs' = a campaign without an [executor], whose runs Cylc, Autosubmit or another workflow manager starts through campaign exec (those it holds show as running); 'stalled' = a driver beats and runs are queued, but for 15 minutes neither it nor any running run has written anything (a long batch queue, a hung driver, lost jobs). Narrow screens keep the state and the pid.",
    "Keys can be rebound in keys.toml in the autolb configuration directory (user guide: docs/src/app/keys.md).",
];

/// Width of the help popup, borders included.
const HELP_W: u16 = 92;

/// `key  description` rows, the description wrapped at whole words into `width` columns and
/// its wrapped lines indented under the description column, not under the key.
pub fn two_columns(rows: Vec<(String, String)>, width: usize) -> Vec<Line<'static>> {
    two_columns_spaced(rows, width, false)
}

/// [`two_columns`], with a blank line between rows when `spaced` (paragraphs, not key rows).
fn two_columns_spaced(
    rows: Vec<(String, String)>,
    width: usize,
    spaced: bool,
) -> Vec<Line<'static>> {
    let key_w = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(4)
        + 2;
    let text_w = width.saturating_sub(key_w + 2).max(10);
    let mut lines = Vec::new();
    for (n, (k, d)) in rows.into_iter().enumerate() {
        if spaced && n > 0 {
            lines.push(Line::raw(""));
        }
        let mut first = true;
        for part in wrap_words(&d, text_w) {
            let lead = if first {
                Span::styled(
                    format!("{k:>key_w$}  "),
                    Style::default().add_modifier(Modifier::BOLD),
                )
            } else {
                Span::raw(" ".repeat(key_w + 2))
            };
            first = false;
            lines.push(Line::from(vec![lead, Span::raw(part)]));
        }
    }
    lines
}

/// A paragraph of [`READING`] as a help row: a short lead-in (`Curves: ...`) in the key column,
/// the rest under the descriptions, so that a wrapped line never starts under the keys; a
/// paragraph without one sits whole under the descriptions.
fn labelled(text: &str) -> (String, String) {
    match text.split_once(": ") {
        Some((head, rest)) if head.chars().count() <= 12 && !head.contains('(') => {
            (head.to_string(), rest.to_string())
        }
        _ => (String::new(), text.to_string()),
    }
}

/// `text` in lines of at most `width` columns, broken between words (a word longer than a line
/// has one to itself).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    out
}

pub fn render(ui: &Ui, frame: &mut Frame, area: Rect) {
    let width = usize::from(HELP_W.min(area.width).saturating_sub(2));
    let rows = ui
        .keys
        .help_rows()
        .into_iter()
        .map(|(k, d)| (k, d.to_string()))
        .collect();
    let mut lines = two_columns(rows, width);
    lines.push(Line::raw(""));
    // The glyphs as this terminal draws them (with colour or without).
    let mono = ui.theme.depth == ColorDepth::Mono;
    let glyphs = super::legend::glyph_rows()
        .into_iter()
        .map(|g| (if mono { g.mono } else { g.colour }, g.meaning.to_string()))
        .collect();
    lines.extend(two_columns(glyphs, width));
    lines.push(Line::raw(""));
    let colours = format!(
        "Colours: {} (--no-color or NO_COLOR for none).",
        ui.theme.depth.name()
    );
    let reading = READING
        .iter()
        .copied()
        .chain([colours.as_str()])
        .map(labelled)
        .collect();
    lines.extend(two_columns_spaced(reading, width, true));
    scrolled_popup(
        frame,
        area,
        HELP_W,
        " Help (? or esc closes; ↑↓ pgup pgdn scroll) ",
        lines,
        ui.overlay_scroll,
    );
}

#[cfg(test)]
mod tests {
    use super::{labelled, two_columns, two_columns_spaced, READING};

    #[test]
    fn reading_paragraphs_wrap_under_the_description_column() {
        assert_eq!(
            labelled("Curves: each component's SYPD"),
            ("Curves".to_string(), "each component's SYPD".to_string())
        );
        // A long lead-in, or none, leaves the paragraph whole under the descriptions.
        let whole = "TTS_w 1 weighs only time to solution (speed), 0 only cost (CHSY).";
        assert_eq!(labelled(whole), (String::new(), whole.to_string()));
        let rows: Vec<(String, String)> = READING.iter().map(|t| labelled(t)).collect();
        let lines: Vec<String> = two_columns_spaced(rows, 78, true)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert!(lines.len() > 2 * READING.len(), "some paragraphs wrap");
        let column = lines[0].find("each component").unwrap();
        // Paragraphs are apart.
        assert_eq!(
            lines.iter().filter(|l| l.is_empty()).count(),
            READING.len() - 1
        );
        for l in lines.iter().filter(|l| !l.is_empty()) {
            let starts = l.find(|c: char| c != ' ').unwrap();
            // Either a label right-aligned before the column, or text starting at it.
            assert!(
                starts == column || l[..column].trim_end().len() == column - 2,
                "{l:?}"
            );
            assert!(l.chars().count() <= 78, "{l:?}");
        }
    }

    #[test]
    fn wrapped_descriptions_sit_under_the_description_column() {
        let rows = vec![
            ("q".to_string(), "quit".to_string()),
            (
                "ctrl-c".to_string(),
                "one two three four five six seven eight nine ten".to_string(),
            ),
        ];
        let lines: Vec<String> = two_columns(rows, 30)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        // Key column 8 wide plus two spaces: every description starts at column 10.
        assert_eq!(lines[0], "       q  quit");
        assert!(lines.len() > 2, "{lines:?}");
        for l in &lines[1..] {
            assert_eq!(
                l.find(|c: char| c != ' '),
                Some(if l.contains("ctrl-c") { 2 } else { 10 }),
                "{l:?}"
            );
            assert!(l.chars().count() <= 30, "{l:?}");
        }
    }
}
