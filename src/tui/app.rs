//! The app's state and its one update function. No terminal and no file system here: tests
//! drive `App::update` with events and look at the state, and a key that writes files returns
//! the [`Effect`] for the event loop to run.
//!
//! The state is grouped into parts, each with the methods that only need it: the ranking
//! ([`Ranking`]: problem, model, TTS_w, top N), the matrix ([`MatrixState`]), the trade-off
//! front ([`TradeOffState`]), the iteration table ([`TableState`]) and the screen ([`Ui`]).
//! `App` keeps what coordinates them: a new problem or a new ranking moves the others.

use autolb::predict::{Cell, ComponentInput, Problem, ProblemOptions, Scored};

use super::budget::Change;
use super::calibration::Calibration;
use super::effect::{Effect, Outcome, Output};
use super::event::Event;
use super::keys::{Action, KeyTable};
use super::logs::RunLogs;
use super::matrix::MatrixState;
use super::pane::Pane;
use super::ranking::{index_of, ModelKind, Ranking};
use super::report::ReportJob;
use super::selection::{Selection, SelectionSource};
use super::table::{RowFilter, TableState};
use super::theme::Theme;
use super::trade_off::TradeOffState;
use super::ui::{Overlay, Ui, PAGE};

/// The whole state.
pub struct App {
    pub ranking: Ranking,
    pub matrix: MatrixState,
    /// The speed/cost front, the TTS_w intervals and the cursor on the front.
    pub trade_off: TradeOffState,
    pub table: TableState,
    pub ui: Ui,
    pub output: Output,
}

impl App {
    /// Builds the state and the first ranking.
    pub fn new(
        problem: Problem,
        inputs: &[ComponentInput],
        keys: KeyTable,
        theme: Theme,
        selection_source: SelectionSource,
        out_dir: std::path::PathBuf,
        title: String,
    ) -> App {
        let mut ranking = Ranking::new(problem, inputs);
        // A file that packs nodes: its recommendation is the best node packing, as `predict`
        // ranks it, with the helpers the file pins.
        if let Some(m) = ranking
            .problem
            .cost_model
            .machine
            .filter(|m| m.placement == autolb::machine::Placement::Groups)
        {
            let helpers = selection_source
                .base
                .as_ref()
                .map(|f| f.pinned_helpers())
                .unwrap_or_default();
            ranking.set_groups(helpers, m.cores_per_node);
        }
        let n = ranking.problem.components.len();
        let cursor = ranking.recommended_index().unwrap_or_else(|| vec![0; n]);
        let shown = ranking.recommended().map(|_| ranking.nproc_of(&cursor));
        let matrix = MatrixState::new(&ranking, cursor);
        let mut trade_off = TradeOffState::new(&ranking.problem, matrix.cloud_points(&ranking));
        if let Some(nproc) = shown {
            trade_off.select(&nproc);
        }
        App {
            ranking,
            matrix,
            trade_off,
            table: TableState::default(),
            ui: Ui::new(keys, theme, title),
            output: Output {
                selection_source,
                out_dir,
                cwd: None,
            },
        }
    }

    /// PEs of the cursor configuration.
    pub fn cursor_nproc(&self) -> Vec<u32> {
        self.ranking.nproc_of(&self.matrix.cursor)
    }

    /// The cell under the cursor.
    pub fn cursor_cell(&self) -> Cell {
        self.ranking
            .problem
            .cell(&self.matrix.cursor, self.ranking.tts_w())
    }

    /// The matrix cell at candidate `row` down and `col` across (see [`MatrixState::cell_at`]).
    pub fn cell_at(&self, row: usize, col: usize) -> Cell {
        self.matrix.cell_at(&self.ranking, row, col)
    }

    /// The kept configurations of the matrix slice as (cost, SYPD) for the trade-off's cloud.
    pub fn cloud_points(&self) -> Vec<(f64, f64)> {
        self.matrix.cloud_points(&self.ranking)
    }

    /// Applies one event; returns the work it leaves for the event loop, if any.
    pub fn update(&mut self, event: Event) -> Option<Effect> {
        match event {
            Event::Key(key) => {
                if self.ui.filter_input.is_some() {
                    return self.type_filter(key);
                }
                if let Some(action) = self.ui.keys.action(&key) {
                    return self.apply(action);
                }
            }
            Event::Resize => {}
            Event::Tick(now) => {
                self.ui.now = now;
                let campaign = &mut self.table.campaign;
                if let (Some(driver), Some(dir)) = (&mut campaign.driver, &campaign.dir) {
                    driver.recheck(now, dir);
                }
                self.table.campaign.settle_driver(now);
            }
            Event::Watch(e, at) => self.table.on_watch(e, at),
            Event::Campaign(mut view) => {
                if let Some(fit) = view.fitted.take() {
                    self.set_calibration(fit);
                }
                if let Some(curves) = view.curves.take() {
                    self.take_curves(curves);
                }
                // The campaign's hybrid components, by name: its candidates are written as
                // its table writes them.
                self.ranking.campaign_threads = self
                    .ranking
                    .problem
                    .names()
                    .iter()
                    .map(|n| {
                        let k = view.components.iter().position(|c| c == n);
                        k.and_then(|k| view.threads.get(k).copied()).unwrap_or(1)
                    })
                    .collect();
                self.table.show(*view);
            }
            Event::Done(outcome) => self.on_outcome(outcome),
            Event::Signal(sig) => {
                self.ui.message = Some(format!("signal {sig}: quitting"));
                self.ui.quit = true;
            }
            Event::InputClosed(reason) => {
                self.ui.error = Some(format!("terminal input closed: {reason}"));
                self.ui.quit = true;
            }
            Event::DemoError(e) => self.ui.error = Some(e),
        }
        None
    }

    /// The status line after the event loop ran an effect.
    fn on_outcome(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::SelectionWritten { from, written } => self.ui.say(format!(
                "wrote {from}: {} and {}",
                written.toml.display(),
                written.json.display()
            )),
            Outcome::Logs { title, lines } => {
                self.ui.overlay = Overlay::Logs(title, lines);
                self.ui.overlay_scroll = 0;
            }
            Outcome::ReportWritten(path) => {
                self.ui.say(format!("wrote the report {}", path.display()))
            }
            Outcome::TextWritten { what, path } => self.ui.say(super::emit::written_message(
                &path,
                &what,
                self.output.cwd.as_deref(),
            )),
            Outcome::Failed(e) => self.ui.error = Some(e),
        }
    }

    /// Performs an action (public so tests and the demo can drive it by name); returns the
    /// work it leaves for the event loop, if any.
    pub fn apply(&mut self, action: Action) -> Option<Effect> {
        if self.ui.overlay != Overlay::None {
            self.ui.apply_in_overlay(action);
            return None;
        }
        let pct = i16::from(self.ranking.tts_w_pct);
        match action {
            Action::Quit => self.ui.quit = true,
            Action::Help => {
                self.ui.overlay = Overlay::Help;
                self.ui.overlay_scroll = 0;
            }
            Action::Zoom => self.ui.zoomed = !self.ui.zoomed,
            Action::ZoomRegion => {
                self.matrix.region = !self.matrix.region;
                self.ui.focus = Pane::Matrix;
            }
            Action::PageUp | Action::PageDown | Action::Home | Action::End => self.page(action),
            Action::Back => self.ui.message = None,
            Action::NextPane => self.ui.set_focus(self.ui.focus.step(true)),
            Action::PrevPane => self.ui.set_focus(self.ui.focus.step(false)),
            Action::TtsUp => self.set_tts_w(pct + 5),
            Action::TtsDown => self.set_tts_w(pct - 5),
            Action::TtsFineUp => self.set_tts_w(pct + 1),
            Action::TtsFineDown => self.set_tts_w(pct - 1),
            Action::Up | Action::Down | Action::Left | Action::Right => {
                self.navigate(action);
                self.follow_cursor();
            }
            Action::Mark => self.toggle_mark(),
            Action::Detail => self.open_detail(),
            Action::Write => return self.write_selection(),
            Action::Best => {
                if let Some(index) = self.ranking.recommended_index() {
                    self.matrix.cursor = index;
                    self.regrid();
                    self.follow_cursor();
                }
            }
            Action::TopMore => self.set_top(self.ranking.top + 1),
            Action::TopLess => self.set_top(self.ranking.top.saturating_sub(1)),
            Action::LogScale => self.ui.log_scale = !self.ui.log_scale,
            Action::CycleRows => self.cycle_axis(true),
            Action::CycleCols => self.cycle_axis(false),
            Action::Report => return Some(Effect::WriteReport(Box::new(self.report_job()))),
            Action::EmitEcearth4 => match super::emit::shown(
                &self.ranking,
                &self.table,
                self.ui.focus,
                &self.matrix.cursor,
            )
            .and_then(|s| super::emit::ecearth4(&self.ranking, &s, &self.output.out_dir))
            {
                Ok(effect) => return Some(effect),
                Err(e) => self.ui.error = Some(e),
            },
            Action::Logs => return self.logs(),
            Action::Filter => {
                self.ui.set_focus(Pane::Table);
                self.ui.filter_input = Some(
                    self.table
                        .filter
                        .as_ref()
                        .map_or(String::new(), |f| f.text.clone()),
                );
            }
            Action::Sort => {
                self.ui.set_focus(Pane::Table);
                self.table.cycle_order();
                self.ui
                    .say(format!("table sorted by {}", self.table.order.label()));
            }
            Action::ToggleModel => self.toggle_model(),
            Action::BudgetUp => self.take_change(self.ranking.step_budget(true)),
            Action::BudgetDown => self.take_change(self.ranking.step_budget(false)),
            Action::CycleCost => self.take_change(self.ranking.next_cost()),
        }
        None
    }

    fn set_tts_w(&mut self, pct: i16) {
        if self.ranking.set_tts_w(pct) {
            self.rerank();
        }
    }

    fn set_top(&mut self, top: usize) {
        if self.ranking.set_top(top) {
            self.rerank();
        }
    }

    /// A watched scaling campaign's curves, as they stand now: the curves pane is redrawn and
    /// the matrix, the top N and the front are ranked from them, as `predict` would with the
    /// curve files.
    fn take_curves(&mut self, curves: Vec<autolb::curve::Curve>) {
        let points: usize = curves.iter().map(|c| c.points().len()).sum();
        self.ranking.set_curves(curves);
        // A cached other model was built on the old curves; `M` has nothing to swap to then.
        self.ranking.other_model = None;
        match self.ranking.rebuild(
            &self.ranking.problem.settings,
            &self.ranking.problem.cost_model,
        ) {
            Ok(problem) => {
                self.replace_problem(problem);
                self.ui
                    .say(format!("curves: {points} measured points; re-ranked"));
            }
            Err(e) => self.ui.error = Some(format!("the measured curves: {e}")),
        }
    }

    /// Shows what a budget or cost key came to.
    fn take_change(&mut self, change: Change) {
        match change {
            Change::To(problem, message) => {
                // The other model's problem is now stale; `M` rebuilds it.
                self.replace_problem(*problem);
                self.ui.say(message);
            }
            Change::Note(message) => self.ui.message = Some(message),
            Change::Refused(error) => self.ui.error = Some(error),
        }
    }

    /// Swaps the standalone and the calibrated model for the matrix, the top N and the
    /// trade-off. The other model's problem is rebuilt first when the budget or the cost moved
    /// since it was built; the cursor stays on its PEs.
    pub fn toggle_model(&mut self) {
        let Some((other, kind)) = self.ranking.other_model.take() else {
            self.ui.message = Some(if self.ranking.model == ModelKind::Calibrated {
                "only the calibrated model: a component without a curve has no standalone model"
                    .into()
            } else {
                "only the standalone model: start with --measured PATH or --model FILE".into()
            });
            return;
        };
        let fresh = if self.ranking.is_stale(&other) {
            Problem::build(
                &self.ranking.inputs,
                &self.ranking.problem.settings,
                ProblemOptions {
                    model: Some(&self.ranking.model_of(kind)),
                    cost_model: Some(&self.ranking.problem.cost_model),
                },
            )
        } else {
            Ok(other)
        };
        let name = kind.label();
        match fresh {
            Ok(problem) => {
                let shown = std::mem::replace(&mut self.ranking.model, kind);
                let old = self.replace_problem(problem);
                self.ranking.other_model = Some((old, shown));
                self.ui.message = Some(format!("matrix, top N and front: the {name} model"));
            }
            Err(e) => {
                self.ui.error = Some(format!("the {name} model at this budget: {e}"));
            }
        }
    }

    /// Takes a (re)fitted calibrated model: the calibrated problem is rebuilt from it, in
    /// place when it is the one shown, else as the one `M` switches to. A standalone answer
    /// (no usable run yet) or the same fit again changes nothing.
    pub fn set_calibration(&mut self, fit: Calibration) {
        if !fit.model.is_calibrated() || self.ranking.calibration.as_ref() == Some(&fit) {
            return;
        }
        let r = &self.ranking;
        let problem = match Problem::build(
            &r.inputs,
            &r.problem.settings,
            ProblemOptions {
                model: Some(&fit.model),
                cost_model: Some(&r.problem.cost_model),
            },
        ) {
            Ok(p) => p,
            Err(e) => {
                self.ui.error = Some(format!("cannot use the refitted model: {e}"));
                return;
            }
        };
        self.set_training_runs(fit);
        if self.ranking.model == ModelKind::Calibrated {
            self.replace_problem(problem);
        } else {
            self.ranking.other_model = Some((problem, ModelKind::Calibrated));
        }
    }

    /// Shows the calibrated model's problem from the start, with no standalone model to switch
    /// to: a component without a curve has none ([`autolb::model::scaling_law`]).
    pub fn start_calibrated(&mut self, fit: Calibration) {
        self.ranking.model = ModelKind::Calibrated;
        self.ranking.other_model = None;
        self.set_training_runs(fit);
        let problem = self.ranking.problem.clone();
        self.replace_problem(problem);
    }

    /// Keeps the calibrated model's fit and shows its training runs on the trade-off pane.
    pub fn set_training_runs(&mut self, fit: Calibration) {
        let problem = &self.ranking.problem;
        self.trade_off.measured = super::trade_off::measured_points(
            &fit.runs,
            &problem.names(),
            problem.settings.extra_pes,
        );
        self.trade_off.reprice_measured(problem);
        self.ranking.calibration = Some(fit);
    }

    /// Re-ranks and recolours after TTS_w or top N changed (see [`Ranking::rerank`]).
    pub(super) fn rerank(&mut self) {
        self.ranking.rerank();
        self.regrid();
    }

    fn regrid(&mut self) {
        self.matrix.regrid(&self.ranking);
        // With two components the slice is the whole space and its kept set never changes.
        if self.ranking.problem.components.len() > 2 {
            let kept = self.cloud_points();
            self.trade_off.recloud(kept);
        }
    }

    /// Shows `problem` instead of the current one, which it returns: the top N, the matrix, the
    /// front and the table's FN follow; the cursor, the front's cursor and the marks stay on
    /// their PEs.
    pub fn replace_problem(&mut self, problem: Problem) -> Problem {
        let cursor_nproc = self.cursor_nproc();
        let front_nproc = self.trade_off.selected_config().map(|c| c.nproc.clone());
        let old = std::mem::replace(&mut self.ranking.problem, problem);
        self.matrix.cursor = super::budget::nearest_index(&self.ranking.problem, &cursor_nproc);
        // A cursor the new budget leaves outside goes to the new recommendation.
        let outside = matches!(self.cursor_cell(), Cell::OverBudget);
        self.rerank();
        if outside {
            if let Some(index) = self
                .ranking
                .recommended()
                .and_then(|c| self.ranking.problem.index_of(c))
            {
                self.matrix.cursor = index;
                self.rerank();
            }
        }
        let measured = std::mem::take(&mut self.trade_off.measured);
        self.trade_off = TradeOffState::new(&self.ranking.problem, self.cloud_points());
        self.trade_off.measured = measured;
        self.trade_off.reprice_measured(&self.ranking.problem);
        // The front's cursor is the matrix cursor when that is on the new front; else it stays
        // on its configuration, else goes to the recommendation.
        let on_front = |n: &Vec<u32>| self.trade_off.front.iter().any(|c| &c.nproc == n);
        let target = Some(self.cursor_nproc())
            .filter(on_front)
            .or(front_nproc.filter(on_front))
            .or_else(|| self.ranking.recommended().map(|c| c.nproc.clone()));
        if let Some(n) = target {
            self.trade_off.select(&n);
        }
        old
    }

    /// The trade-off's cursor goes where the matrix cursor is, when it is on the front: one
    /// configuration is the cursor everywhere (off the front, the pane draws `@` at its place).
    fn follow_cursor(&mut self) {
        let nproc = self.cursor_nproc();
        self.trade_off.select(&nproc);
    }

    fn navigate(&mut self, action: Action) {
        match self.ui.focus {
            Pane::Matrix | Pane::Curves => {
                let (rows, forward) = match action {
                    Action::Up => (true, false),
                    Action::Down => (true, true),
                    Action::Left => (false, false),
                    _ => (false, true),
                };
                self.matrix.step_cursor(&self.ranking, rows, forward);
            }
            Pane::Slider => match action {
                Action::Left => self.set_tts_w(i16::from(self.ranking.tts_w_pct) - 1),
                Action::Right => self.set_tts_w(i16::from(self.ranking.tts_w_pct) + 1),
                Action::Up => self.ranking.walk_top(true),
                _ => self.ranking.walk_top(false),
            },
            Pane::Front => {
                // Along the front from the cursor; a cursor off the front goes first to the
                // front point nearest its speed.
                let cursor = self.cursor_nproc();
                if self.trade_off.front.iter().any(|c| c.nproc == cursor) {
                    self.trade_off.select(&cursor);
                    match action {
                        Action::Up | Action::Right => self.trade_off.walk(1),
                        _ => self.trade_off.walk(-1),
                    }
                } else {
                    let sypd = self
                        .ranking
                        .problem
                        .score(&self.matrix.cursor, self.ranking.tts_w())
                        .sypd;
                    self.trade_off.select_nearest(sypd);
                }
                // The one cursor: the matrix, the curves and the detail view follow.
                if let Some(index) = self
                    .trade_off
                    .selected_config()
                    .and_then(|c| self.ranking.problem.index_of(c))
                {
                    self.matrix.cursor = index;
                    self.regrid();
                }
            }
            Pane::Table => match action {
                Action::Up => self.table.select_row(self.table.selected.saturating_sub(1)),
                Action::Down => self.table.select_row(self.table.selected.saturating_add(1)),
                _ => {}
            },
        }
    }

    /// PgUp / PgDn / Home / End: the table's rows (wherever the focus is, the table being the
    /// one long list), or the top list when the slider pane has the focus.
    fn page(&mut self, action: Action) {
        let page = usize::from(PAGE);
        if self.ui.focus == Pane::Slider {
            let last = self.ranking.prediction.top.len().saturating_sub(1);
            self.ranking.top_selected = match action {
                Action::PageUp | Action::Home => 0,
                _ => last,
            };
            return;
        }
        let i = self.table.selected;
        self.table.select_row(match action {
            Action::PageUp => i.saturating_sub(page),
            Action::PageDown => i.saturating_add(page),
            Action::Home => 0,
            _ => usize::MAX,
        });
    }

    fn cycle_axis(&mut self, rows: bool) {
        let n = self.ranking.problem.components.len();
        if self.matrix.cycle_axis(n, rows) {
            self.regrid();
        } else {
            self.ui.message = Some("the matrix axes change with 3 or more components".into());
        }
    }

    /// The configuration the selection keys act on: the slider pane's selected top-N entry,
    /// else the cursor (the matrix's and the front's are one).
    fn selected_config(&self) -> Option<Vec<u32>> {
        match self.ui.focus {
            Pane::Slider => self
                .ranking
                .prediction
                .top
                .get(self.ranking.top_selected)
                .map(|c| c.nproc.clone()),
            _ => Some(self.cursor_nproc()),
        }
    }

    fn toggle_mark(&mut self) {
        if self.ui.focus == Pane::Table {
            self.ui.message =
                Some("marking works on the matrix, the top list and the front".into());
            return;
        }
        let Some(nproc) = self.selected_config() else {
            return;
        };
        let marked = &mut self.matrix.marked;
        if let Some(i) = marked.iter().position(|m| *m == nproc) {
            marked.remove(i);
            let n = marked.len();
            self.ui.message = Some(format!(
                "unmarked {} ({n} marked)",
                self.ranking.describe(&nproc)
            ));
            return;
        }
        let r = &self.ranking;
        let Some(index) = index_of(&r.problem, &nproc) else {
            return;
        };
        match r.problem.cell(&index, r.tts_w()) {
            Cell::OverBudget => {
                self.ui.message = Some(format!(
                    "{} is over the budget of {} PEs; not marked",
                    r.describe(&nproc),
                    r.problem.settings.max_nproc
                ))
            }
            _ => {
                let said = format!(
                    "marked {} ({} marked)",
                    r.describe(&nproc),
                    marked.len() + 1
                );
                marked.push(nproc);
                self.ui.message = Some(said);
            }
        }
    }

    /// A key while the `/` query is typed: text edits it, enter applies it (an empty query
    /// lists every row), esc leaves the filter as it was; ctrl-u clears the line, as in a shell
    /// ([`crate::tui::keys::PROMPT_KEYS`]); ctrl-c still quits.
    fn type_filter(&mut self, key: crossterm::event::KeyEvent) -> Option<Effect> {
        use crossterm::event::{KeyCode, KeyModifiers};
        let text = self.ui.filter_input.as_mut()?;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => self.ui.quit = true,
            KeyCode::Char('u') if ctrl => text.clear(),
            // Another control key is no text: typing its letter would be a surprise.
            KeyCode::Char(_) if ctrl => {}
            KeyCode::Char(c) => text.push(c),
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Enter => {
                let filter = RowFilter::new(text);
                self.ui.filter_input = None;
                self.table.set_filter(filter);
                let said = match &self.table.filter {
                    Some(f) => format!(
                        "filter {:?}: {} of {} rows",
                        f.text,
                        self.table.visible.len(),
                        self.table.campaign.rows.len()
                    ),
                    None => "filter cleared: every row".into(),
                };
                self.ui.say(said);
            }
            KeyCode::Esc => self.ui.filter_input = None,
            _ => {}
        }
        None
    }

    /// `l`: the selected row's runs' logs, read by the event loop.
    fn logs(&mut self) -> Option<Effect> {
        let Some(i) = self.table.selected_row() else {
            self.ui.message = Some("no row selected: the table is empty".into());
            return None;
        };
        let row = &self.table.campaign.rows[i];
        let title = match &row.label {
            Some(label) => format!("Logs of {label}"),
            None => format!("Logs of iteration {} test {}", row.iteration, row.test),
        };
        let runs = row
            .runs
            .iter()
            .map(|r| RunLogs {
                repetition: r.repetition,
                run_dir: r.run_dir.clone(),
            })
            .collect();
        Some(Effect::ReadLogs { title, runs })
    }

    fn open_detail(&mut self) {
        self.ui.overlay = match self.ui.focus {
            Pane::Table => match self.table.selected_row() {
                Some(i) => Overlay::Row(i),
                None => return,
            },
            _ => match self
                .selected_config()
                .and_then(|n| index_of(&self.ranking.problem, &n))
            {
                Some(index) => Overlay::Config(index),
                None => return,
            },
        };
    }

    /// The configurations `w` writes: the marked ones, or the top N when none is marked.
    ///
    /// Marks stay when the budget moves (`{`/`}`), but a marked configuration the budget (or the
    /// chosen queue) now leaves out is not written: the campaign file carries that budget.
    pub fn selection(&self) -> Vec<Scored> {
        let r = &self.ranking;
        if self.matrix.marked.is_empty() {
            return r.prediction.top.clone();
        }
        self.matrix
            .marked
            .iter()
            .filter_map(|n| index_of(&r.problem, n))
            .filter(|i| !matches!(r.problem.cell(i, r.tts_w()), Cell::OverBudget))
            .map(|i| r.problem.score(&i, r.tts_w()))
            .collect()
    }

    /// `w`: the selection to write, or (with every mark over the budget) a message and nothing.
    fn write_selection(&mut self) -> Option<Effect> {
        let configs = self.selection();
        let r = &self.ranking;
        if configs.is_empty() {
            self.ui.message = Some(format!(
                "every marked configuration is over the budget of {}; nothing written",
                r.problem.settings.max_nproc
            ));
            return None;
        }
        let marked = &self.matrix.marked;
        let left_out = if marked.is_empty() {
            0
        } else {
            marked.len() - configs.len()
        };
        let from = match (marked.is_empty(), left_out) {
            (true, _) => format!("top {}", configs.len()),
            (false, 0) => format!("{} marked", configs.len()),
            (false, n) => format!("{} marked ({n} over the budget left out)", configs.len()),
        };
        let selection = Selection {
            dir: self.output.out_dir.clone(),
            settings: r.problem.settings.clone(),
            names: r.problem.names(),
            source: self.output.selection_source.clone(),
            ranks: r.global_ranks(&configs),
            configs,
            tts_w: r.tts_w(),
            top: r.top,
        };
        Some(Effect::WriteSelection {
            selection: Box::new(selection),
            from,
        })
    }

    /// `R`: a copy of what is shown, for the report.
    fn report_job(&self) -> ReportJob {
        let r = &self.ranking;
        let file_original = self
            .output
            .selection_source
            .base
            .as_ref()
            .and_then(|b| b.original.as_ref())
            .and_then(|file| {
                r.problem
                    .names()
                    .iter()
                    .map(|n| file.get(n).copied())
                    .collect()
            });
        ReportJob {
            title: self.ui.title.clone(),
            campaign_dir: self.table.campaign.dir.clone(),
            problem: r.problem.clone(),
            inputs: r.inputs.clone(),
            tts_w: r.tts_w(),
            top: r.top,
            axes: self.matrix.axes,
            cursor: self.matrix.cursor.clone(),
            calibrated: r
                .calibration
                .as_ref()
                .filter(|_| r.model == ModelKind::Calibrated)
                .map(|c| (c.model.clone(), c.runs.clone())),
            file_original,
            out_dir: self.output.out_dir.clone(),
        }
    }
}
