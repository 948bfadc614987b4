//! The campaign's state on disk: `DIR/campaign.json`, a snapshot written atomically, and
//! `DIR/campaign.records.jsonl`, the log of what changed since (module `record_log`), both
//! written under the campaign's [`Lock`] (see [`super::lock`]), so that two drivers (or a
//! driver and `campaign record`) never write at the same time.
//!
//! The state holds only facts: the frozen settings, every test's configuration per iteration, every
//! run's state, ticket and measured metrics, and the decision taken after each iteration. Means,
//! fittingness and the best configuration are derived from it (see [`super::status()`]), so there is
//! one source of truth and nothing to keep in sync.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use super::lock::{Lock, LOCK_FILE, LOCK_LINGER};
use super::CampaignError;
use crate::config::Strategy;
use crate::executor::ExecutorConfig;

pub use super::measure::RunMetrics;
pub(crate) use checks::check_executor_limits;
pub use record_log::{Journal, LOG_FILE, MAX_LOG_BYTES};
pub use slice::{RunSlice, LAYOUT_FILE};

mod checks;
pub(crate) mod record_log;
mod slice;
use super::measure::{self, TimingName, Unmeasured};
use crate::executor::{RunRequest, Ticket};

/// Name of the state file inside a campaign directory.
pub const STATE_FILE: &str = "campaign.json";
/// A file whose presence asks a running driver to cancel the campaign (`campaign cancel`).
pub const CANCEL_REQUEST_FILE: &str = "cancel-requested";
/// Version of the state format, checked on load.
pub const STATE_FORMAT: u32 = 1;

/// Where a run sits in the state: (iteration, test, run) positions in the vectors, not ids.
pub type RunPos = (usize, usize, usize);

/// Everything the campaign knows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Version of the state format ([`STATE_FORMAT`]); a state of another version is refused on
    /// load.
    pub format: u32,
    /// The campaign settings as they were at `init`.
    pub settings: FrozenSettings,
    /// The balanced components, in the campaign file's order.
    pub components: Vec<FrozenComponent>,
    /// How runs are run; `None` for an externally driven campaign (`next` / `record` only).
    pub executor: Option<ExecutorConfig>,
    /// Absolute directory of the campaign file: relative paths in `[executor]` are resolved
    /// against it.
    pub base_dir: PathBuf,
    /// Every test the campaign has, by id (its origin).
    pub tests: Vec<TestRecord>,
    /// Every lb-iteration so far, in order; the last is the current one.
    pub iterations: Vec<Iteration>,
    /// Set by `campaign cancel`; a cancelled campaign runs nothing more.
    #[serde(default)]
    pub cancelled: bool,
    /// Which snapshot and log the state was read from or written to, and what changed since
    /// ([`State::commit`] writes that); written as the snapshot's `epoch`. Takes no part in
    /// comparing states. A new state starts with `Journal::default()`.
    #[serde(default, rename = "epoch")]
    pub journal: Journal,
}

/// The campaign settings, fixed at `init` so that editing the campaign file later cannot change
/// a campaign half-way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrozenSettings {
    /// Budget for the balanced components together (`max_nproc`).
    pub max_nproc: u32,
    /// PEs that count in CHSY but are never balanced (XIOS, runoff mapper).
    pub extra_pes: u32,
    /// Weight of time to solution in fittingness, in [0, 1].
    pub tts_w: f64,
    /// PEs moved in the first lb-iteration.
    pub initial_step: u32,
    /// A test finishes once its step falls below this many PEs.
    pub minimum_step: u32,
    /// Runs per test and iteration (guided strategy: the most runs of one configuration).
    pub repetitions: u32,
    /// Coupling period in seconds, handed to the timing reader.
    pub period_s: Option<f64>,
    /// Extra attempts of a failed run before it counts as failed.
    pub retries: u32,
    /// The prediction's candidate spacing, interpolation and top N, so a viewer can redo the
    /// prediction the campaign started from (absent in states written before they were kept).
    #[serde(default)]
    pub step: Option<u32>,
    /// Interpolation of the curves in the prediction (absent in older states).
    #[serde(default)]
    pub interp: Option<crate::interp::Method>,
    /// How many configurations the prediction proposed (absent in older states).
    #[serde(default)]
    pub top: Option<usize>,
    /// The machine, cost and queues the campaign bills with; absent for the plain model (and in
    /// states written before machines were described).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_model: Option<crate::machine::CostModel>,
    /// How tests are chosen; absent (Algorithm 1) in Algorithm 1 states, so they read as before.
    #[serde(default, skip_serializing_if = "Strategy::is_default")]
    pub strategy: Strategy,
    /// A scaling campaign's settings (`[scaling]`); absent in a balancing campaign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<crate::config::ScalingSettings>,
    /// The most lb-iterations the campaign takes: the strategy's last decisions end every test
    /// there. `None` for a scaling campaign (its run budget bounds it) and for a campaign made
    /// before the key existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// The layout tree the components run in (`layout`): configurations are task counts,
    /// placed by the tree, and the budget and CHSY count the PEs the layout spans. Absent for
    /// components side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
}

/// One balanced component with its limits, fixed at `init`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrozenComponent {
    /// The component's (curve's) name.
    pub name: String,
    /// Its name in the timing output.
    pub timing_name: String,
    /// A copy of its curve inside the campaign directory (relative to it).
    pub curve: PathBuf,
    /// Fewest PEs a move may leave it with.
    pub low: u32,
    /// Most PEs a move may give it.
    pub high: u32,
    /// PE counts it can run on, ascending; `None` = any count within the limits.
    pub allowed: Option<Vec<u32>>,
    /// OpenMP threads per MPI rank, fixed for the whole campaign. Its PEs (`low`, `high`,
    /// `allowed` and every configuration's counts) are cores, whole multiples of it: the
    /// campaign moves whole ranks. 1 for a pure-MPI component (left out of the state, so
    /// older states read as 1).
    #[serde(default = "one_thread", skip_serializing_if = "is_one_thread")]
    pub threads: u32,
}

fn one_thread() -> u32 {
    1
}

fn is_one_thread(threads: &u32) -> bool {
    *threads == 1
}

impl FrozenComponent {
    /// MPI ranks at `cores` PEs (`cores / threads`).
    pub fn ranks(&self, cores: u32) -> u32 {
        cores / self.threads.max(1)
    }

    /// `cores` as the component runs them: `RxT` (`64x4`) for a hybrid component, the plain
    /// count for a pure-MPI one, as `autolb predict` writes them. A count that is not whole
    /// ranks (or 0, a component a standalone run leaves out) stays a plain count.
    pub fn pes_text(&self, cores: u32) -> String {
        match self.threads {
            t if t > 1 && cores > 0 && cores.is_multiple_of(t) => format!("{}x{t}", cores / t),
            _ => cores.to_string(),
        }
    }
}

impl TimingName for FrozenComponent {
    fn timing_name(&self) -> &str {
        &self.timing_name
    }

    fn threads(&self) -> u32 {
        self.threads.max(1)
    }
}

/// Where a test came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRecord {
    /// Stable id, 0-based, in the order the tests were created.
    pub id: u32,
    /// `prediction #k` or `original`.
    pub origin: String,
}

/// One lb-iteration: every open test's configuration and runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    /// 0-based, as in the paper's figures.
    pub index: u32,
    /// The test's id ([`TestRecord::id`]).
    pub tests: Vec<TestIteration>,
    /// A cold start's phase when the iteration was planned; absent in other campaigns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<ColdStartPhase>,
    /// A cold start's balancing iteration: the FN normalisation the guided strategy compared
    /// configurations on when it planned it (the bounds of the model's predicted landscape);
    /// the status scores every measured configuration on the latest one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalisation: Option<Normalisation>,
}

/// Bounds FN is normalised on ([`crate::metrics::fittingness_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Normalisation {
    /// Bounds of SYPD.
    pub sypd: crate::metrics::Bounds,
    /// Bounds of the cost (CHSY, or the machine's cost).
    pub cost: crate::metrics::Bounds,
}

/// A cold start's two phases: it learns every component's curve from coupled runs, then
/// balances with the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColdStartPhase {
    /// The coupled scaling design chooses the runs.
    Scaling,
    /// The guided strategy chooses the runs, with the model learnt from every coupled run.
    Balancing,
}

/// One test in one lb-iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestIteration {
    /// The test's runs in this iteration, one per repetition.
    pub test: u32,
    /// PEs per component, in component order.
    pub nproc: Vec<u32>,
    /// The test's step when this iteration was created.
    pub step: u32,
    /// Whether the test goes on, finished or failed, and the next configuration.
    pub runs: Vec<Run>,
    /// Taken once every run of the iteration has ended.
    pub decision: Option<Decision>,
    /// Why the strategy chose this test (`model: upper band 0.930 > best 0.910 on the model's FN scale`). Algorithm 1
    /// leaves it out: its reasons follow from the decisions (see [`super::status()`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The component a scaling test measures standalone (its index); `nproc` then gives
    /// PEs to it alone and 0 to the others. `None` for a coupled test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<usize>,
}

/// One run (one repetition of one test in one iteration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// `iII-tTT-rR`, stable: used in `campaign record --run`.
    pub id: String,
    /// 1-based.
    pub repetition: u32,
    /// Pending, running, done or failed.
    pub state: RunState,
    /// The executor's handle while the run is running (and after, for the record).
    pub ticket: Option<Ticket>,
    /// How many times the run was started.
    #[serde(default)]
    pub attempts: u32,
    /// Its measurement, once it is done.
    pub metrics: Option<RunMetrics>,
    /// Why the run failed.
    pub failure: Option<String>,
    /// When its last attempt started and when it ended (unix seconds; absent for runs run
    /// outside a driver, and in states written before they were kept): the wall times a
    /// progress line's ETA comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<f64>,
    /// When its last attempt ended, or it was recorded (unix seconds; absent while it runs, and in
    /// states written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<f64>,
}

/// Now, in unix seconds (0 before 1970).
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A run's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Waiting to be started (or recorded, for an externally driven campaign).
    Pending,
    /// Started by a driver's executor, not ended yet.
    Running,
    /// Measured.
    Done,
    /// Ended without a measurement (after every retry, or recorded as failed).
    Failed,
}

impl RunState {
    /// Whether the run has ended for good (done or failed).
    pub fn is_terminal(self) -> bool {
        matches!(self, RunState::Done | RunState::Failed)
    }
}

/// The decision taken for a test after an iteration (by the campaign's strategy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Component index of the donor (`None` when every run failed).
    pub donor: Option<usize>,
    /// Component index of the recipient (`None` when every run failed).
    pub recipient: Option<usize>,
    /// The step after the halvings of this decision: PEs moved, or the step that fell below
    /// `minimum_step`.
    pub step: u32,
    /// The next configuration, when the test goes on.
    pub next: Option<Vec<u32>>,
    /// Whether the test goes on, and if not why.
    pub outcome: Outcome,
    /// Why the step was halved, in order (for the status and for checking).
    pub notes: Vec<String>,
}

/// How a test goes on after a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Outcome {
    /// Runs again in the next iteration with `Decision::next`.
    Continue,
    /// The step fell below `minimum_step`.
    Finished {
        /// Why, in one line (e.g. the step that fell below `minimum_step`).
        reason: String,
    },
    /// Every run of the test failed in this iteration; the test stops (the guide's *Algorithm 1* page).
    Failed {
        /// Why, in one line.
        reason: String,
    },
}

impl State {
    /// Whether this is a scaling campaign (`[scaling]` without a strategy): it measures
    /// curves and balances nothing.
    pub fn is_scaling(&self) -> bool {
        self.settings.scaling.is_some() && !self.is_cold_start()
    }

    /// Whether this is a cold start (`strategy = "guided"` without curves): the coupled
    /// scaling design first, then guided balancing with the model learnt from the runs.
    pub fn is_cold_start(&self) -> bool {
        self.settings.scaling.is_some() && self.settings.strategy == Strategy::Guided
    }

    /// Cores per node of the campaign's `[machine]`, if it has one.
    pub fn cores_per_node(&self) -> Option<u32> {
        self.settings
            .cost_model
            .as_ref()
            .and_then(|m| m.machine)
            .map(|m| m.cores_per_node)
    }

    /// Whether the campaign measures its curves (a scaling campaign or a cold start): it
    /// writes them to `DIR/curves/NAME.csv` as runs land, and has none to give executors.
    pub fn measures_curves(&self) -> bool {
        self.settings.scaling.is_some()
    }

    /// A cold start's current phase (the last iteration's); `None` in other campaigns.
    pub fn phase(&self) -> Option<ColdStartPhase> {
        if !self.is_cold_start() {
            return None;
        }
        Some(
            self.iterations
                .last()
                .and_then(|it| it.phase)
                .unwrap_or(ColdStartPhase::Scaling),
        )
    }

    /// Whether this is a scaling campaign whose runs are coupled configurations
    /// (`design = "coupled"`): every component measured in every run.
    pub fn is_coupled_scaling(&self) -> bool {
        self.settings
            .scaling
            .as_ref()
            .is_some_and(|s| s.design == crate::config::ScalingDesign::Coupled)
    }

    /// Whether this is a scaling campaign whose runs each hold one component alone.
    pub fn is_standalone_scaling(&self) -> bool {
        self.settings
            .scaling
            .as_ref()
            .is_some_and(|s| s.design == crate::config::ScalingDesign::Standalone)
    }

    /// The components' names, in the campaign file's order.
    pub fn component_names(&self) -> Vec<String> {
        self.components.iter().map(|c| c.name.clone()).collect()
    }

    /// Every run's position `(iteration, test, run)`, in order.
    pub fn run_positions(&self) -> impl Iterator<Item = RunPos> + '_ {
        self.iterations.iter().enumerate().flat_map(|(i, it)| {
            it.tests
                .iter()
                .enumerate()
                .flat_map(move |(t, test)| (0..test.runs.len()).map(move |r| (i, t, r)))
        })
    }

    /// Where test `id` came from (`prediction #1`, `original`, ...), if the campaign has it.
    pub fn origin_of(&self, id: u32) -> Option<&str> {
        self.tests
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.origin.as_str())
    }

    /// How many runs the campaign has made or queued, over every iteration and test.
    pub fn run_count(&self) -> usize {
        self.iterations
            .iter()
            .map(|it| it.tests.iter().map(|t| t.runs.len()).sum::<usize>())
            .sum()
    }

    /// The run at a position from [`State::run_positions`] or [`State::find_run`].
    pub fn run(&self, (i, t, r): RunPos) -> &Run {
        &self.iterations[i].tests[t].runs[r]
    }

    /// The run at a position from [`State::run_positions`] or [`State::find_run`], to change:
    /// the journal notes it, so [`State::commit`] writes it.
    pub fn run_mut(&mut self, (i, t, r): RunPos) -> &mut Run {
        self.journal.run_changed((i, t, r));
        &mut self.iterations[i].tests[t].runs[r]
    }

    /// Takes the decision of test `t` of iteration `i` (noted in the journal, so
    /// [`State::commit`] writes it).
    pub fn decide(&mut self, i: usize, t: usize, decision: Decision) {
        self.journal.decided(i, t);
        self.iterations[i].tests[t].decision = Some(decision);
    }

    /// Finds a run by id.
    pub fn find_run(&self, id: &str) -> Option<RunPos> {
        self.run_positions().find(|&pos| self.run(pos).id == id)
    }

    /// Measures the timing output at `path` as a run of test `(i, t)`: with the campaign's
    /// components, the test's PEs, the extra PEs and the coupling period.
    pub fn measure_run(&self, i: usize, t: usize, path: &Path) -> Result<RunMetrics, Unmeasured> {
        self.measure_test(&self.iterations[i].tests[t], path)
    }

    /// [`State::measure_run`] of a run of `test`, which need not be in this state's
    /// iterations (a [`RunSlice`]'s test).
    pub fn measure_test(
        &self,
        test: &TestIteration,
        path: &Path,
    ) -> Result<RunMetrics, Unmeasured> {
        if let (Some(c), Some(scaling)) = (test.component, &self.settings.scaling) {
            return measure::measure_standalone(
                path,
                &self.components[c],
                c,
                &test.nproc,
                scaling,
                self.settings.period_s,
            );
        }
        if let Some(tree) = super::tree::tree_of(self.settings.layout.as_deref()) {
            return super::tree::measure(
                path,
                &self.components,
                &self.component_names(),
                &test.nproc,
                &tree,
                self.settings.extra_pes,
                self.settings.cost_model.as_ref(),
            );
        }
        measure::measure_billed(
            path,
            &self.components,
            &test.nproc,
            self.settings.extra_pes,
            self.settings.period_s,
            self.settings.cost_model.as_ref(),
        )
    }

    /// Everything an executor needs to start run `(i, t, r)`.
    pub fn request(&self, dir: &Path, i: usize, t: usize, r: usize) -> RunRequest {
        let it = &self.iterations[i];
        self.request_in(dir, it.index, &it.tests[t], r)
    }

    /// [`State::request`] of run `r` of `test` in iteration `iteration` ([`Iteration::index`]),
    /// which need not be in this state's iterations (a [`RunSlice`]'s test).
    pub fn request_in(
        &self,
        dir: &Path,
        iteration: u32,
        test: &TestIteration,
        r: usize,
    ) -> RunRequest {
        let run = &test.runs[r];
        // A standalone run holds its one component, without the coupled run's extra PEs.
        let measured = |k: usize| test.component.is_none_or(|c| c == k);
        RunRequest {
            component: test.component.map(|c| self.components[c].name.clone()),
            id: run.id.clone(),
            iteration,
            test: test.test,
            repetition: run.repetition,
            nproc: self
                .components
                .iter()
                .zip(&test.nproc)
                .enumerate()
                .filter(|&(k, _)| measured(k))
                .map(|(_, (c, &p))| (c.name.clone(), p))
                .collect(),
            threads: if self.components.iter().any(|c| c.threads > 1) {
                self.components
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| measured(k))
                    .map(|(_, c)| c.threads)
                    .collect()
            } else {
                Vec::new()
            },
            extra_pes: if test.component.is_some() {
                0
            } else {
                self.settings.extra_pes
            },
            run_dir: dir.join(run_dir_relative(iteration, test.test, run.repetition)),
        }
    }

    /// True when the campaign has nothing left to run.
    pub fn is_done(&self) -> bool {
        self.cancelled
            || self.iterations.last().is_some_and(|it| {
                it.tests.is_empty() || it.tests.iter().all(|t| t.decision.is_some())
            })
    }
}

/// A run's id: `i00-t03-r1`.
pub fn run_id(iteration: u32, test: u32, repetition: u32) -> String {
    format!("i{iteration:02}-t{test:02}-r{repetition}")
}

/// A run's directory relative to the campaign directory: `iter-00/test-03/rep-1`.
pub fn run_dir_relative(iteration: u32, test: u32, repetition: u32) -> PathBuf {
    PathBuf::from(format!("iter-{iteration:02}"))
        .join(format!("test-{test:02}"))
        .join(format!("rep-{repetition}"))
}

/// Writes a file atomically ([`crate::fsutil::write_atomically`]); errors name the file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CampaignError> {
    crate::fsutil::write_atomically(path, bytes)
        .map_err(|e| CampaignError::io(format!("cannot write {}", path.display()), e))
}

// How many lb-iterations a campaign can take at most: Algorithm 1 moves each test by `step`
// until it reaches its limit, halving the step down to `minimum_step` (the reasoning is in
// `campaign::bound`'s module docs). Here, below both the plan and the status that show it.

/// Whether [`iteration_bound`] is proven for this campaign. The bound follows Algorithm 1's
/// moves; a guided campaign usually takes fewer iterations, but nothing proves it, and with
/// more than two components the donor and recipient change.
pub fn bound_is_proven(state: &State) -> bool {
    state.components.len() <= 2 && state.settings.strategy == crate::config::Strategy::Algorithm1
}

/// Most moves a component can receive at one step value: one per PE count it can grow to.
pub fn moves_at(c: &FrozenComponent, step: u32) -> u64 {
    let range = u64::from(c.high.saturating_sub(c.low));
    match &c.allowed {
        Some(list) => {
            let counted = list.iter().filter(|&&p| p > c.low && p <= c.high).count() as u64;
            // Evenly spaced counts (a hybrid component's whole ranks: every multiple of its
            // threads): a move of `step` lands on the nearest count, so it moves at least the
            // multiple of the spacing nearest to `step` (ties to the smaller).
            let spacing = list.get(1).zip(list.first()).map(|(b, a)| b - a);
            match spacing {
                Some(d) if d > 0 && step >= d && list.windows(2).all(|w| w[1] - w[0] == d) => {
                    let least = u64::from((step + (d - 1) / 2) / d).max(1) * u64::from(d);
                    counted.min(range.div_ceil(least))
                }
                _ => counted,
            }
        }
        None => range.div_ceil(u64::from(step.max(1))),
    }
}

/// The step values of a test: `initial_step`, halved, down to `minimum_step`.
pub fn step_values(initial_step: u32, minimum_step: u32) -> Vec<u32> {
    let mut steps = Vec::new();
    let mut step = initial_step;
    while step >= minimum_step.max(1) {
        steps.push(step);
        step /= 2;
    }
    steps
}

/// An upper bound on the lb-iterations of any test (see [`crate::campaign::bound`]).
pub fn iteration_bound(
    components: &[FrozenComponent],
    initial_step: u32,
    minimum_step: u32,
) -> u32 {
    let mut total: u64 = 1;
    for step in step_values(initial_step, minimum_step) {
        let counts = components.iter().map(|c| moves_at(c, step));
        total += if components.len() <= 2 {
            counts.max().unwrap_or(0)
        } else {
            counts.sum()
        };
    }
    u32::try_from(total).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_and_dirs() {
        assert_eq!(run_id(0, 3, 1), "i00-t03-r1");
        assert_eq!(
            run_dir_relative(2, 10, 2),
            PathBuf::from("iter-02/test-10/rep-2")
        );
    }

    #[test]
    fn atomic_write_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        // No temp files left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_holder_is_seen_while_the_lock_is_held_and_not_after() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Lock::holder(dir.path()), None, "no lock file: no driver");
        let lock = Lock::acquire(dir.path()).unwrap();
        let holder = Lock::holder(dir.path()).expect("held");
        assert!(holder.starts_with("pid "), "{holder}");
        drop(lock);
        assert_eq!(Lock::holder(dir.path()), None);
        // A probe does not stop a driver from taking the lock.
        assert!(Lock::holder(dir.path()).is_none());
        let _again = Lock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_second_lock_is_refused_and_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = Lock::acquire(dir.path()).unwrap();
        let e = Lock::acquire(dir.path()).unwrap_err().to_string();
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(first);
        // Released: taking it again works (the file with the old pid is still there).
        Lock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_deleted_lock_file_lets_no_second_holder_in() {
        let dir = tempfile::tempdir().unwrap();
        let first = Lock::acquire(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join(LOCK_FILE)).unwrap();
        let e = Lock::acquire(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("campaign.lock was deleted") && !e.contains("has not written its pid"),
            "{e}"
        );
        drop(first);
        Lock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn waiting_for_the_lock_gets_it_once_released_or_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let first = Lock::acquire(dir.path()).unwrap();
        let t = std::time::Instant::now();
        let e = Lock::acquire_wait(dir.path(), std::time::Duration::from_millis(200)).unwrap_err();
        assert!(t.elapsed() >= std::time::Duration::from_millis(200));
        assert!(
            e.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        let path = dir.path().to_path_buf();
        let waiter = std::thread::spawn(move || {
            Lock::acquire_wait(&path, std::time::Duration::from_secs(20)).map(|_| ())
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(first);
        waiter.join().unwrap().unwrap();
    }
}
