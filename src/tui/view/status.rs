//! The best-so-far line, the status line (campaign state and driver, watch mode, time since
//! the last scan, errors) and the hint bar (from the key table). All three stay on screen
//! whatever the layout or zoom.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::fit::{fit, Item};
use super::opt;
use crate::tui::app::App;
use crate::tui::keys::Action;
use crate::tui::table::TableState;
use crate::tui::ui::Ui;
use autolb::campaign::DriverState;

/// The best-so-far line: the campaign's best with its PEs, SYPD, CHSY and FN (the table's
/// FN), flagged when it rests on fewer runs than asked; without a campaign, the prediction's
/// recommendation.
pub fn best_text(app: &App) -> String {
    let view = &app.table.campaign;
    if view.dir.is_none() {
        if let Some(g) = &app.ranking.groups {
            return packing_text(app, g);
        }
        return match app.ranking.recommended() {
            Some(c) => format!(
                "recommended: {} ({} PEs) · SYPD {:.2} · {} {} · FN {:.3} (predicted)",
                app.ranking.describe_scored(c),
                c.total_nproc,
                c.sypd,
                app.ranking.problem.cost_model.cost.header(),
                crate::tui::budget::cost_text(app.ranking.problem.cost_model.cost, c.cost()),
                c.fittingness
            ),
            None => "recommended: none within the budget".into(),
        };
    }
    if !view.scaling.is_empty() {
        return scaling_text(app);
    }
    let Some(r) = view.best.and_then(|i| view.rows.get(i)) else {
        // A cold start has no best while it learns the curves: its phase says what it does,
        // or, once it is over, what it came to.
        return match &view.phase {
            Some(phase) if campaign_over(&view.state) => {
                format!("★ best: none · cold start, {phase}")
            }
            Some(phase) => {
                format!("★ best: none while the curves are learnt · cold start, {phase}")
            }
            None if campaign_over(&view.state) => "★ best: none, no run succeeded".into(),
            None => "★ best: nothing measured yet".into(),
        };
    };
    // The campaign's answer, as `campaign status` and `campaign best` say it: the means over
    // every run of the best; its row holds one iteration's runs.
    let (config, sypd, chsy, fittingness) = match &view.answer {
        Some(a) => (
            a.config.clone(),
            Some(a.sypd),
            Some(a.chsy),
            Some(a.fittingness),
        ),
        None => (view.describe(&r.nproc), r.sypd, r.chsy, r.fittingness),
    };
    // Means over several rows differ from each row's by design: the label says so, and stays
    // with the SYPD when the line is cut.
    let pooled = match &view.answer {
        Some(a) if a.measured_in.len() > 1 => format!(" (mean of {} runs)", a.runs),
        _ => String::new(),
    };
    let mut text = format!(
        "★ best {config} · SYPD {}{pooled} · CHSY {} · FN {}",
        opt(sypd, 2),
        opt(chsy, 0),
        opt(fittingness, 3),
    );
    if let Some(c) = &view.best_caveat {
        text.push_str(&format!(" · ⚠ on {c}"));
    }
    // The budget slider asks "what if"; the measured best keeps its FN but may not fit.
    let budget = app.ranking.problem.settings.max_nproc;
    let balanced: u32 = r.nproc.iter().sum();
    if balanced > budget {
        text.push_str(&format!(
            " · ⚠ {balanced} PEs: over the what-if budget {budget}"
        ));
    }
    match &r.label {
        Some(label) => text.push_str(&format!(" · {label}")),
        None => text.push_str(&format!(" · it/t {}/{}", r.iteration, r.test)),
    }
    text.push_str(&curve_files_part(view));
    if let Some(phase) = &view.phase {
        // `phase balancing`, without the sentence after it.
        text.push_str(&format!(
            " · cold start, {}",
            phase.split(':').next().unwrap_or(phase)
        ));
    }
    text
}

/// With node groups the recommendation is the best node packing, the one `predict` ranks
/// first for the file; the matrix beside it ranks PE counts, and the line says so.
fn packing_text(app: &App, g: &crate::tui::ranking::Groups) -> String {
    let Some(best) = g.best() else {
        let why = g.packings.as_ref().err().cloned().unwrap_or_default();
        return format!("recommended packing: none · no node packing: {why}");
    };
    let p = &best.packing;
    let names = app.ranking.problem.names();
    let config: Vec<String> = names
        .iter()
        .zip(p.ranks.iter().zip(&p.threads))
        .map(|(n, (r, t))| match t {
            1 => format!("{n} {r}"),
            t => format!("{n} {r}x{t}"),
        })
        .collect();
    // What ranked it, as `predict` says it: the curves alone, or the calibrated model.
    let by = match g.packings.as_ref().map(|r| r.model) {
        Ok(autolb::model::ModelKind::Calibrated) => "by the calibrated model",
        _ => "by the curves",
    };
    format!(
        "recommended packing: {} nodes, {} · SYPD {:.2} · NHSY {:.0} · FN {:.3} · the best node packing as `autolb predict` ranks it, {by}; the matrix and top N rank PE counts",
        p.nodes,
        config.join(" + "),
        p.sypd,
        best.nhsy,
        best.fittingness
    )
}

/// A scaling campaign has no best configuration: its line says how far each curve is measured
/// and what the curves recommend so far (the prediction the other panes show).
fn scaling_text(app: &App) -> String {
    let view = &app.table.campaign;
    let counts: Vec<String> = view
        .scaling
        .iter()
        .map(|c| {
            let measured = c.points.iter().filter(|p| p.sypd.is_some()).count();
            let queued = c.points.iter().filter(|p| p.sypd.is_none()).count();
            if queued > 0 {
                format!("{} {measured} (+{queued} queued)", c.name)
            } else {
                format!("{} {measured}", c.name)
            }
        })
        .collect();
    let mut text = format!("curves: {} counts", counts.join(", "));
    if let Some(c) = app.ranking.recommended() {
        text.push_str(&format!(
            " · recommended {} · SYPD {:.2} · FN {:.3} (predicted)",
            app.ranking.describe_scored(c),
            c.sypd,
            c.fittingness
        ));
    }
    if let Some(c) = view.scaling.first() {
        text.push_str(&format!(" · {} mode", c.mode));
    }
    text.push_str(&curve_files_part(view));
    text
}

/// ` · ⚠ 1 curve file ≠ state` when curve files disagree with what the state measured (the
/// app draws and ranks from the state; `campaign status` names both values); else nothing.
fn curve_files_part(view: &crate::tui::campaign_view::CampaignView) -> String {
    match view.curve_notes.len() {
        0 => String::new(),
        1 => " · ⚠ 1 curve file ≠ state".into(),
        n => format!(" · ⚠ {n} curve files ≠ state"),
    }
}

/// The best-so-far line laid out into `width`: the configuration, SYPD, FN and a caveat stay
/// longest; the cost and the row's label give way first.
pub fn best_line(app: &App, width: usize) -> Line<'static> {
    let items = best_text(app)
        .split(" · ")
        .enumerate()
        .map(|(k, part)| {
            let priority = match part {
                _ if k == 0 => 10,
                p if p.starts_with("SYPD") || p.starts_with("recommended") => 9,
                p if p.starts_with("FN") => 8,
                p if p.starts_with('⚠') => 7,
                p if p.starts_with("it/t") => 3,
                _ => 5,
            };
            Item::new(part.to_string(), priority)
        })
        .collect();
    fit(items, " · ", width)
}

pub fn render_best(app: &App, frame: &mut Frame, area: Rect) {
    let text = best_line(app, usize::from(area.width));
    let style = if app.table.campaign.best.is_some() {
        app.ui.theme.best().add_modifier(Modifier::BOLD)
    } else {
        Style::default().add_modifier(Modifier::BOLD)
    };
    frame.render_widget(Paragraph::new(text.style(style)), area);
}

/// Whether the watched campaign is not over and its driver was lost (killed, its host gone)
/// or stalled: nothing moves it on, so no ETA holds. No driver at all is normal for a campaign
/// driven from outside (a workflow manager).
pub fn unattended(app: &App) -> bool {
    app.table.campaign.driver.as_ref().is_some_and(|d| {
        matches!(
            d.at(app.ui.now),
            DriverState::Lost { .. } | DriverState::Stalled { .. }
        )
    }) && !campaign_over(&app.table.campaign.state)
}

/// Whether a campaign state (`CampaignView::state`) says the campaign is over: nothing is
/// left for a driver to do.
fn campaign_over(state: &str) -> bool {
    state.starts_with("done") || state == "cancelled"
}

/// The campaign's state in words, as `campaign status` says it
/// ([`autolb::campaign::DriverState::text`]): `running (driver pid 12, seen 2 s ago)`, `driver
/// lost (...)`, `no driver running`, `stalled (...)`; once it is over, the state (`done`, `done:
/// no successful run`, `cancelled`). The short form keeps the state and the pid.
pub fn campaign_texts(table: &TableState, now: std::time::SystemTime) -> (String, String) {
    let view = &table.campaign;
    let state = &view.state;
    let finished = campaign_over(state);
    match (&view.driver, &view.dir) {
        (Some(driver), Some(dir)) if !finished => {
            let driver = driver.at(now);
            let executor = view.executor.as_deref().unwrap_or_default();
            (
                driver.text_for(dir, executor),
                driver.short_text_for(executor),
            )
        }
        _ => (state.clone(), state.clone()),
    }
}

/// The model badge: `M:S` standalone, `M:C` calibrated (shown when `M` can switch).
pub fn model_badge(kind: crate::tui::ranking::ModelKind) -> &'static str {
    match kind {
        crate::tui::ranking::ModelKind::Standalone => "M:S",
        crate::tui::ranking::ModelKind::Calibrated => "M:C",
    }
}

/// The watch badge: `W:N` native notifications, `W:P` polling.
pub fn watch_badge(mode: autolb::watch::ActiveMode) -> &'static str {
    match mode {
        autolb::watch::ActiveMode::Native => "W:N",
        autolb::watch::ActiveMode::Poll => "W:P",
    }
}

/// The status line's items, most important first in weight (not in place): the latest
/// message, the budget, the marks, the model and watch badges, the campaign, then the rest.
pub fn status_items(app: &App) -> Vec<Item> {
    let mut items = Vec::new();
    let p = &app.ranking.problem;
    // The keys too: at 80x24 the slider pane is one line and this is where the budget shows.
    let keys = &app.ui.keys;
    let budget_keys = format!(
        "({}/{})",
        keys.first(Action::BudgetDown),
        keys.first(Action::BudgetUp)
    );
    // A budget key's message already says the budget: it takes the budget's place, so the
    // budget shows once.
    let message = app.ui.message.clone();
    let budget_said = message.as_deref().is_some_and(|m| m.starts_with("budget "));
    let mut budget = match (&message, budget_said) {
        (Some(m), true) => format!("{m} {budget_keys}"),
        _ => format!("budget {} {budget_keys}", p.settings.max_nproc),
    };
    let short_budget = format!("budget {}", p.settings.max_nproc);
    if !p.cost_model.is_plain() {
        budget.push_str(&format!(
            " · {} ({})",
            p.cost_model.cost.label(),
            keys.first(Action::CycleCost)
        ));
    }
    // The latest message: it answers the last key pressed.
    if let Some(m) = message.filter(|_| !budget_said) {
        items.push(Item::new(m, 9));
    }
    items.push(Item::new(budget, 8).or_short(short_budget));
    let (campaign, short) = campaign_texts(&app.table, app.ui.now);
    // A watched campaign's state (its driver running, lost, stalled, or the campaign done)
    // outranks the last key's message, even at 80 columns: a message is transient, and a
    // watcher must always see whether anything still moves the campaign.
    let item = Item::new(format!("campaign: {campaign}"), 10);
    items.push(if unattended(app) {
        item.or_short(short)
    } else if app.table.campaign.driver.is_some() {
        // The short form (`running (pid 12)`) makes room for the message first.
        item.or_short_early(short, 5)
    } else {
        Item::new(format!("campaign: {campaign}"), 5).or_short(short)
    });
    if app.table.campaign.pending_runs > 0 {
        items.push(Item::new(
            format!("{} incoming", app.table.campaign.pending_runs),
            4,
        ));
    }
    if app.ranking.other_model.is_some() {
        items.push(Item::new(model_badge(app.ranking.model), 7));
    }
    if let Some(mode) = app.table.watch.mode {
        let badge = watch_badge(mode);
        let mut w = badge.to_string();
        if let Some(at) = app.table.watch.last_scan {
            let ago = app
                .ui
                .now
                .duration_since(at)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            w.push_str(&format!(" scan {ago} s ago"));
        }
        items.push(Item::new(w, 6).or_short(badge));
        items.push(Item::new(format!("({})", app.table.watch.reason), 2));
    }
    let marked = app.matrix.marked.len();
    items.push(Item::new(
        format!("{marked} marked"),
        if marked > 0 { 7 } else { 3 },
    ));
    items.push(Item::new(app.ui.title.clone(), 1));
    items
}

/// The error the status line leads with, if any.
pub fn status_error(app: &App) -> Option<String> {
    app.ui
        .error
        .clone()
        .or_else(|| app.table.watch.error.clone())
        .or_else(|| app.table.campaign.error.clone())
}

/// The status line's text with room for everything, and the error (tested without a
/// terminal).
#[cfg(test)]
pub fn status_text(app: &App) -> (String, Option<String>) {
    let line = fit(status_items(app), SEP, usize::MAX);
    (super::fit::text_of(&line), status_error(app))
}

/// Between the status line's items.
const SEP: &str = " │ ";

/// The status line laid out into `width` columns: the error first, never dropped.
pub fn status_line(app: &App, width: usize) -> Line<'static> {
    let mut items = Vec::new();
    if let Some(e) = status_error(app) {
        items.push(Item::styled(
            format!("error: {e}"),
            app.ui.theme.error(),
            10,
        ));
    }
    items.extend(status_items(app));
    fit(items, SEP, width)
}

pub fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let line = status_line(app, usize::from(area.width));
    frame.render_widget(Paragraph::new(line), area);
}

/// The hint bar: whole hints only, as many as fit, the focused pane's keys first.
pub fn render_hints(ui: &Ui, frame: &mut Frame, area: Rect) {
    if let Some(text) = &ui.filter_input {
        // Typing a `/` query: the query and how to end it, the examples as room allows.
        let items = vec![
            Item::new(format!("filter: {text}▏"), 10),
            Item::new(crate::tui::keys::PROMPT_KEYS.to_string(), 8),
            Item::new(
                "words a row must all have: failed running it2 408 IFS=408".to_string(),
                4,
            ),
        ];
        frame.render_widget(
            Paragraph::new(fit(items, " · ", usize::from(area.width))),
            area,
        );
        return;
    }
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
