//! The campaign as a table: lb-iteration x test, with per-run rows, the derived means,
//! fittingness and the best configuration so far. Its JSON form is `campaign status --json`.
//!
//! The derived columns (means, FN, best) are recomputed from the runs by [`Status::recompute`],
//! so a viewer that learns a run's measurement before the driver records it (the terminal app
//! watching run directories) can set the run's fields and call it.

use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::measure;
use super::state::{run_dir_relative, Outcome, RunMetrics, RunState, State};
use super::strategy::algorithm1::{self, Measured};
use super::strategy::scaling::output as scaling_output;
pub use super::strategy::scaling::output::CurvePoint;
use super::strategy::scaling::points::{points_of, pooled_noise};

mod derive;
mod narrow;
pub mod progress;
mod table;
pub use table::runs_summary;

/// The demo campaign made in `tmp/campaign` from the bundled inputs, for the tests of the
/// text forms (made here, not through `campaign::demo`, which reads statuses itself).
#[cfg(test)]
fn demo_state(tmp: &Path) -> (PathBuf, State) {
    crate::example::write_curves(&tmp.join("curves")).unwrap();
    std::fs::write(
        tmp.join("nemo_orca1_allowed_nproc.txt"),
        crate::example::NEMO_ALLOWED,
    )
    .unwrap();
    let file = tmp.join("demo-campaign.toml");
    std::fs::write(&file, include_str!("../../../assets/demo-campaign.toml")).unwrap();
    let dir = tmp.join("campaign");
    let file = crate::config::CampaignFile::load(&file).unwrap();
    crate::campaign::init(&dir, &file, tmp, false).unwrap();
    let state = State::load(&dir).unwrap();
    (dir, state)
}

/// A map from component name to a value that keeps component order (JSON object).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NameMap<T>(pub Vec<(String, T)>);

impl<T> NameMap<T> {
    /// Pairs names with values in order (as many pairs as the shorter of the two has).
    pub fn zip(names: &[String], values: impl IntoIterator<Item = T>) -> NameMap<T> {
        NameMap(names.iter().cloned().zip(values).collect())
    }

    /// The value of component `name`, if it is in the map.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The values, in component order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter().map(|(_, v)| v)
    }

    /// Whether the map holds no component.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T: Serialize> Serialize for NameMap<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NameMap<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = NameMap<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map from component name to value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry()? {
                    v.push((k, x));
                }
                Ok(NameMap(v))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// Where the whole campaign stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Runs are still to be run or recorded.
    Running,
    /// No test is open: the campaign finished.
    Done,
    /// `campaign cancel` stopped the campaign.
    Cancelled,
}

/// Where one test stands in one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestState {
    /// No run started.
    Pending,
    /// Some runs started, not all ended.
    Running,
    /// Measured; the test goes on in the next iteration.
    Done,
    /// Every run failed; the test stopped.
    Failed,
    /// Measured; the step fell below `minimum_step`, the test stopped.
    Finished,
    /// A cancel ended every run before it started (none failed, none measured).
    Cancelled,
}

/// `campaign status --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// Where the whole campaign stands.
    pub state: Phase,
    /// The current lb-iteration (the last created); `None` before any.
    #[serde(default)]
    pub iteration: Option<u32>,
    /// Nothing more will run: the campaign is done or cancelled.
    #[serde(default)]
    pub done: bool,
    /// Every lb-iteration with its tests, in order.
    pub iterations: Vec<IterationView>,
    /// The best configuration measured so far (`None` before any run succeeded).
    pub best: Option<BestView>,
    /// Component names in order.
    pub components: Vec<String>,
    /// The fittingness weight.
    pub tts_w: f64,
    /// PEs that count in CHSY but are never balanced (XIOS, runoff mapper).
    pub extra_pes: u32,
    /// PEs moved in the first lb-iteration.
    pub initial_step: u32,
    /// A test finishes once its step falls below this many PEs.
    pub minimum_step: u32,
    /// Runs per test and iteration (guided: the most runs of one configuration).
    pub repetitions: u32,
    /// The executor kind, or `external` for `next` / `record` campaigns.
    pub executor: String,
    /// Runs per state over the whole campaign.
    pub counts: RunCounts,
    /// Each component's name in the timing output, in component order.
    pub timing_names: Vec<String>,
    /// The coupling period the timing reader uses.
    pub period_s: Option<f64>,
    /// The machine and cost the best is chosen by (absent: CHSY, as the guide's
    /// `method/prediction.md` defines it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_model: Option<crate::machine::CostModel>,
    /// The layout tree the components run in, when the campaign has one (`layout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// How the campaign chooses its tests (`algorithm1` or `guided`).
    #[serde(default)]
    pub strategy: crate::config::Strategy,
    /// Who drives the campaign, from its heartbeat: filled by [`super::status()`], which
    /// reads the directory; `None` from [`Status::from_state`], which reads only the state.
    /// Boxed: a status is carried whole in reports, where it should stay small.
    #[serde(default)]
    pub driver: Option<Box<super::DriverView>>,
    /// An upper bound on the lb-iterations ([`crate::campaign::bound`]), and whether it is
    /// proven (Algorithm 1 with two components) or an estimate.
    #[serde(default)]
    pub iterations_at_most: Option<u32>,
    /// Whether `iterations_at_most` is proven (Algorithm 1 with two components) rather than
    /// estimated.
    #[serde(default)]
    pub bound_proven: bool,
    /// A scaling campaign's measured curves, per component in order: `{NAME: [{"nproc",
    /// "sypd", "sd", "runs"}]}`; absent in a balancing campaign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curves: Option<NameMap<Vec<CurvePoint>>>,
    /// A scaling campaign's PE counts per component: measured and queued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<NameMap<ScalingCounts>>,
    /// How the curves are measured (`standalone` or `coupled`), in a scaling campaign and in
    /// a cold start; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<crate::config::ScalingDesign>,
    /// A scaling campaign's own settings (`[scaling]`), for the report to list them instead
    /// of the balancing settings it does not use. Not in `status --json`: the campaign file
    /// and `campaign.json` hold them.
    #[serde(skip)]
    pub scaling_settings: Option<crate::config::ScalingSettings>,
    /// A cold start's phase and FN normalisation; absent in other campaigns. Boxed: a
    /// status is carried whole in reports, where it should stay small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_start: Option<Box<ColdStartView>>,
    /// A campaign that measures its curves: one note per curve file (`DIR/curves/NAME.csv`)
    /// that disagrees with what the state measured, naming both. Every view predicts from the
    /// state, so the note says why an edited file changed nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curve_notes: Vec<String>,
    /// OpenMP threads per rank of each component, when one runs more than one (absent for
    /// pure MPI): every `nproc` counts cores, `nproc / threads` ranks, as `autolb predict`'s
    /// JSON has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<NameMap<u32>>,
}

/// Where a cold start stands (`campaign status --json`'s `"cold_start"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColdStartView {
    /// The phase in one line (`phase scaling: ...` while it learns the curves in coupled
    /// runs, `phase balancing: ...` once the model guides).
    pub phase: String,
    /// The FN normalisation: the bounds of the model's predicted landscape the guided strategy
    /// last compared on (absent in the scaling phase, which has no FN and no best yet). The
    /// scaling phase's runs span every component's whole range; normalising over the measured
    /// configurations, as other campaigns do, would judge the answer against configurations
    /// nobody would choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalisation: Option<super::state::Normalisation>,
}

impl Status {
    /// Component `c`'s `cores` as it runs them: `RxT` for a hybrid component (`64x4`), the
    /// plain count otherwise.
    pub fn pes_text(&self, c: usize, cores: u32) -> String {
        match self
            .threads
            .as_ref()
            .and_then(|t| t.0.get(c))
            .map(|(_, t)| *t)
        {
            Some(t) if t > 1 => format!("{}x{t}", cores / t),
            _ => cores.to_string(),
        }
    }

    /// A configuration's cores per component as text, `RxT` for hybrid components.
    pub fn pes_texts<'a>(&'a self, nproc: impl IntoIterator<Item = &'a u32>) -> Vec<String> {
        nproc
            .into_iter()
            .enumerate()
            .map(|(c, &p)| self.pes_text(c, p))
            .collect()
    }
}

/// A component's PE counts in a scaling campaign.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ScalingCounts {
    /// Counts with at least one measured run kept, ascending.
    pub measured: Vec<u32>,
    /// Counts with runs pending or running, ascending.
    pub queued: Vec<u32>,
    /// Measured runs left out as outliers (run ids).
    pub outliers: Vec<String>,
    /// Counts far below the curve through their neighbours that every run confirmed: real
    /// features of the curve (dips), kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<u32>,
}

/// Runs per state over the whole campaign. Each run counts once: a run the state file has as
/// running but whose driver took it along counts in `stopped_with_driver`, not in `running`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCounts {
    /// Runs waiting to be started or recorded.
    pub pending: usize,
    /// Runs started and not ended.
    pub running: usize,
    /// Runs measured.
    pub done: usize,
    /// Runs that failed after every retry.
    pub failed: usize,
    /// Runs a cancel ended before they ever started.
    #[serde(default)]
    pub cancelled: usize,
    /// Runs the state file has as running that died with their lost driver (the `sim`
    /// executor's; see [`RunView::stopped_with_driver`]); a resume runs them again.
    #[serde(default)]
    pub stopped_with_driver: usize,
}

/// The word for a run the state file has as running whose driver took it along (see
/// [`crate::campaign::DriverState::took_runs_with_it`]).
pub const STOPPED_WITH_DRIVER: &str = "stopped with the driver";

/// [`STOPPED_WITH_DRIVER`] for a narrow table.
pub const STOPPED_SHORT: &str = "stopped";

impl RunCounts {
    /// Counts one run where every view counts it: a run its lost driver took along is
    /// stopped, not running; a run a cancel ended before it started is cancelled, not failed.
    pub fn add(&mut self, run: &RunView) {
        match run.state {
            RunState::Pending => self.pending += 1,
            RunState::Running if run.stopped_with_driver => self.stopped_with_driver += 1,
            RunState::Running => self.running += 1,
            RunState::Done => self.done += 1,
            RunState::Failed if run.cancelled_before_start() => self.cancelled += 1,
            RunState::Failed => self.failed += 1,
        }
    }

    /// Adds another set of counts (a test's to the campaign's).
    pub fn merge(&mut self, other: &RunCounts) {
        self.pending += other.pending;
        self.running += other.running;
        self.done += other.done;
        self.failed += other.failed;
        self.cancelled += other.cancelled;
        self.stopped_with_driver += other.stopped_with_driver;
    }

    /// `runs 5 done, 1 running, 2 queued, 1 failed, 3 cancelled, 2 stopped with the driver`:
    /// the failed, cancelled and stopped parts only when there are any.
    pub fn text(&self) -> String {
        let mut s = format!(
            "runs {} done, {} running, {} queued",
            self.done, self.running, self.pending
        );
        if self.failed > 0 {
            s.push_str(&format!(", {} failed", self.failed));
        }
        if self.cancelled > 0 {
            s.push_str(&format!(", {} cancelled", self.cancelled));
        }
        if self.stopped_with_driver > 0 {
            s.push_str(&format!(
                ", {} {STOPPED_WITH_DRIVER}",
                self.stopped_with_driver
            ));
        }
        s
    }

    /// [`RunCounts::text`] for a narrow line: `runs 5/1/2 ✗1 3 cancelled 2 stopped` (done,
    /// running, queued, failed, cancelled, stopped).
    pub fn short_text(&self) -> String {
        let mut s = format!("runs {}/{}/{}", self.done, self.running, self.pending);
        if self.failed > 0 {
            s.push_str(&format!(" ✗{}", self.failed));
        }
        if self.cancelled > 0 {
            s.push_str(&format!(" {} cancelled", self.cancelled));
        }
        if self.stopped_with_driver > 0 {
            s.push_str(&format!(" {} {STOPPED_SHORT}", self.stopped_with_driver));
        }
        s
    }
}

/// One lb-iteration of the table: its tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationView {
    /// The iteration's index (0-based).
    pub iteration: u32,
    /// Its tests, in test order.
    pub tests: Vec<TestView>,
}

/// One row of the iteration table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestView {
    /// The test's id (0-based, stable over iterations).
    pub test: u32,
    /// PEs per component in this iteration.
    pub nproc: NameMap<u32>,
    /// The test's step in this iteration.
    pub step: u32,
    /// Where the test stands in this iteration.
    pub state: TestState,
    /// Its runs in this iteration, one per repetition.
    pub runs: Vec<RunView>,
    /// Means over the measured runs.
    pub sypd: Option<f64>,
    /// Mean CHSY over the measured runs.
    pub chsy: Option<f64>,
    /// Mean coupling cost over the measured runs, a fraction.
    pub coupling_cost: Option<f64>,
    /// Mean partial coupling cost per component over the measured runs.
    pub partial_coupling_cost: NameMap<f64>,
    /// Normalised over every measured configuration of the campaign.
    pub fittingness: Option<f64>,
    /// The component that gives PEs after this iteration (the one that waited most).
    pub donor: Option<String>,
    /// The component that receives them.
    pub recipient: Option<String>,
    /// All PEs of the configuration, the extra PEs included.
    pub total_nproc: u32,
    /// Where the test came from: `prediction #k` or `original`.
    pub origin: String,
    /// The PEs moved after this iteration (the step after any halving).
    pub next_step: Option<u32>,
    /// PEs per component in the next iteration, when the test goes on.
    pub next_nproc: Option<NameMap<u32>>,
    /// Why the step was halved, why the test stopped.
    pub notes: Vec<String>,
    /// Why this test runs in this iteration: the guided strategy's choice
    /// (`model: upper band 0.930 > best 0.910 on the model's FN scale`, `donor/recipient: ...`,
    /// `repetition: ...`), or for Algorithm 1 its origin (iteration 0) or the move that led here.
    #[serde(default)]
    pub reason: Option<String>,
}

/// One run of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunView {
    /// Pending, running, done or failed.
    pub state: RunState,
    /// Its coupled SYPD, once measured.
    pub sypd: Option<f64>,
    /// Its CHSY, once measured.
    pub chsy: Option<f64>,
    /// Its coupling cost, a fraction, once measured.
    pub coupling_cost: Option<f64>,
    /// The run's id (`i00-t03-r1`).
    pub run: String,
    /// Its repetition (1-based).
    pub repetition: u32,
    /// Its partial coupling cost per component, once measured.
    pub partial_coupling_cost: NameMap<f64>,
    /// Its directory, `iter-II/test-TT/rep-R/` under the campaign directory (absolute when the
    /// campaign directory is).
    pub run_dir: PathBuf,
    /// The executor's ticket (a Slurm job id, a process id).
    pub job: Option<String>,
    /// How many times it was started.
    pub attempts: u32,
    /// Why it failed, when it did.
    pub failure: Option<String>,
    /// When its last attempt started and ended (unix seconds), when a driver ran it.
    #[serde(default)]
    pub started_at: Option<f64>,
    /// When its last attempt ended, or it was recorded (unix seconds), once it has.
    #[serde(default)]
    pub ended_at: Option<f64>,
    /// The state file has it running, but its driver is lost and took it along (the `sim`
    /// executor runs it inside the driver's process): it can never finish, and a resume runs
    /// it again. Derived from the state and the driver's liveness ([`Status::set_driver`]);
    /// `state` stays as the state file has it. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped_with_driver: bool,
}

impl RunView {
    /// Sets the run's measurement (e.g. from a timing file read before the driver recorded it).
    pub fn set_measured(&mut self, m: &RunMetrics, components: &[String]) {
        self.state = RunState::Done;
        self.sypd = Some(m.sypd);
        self.chsy = Some(m.chsy);
        self.coupling_cost = Some(m.coupling_cost);
        self.partial_coupling_cost =
            NameMap::zip(components, m.partial_coupling_cost.iter().copied());
        self.failure = None;
        self.stopped_with_driver = false;
    }

    /// The run's state as every view shows it: [`STOPPED_WITH_DRIVER`] for a run its driver
    /// took along, else the state file's.
    pub fn word(&self) -> &'static str {
        if self.stopped_with_driver {
            STOPPED_WITH_DRIVER
        } else if self.cancelled_before_start() {
            "cancelled"
        } else {
            self.state.as_str()
        }
    }

    /// Whether a cancel ended the run before it ever started: it counts as cancelled, not
    /// failed.
    pub fn cancelled_before_start(&self) -> bool {
        self.state == RunState::Failed
            && self.failure.as_deref() == Some(crate::campaign::CANCELLED_BEFORE_START)
    }

    fn metrics(&self, components: &[String]) -> Option<RunMetrics> {
        if self.state != RunState::Done {
            return None;
        }
        Some(RunMetrics {
            sypd: self.sypd?,
            chsy: self.chsy?,
            coupling_cost: self.coupling_cost?,
            partial_coupling_cost: components
                .iter()
                .map(|c| self.partial_coupling_cost.get(c).copied())
                .collect::<Option<Vec<f64>>>()?,
        })
    }
}

/// The best configuration measured so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestView {
    /// Its PEs per component.
    pub nproc: NameMap<u32>,
    /// Mean coupled SYPD over its measured runs.
    pub sypd: f64,
    /// Mean CHSY over its measured runs.
    pub chsy: f64,
    /// Mean coupling cost over its measured runs, a fraction.
    pub coupling_cost: f64,
    /// Its fittingness, in [0, 1], normalised over every measured configuration (the highest of
    /// them).
    pub fittingness: f64,
    /// The iteration that measured it (the first, for a configuration run in several).
    pub iteration: u32,
    /// The test that measured it.
    pub test: u32,
    /// All its PEs, the extra PEs included.
    pub total_nproc: u32,
    /// How many runs its means rest on (fewer than `repetitions` when some failed).
    #[serde(default)]
    pub runs: u32,
    /// Every row whose runs its means pool, as `[iteration, test]`, first to last: the
    /// guided strategy repeats a configuration in a later iteration, and then the means are
    /// over all of them, not one row's.
    #[serde(default)]
    pub measured_in: Vec<[u32; 2]>,
}

impl BestView {
    /// Whether its means pool the runs of more than one row, so that they differ from every
    /// row's own by design.
    pub fn pools_rows(&self) -> bool {
        self.measured_in.len() > 1
    }

    /// Where it was measured: `iteration 1, test 4`, or, when its means pool several rows,
    /// `mean of 3 runs in iterations 1 and 13, test 4` (`... in iterations/tests 1/4 and 5/6`
    /// when the tests differ).
    pub fn measured_in_text(&self) -> String {
        if !self.pools_rows() {
            return format!("iteration {}, test {}", self.iteration, self.test);
        }
        let and = |items: Vec<String>| match items.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let test = self.measured_in[0][1];
        if self.measured_in.iter().all(|r| r[1] == test) {
            let its = self.measured_in.iter().map(|r| r[0].to_string()).collect();
            format!(
                "mean of {} runs in iterations {}, test {test}",
                self.runs,
                and(its)
            )
        } else {
            let rows = self
                .measured_in
                .iter()
                .map(|r| format!("{}/{}", r[0], r[1]))
                .collect();
            format!(
                "mean of {} runs in iterations/tests {}",
                self.runs,
                and(rows)
            )
        }
    }
}

impl RunState {
    /// The state's name as the status table and JSON print it.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Pending => "pending",
            RunState::Running => "running",
            RunState::Done => "done",
            RunState::Failed => "failed",
        }
    }
}

impl Phase {
    /// The phase's name as the status table and JSON print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Running => "running",
            Phase::Done => "done",
            Phase::Cancelled => "cancelled",
        }
    }
}

impl TestState {
    /// The test state's name as the status table and JSON print it.
    pub fn as_str(self) -> &'static str {
        match self {
            TestState::Pending => "pending",
            TestState::Running => "running",
            TestState::Done => "done",
            TestState::Failed => "failed",
            TestState::Finished => "finished",
            TestState::Cancelled => "cancelled",
        }
    }
}

impl TestView {
    /// Runs measured (done).
    pub fn runs_done(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.state == RunState::Done)
            .count()
    }

    /// The test's runs counted as the campaign's summary counts them: the summary is the sum
    /// of these, and the test's state word is read from them, so the two always agree.
    pub fn counts(&self) -> RunCounts {
        let mut counts = RunCounts::default();
        for run in &self.runs {
            counts.add(run);
        }
        counts
    }

    /// Runs that failed, not counting those a cancel ended before they started.
    pub fn runs_failed(&self) -> usize {
        self.counts().failed
    }

    /// The row's state with its runs, e.g. `done 1/2 ✗1` (see [`runs_summary`]); a running
    /// row whose driver took its runs along says `stopped with the driver 0/2`.
    pub fn summary(&self) -> String {
        self.summary_in(self.stopped_with_driver(), STOPPED_WITH_DRIVER)
    }

    /// [`TestView::summary`] for a narrow table: `stopped 0/2` for a row whose driver took its
    /// runs along.
    pub fn short_summary(&self) -> String {
        self.summary_in(self.stopped_with_driver(), STOPPED_SHORT)
    }

    /// [`TestView::summary`] as it reads once the driver took the runs along, for a viewer
    /// that learns of it after it built the row (a driver read again on its own host, or
    /// aged past its beat); `None` when the row has no running run.
    pub fn summary_if_stopped(&self) -> Option<String> {
        self.runs
            .iter()
            .any(|r| r.state == RunState::Running)
            .then(|| self.summary_in(true, STOPPED_WITH_DRIVER))
    }

    /// Whether the row is running only because its state file says so: its running runs died
    /// with the driver.
    fn stopped_with_driver(&self) -> bool {
        self.runs.iter().any(|r| r.stopped_with_driver)
    }

    fn summary_in(&self, stopped: bool, stopped_word: &str) -> String {
        let failed = self.runs_failed();
        let word = match self.state {
            TestState::Running if stopped => stopped_word,
            state => state.as_str(),
        };
        runs_summary(word, self.runs_done(), failed, self.runs.len())
    }
}
