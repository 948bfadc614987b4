//! The app's state and its one update function. No terminal here: tests drive `App::update`
//! with events and look at the state.

use std::path::PathBuf;
use std::time::SystemTime;

use autolb::interp::Interpolant;
use autolb::model::Model;
use autolb::predict::{Cell, ComponentInput, Config, Grid, Prediction, Problem};
use autolb::watch::{ActiveMode, WatchEvent};

use super::calibration::Calibration;
use super::campaign_view::CampaignView;
use super::event::Event;
use super::keys::{Action, KeyTable};
use super::selection::{self, SelectionSource};
use super::slice::{cloud_points_of, slice};
use super::theme::Theme;
use super::trade_off::TradeOffState;
use autolb::predict::MAX_COMPONENTS;

/// The panes Tab cycles through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Matrix,
    Slider,
    Table,
    Curves,
    /// The speed/cost trade-off; shares the curves' place on screen.
    Front,
}

impl Pane {
    const ORDER: [Pane; 5] = [
        Pane::Matrix,
        Pane::Slider,
        Pane::Table,
        Pane::Curves,
        Pane::Front,
    ];

    fn step(self, forward: bool) -> Pane {
        let i = Pane::ORDER.iter().position(|p| *p == self).unwrap_or(0);
        let n = Pane::ORDER.len();
        Pane::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

/// What the place shared by the curves and the trade-off shows: the one focused last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shared {
    Curves,
    TradeOff,
}

/// What is drawn over the panes.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    Help,
    /// Details of a configuration (candidate indices per component).
    Config(Vec<usize>),
    /// Details of an iteration-table row.
    Row(usize),
}

/// A component's curves, sampled once for drawing.
#[derive(Debug, Clone)]
pub struct CurveSeries {
    pub name: String,
    /// Measured points (PEs, SYPD).
    pub measured: Vec<(f64, f64)>,
    /// The interpolated curve (PEs, SYPD), densely sampled between the measured ends.
    pub line: Vec<(f64, f64)>,
}

/// What the status line says about watching.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchStatus {
    pub mode: Option<ActiveMode>,
    pub reason: String,
    pub last_scan: Option<SystemTime>,
    pub pending_files: usize,
    pub error: Option<String>,
}

/// The whole state.
pub struct App {
    pub problem: Problem,
    /// The components' inputs (curves, limits), kept for the report (`R`).
    pub inputs: Vec<ComponentInput>,
    /// Name of the model behind `problem` ("standalone" or "calibrated").
    pub model_name: &'static str,
    /// The other model's problem, when a calibrated model was given (`M` swaps them).
    pub other_model: Option<(Problem, &'static str)>,
    /// The calibrated model and the runs it learned from, when there is one (from
    /// `--measured`/`--model`, or refitted as a watched campaign's runs land).
    pub calibration: Option<Calibration>,
    pub curves: Vec<CurveSeries>,
    /// TTS_w in hundredths, so stepping never drifts (0.05 steps land on 0.05 exactly).
    pub tts_w_pct: u8,
    pub top: usize,
    pub prediction: Prediction,
    /// Components down the rows and across the columns of the matrix.
    pub axes: (usize, usize),
    /// The cursor configuration: a candidate index per component. Components not on the
    /// matrix axes stay fixed at theirs.
    pub cursor: Vec<usize>,
    pub grid: Grid,
    /// The speed/cost front, the TTS_w intervals and the cursor on the front.
    pub trade_off: TradeOffState,
    pub shared: Shared,
    pub focus: Pane,
    pub overlay: Overlay,
    /// Marked configurations (PEs per component).
    pub marked: Vec<Vec<u32>>,
    pub top_selected: usize,
    pub campaign: CampaignView,
    pub table_selected: usize,
    pub watch: WatchStatus,
    /// The last message for the status line (e.g. the paths `w` wrote).
    pub message: Option<String>,
    pub error: Option<String>,
    pub log_scale: bool,
    pub keys: KeyTable,
    pub theme: Theme,
    /// Where `w` writes, and what it needs to write a campaign file.
    pub selection_source: SelectionSource,
    pub out_dir: PathBuf,
    /// A label for the data shown (e.g. "built-in EC-Earth3 SR example").
    pub title: String,
    pub now: SystemTime,
    pub quit: bool,
    /// The focused pane fills the screen (`z`).
    pub zoomed: bool,
    /// The matrix shows the region around the cursor, one configuration per cell (`Z`).
    pub matrix_region: bool,
    /// First line shown of the help or detail overlay.
    pub overlay_scroll: u16,
    /// The table keeps its selection on the newest row as rows arrive (true while at the end).
    pub table_follow: bool,
}

impl App {
    /// Builds the state and the first ranking.
    pub fn new(
        problem: Problem,
        inputs: &[ComponentInput],
        keys: KeyTable,
        theme: Theme,
        selection_source: SelectionSource,
        out_dir: PathBuf,
        title: String,
    ) -> App {
        let tts_w_pct = (problem.settings.tts_w * 100.0).round().clamp(0.0, 100.0) as u8;
        let top = problem.settings.top.max(1);
        let n = problem.components.len();
        let axes = (0, if n > 1 { 1 } else { 0 });
        let curves = inputs
            .iter()
            .map(|c| sample_curve(c, problem.settings.interp))
            .collect();
        let tts_w = f64::from(tts_w_pct) / 100.0;
        let prediction = problem.rank(tts_w, top);
        let cursor = prediction
            .top
            .first()
            .and_then(|c| index_of(&problem, &c.nproc))
            .unwrap_or_else(|| vec![0; n]);
        let grid = slice(&problem, axes, &cursor, tts_w);
        let kept = cloud_points_of(&problem, &grid, &cursor, tts_w);
        let mut trade_off = TradeOffState::new(&problem, kept);
        if let Some(best) = prediction.top.first() {
            trade_off.select(&best.nproc);
        }
        App {
            problem,
            inputs: inputs.to_vec(),
            model_name: "standalone",
            other_model: None,
            calibration: None,
            curves,
            tts_w_pct,
            top,
            prediction,
            axes,
            cursor,
            grid,
            trade_off,
            shared: Shared::Curves,
            focus: Pane::Matrix,
            overlay: Overlay::None,
            marked: Vec::new(),
            top_selected: 0,
            campaign: CampaignView {
                state: "no campaign".into(),
                ..CampaignView::default()
            },
            table_selected: 0,
            watch: WatchStatus::default(),
            message: None,
            error: None,
            log_scale: false,
            keys,
            theme,
            selection_source,
            out_dir,
            title,
            now: SystemTime::now(),
            quit: false,
            zoomed: false,
            matrix_region: false,
            overlay_scroll: 0,
            table_follow: true,
        }
    }

    pub fn tts_w(&self) -> f64 {
        f64::from(self.tts_w_pct) / 100.0
    }

    /// The recommended configuration: the top of the ranking.
    pub fn recommended(&self) -> Option<&Config> {
        self.prediction.top.first()
    }

    /// PEs of the cursor configuration.
    pub fn cursor_nproc(&self) -> Vec<u32> {
        self.nproc_of(&self.cursor)
    }

    /// PEs of a configuration given by candidate indices (the inverse of [`index_of`]).
    pub fn nproc_of(&self, index: &[usize]) -> Vec<u32> {
        index
            .iter()
            .zip(&self.problem.components)
            .map(|(&i, c)| c.nproc[i])
            .collect()
    }

    /// The cell under the cursor.
    pub fn cursor_cell(&self) -> Cell {
        self.problem.cell(&self.cursor, self.tts_w())
    }

    /// The matrix cell at candidate `row` down and `col` across (every other component at the
    /// cursor): from the scored slice, or scored now when the slice is too large to keep.
    pub fn cell_at(&self, row: usize, col: usize) -> Cell {
        if !self.grid.cells.is_empty() {
            return self.grid.cell(row, col);
        }
        let (index, n) = self.index_at(row, col);
        self.problem.cell(&index[..n], self.tts_w())
    }

    /// The candidate indices of the matrix cell `(row, col)`, on the stack (the first `n`).
    pub fn index_at(&self, row: usize, col: usize) -> ([usize; MAX_COMPONENTS], usize) {
        let mut index = [0usize; MAX_COMPONENTS];
        let n = self.cursor.len();
        index[..n].copy_from_slice(&self.cursor);
        index[self.grid.rows] = row;
        index[self.grid.cols] = col;
        (index, n)
    }

    /// Whether a configuration (PEs per component) at coupled speed `sypd` fits none of the
    /// `[[queue]]` tables (never without queues; with a chosen queue the others do not count,
    /// and what does not fit it is outside the budget already).
    pub fn fits_no_queue(&self, nproc: &[u32], sypd: f64) -> bool {
        let model = &self.problem.cost_model;
        !model.queues.is_empty()
            && model.chosen_queue().is_none()
            && model
                .smallest_queue(nproc, self.problem.settings.extra_pes, sypd)
                .is_none()
    }

    /// The kept configurations of the matrix slice as (cost, SYPD) for the trade-off's cloud.
    pub fn cloud_points(&self) -> Vec<(f64, f64)> {
        cloud_points_of(&self.problem, &self.grid, &self.cursor, self.tts_w())
    }

    /// Rank (1-based) of a configuration in the current top N.
    pub fn rank_of(&self, nproc: &[u32]) -> Option<usize> {
        self.prediction
            .top
            .iter()
            .position(|c| c.nproc == nproc)
            .map(|i| i + 1)
    }

    pub fn is_marked(&self, nproc: &[u32]) -> bool {
        self.marked.iter().any(|m| m == nproc)
    }

    /// Applies one event.
    pub fn update(&mut self, event: Event) {
        match event {
            Event::Key(key) => {
                if let Some(action) = self.keys.action(&key) {
                    self.apply(action);
                }
            }
            Event::Resize => {}
            Event::Tick(now) => self.now = now,
            Event::Watch(e, at) => self.on_watch(e, at),
            Event::Campaign(mut view) => {
                if let Some(fit) = view.fitted.take() {
                    self.set_calibration(fit);
                }
                self.campaign = *view;
                self.rescore_table();
                let last = self.campaign.rows.len().saturating_sub(1);
                if self.table_follow || self.table_selected > last {
                    self.table_selected = last;
                }
            }
            Event::Signal(sig) => {
                self.message = Some(format!("signal {sig}: quitting"));
                self.quit = true;
            }
            Event::InputClosed(reason) => {
                self.error = Some(format!("terminal input closed: {reason}"));
                self.quit = true;
            }
            Event::DemoError(e) => self.error = Some(e),
        }
    }

    fn on_watch(&mut self, event: WatchEvent, at: SystemTime) {
        match event {
            WatchEvent::Mode { mode, reason } => {
                self.watch.mode = Some(mode);
                self.watch.reason = reason;
            }
            WatchEvent::Changes(o) => {
                self.watch.last_scan = Some(at);
                self.watch.pending_files = o.pending;
                self.watch.error = o.errors.first().cloned();
            }
            WatchEvent::Quiet { pending, .. } => {
                self.watch.last_scan = Some(at);
                self.watch.pending_files = pending;
            }
            WatchEvent::Error(e) => self.watch.error = Some(e),
        }
    }

    /// The table's FN (see `IterRow::shown_fittingness`), at the campaign's TTS_w.
    pub(super) fn rescore_table(&mut self) {
        let tts_w = self.campaign.tts_w.unwrap_or_else(|| self.tts_w());
        super::campaign_view::stable_fittingness(
            &mut self.campaign.rows,
            tts_w,
            self.problem.sypd_bounds,
            self.problem.chsy_bounds,
        );
    }

    /// Performs an action (public so tests and the demo can drive it by name).
    pub fn apply(&mut self, action: Action) {
        if self.overlay != Overlay::None {
            let scroll = &mut self.overlay_scroll;
            match action {
                Action::Quit => self.quit = true,
                Action::Back | Action::Detail => self.overlay = Overlay::None,
                Action::Help => {
                    self.overlay = if self.overlay == Overlay::Help {
                        Overlay::None
                    } else {
                        Overlay::Help
                    }
                }
                // The view clamps the scroll to the text's length.
                Action::Up => *scroll = scroll.saturating_sub(1),
                Action::Down => *scroll = scroll.saturating_add(1),
                Action::PageUp => *scroll = scroll.saturating_sub(PAGE),
                Action::PageDown => *scroll = scroll.saturating_add(PAGE),
                Action::Home => *scroll = 0,
                Action::End => *scroll = u16::MAX,
                _ => {}
            }
            if self.overlay == Overlay::None {
                self.overlay_scroll = 0;
            }
            return;
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Help => {
                self.overlay = Overlay::Help;
                self.overlay_scroll = 0;
            }
            Action::Zoom => self.zoomed = !self.zoomed,
            Action::ZoomRegion => {
                self.matrix_region = !self.matrix_region;
                self.focus = Pane::Matrix;
            }
            Action::PageUp | Action::PageDown | Action::Home | Action::End => self.page(action),
            Action::Back => self.message = None,
            Action::NextPane => self.set_focus(self.focus.step(true)),
            Action::PrevPane => self.set_focus(self.focus.step(false)),
            Action::TtsUp => self.set_tts_w(i16::from(self.tts_w_pct) + 5),
            Action::TtsDown => self.set_tts_w(i16::from(self.tts_w_pct) - 5),
            Action::TtsFineUp => self.set_tts_w(i16::from(self.tts_w_pct) + 1),
            Action::TtsFineDown => self.set_tts_w(i16::from(self.tts_w_pct) - 1),
            Action::Up | Action::Down | Action::Left | Action::Right => self.navigate(action),
            Action::Mark => self.toggle_mark(),
            Action::Detail => self.open_detail(),
            Action::Write => self.write_selection(),
            Action::Best => {
                if let Some(index) = self
                    .recommended()
                    .and_then(|c| index_of(&self.problem, &c.nproc))
                {
                    self.cursor = index;
                    self.regrid();
                }
            }
            Action::TopMore => self.set_top(self.top + 1),
            Action::TopLess => self.set_top(self.top.saturating_sub(1)),
            Action::LogScale => self.log_scale = !self.log_scale,
            Action::CycleRows => self.cycle_axis(true),
            Action::CycleCols => self.cycle_axis(false),
            Action::Report => match super::report::write(self) {
                Ok(path) => {
                    self.error = None;
                    self.message = Some(format!("wrote the report {}", path.display()));
                }
                Err(e) => self.error = Some(format!("report failed: {e}")),
            },
            Action::ToggleModel => self.toggle_model(),
            Action::BudgetUp => self.step_budget(true),
            Action::BudgetDown => self.step_budget(false),
            Action::CycleCost => self.cycle_cost(),
        }
    }

    fn set_focus(&mut self, pane: Pane) {
        self.focus = pane;
        match pane {
            Pane::Curves => self.shared = Shared::Curves,
            Pane::Front => self.shared = Shared::TradeOff,
            _ => {}
        }
    }

    fn set_tts_w(&mut self, pct: i16) {
        let pct = pct.clamp(0, 100) as u8;
        if pct != self.tts_w_pct {
            self.tts_w_pct = pct;
            self.rerank();
        }
    }

    fn set_top(&mut self, top: usize) {
        let top = top.clamp(1, 99);
        if top != self.top {
            self.top = top;
            self.rerank();
        }
    }

    /// Swaps the standalone and the calibrated model for the matrix, the top N and the
    /// trade-off. The other model's problem is rebuilt first when the budget or the cost moved
    /// since it was built; the cursor stays on its PEs.
    pub fn toggle_model(&mut self) {
        match self.other_model.take() {
            Some((other, name)) => {
                let fresh = if self.is_stale(&other) {
                    let settings = self.problem.settings.clone();
                    let model = match (&self.calibration, name) {
                        (Some(c), "calibrated") => c.model.clone(),
                        _ => Model::Standalone,
                    };
                    Problem::billed_with_model(
                        &self.inputs,
                        &settings,
                        &model,
                        &self.problem.cost_model,
                    )
                } else {
                    Ok(other)
                };
                match fresh {
                    Ok(problem) => {
                        let shown = std::mem::replace(&mut self.model_name, name);
                        let old = self.replace_problem(problem);
                        self.other_model = Some((old, shown));
                        self.message = Some(format!("matrix, top N and front: the {name} model"));
                    }
                    Err(e) => {
                        self.error = Some(format!("the {name} model at this budget: {e}"));
                    }
                }
            }
            None => {
                self.message = Some(
                    "only the standalone model: start with --measured PATH or --model FILE".into(),
                )
            }
        }
    }

    /// The model that colours the matrix and ranks the top N now.
    pub fn active_model(&self) -> &Model {
        static STANDALONE: Model = Model::Standalone;
        match &self.calibration {
            Some(c) if self.model_name == "calibrated" => &c.model,
            _ => &STANDALONE,
        }
    }

    /// Takes a (re)fitted calibrated model: the calibrated problem is rebuilt from it, in
    /// place when it is the one shown, else as the one `M` switches to. A standalone answer
    /// (no usable run yet) or the same fit again changes nothing.
    pub fn set_calibration(&mut self, fit: Calibration) {
        if !fit.model.is_calibrated() || self.calibration.as_ref() == Some(&fit) {
            return;
        }
        let problem = match Problem::billed_with_model(
            &self.inputs,
            &self.problem.settings,
            &fit.model,
            &self.problem.cost_model,
        ) {
            Ok(p) => p,
            Err(e) => {
                self.error = Some(format!("cannot use the refitted model: {e}"));
                return;
            }
        };
        self.set_training_runs(fit);
        if self.model_name == "calibrated" {
            self.replace_problem(problem);
        } else {
            self.other_model = Some((problem, "calibrated"));
        }
    }

    /// Keeps the calibrated model's fit and shows its training runs on the trade-off pane.
    pub fn set_training_runs(&mut self, fit: Calibration) {
        self.trade_off.measured = super::trade_off::measured_points(
            &fit.runs,
            &self.problem.names(),
            self.problem.settings.extra_pes,
        );
        self.reprice_measured();
        self.calibration = Some(fit);
    }

    /// Re-ranks and recolours after TTS_w or top N changed. With the calibrated model the top
    /// N shows the full model's numbers and order, as `predict --measured` does (the matrix
    /// keeps the search's bound: it scores cells without re-estimating each).
    pub(super) fn rerank(&mut self) {
        self.prediction = autolb::predict::full_model::rank(
            &self.problem,
            self.active_model(),
            &self.inputs,
            self.tts_w(),
            self.top,
        );
        self.top_selected = self
            .top_selected
            .min(self.prediction.top.len().saturating_sub(1));
        self.regrid();
    }

    fn regrid(&mut self) {
        self.grid = slice(&self.problem, self.axes, &self.cursor, self.tts_w());
        // With two components the slice is the whole space and its kept set never changes.
        if self.problem.components.len() > 2 {
            let kept = self.cloud_points();
            self.trade_off.recloud(kept);
        }
    }

    fn navigate(&mut self, action: Action) {
        match self.focus {
            Pane::Matrix | Pane::Curves => {
                let (r, c) = self.axes;
                let rows = self.problem.components[r].nproc.len();
                let cols = self.problem.components[c].nproc.len();
                match action {
                    Action::Up => self.cursor[r] = self.cursor[r].saturating_sub(1),
                    Action::Down => self.cursor[r] = (self.cursor[r] + 1).min(rows - 1),
                    Action::Left => self.cursor[c] = self.cursor[c].saturating_sub(1),
                    _ => self.cursor[c] = (self.cursor[c] + 1).min(cols - 1),
                }
            }
            Pane::Slider => match action {
                Action::Left => self.set_tts_w(i16::from(self.tts_w_pct) - 1),
                Action::Right => self.set_tts_w(i16::from(self.tts_w_pct) + 1),
                Action::Up => self.top_selected = self.top_selected.saturating_sub(1),
                _ => {
                    self.top_selected =
                        (self.top_selected + 1).min(self.prediction.top.len().saturating_sub(1))
                }
            },
            Pane::Front => match action {
                Action::Up | Action::Right => self.trade_off.walk(1),
                _ => self.trade_off.walk(-1),
            },
            Pane::Table => match action {
                Action::Up => self.select_row(self.table_selected.saturating_sub(1)),
                Action::Down => self.select_row(self.table_selected.saturating_add(1)),
                _ => {}
            },
        }
    }

    /// Selects a table row; the table follows new rows while the last one is selected.
    fn select_row(&mut self, i: usize) {
        let last = self.campaign.rows.len().saturating_sub(1);
        self.table_selected = i.min(last);
        self.table_follow = self.table_selected == last;
    }

    /// PgUp / PgDn / Home / End: the table's rows (wherever the focus is, the table being the
    /// one long list), or the top list when the slider pane has the focus.
    fn page(&mut self, action: Action) {
        let page = usize::from(PAGE);
        if self.focus == Pane::Slider {
            let last = self.prediction.top.len().saturating_sub(1);
            self.top_selected = match action {
                Action::PageUp | Action::Home => 0,
                _ => last,
            };
            return;
        }
        let i = self.table_selected;
        self.select_row(match action {
            Action::PageUp => i.saturating_sub(page),
            Action::PageDown => i.saturating_add(page),
            Action::Home => 0,
            _ => usize::MAX,
        });
    }

    fn cycle_axis(&mut self, rows: bool) {
        let n = self.problem.components.len();
        if n < 3 {
            self.message = Some("the matrix axes change with 3 or more components".into());
            return;
        }
        let (mut r, mut c) = self.axes;
        let target = if rows { &mut r } else { &mut c };
        let other = if rows { self.axes.1 } else { self.axes.0 };
        let mut next = (*target + 1) % n;
        if next == other {
            next = (next + 1) % n;
        }
        *target = next;
        self.axes = (r, c);
        self.regrid();
    }

    /// The configuration the selection keys act on: the slider pane's selected top-N entry,
    /// else the matrix cursor.
    fn selected_config(&self) -> Option<Vec<u32>> {
        match self.focus {
            Pane::Slider => self
                .prediction
                .top
                .get(self.top_selected)
                .map(|c| c.nproc.clone()),
            Pane::Front => self.trade_off.selected_config().map(|c| c.nproc.clone()),
            _ => Some(self.cursor_nproc()),
        }
    }

    fn toggle_mark(&mut self) {
        if self.focus == Pane::Table {
            self.message = Some("marking works on the matrix, the top list and the front".into());
            return;
        }
        let Some(nproc) = self.selected_config() else {
            return;
        };
        if let Some(i) = self.marked.iter().position(|m| *m == nproc) {
            self.marked.remove(i);
            return;
        }
        let Some(index) = index_of(&self.problem, &nproc) else {
            return;
        };
        match self.problem.cell(&index, self.tts_w()) {
            Cell::OverBudget => {
                self.message = Some(format!(
                    "{} is over the budget of {} PEs; not marked",
                    self.describe(&nproc),
                    self.problem.settings.max_nproc
                ))
            }
            _ => self.marked.push(nproc),
        }
    }

    fn open_detail(&mut self) {
        self.overlay = match self.focus {
            Pane::Table if !self.campaign.rows.is_empty() => Overlay::Row(self.table_selected),
            Pane::Table => return,
            _ => match self
                .selected_config()
                .and_then(|n| index_of(&self.problem, &n))
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
    pub fn selection(&self) -> Vec<Config> {
        if self.marked.is_empty() {
            return self.prediction.top.clone();
        }
        self.marked
            .iter()
            .filter_map(|n| index_of(&self.problem, n))
            .filter(|i| !matches!(self.problem.cell(i, self.tts_w()), Cell::OverBudget))
            .map(|i| self.problem.score(&i, self.tts_w()))
            .collect()
    }

    fn write_selection(&mut self) {
        let configs = self.selection();
        if configs.is_empty() {
            self.message = Some(format!(
                "every marked configuration is over the budget of {}; nothing written",
                self.problem.settings.max_nproc
            ));
            return;
        }
        let left_out = if self.marked.is_empty() {
            0
        } else {
            self.marked.len() - configs.len()
        };
        let from = match (self.marked.is_empty(), left_out) {
            (true, _) => format!("top {}", configs.len()),
            (false, 0) => format!("{} marked", configs.len()),
            (false, n) => format!("{} marked ({n} over the budget left out)", configs.len()),
        };
        let ranks = self.global_ranks(&configs);
        match selection::write(
            &self.out_dir,
            &self.problem,
            &self.selection_source,
            &configs,
            &ranks,
            self.tts_w(),
            self.top,
        ) {
            Ok(written) => {
                self.error = None;
                self.message = Some(format!(
                    "wrote {from}: {} and {}",
                    written.toml.display(),
                    written.json.display()
                ));
            }
            Err(e) => self.error = Some(format!("write failed: {e}")),
        }
    }

    /// Each configuration's rank among all at the current TTS_w (`None` beyond the first
    /// [`RANK_LIMIT`], which is not worth the search).
    pub fn global_ranks(&self, configs: &[Config]) -> Vec<Option<usize>> {
        let mut ranks: Vec<Option<usize>> =
            configs.iter().map(|c| self.rank_of(&c.nproc)).collect();
        if ranks.iter().any(Option::is_none) {
            let deep = self.problem.rank(self.tts_w(), RANK_LIMIT).top;
            for (r, c) in ranks.iter_mut().zip(configs) {
                if r.is_none() {
                    *r = deep.iter().position(|d| d.nproc == c.nproc).map(|i| i + 1);
                }
            }
        }
        ranks
    }

    /// `IFS 408 + NEMO 240`.
    pub fn describe(&self, nproc: &[u32]) -> String {
        self.problem
            .components
            .iter()
            .zip(nproc)
            .map(|(c, p)| format!("{} {p}", c.name))
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// Lines a page key moves.
pub const PAGE: u16 = 10;

/// How deep `w` looks for the global rank of a marked configuration.
pub const RANK_LIMIT: usize = 5000;

/// Candidate indices of a configuration given by PEs.
pub fn index_of(problem: &Problem, nproc: &[u32]) -> Option<Vec<usize>> {
    nproc
        .iter()
        .enumerate()
        .map(|(i, &p)| problem.candidate_index(i, p))
        .collect()
}

/// Samples a curve's interpolation for drawing (the measured points are drawn on top).
fn sample_curve(input: &ComponentInput, method: autolb::interp::Method) -> CurveSeries {
    let curve = &input.curve;
    let interpolant = Interpolant::new(method, &curve.xs(), &curve.ys());
    let (a, b) = (
        f64::from(curve.first_nproc()),
        f64::from(curve.last_nproc()),
    );
    const SAMPLES: usize = 200;
    let line = (0..=SAMPLES)
        .map(|i| {
            let x = a + (b - a) * i as f64 / SAMPLES as f64;
            (x, interpolant.eval(x))
        })
        .filter(|(_, y)| y.is_finite())
        .collect();
    CurveSeries {
        name: curve.name.clone(),
        measured: curve
            .points()
            .iter()
            .map(|p| (f64::from(p.nproc), p.sypd))
            .collect(),
        line,
    }
}
