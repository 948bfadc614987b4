//! The built-in stand-in coupled model (`autolb simulate`, used by the `sim` executor): writes
//! raw LUCIA files, or an EC-Earth4 run directory ([`SimOutput`]), for a run of any
//! configuration, hybrid MPI/OpenMP components included.
//!
//! It is a small discrete-event simulation of an OASIS coupling, not a table of made-up
//! numbers: every coupling step, each component computes (its time per step comes from its
//! "truth" scalability curve at its PE count, with noise and periodic heavy steps such as IFS
//! radiation), interpolates and puts its field, then gets what the others put. A get returns
//! when the slowest sender's field is there, so waiting arises from the coupling itself and the
//! LUCIA files it writes read back (with [`crate::timing`]) as the compute and waiting
//! seconds the model produced. Sampled ranks follow OASIS' rule (which ranks write a file), and
//! ranks differ a little (load imbalance), which shows up as jitter.
//!
//! With a time compression factor the files are written while the run "runs": a modelled
//! second takes `compression` real seconds, so a campaign watcher sees half-written files.
//!
//! [`synthetic`] draws random cases (standalone curves and a hidden coupled-mode truth) to
//! judge performance models on shapes nobody chose.

pub mod cime;
pub mod ec4_runs;
mod ecearth4;
mod model;
pub mod synthetic;
pub mod synthetic_check;
mod writer;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::curve::Curve;

pub use model::{ComponentOutcome, SimOutcome};

/// Defaults, chosen to look like EC-Earth3 SR on MareNostrum4.
pub mod defaults {
    /// Coupling period of EC-Earth3 SR (IFS-NEMO exchange every 45 minutes).
    pub const PERIOD_S: f64 = 2700.0;
    /// Coupling steps per run: enough for a stable measurement, a few seconds of model time.
    pub const STEPS: u32 = 40;
    /// Relative standard deviation of a step's compute time.
    pub const NOISE: f64 = 0.02;
    /// Interpolation seconds per sent field and step.
    pub const INTERP_S: f64 = 0.003;
    /// Seconds in a put call per step.
    pub const PUT_S: f64 = 0.0002;
    /// Every how many steps a component has a heavy step (IFS radiation: every 4th, 3 hours).
    pub const HEAVY_EVERY: u32 = 4;
    /// How much longer a heavy step computes than an ordinary one.
    pub const HEAVY_FACTOR: f64 = 1.5;
    /// Largest relative difference between ranks' compute times.
    pub const RANK_IMBALANCE: f64 = 0.01;
    /// Speed kept per doubling of OpenMP threads in a coupled run, beyond what the component's
    /// curve at that thread count says (threads compete for memory bandwidth beside the other
    /// components): 4 threads a rank run at 0.92^2 = 0.85 of the curve's speed.
    pub const THREAD_EFFICIENCY: f64 = 0.92;
    /// How many times longer a slow run (`slow_runs`) computes than it should: a bad node or
    /// a busy file system makes a run a third as fast.
    pub const SLOW_FACTOR: f64 = 3.0;
}

/// What timing output the stand-in model writes (`[executor.sim] output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SimOutput {
    /// Raw LUCIA files, `lucia.CC.RRRRRR`, as EC-Earth3's OASIS3-MCT 4 writes them.
    #[default]
    Lucia,
    /// An EC-Earth4 run directory: OASIS 5's `load_balancing_info.txt` and the run script's
    /// `log/001/timing.log`.
    Oasis5,
    /// A campaign on a layout tree: MCT's CIME timing summary, `timing/cesm_timing.*`.
    Mct,
    /// A campaign on a layout tree: CMEPS's CIME timing summary (the default with a layout).
    Cmeps,
}

/// `[executor.sim]` settings. Every field is optional; see [`defaults`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSettings {
    /// Truth curves per component (`NAME = "path.csv"`, relative to the campaign file): the speed
    /// the stand-in model runs at. Default: the built-in EC-Earth3 SR curves for IFS/ATMIFS and
    /// NEMO/oceanx, else the campaign's own curve.
    pub curves: Option<BTreeMap<String, PathBuf>>,
    /// Standalone speed per component (`NAME = "path.csv"`): what a standalone run of it (a
    /// scaling campaign's) runs at. Default: its truth curve (`curves`), i.e. no coupled-mode
    /// slowdown.
    pub standalone_curves: Option<BTreeMap<String, PathBuf>>,
    /// Coupling steps per run (the LUCIA files hold one more exchange: the initial one).
    pub steps: Option<u32>,
    /// Coupling period in seconds.
    pub period_s: Option<f64>,
    /// Relative standard deviation of a step's compute time (0 = none).
    pub noise: Option<f64>,
    /// Interpolation seconds per sent field and step (coupling overhead).
    pub interp_s: Option<f64>,
    /// Interpolation seconds per sent field and step added for every PE of the sending
    /// component (default 0): a coupling overhead that grows with the PE count, as the
    /// exchange of a field spread over more ranks does.
    pub interp_s_per_pe: Option<f64>,
    /// Seconds in each put call (coupling overhead).
    pub put_s: Option<f64>,
    /// Fields each component sends per exchange (default 1; EC-Earth3's IFS sends 5).
    pub fields: Option<u32>,
    /// Every how many steps a heavy step comes (0 = none).
    pub heavy_every: Option<u32>,
    /// Compute time of a heavy step relative to an ordinary one (the mean is kept on the curve).
    pub heavy_factor: Option<f64>,
    /// Components with heavy steps (default: the atmosphere, IFS/ATMIFS).
    pub heavy_components: Option<Vec<String>>,
    /// Largest relative difference of compute time between a component's ranks.
    pub rank_imbalance: Option<f64>,
    /// Real seconds per modelled second; 0 or absent writes everything at once. 0.01 makes a
    /// 40-step EC-Earth3 run take well under a second.
    pub compression: Option<f64>,
    /// Seed of the noise, combined with each run's own seed.
    pub seed: Option<u64>,
    /// Speed kept per doubling of OpenMP threads per rank, in (0, 1]: a hybrid component runs
    /// at its curve's speed at its thread count times this to the power log2(threads). Hidden
    /// from the performance model, which must learn it from the runs.
    pub thread_efficiency: Option<f64>,
    /// The timing output written: `"lucia"` (default) or `"oasis5"` (an EC-Earth4 run
    /// directory).
    pub output: Option<SimOutput>,
    /// Make runs fail: the model stops after this many steps, leaving cut files, and
    /// reports failure (exit status 1 from `autolb simulate`).
    pub fail_after: Option<u32>,
    /// Probability that a run fails (at a random step), drawn from the run's seed.
    pub fail_probability: Option<f64>,
    /// Share of runs that are slow as a whole (a bad node, a busy file system), drawn from
    /// each run's seed: every component of such a run computes `slow_factor` times longer.
    pub slow_runs: Option<f64>,
    /// How many times longer a slow run computes (default 3).
    pub slow_factor: Option<f64>,
}

impl SimSettings {
    /// Checks the values a user can get wrong, naming the key.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad =
            |key: &str, why: &str| Err(SimError::Settings(format!("[executor.sim] {key}: {why}")));
        use crate::limits;
        if let Some(p) = self.period_s {
            if !(p.is_finite() && p > 0.0 && p <= limits::MAX_PERIOD_S) {
                return bad(
                    "period_s",
                    &format!(
                        "must be a positive number of seconds up to {} (a day), e.g. 2700",
                        limits::MAX_PERIOD_S
                    ),
                );
            }
        }
        if self.steps.is_some_and(|s| s < 5) {
            return bad(
                "steps",
                "must be at least 5 (LUCIA analysis skips 3 exchanges)",
            );
        }
        if self.steps.is_some_and(|s| s > limits::MAX_SIM_STEPS) {
            return bad(
                "steps",
                &format!("must be at most {}", limits::MAX_SIM_STEPS),
            );
        }
        if self
            .compression
            .is_some_and(|c| c > limits::MAX_COMPRESSION)
        {
            return bad(
                "compression",
                &format!(
                    "must be at most {} real seconds per modelled second",
                    limits::MAX_COMPRESSION
                ),
            );
        }
        for (key, v) in [
            ("noise", self.noise),
            ("interp_s", self.interp_s),
            ("interp_s_per_pe", self.interp_s_per_pe),
            ("put_s", self.put_s),
            ("compression", self.compression),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v >= 0.0) {
                    return bad(key, "must be a finite number >= 0");
                }
            }
        }
        if self.fields.is_some_and(|f| !(1..=9).contains(&f)) {
            return bad("fields", "must be between 1 and 9");
        }
        if let Some(f) = self.heavy_factor {
            if !(f.is_finite() && f >= 1.0) {
                return bad("heavy_factor", "must be >= 1 (1 = no heavy steps)");
            }
        }
        if let Some(r) = self.rank_imbalance {
            if !(r.is_finite() && (0.0..0.5).contains(&r)) {
                return bad("rank_imbalance", "must be in [0, 0.5)");
            }
        }
        if let Some(p) = self.fail_probability {
            if !(0.0..=1.0).contains(&p) {
                return bad("fail_probability", "must be in [0, 1]");
            }
        }
        if let Some(p) = self.slow_runs {
            if !(0.0..=1.0).contains(&p) {
                return bad(
                    "slow_runs",
                    "must be in [0, 1], e.g. 0.25 for one run in four",
                );
            }
        }
        if let Some(f) = self.slow_factor {
            if !(f.is_finite() && (1.0..=100.0).contains(&f)) {
                return bad("slow_factor", "must be between 1 and 100, e.g. 3");
            }
        }
        if let Some(e) = self.thread_efficiency {
            if !(e.is_finite() && e > 0.0 && e <= 1.0) {
                return bad("thread_efficiency", "must be in (0, 1], e.g. 0.92");
            }
        }
        if let Some(n) = self.noise {
            if n >= 0.5 {
                return bad("noise", "must be below 0.5 (a relative standard deviation)");
            }
        }
        Ok(())
    }

    /// Coupling period in simulated seconds (`period_s`, default 2700).
    pub fn period(&self) -> f64 {
        self.period_s.unwrap_or(defaults::PERIOD_S)
    }

    /// Coupling steps the run simulates (`steps`, default 40).
    pub fn steps(&self) -> u32 {
        self.steps.unwrap_or(defaults::STEPS)
    }

    /// The truth curve configured for a component known by any of `names` (its campaign name,
    /// its timing name), loaded relative to `base_dir`; `Ok(None)` when none is configured.
    pub fn configured_curve(
        &self,
        names: &[&str],
        base_dir: &Path,
    ) -> Result<Option<Curve>, SimError> {
        Self::curve_in(self.curves.as_ref(), names, base_dir)
    }

    /// The truth curve configured for a component at `threads` threads per rank: the rows at
    /// that thread count of a file with a threads column ([`curve_at_threads`]);
    /// `Ok(None)` when none is configured.
    pub fn configured_curve_at(
        &self,
        names: &[&str],
        base_dir: &Path,
        threads: u32,
    ) -> Result<Option<Curve>, SimError> {
        let Some((name, path)) = self
            .curves
            .iter()
            .flatten()
            .find(|(k, _)| names.contains(&k.as_str()))
        else {
            return Ok(None);
        };
        let series = Curve::load_series(name.clone(), &base_dir.join(path))
            .map_err(|e| SimError::Settings(e.to_string()))?;
        curve_at_threads(series, threads)
            .map(Some)
            .map_err(SimError::Settings)
    }

    /// The standalone curve configured for a component (`standalone_curves`), like
    /// [`SimSettings::configured_curve`].
    pub fn configured_standalone_curve(
        &self,
        names: &[&str],
        base_dir: &Path,
    ) -> Result<Option<Curve>, SimError> {
        Self::curve_in(self.standalone_curves.as_ref(), names, base_dir)
    }

    /// The settings of a standalone run: no coupling, so no interpolation and no put.
    pub fn standalone(&self) -> SimSettings {
        SimSettings {
            interp_s: Some(0.0),
            interp_s_per_pe: Some(0.0),
            put_s: Some(0.0),
            ..self.clone()
        }
    }

    fn curve_in(
        curves: Option<&BTreeMap<String, PathBuf>>,
        names: &[&str],
        base_dir: &Path,
    ) -> Result<Option<Curve>, SimError> {
        let Some(curves) = curves else {
            return Ok(None);
        };
        let Some((name, path)) = curves.iter().find(|(k, _)| names.contains(&k.as_str())) else {
            return Ok(None);
        };
        Curve::load(name.clone(), &base_dir.join(path))
            .map(Some)
            .map_err(|e| SimError::Settings(e.to_string()))
    }
}

/// The built-in EC-Earth3 SR truth curve for a component name: IFS/ATMIFS -> IFS,
/// NEMO/oceanx -> NEMO (case-insensitive); `None` for other names.
pub fn builtin_curve(name: &str) -> Option<Curve> {
    let lower = name.to_ascii_lowercase();
    let (file, text) = match lower.as_str() {
        "ifs" | "atmifs" => ("built-in mn4_sr_cmip6_ifs.csv", crate::example::IFS_CURVE),
        "nemo" | "oceanx" => ("built-in mn4_sr_cmip6_nemo.csv", crate::example::NEMO_CURVE),
        _ => return None,
    };
    Curve::from_csv_str(name, file, text).ok()
}

/// Is `name` the atmosphere (the component with radiation steps by default)?
fn is_atmosphere(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "ifs" | "atmifs" | "oifs"
    )
}

/// One component of a simulated run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimComponent {
    /// The name written into the LUCIA files (`MD` line): the component's timing name.
    pub name: String,
    /// MPI ranks the component runs on (its PEs, for a pure-MPI component).
    pub nproc: u32,
    /// The truth curve: how fast the component computes at each rank count, measured at
    /// `threads` threads per rank.
    pub curve: Curve,
    /// OpenMP threads per rank (1: pure MPI); more than 1 slows the component by the settings'
    /// hidden thread efficiency.
    pub threads: u32,
}

/// The curve of `series` (one per thread count) at `threads` threads per rank; a single
/// pure-MPI curve counts cores, and is read at `threads` as `cores / threads` ranks.
pub fn curve_at_threads(series: Vec<Curve>, threads: u32) -> Result<Curve, String> {
    let threads = threads.max(1);
    let name = series.first().map(|c| c.name.clone()).unwrap_or_default();
    let measured: Vec<u32> = series.iter().map(Curve::threads).collect();
    if let Some(c) = series.iter().find(|c| c.threads() == threads) {
        return Ok(c.clone());
    }
    match series.as_slice() {
        [one] if one.threads() == 1 => {
            let points: Vec<crate::curve::Point> = one
                .points()
                .iter()
                .filter(|p| p.nproc >= threads)
                .map(|p| crate::curve::Point {
                    nproc: p.nproc / threads,
                    sypd: p.sypd,
                })
                .collect();
            let ranks = Curve::from_points(name.clone(), "a curve in cores", &points)
                .map_err(|e| e.to_string())?;
            Ok(ranks.with_threads(std::num::NonZeroU32::new(threads).unwrap_or(std::num::NonZeroU32::MIN)))
        }
        _ => Err(format!(
            "{name}: the truth curve measures {measured:?} thread(s) per rank, not {threads}; add rows at {threads} threads"
        )),
    }
}

/// A run to simulate: settings, components, and the run's seed (so repetitions differ).
#[derive(Debug, Clone, PartialEq)]
pub struct SimRun {
    /// The `[executor.sim]` settings (noise, failures, steps, period).
    pub settings: SimSettings,
    /// The components with their PEs and truth curves, in the order they are written.
    pub components: Vec<SimComponent>,
    /// The run's own seed, mixed with the settings' seed so that repetitions differ.
    pub seed: u64,
}

impl SimRun {
    /// A run of `components` with a copy of `settings`.
    pub fn new(settings: &SimSettings, components: Vec<SimComponent>, seed: u64) -> SimRun {
        SimRun {
            settings: settings.clone(),
            components,
            seed,
        }
    }
}

/// Why a simulation could not run (a model failure asked for by the settings is not an error:
/// see [`SimOutcome::failed`]).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A setting is out of range or a configured curve cannot be loaded; the message names the key.
    #[error("{0}")]
    Settings(String),
    /// A component cannot be simulated (a bad name, no PEs, or a truth speed that is not positive).
    #[error("component {name}: {reason}")]
    Component {
        /// The component's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The output directory or a LUCIA file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The filesystem's error.
        #[source]
        source: std::io::Error,
    },
}

/// Runs the model and writes its timing output into `out_dir` (created if needed):
/// `lucia.CC.RRRRRR` files, or with `output = "oasis5"` an EC-Earth4 run directory
/// (`load_balancing_info.txt`, `log/001/timing.log`, and NEMO's `log/001/ocean.output`: there
/// NEMO's speed follows its domain decomposition, [`ec4_runs::standin_split`]).
pub fn simulate(run: &SimRun, out_dir: &Path) -> Result<SimOutcome, SimError> {
    run.settings.validate()?;
    let mut plan = model::Plan::new(run)?;
    std::fs::create_dir_all(out_dir).map_err(|source| SimError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    match run.settings.output.unwrap_or_default() {
        SimOutput::Lucia => writer::run(&plan, out_dir),
        SimOutput::Oasis5 => {
            let split = ecearth4::decompose(&mut plan);
            ecearth4::run(&plan, out_dir, split)
        }
        SimOutput::Mct | SimOutput::Cmeps => Err(SimError::Settings(
            "[executor.sim] output = \"mct\" or \"cmeps\" writes CIME summaries of a layout tree: give the campaign a `layout`, or use output = \"lucia\"".into(),
        )),
    }
}

/// Runs the model without writing any file: what it would measure, for benchmarks and model
/// tests that need thousands of runs. Same outcome as [`simulate`] for the same run.
pub fn simulate_in_memory(run: &SimRun) -> Result<SimOutcome, SimError> {
    run.settings.validate()?;
    let mut plan = model::Plan::new(run)?;
    if run.settings.output.unwrap_or_default() == SimOutput::Oasis5 {
        ecearth4::decompose(&mut plan);
    }
    plan.simulate_all(|_| Ok(()))
}
