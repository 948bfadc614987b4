//! The loader: fills the iteration table's [`CampaignView`] from a watched directory.
//!
//! It runs on the watcher's thread, never the UI's: reading timing files on a parallel
//! filesystem can take a while. A directory with a campaign state is read through
//! `autolb::campaign`; any directory of runs (`iter-II/test-TT/rep-R/` or any subdirectories
//! holding timing output) is read directly with `autolb::timing::read`. Runs whose output is
//! complete are read once and cached, so a run is never counted twice; half-written output
//! shows as pending, never as an error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use autolb::campaign::driver_state_of;
use autolb::campaign::measured::{campaign_model, campaign_runs_of};
use autolb::campaign::state::STATE_FILE;
use autolb::campaign::{measure, NameMap, RunMetrics, RunState, State, Status};
use autolb::curve::Curve;
use autolb::timing::{self, ReadOptions, Reading};

use autolb::campaign::status::progress::Progress;

use super::{
    score_rows, summarise_row, CampaignView, DriverReading, IterRow, RunRow, ScalingCurve,
    ScalingPoint,
};
use crate::tui::calibration::Calibration;
use autolb::campaign::strategy::scaling::points::{points_of, pooled_noise};
use autolb::config::scaling::ScalingDesign;

/// A component as the loader needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoaderComponent {
    pub name: String,
    /// Its name in the timing output (e.g. `ATMIFS` for IFS).
    pub timing_name: String,
}

/// Reads a watched directory into a [`CampaignView`].
#[derive(Debug)]
pub struct Loader {
    pub dir: PathBuf,
    pub components: Vec<LoaderComponent>,
    pub period_s: Option<f64>,
    pub tts_w: f64,
    /// Complete measurements by run directory: read once, never again. Filled only through
    /// [`Loader::is_complete`], which the watcher asks once the directory's files stayed
    /// unchanged for [`autolb::watch::poller::STABLE_POLLS`] polls: a file that parses as complete
    /// while it is still being rewritten is not frozen at an intermediate value.
    complete: BTreeMap<PathBuf, RunFigures>,
    /// Why a settled run directory is not complete (the reader's reason), from the last time
    /// the watcher asked; shown as the run's note. Unsettled directories are not read at all:
    /// nothing they hold counts yet, and reading thousands of them on every reload is what
    /// made the idle app expensive.
    notes: BTreeMap<PathBuf, String>,
    /// Settled run directories the reader refuses (a damaged file, not a half-written one: the
    /// files stayed unchanged for the watcher's settling polls), with the reader's reason:
    /// shown as "unreadable: REASON" instead of "incoming" for ever. A file that changes is
    /// read again.
    unreadable: BTreeMap<PathBuf, String>,
    /// Campaign runs measured here before the driver recorded them.
    unrecorded: BTreeMap<PathBuf, RunMetrics>,
    /// PEs of each campaign run directory (from the campaign state), so the completeness test
    /// knows which rank files must exist.
    run_nproc: BTreeMap<PathBuf, Vec<u32>>,
    /// Finished runs the last model fit saw: the model is refitted only when this changes.
    fitted_on: Option<usize>,
    /// A scaling campaign's curves as last sent to the app: sent again only when they change.
    curves_sent: Option<Vec<Curve>>,
}

/// What the table shows of one measured run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunFigures {
    pub sypd: Option<f64>,
    pub chsy: Option<f64>,
    pub coupling_cost: Option<f64>,
}

/// Files that make a directory a run directory.
fn is_timing_file(name: &str) -> bool {
    name.starts_with("lucia.")
        || matches!(name, "table.csv" | "summary" | "load_balancing_info.txt")
}

impl Loader {
    pub fn new(
        dir: PathBuf,
        components: Vec<LoaderComponent>,
        period_s: Option<f64>,
        tts_w: f64,
    ) -> Loader {
        Loader {
            dir,
            components,
            period_s,
            tts_w,
            complete: BTreeMap::new(),
            notes: BTreeMap::new(),
            unreadable: BTreeMap::new(),
            unrecorded: BTreeMap::new(),
            run_nproc: BTreeMap::new(),
            fitted_on: None,
            curves_sent: None,
        }
    }

    /// Whether `run_dir` holds complete timing output (the watcher's completeness test).
    /// The watched root itself (campaign state, logs) is never complete: it keeps changing.
    pub fn is_complete(&mut self, dir: &Path) -> bool {
        if dir == self.dir {
            return false;
        }
        if self.complete.contains_key(dir) {
            return true;
        }
        match self.read_run(dir, &[]) {
            RunRead::Complete(_) => {
                self.notes.remove(dir);
                self.unreadable.remove(dir);
                true
            }
            RunRead::Pending(reason) => {
                self.unreadable.remove(dir);
                self.notes.insert(dir.to_path_buf(), reason);
                false
            }
            RunRead::Unreadable(reason) => {
                self.notes.remove(dir);
                self.unreadable.insert(dir.to_path_buf(), reason);
                false
            }
        }
    }

    /// What the view shows of a run directory: complete once the watcher confirmed it
    /// ([`Loader::is_complete`]), else pending with the reader's reason or "being written".
    fn run_read(&self, dir: &Path) -> RunRead {
        if let Some(reason) = self
            .unreadable
            .get(dir)
            .filter(|_| !self.complete.contains_key(dir))
        {
            return RunRead::Unreadable(reason.clone());
        }
        match (self.complete.get(dir), self.notes.get(dir)) {
            (Some(f), _) => RunRead::Complete(*f),
            (None, Some(note)) => RunRead::Pending(note.clone()),
            (None, None) => RunRead::Pending(format!(
                "being written; read once unchanged for {} polls",
                autolb::watch::poller::STABLE_POLLS
            )),
        }
    }

    fn read_options(&self, nproc: &[u32]) -> ReadOptions {
        let mut opts = ReadOptions {
            period_s: self.period_s,
            ..ReadOptions::default()
        };
        for (c, &p) in self.components.iter().zip(nproc) {
            if p > 0 {
                opts.nproc.insert(c.timing_name.clone(), p);
            }
        }
        opts
    }

    /// Reads one run directory whose files settled, using and filling the cache.
    fn read_run(&mut self, dir: &Path, nproc: &[u32]) -> RunRead {
        if let Some(f) = self.complete.get(dir) {
            return RunRead::Complete(*f);
        }
        let nproc = if nproc.is_empty() {
            self.run_nproc
                .get(dir)
                .cloned()
                .unwrap_or_else(|| nproc_from_dir_name(dir, &self.components))
        } else {
            nproc.to_vec()
        };
        tracing::debug!(dir = %dir.display(), "reading a run's timing output");
        match timing::read(dir, &self.read_options(&nproc)) {
            Ok(Reading::Measured(m)) if m.partial.is_none() => {
                let figures = RunFigures {
                    sypd: m.coupled_sypd(),
                    chsy: m.chsy(),
                    coupling_cost: m.coupling_cost(),
                };
                self.complete.insert(dir.to_path_buf(), figures);
                RunRead::Complete(figures)
            }
            Ok(Reading::Measured(m)) => {
                RunRead::Pending(m.partial.unwrap_or_else(|| "partial".into()))
            }
            Ok(Reading::Incomplete { reason }) => RunRead::Pending(reason),
            // Asked only once the files settled: a file that still does not parse is damaged.
            Err(e) => RunRead::Unreadable(e.to_string()),
        }
    }

    /// Builds the view from what is on disk now: through the campaign state when the
    /// directory has one, else from the run directories found below it.
    pub fn load(&mut self) -> CampaignView {
        if self.dir.join(STATE_FILE).exists() {
            return match State::load(&self.dir) {
                Ok(state) => self.load_campaign(&state),
                // Written atomically, so unreadable means really broken: say so, keep watching.
                Err(e) => CampaignView {
                    dir: Some(self.dir.clone()),
                    state: "unreadable".into(),
                    components: self.components.iter().map(|c| c.name.clone()).collect(),
                    error: Some(e.to_string()),
                    ..CampaignView::default()
                },
            };
        }
        self.load_run_dirs()
    }

    /// The campaign's own table, with runs that finished but are not recorded yet measured
    /// here (a driver may be slow to record, or the campaign is driven from outside).
    fn load_campaign(&mut self, state: &State) -> CampaignView {
        let fitted = self.refit(state);
        let mut view = self.load_campaign_table(state);
        view.fitted = fitted;
        view.curves = self.scaling_curves(state);
        view.scaling = scaling_points(state);
        view
    }

    /// A scaling campaign's curves as its state measured them so far, when every component has
    /// one (two measured counts) and they changed since the last load: the app redraws its
    /// curves pane and re-ranks from them as runs land.
    fn scaling_curves(&mut self, state: &State) -> Option<Vec<Curve>> {
        if !state.measures_curves() {
            return None;
        }
        // The state's measured curves, not the files: a file edited by hand is not what the
        // campaign measured (`campaign status` notes the difference).
        let curves = (0..state.components.len())
            .map(|c| autolb::campaign::strategy::scaling::output::measured_curve(state, c))
            .collect::<Option<Vec<Curve>>>()?;
        if self.curves_sent.as_ref() == Some(&curves) {
            return None;
        }
        self.curves_sent = Some(curves.clone());
        Some(curves)
    }

    /// The calibrated model fitted again on every finished run of the campaign (through the
    /// library's [`campaign_model`]), when runs finished since the last fit; `None` when
    /// nothing changed, no run is usable yet, or the curves cannot be read.
    fn refit(&mut self, state: &State) -> Option<Calibration> {
        let done = state
            .iterations
            .iter()
            .flat_map(|it| &it.tests)
            .flat_map(|t| &t.runs)
            .filter(|r| r.state == RunState::Done && r.metrics.is_some())
            .count();
        if done == 0 || self.fitted_on == Some(done) {
            return None;
        }
        self.fitted_on = Some(done);
        let (model, _notes) = campaign_model(state, &self.dir).ok()?;
        let (runs, _) = campaign_runs_of(state, &self.dir);
        model.is_calibrated().then_some(Calibration { model, runs })
    }

    /// [`Loader::load_campaign`] without the model.
    fn load_campaign_table(&mut self, state: &State) -> CampaignView {
        let mut status = Status::from_state(state, &self.dir);
        // Runs a workflow manager's `campaign exec` holds show as running, not queued.
        status.set_claimed(&self.dir);
        let names = status.components.clone();
        let mut pending_runs = 0;
        for it in &mut status.iterations {
            for test in &mut it.tests {
                let nproc = in_order(&names, &test.nproc);
                for run in &mut test.runs {
                    self.run_nproc.insert(run.run_dir.clone(), nproc.clone());
                    if !matches!(run.state, RunState::Pending | RunState::Running) {
                        continue;
                    }
                    if let Some(m) = self.unrecorded.get(&run.run_dir) {
                        run.set_measured(m, &names);
                        continue;
                    }
                    if !run.run_dir.is_dir() {
                        continue;
                    }
                    // Only once the watcher saw its files settle (see `complete`).
                    if !self.complete.contains_key(&run.run_dir) {
                        pending_runs += 1;
                        continue;
                    }
                    let tree = autolb::campaign::tree::tree_of(state.settings.layout.as_deref());
                    let measured = match &tree {
                        Some(tree) => autolb::campaign::tree::measure(
                            &run.run_dir,
                            &state.components,
                            &state.component_names(),
                            &nproc,
                            tree,
                            state.settings.extra_pes,
                            state.settings.cost_model.as_ref(),
                        ),
                        None => measure::measure(
                            &run.run_dir,
                            &state.components,
                            &nproc,
                            state.settings.extra_pes,
                            // A campaign made without period_s: the app's own (--period).
                            state.settings.period_s.or(self.period_s),
                        ),
                    };
                    match measured {
                        Ok(m) => {
                            run.set_measured(&m, &names);
                            self.unrecorded.insert(run.run_dir.clone(), m);
                        }
                        // Still being written: pending, never an error.
                        Err(_) => pending_runs += 1,
                    }
                }
            }
        }
        let now = SystemTime::now();
        let driver = DriverReading {
            state: driver_state_of(state, &self.dir, now),
            at: now,
        };
        // Recomputes the derived columns too.
        status.set_driver(&driver.state);
        let mut view = CampaignView {
            dir: Some(self.dir.clone()),
            state: status.state_label(),
            driver: Some(driver),
            tts_w: Some(status.tts_w),
            // The status's own caveat, in the line's shorter words.
            curve_notes: status.curve_notes.clone(),
            best_caveat: status
                .best
                .as_ref()
                .filter(|_| status.best_caveat().is_some())
                .map(|b| format!("{} of {} runs", b.runs, status.repetitions)),
            components: names.clone(),
            threads: status
                .threads
                .as_ref()
                .map(|t| t.0.iter().map(|(_, t)| *t).collect())
                .unwrap_or_default(),
            pending_runs,
            progress: Some(Progress::of(&status)),
            ..CampaignView::default()
        };
        for it in &status.iterations {
            for t in &it.tests {
                view.rows.push(IterRow {
                    iteration: it.iteration,
                    test: t.test,
                    label: None,
                    nproc: in_order(&names, &t.nproc),
                    sypd: t.sypd,
                    chsy: t.chsy,
                    coupling_cost: t.coupling_cost,
                    partial_coupling_cost: names
                        .iter()
                        .map(|n| t.partial_coupling_cost.get(n).copied())
                        .collect(),
                    fittingness: t.fittingness,
                    donor: t.donor.clone(),
                    recipient: t.recipient.clone(),
                    step: Some(t.step),
                    state: t.summary(),
                    stopped_state: t.summary_if_stopped(),
                    failed: t.runs_failed(),
                    job: t.runs.iter().rev().find_map(|r| r.job.clone()),
                    runs: t
                        .runs
                        .iter()
                        .map(|r| RunRow {
                            repetition: r.repetition,
                            state: r.word().into(),
                            sypd: r.sypd,
                            chsy: r.chsy,
                            coupling_cost: r.coupling_cost,
                            run_dir: r.run_dir.clone(),
                            job: r.job.clone(),
                            note: r.failure.clone(),
                        })
                        .collect(),
                    reason: t.reason.clone(),
                });
            }
        }
        view.best = status.best.as_ref().and_then(|b| {
            view.rows
                .iter()
                .position(|r| r.iteration == b.iteration && r.test == b.test)
        });
        view.answer = autolb::campaign::Answer::of(&status);
        view.measured = autolb::campaign::answer::measured_configurations(&status);
        view.phase = status.cold_start.as_ref().map(|c| c.phase.clone());
        view.executor = Some(status.executor.clone());
        view
    }

    /// Any directory of runs, without a campaign state.
    fn load_run_dirs(&mut self) -> CampaignView {
        let mut view = CampaignView {
            dir: Some(self.dir.clone()),
            components: self.components.iter().map(|c| c.name.clone()).collect(),
            tts_w: Some(self.tts_w),
            ..CampaignView::default()
        };
        let mut run_dirs = Vec::new();
        find_run_dirs(&self.dir, 0, &mut run_dirs);
        let mut groups: BTreeMap<(u32, u32), Vec<(u32, PathBuf)>> = BTreeMap::new();
        // Directories named for their configuration (`240IFS_144NEMO`), not by position:
        // one row each, ordered by PEs (then by name), labelled with their name.
        let mut named: Vec<(Vec<u32>, String, PathBuf)> = Vec::new();
        for dir in run_dirs {
            match campaign_position(&self.dir, &dir) {
                Some((iteration, test, rep)) => groups
                    .entry((iteration, test))
                    .or_default()
                    .push((rep, dir)),
                None => {
                    let nproc = nproc_from_dir_name(&dir, &self.components);
                    let label = dir
                        .strip_prefix(&self.dir)
                        .ok()
                        .filter(|r| !r.as_os_str().is_empty())
                        .map_or_else(|| ".".into(), |r| r.display().to_string());
                    named.push((nproc, label, dir));
                }
            }
        }
        named.sort_by(|a, b| {
            let total = |n: &[u32]| n.iter().map(|&p| u64::from(p)).sum::<u64>();
            (total(&a.0), &a.0, &a.1).cmp(&(total(&b.0), &b.0, &b.1))
        });
        let positioned = groups
            .into_iter()
            .map(|((it, test), runs)| (it, test, None, runs));
        let by_name = named.into_iter().enumerate().map(|(i, (_, label, dir))| {
            let test = u32::try_from(i + 1).unwrap_or(u32::MAX);
            (0, test, Some(label), vec![(1, dir)])
        });
        for (iteration, test, label, runs) in positioned.chain(by_name).collect::<Vec<_>>() {
            let mut row = IterRow {
                iteration,
                test,
                label,
                ..IterRow::default()
            };
            for (rep, dir) in runs {
                if row.nproc.is_empty() {
                    row.nproc = nproc_from_dir_name(&dir, &self.components);
                }
                let run = match self.run_read(&dir) {
                    RunRead::Complete(f) => RunRow {
                        repetition: rep,
                        state: "done".into(),
                        sypd: f.sypd,
                        chsy: f.chsy,
                        coupling_cost: f.coupling_cost,
                        run_dir: dir,
                        job: None,
                        note: None,
                    },
                    RunRead::Unreadable(reason) => RunRow {
                        repetition: rep,
                        state: "unreadable".into(),
                        sypd: None,
                        chsy: None,
                        coupling_cost: None,
                        run_dir: dir,
                        job: None,
                        note: Some(format!("unreadable: {reason}")),
                    },
                    RunRead::Pending(reason) => {
                        view.pending_runs += 1;
                        RunRow {
                            repetition: rep,
                            state: "incoming".into(),
                            sypd: None,
                            chsy: None,
                            coupling_cost: None,
                            run_dir: dir,
                            job: None,
                            note: Some(reason),
                        }
                    }
                };
                row.runs.push(run);
            }
            summarise_row(&mut row);
            view.rows.push(row);
        }
        view.best = score_rows(&mut view.rows, self.tts_w);
        view.state = if view.rows.is_empty() {
            "waiting for runs".into()
        } else if view.pending_runs > 0 {
            "running".into()
        } else {
            "idle".into()
        };
        view
    }
}

enum RunRead {
    Complete(RunFigures),
    Pending(String),
    /// Settled and refused by the reader (see `Loader::unreadable`).
    Unreadable(String),
}

/// PEs by component name, in the order of `names` (0 when a component has none).
fn in_order(names: &[String], nproc: &NameMap<u32>) -> Vec<u32> {
    names
        .iter()
        .map(|n| nproc.get(n).copied().unwrap_or(0))
        .collect()
}

/// Directories below `dir` (and `dir` itself) that hold timing output. An EC-Earth4 run
/// directory is one run: its `log/NNN/` legs are not runs of their own.
fn find_run_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if autolb::timing::ecearth4::is_run_dir(dir) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subdirs = Vec::new();
    let mut has_timing = false;
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            subdirs.push(entry.path());
        } else if is_timing_file(&entry.file_name().to_string_lossy()) {
            has_timing = true;
        }
    }
    if has_timing {
        out.push(dir.to_path_buf());
    }
    subdirs.sort();
    if depth < 6 {
        for sub in subdirs {
            find_run_dirs(&sub, depth + 1, out);
        }
    }
}

/// `(iteration, test, repetition)` from a path `.../iter-II/test-TT/rep-R` below `root`.
pub fn campaign_position(root: &Path, dir: &Path) -> Option<(u32, u32, u32)> {
    let rel = dir.strip_prefix(root).ok()?;
    let (mut it, mut test, mut rep) = (None, None, None);
    for part in rel.components() {
        let s = part.as_os_str().to_string_lossy();
        if let Some(v) = s.strip_prefix("iter-") {
            it = v.parse().ok();
        } else if let Some(v) = s.strip_prefix("test-") {
            test = v.parse().ok();
        } else if let Some(v) = s.strip_prefix("rep-") {
            rep = v.parse().ok();
        }
    }
    Some((it?, test?, rep.unwrap_or(1)))
}

/// PEs from a directory named like `240IFS_144NEMO` (the samples' convention); 0 when a
/// component's count cannot be found.
pub fn nproc_from_dir_name(dir: &Path, components: &[LoaderComponent]) -> Vec<u32> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut found: BTreeMap<String, u32> = BTreeMap::new();
    for token in name.split('_') {
        let digits: String = token.chars().take_while(char::is_ascii_digit).collect();
        let rest = &token[digits.len()..];
        if let Ok(n) = digits.parse::<u32>() {
            found.insert(rest.to_string(), n);
        }
    }
    components
        .iter()
        .map(|c| {
            found
                .get(&c.name)
                .or_else(|| found.get(&c.timing_name))
                .copied()
                .unwrap_or(0)
        })
        .collect()
}

/// A scaling campaign's measured points per component, as the library judges them
/// ([`points_of`] with the campaign's pooled noise: the same outliers `campaign status` and the
/// report name); empty for a balancing campaign.
fn scaling_points(state: &State) -> Vec<ScalingCurve> {
    // A cold start's coupled runs are scored as a campaign's once it balances: its rows stay
    // campaign rows, its best line says its phase.
    let Some(scaling) = state
        .settings
        .scaling
        .as_ref()
        .filter(|_| state.is_scaling())
    else {
        return Vec::new();
    };
    let mode = match scaling.design {
        ScalingDesign::Standalone => "standalone",
        ScalingDesign::Coupled => "coupled",
    };
    let noise = pooled_noise(state);
    state
        .components
        .iter()
        .enumerate()
        .map(|(c, comp)| ScalingCurve {
            name: comp.name.clone(),
            mode: mode.to_string(),
            points: points_of(state, c, noise)
                .into_iter()
                .map(|p| ScalingPoint {
                    test: p.test,
                    nproc: p.nproc,
                    sypd: (p.runs > 0).then_some(p.sypd),
                    sd: p.sd,
                    runs: p.runs,
                    outliers: p.outliers.into_iter().zip(p.outlier_sypd).collect(),
                    failed: p.failed,
                    queued: p.queued,
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
