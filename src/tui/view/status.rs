//! The status line (campaign state, watch mode, time since the last scan, errors) and the hint
//! bar (from the key table).

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::tui::app::App;

/// The status line's text parts (tested without a terminal).
pub fn status_text(app: &App) -> (String, Option<String>) {
    // The latest message first: it answers the last key pressed and must not be cut off.
    let mut parts: Vec<String> = app.message.iter().cloned().collect();
    parts.push(app.title.clone());
    if app.other_model.is_some() {
        parts.push(format!("model: {} (M switches)", app.model_name));
    }
    parts.push(format!("campaign: {}", app.campaign.state));
    if let Some(mode) = app.watch.mode {
        let mut w = format!("watch: {} ({})", mode.name(), app.watch.reason);
        if let Some(at) = app.watch.last_scan {
            let ago = app.now.duration_since(at).map(|d| d.as_secs()).unwrap_or(0);
            w.push_str(&format!(", last scan {ago} s ago"));
        }
        parts.push(w);
    }
    if app.campaign.pending_runs > 0 {
        parts.push(format!("{} run(s) pending", app.campaign.pending_runs));
    }
    parts.push(format!("{} marked", app.marked.len()));
    let error = app
        .error
        .clone()
        .or_else(|| app.watch.error.clone())
        .or_else(|| app.campaign.error.clone());
    (parts.join(" │ "), error)
}

pub fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let (text, error) = status_text(app);
    let mut spans = Vec::new();
    if let Some(e) = error {
        spans.push(Span::styled(format!("error: {e} │ "), app.theme.error()));
    }
    spans.push(Span::raw(text));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub fn render_hints(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = Vec::new();
    for (keys, what) in app.keys.hints() {
        spans.push(Span::styled(
            keys,
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ));
        spans.push(Span::raw(format!(" {what}  ")));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
