//! The best-so-far line, the status line (campaign state and driver, watch mode, time since
//! the last scan, errors) and the hint bar (from the key table). All three stay on screen
//! whatever the layout or zoom.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::opt;
use crate::tui::app::App;
use crate::tui::campaign_view::Driver;
use crate::tui::keys::Action;
use crate::tui::table::TableState;
use crate::tui::ui::Ui;

/// The best-so-far line: the campaign's best with its PEs, SYPD, CHSY and FN (the table's
/// FN), flagged when it rests on fewer runs than asked; without a campaign, the prediction's
/// recommendation.
pub fn best_text(app: &App) -> String {
    let view = &app.table.campaign;
    if view.dir.is_none() {
        return match app.ranking.recommended() {
            Some(c) => format!(
                "recommended: {} ({} PEs) · SYPD {:.2} · {} {} · FN {:.3} (predicted)",
                app.ranking.describe(&c.nproc),
                c.total_nproc,
                c.sypd,
                app.ranking.problem.cost_model.cost.header(),
                crate::tui::budget::cost_text(app.ranking.problem.cost_model.cost, c.cost()),
                c.fittingness
            ),
            None => "recommended: none within the budget".into(),
        };
    }
    let Some(r) = view.best.and_then(|i| view.rows.get(i)) else {
        return "★ best: nothing measured yet".into();
    };
    let pes: Vec<String> = view
        .components
        .iter()
        .zip(&r.nproc)
        .map(|(n, p)| format!("{n} {p}"))
        .collect();
    let mut text = format!(
        "★ best {} · SYPD {} · CHSY {} · FN {}",
        pes.join(" + "),
        opt(r.sypd, 2),
        opt(r.chsy, 0),
        opt(r.shown_fittingness.or(r.fittingness), 3),
    );
    if let Some(c) = &view.best_caveat {
        text.push_str(&format!(" · ⚠ on {c}"));
    }
    match &r.label {
        Some(label) => text.push_str(&format!(" · {label}")),
        None => text.push_str(&format!(" · it/t {}/{}", r.iteration, r.test)),
    }
    text
}

pub fn render_best(app: &App, frame: &mut Frame, area: Rect) {
    let text = best_text(app);
    let style = if app.table.campaign.best.is_some() {
        app.ui.theme.best().add_modifier(Modifier::BOLD)
    } else {
        Style::default().add_modifier(Modifier::BOLD)
    };
    frame.render_widget(Paragraph::new(Line::styled(text, style)), area);
}

/// The campaign's state in words: `running (driver pid 12)`, `no driver running`, `stalled (no
/// progress for 20 min while runs are queued)`, `done: no successful run`, ...
pub fn campaign_text(table: &TableState) -> String {
    let view = &table.campaign;
    let state = &view.state;
    let finished = state.starts_with("done") || state == "cancelled";
    match &view.driver {
        Driver::Unknown => state.clone(),
        Driver::None if finished => state.clone(),
        // Nothing starts or records runs until one is started.
        Driver::None => "no driver running".into(),
        Driver::Running(holder) => format!("{state} (driver {holder})"),
        Driver::Stalled { minutes, .. } => {
            format!("stalled (no progress for {minutes} min while runs are queued)")
        }
    }
}

/// The status line's text parts (tested without a terminal).
pub fn status_text(app: &App) -> (String, Option<String>) {
    // The latest message first: it answers the last key pressed and must not be cut off.
    let mut parts: Vec<String> = app.ui.message.iter().cloned().collect();
    let p = &app.ranking.problem;
    // The keys too: at 80x24 the slider pane is one line and this is where the budget shows.
    let keys = &app.ui.keys;
    let mut budget = format!(
        "budget {} ({}/{})",
        p.settings.max_nproc,
        keys.first(Action::BudgetDown),
        keys.first(Action::BudgetUp)
    );
    if !p.cost_model.is_plain() {
        budget.push_str(&format!(
            " · {} ({})",
            p.cost_model.cost.label(),
            keys.first(Action::CycleCost)
        ));
    }
    parts.push(budget);
    parts.push(format!("campaign: {}", campaign_text(&app.table)));
    if app.table.campaign.pending_runs > 0 {
        parts.push(format!("{} incoming", app.table.campaign.pending_runs));
    }
    if app.ranking.other_model.is_some() {
        parts.push(format!("model: {} (M switches)", app.ranking.model.label()));
    }
    if let Some(mode) = app.table.watch.mode {
        let mut w = format!("watch: {}", mode.name());
        if let Some(at) = app.table.watch.last_scan {
            let ago = app
                .ui
                .now
                .duration_since(at)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            w.push_str(&format!(", scan {ago} s ago"));
        }
        w.push_str(&format!(" ({})", app.table.watch.reason));
        parts.push(w);
    }
    parts.push(format!("{} marked", app.matrix.marked.len()));
    parts.push(app.ui.title.clone());
    let error = app
        .ui
        .error
        .clone()
        .or_else(|| app.table.watch.error.clone())
        .or_else(|| app.table.campaign.error.clone());
    (parts.join(" │ "), error)
}

pub fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let (text, error) = status_text(app);
    let mut spans = Vec::new();
    if let Some(e) = error {
        spans.push(Span::styled(format!("error: {e} │ "), app.ui.theme.error()));
    }
    spans.push(Span::raw(text));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The hint bar: whole hints only, as many as fit, the focused pane's keys first.
pub fn render_hints(ui: &Ui, frame: &mut Frame, area: Rect) {
    let mut spans = Vec::new();
    let mut used = 0;
    for (keys, what) in ui.keys.hints(ui.focus) {
        let label = format!(" {what}  ");
        let w = keys.chars().count() + label.chars().count();
        if used + w > usize::from(area.width) + 2 {
            break;
        }
        used += w;
        spans.push(Span::styled(
            keys,
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ));
        spans.push(Span::raw(label));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
