//! The performance model: what coupled SYPD a configuration will run at, with a band.
//!
//! One type, [`Model`], two forms:
//! * [`Model::Standalone`]: the model of the guide's `method/prediction.md`, unchanged: each
//!   component runs at its (interpolated) scalability curve and the coupled run goes at the slowest
//!   one. The default when nothing is measured; its band is a single point.
//! * [`Model::Calibrated`]: learned from measured coupled runs ([`Model::fit`]). Real coupled
//!   runs are slower than the standalone curves say, by an amount that depends on the component
//!   and its PE count (NEMO on 144 PEs of EC-Earth3 SR runs at 0.55 of its curve, IFS at
//!   0.8-0.97), and the coupled run is a little slower than its slowest component (waiting,
//!   interpolation and sending). The calibrated model learns:
//!   - per component, the coupled-mode speed ratio `r_c(p) = measured SYPD_c / curve_c(p)` as a
//!     smooth function of `ln p` (a Gaussian-process smoother, [`gp`]): close to measured PE
//!     counts it follows them, dips included; far from them it follows the component's average
//!     ratio (itself pulled toward the global average) and its linear drift in `ln p`
//!     ([`SLOPE_PRIOR_SD`]), and its band widens;
//!   - the coupling overhead `coupled SYPD / SYPD of the slowest component`, from every run's
//!     coupled wall time against its slowest component's compute time, as a balance-free factor
//!     `k0` divided by the slowdown `g` that irregular steps cause when components are nearly
//!     balanced ([`overhead`]);
//!   - per component, a fixed coupling time per coupling step (interpolation, sending) that
//!     does not shrink with its PEs, kept only where it lowers the overhead fit's BIC
//!     ([`coupling_time`]);
//!   - a fixed cost per run that weighs more in short runs, when the runs differ in length
//!     ([`run_length`]); predictions are for a run of the typical measured length unless one
//!     is given ([`EstimateRequest::for_run`]).
//!
//! Ratios measured in a run where the component did not set the pace count with extra noise
//! ([`NOT_PACE_SETTING_SD`]): only the pace-setter decides the coupled speed.
//!
//! A component without a standalone curve ([`ComponentCurve::standalone`] `None`) is learned
//! from the coupled runs alone: a scaling law fitted to its measured compute speeds
//! ([`scaling_law`]) takes the curve's place, the ratio smoother models what the law cannot
//! follow (decomposition effects, the law's misfit) around it, and the band adds the law's own
//! uncertainty, which grows away from the measured PE counts. Everything else (the coupling
//! overhead, coupling times, the fixed cost per run) is learned as with curves: it never
//! depended on them.
//!
//! The exact search ([`crate::predict::search`]) needs coupled SYPD = min over components of a
//! candidate speed: it ranks with `k0 * e_c` ([`Model::adjust`]), `e_c` the speed
//! `r_c(p) * curve_c(p)` with the component's coupling time added, an upper bound of the full
//! model since `g >= 1`; every reported estimate ([`Model::estimate`]) divides
//! by `g`. The min formula itself lives in
//! one place: [`crate::metrics::coupled_sypd`].

pub mod check;
pub mod coupling_time;
pub mod decomposition;
mod estimate;
mod fit;
pub mod gp;
pub mod guide;
pub mod measured;
pub mod overhead;
pub mod robust_law;
pub mod run_length;
pub mod scaling_law;
pub mod steps;

use serde::{Deserialize, Serialize};

use crate::curve::Curve;
use crate::interp::Method;
use decomposition::Layouts;
pub use estimate::{EstimateRequest, Speeds};
use gp::Gp;
use scaling_law::ScalingLaw;

/// A balanced component as the model sees it: its name and, when the user measured one, its
/// standalone scalability curve. A component without one is learned from the coupled runs
/// alone (see the module doc). Implemented by [`Curve`] (a component with its curve) and by
/// the prediction's inputs.
pub trait ComponentCurve {
    /// The component's (model) name.
    fn name(&self) -> &str;
    /// Its standalone scalability curve, if it has one.
    fn standalone(&self) -> Option<&Curve>;
}

impl ComponentCurve for Curve {
    fn name(&self) -> &str {
        &self.name
    }

    fn standalone(&self) -> Option<&Curve> {
        Some(self)
    }
}

impl<T: ComponentCurve + ?Sized> ComponentCurve for &T {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn standalone(&self) -> Option<&Curve> {
        (**self).standalone()
    }
}

/// Width of the band in standard deviations (a 90 % two-sided interval of a normal in ln SYPD).
pub const BAND_Z: f64 = 1.645;
/// Prior standard deviation of a component's average ln ratio around the global one.
pub const LEVEL_PRIOR_SD: f64 = 0.2;
/// Bounds on the run-to-run noise (standard deviation of ln SYPD) the model assumes.
pub const NOISE_SD_RANGE: (f64, f64) = (0.02, 0.1);
/// Extra spread (ln units) of a component's ratio measured in a run it did not set the pace of:
/// a component that waits for another reports compute seconds that are not the ones it takes
/// when it is the bottleneck (EC-Earth3 SR: NEMO on 144 PEs at 0.72 of its curve beside a slow
/// IFS, 0.55 when it sets the pace), and only the pace-setter's speed decides the coupled run.
pub const NOT_PACE_SETTING_SD: f64 = 0.1;
/// Prior sd of the slope of a component's ln ratio against ln nproc: the coupled-mode penalty
/// may drift by about 10 % per e-fold of PEs (more PEs, more communication for the coupling to
/// disturb), so far below or above the measured PE counts the smoother follows the drift
/// instead of returning to the level (EC-Earth3 SR: IFS at 0.97 of its curve on 192 PEs, 0.85
/// on 1008, 1.0 on 48). Fixed a priori.
pub const SLOPE_PRIOR_SD: f64 = 0.1;

/// How far (in ln processes, about 25 %) measured counts count as neighbours whose
/// disagreement widens a component's band (`Calibrated::scatter_var`).
pub const NEIGHBOUR_LN: f64 = 0.22;

/// Run-to-run noise assumed when no PE count of a component was measured twice.
pub const DEFAULT_NOISE_SD: f64 = 0.03;
/// Spread of the coupling factor assumed with fewer than three runs (ln units).
pub const DEFAULT_COUPLED_SD: f64 = 0.05;

/// One measured coupled run, reduced to what the model learns from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredRun {
    /// Where it came from (for tables and notes).
    pub path: String,
    /// Per balanced component, by model name.
    pub components: Vec<MeasuredComponent>,
    /// Coupled SYPD from the coupled wall time.
    pub coupled_sypd: f64,
    /// Simulated seconds of the run (its length, chosen before it runs), when known: a fixed
    /// cost per run weighs more in a short run ([`run_length`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_s: Option<f64>,
}

/// One component of a measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredComponent {
    /// The model's (curve's) name, not the timing name.
    pub name: String,
    /// PEs it ran on in this run.
    pub nproc: u32,
    /// SYPD from its own compute seconds in the coupled run.
    pub sypd: f64,
    /// Seconds it spent waiting for other components' fields (absent for runs built from a
    /// campaign's metrics, which keep no waiting time).
    pub wait_s: Option<f64>,
    /// Seconds it spent interpolating fields before sending them, when the timing format says.
    pub interp_s: Option<f64>,
    /// Seconds it spent in the sending calls themselves, when the timing format says.
    pub send_s: Option<f64>,
}

impl MeasuredComponent {
    /// A component known by its speed alone, without waiting, interpolation or sending times
    /// (as a campaign's metrics keep it, or a stand-in run draws it).
    pub fn from_speed(name: impl Into<String>, nproc: u32, sypd: f64) -> MeasuredComponent {
        MeasuredComponent {
            name: name.into(),
            nproc,
            sypd,
            wait_s: None,
            interp_s: None,
            send_s: None,
        }
    }
}

impl MeasuredRun {
    /// PEs of component `name`, if the run has it.
    pub fn nproc(&self, name: &str) -> Option<u32> {
        self.component(name).map(|c| c.nproc)
    }

    /// Component `name` of the run (by model name), if the run has it.
    pub fn component(&self, name: &str) -> Option<&MeasuredComponent> {
        self.components.iter().find(|c| c.name == name)
    }

    /// PEs of `names`, in that order (`None` if the run lacks one).
    pub fn nproc_of(&self, names: &[String]) -> Option<Vec<u32>> {
        names.iter().map(|n| self.nproc(n)).collect()
    }

    /// The slowest component's SYPD.
    pub fn slowest_sypd(&self) -> Option<f64> {
        self.components
            .iter()
            .map(|c| c.sypd)
            .reduce(f64::min)
            .filter(|s| s.is_finite() && *s > 0.0)
    }
}

/// A multiplicative factor on a standalone speed with its band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Factor {
    /// The central factor (1 for the standalone model).
    pub mid: f64,
    /// Lower end of the band, which holds the factor with about 90 % probability (equal to `mid`
    /// for the standalone model).
    pub low: f64,
    /// Upper end of the band.
    pub high: f64,
}

/// A model's prediction for one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// Predicted coupled SYPD (central value).
    pub sypd: f64,
    /// The band: the coupled SYPD lies in `[low, high]` with about 90 % probability
    /// (calibrated model; the standalone model's band is the point itself).
    pub low: f64,
    /// Upper end of the band, in SYPD.
    pub high: f64,
    /// Per component, in the order asked: the adjusted speed.
    pub components: Vec<f64>,
}

impl Estimate {
    /// CHSY for `total_nproc` PEs at the predicted speed.
    pub fn chsy(&self, total_nproc: u32) -> f64 {
        crate::metrics::chsy(f64::from(total_nproc), self.sypd)
    }
}

/// The performance model (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Model {
    /// The method's own model (the guide's `method/prediction.md`): each component at its
    /// interpolated standalone curve, the coupled run at the slowest; no band.
    #[default]
    Standalone,
    /// Learned from measured coupled runs ([`Model::fit`]).
    Calibrated(Calibrated),
}

/// The calibrated form's fitted parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibrated {
    /// Runs it learned from.
    pub runs: usize,
    /// Interpolation used for the standalone speeds the ratios are relative to.
    pub interp: Method,
    /// Mean ln ratio over every component's measurements (the level unmeasured components get).
    pub global_log_ratio: f64,
    /// Run-to-run noise (sd of ln SYPD) assumed in the smoother and the band.
    pub noise_sd: f64,
    /// Per component, its learned ratio (and law, without a curve).
    pub components: Vec<ComponentModel>,
    /// The coupling overhead.
    pub coupled: CoupledFactor,
    /// Fixed seconds per run ([`run_length`]); 0 when not learned (and in older files).
    #[serde(default)]
    pub fixed_s: f64,
    /// Simulated seconds of the runs it learned from (median): the length a prediction is for
    /// when none is given (`None`: unknown, long-run speeds).
    #[serde(default)]
    pub typical_simulated_s: Option<f64>,
    /// The domain decompositions the runs reported ([`decomposition`]): the laws of
    /// components without a curve count their parallel work in effective processes.
    #[serde(default, skip_serializing_if = "Layouts::is_empty")]
    pub layouts: Layouts,
}

/// One component's learned coupled-mode ratio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentModel {
    /// The component's name.
    pub name: String,
    /// The smoother of `ln(measured / reference)` over `ln nproc`, the reference being the
    /// standalone curve, or [`ComponentModel::law`] for a component without one.
    pub ratio: Gp,
    /// The scaling law learned from the coupled runs for a component without a standalone
    /// curve ([`scaling_law`]): its reference speed. `None` for a component with a curve (and
    /// in files written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub law: Option<ScalingLaw>,
    /// Wall seconds of coupling work (interpolation, sending) per simulated day that do not
    /// shrink with its PEs ([`coupling_time`]): with a fixed coupling period, a fixed time per
    /// coupling step. 0 when the fit did not keep the term, and in files written before it
    /// existed.
    #[serde(default)]
    pub coupling_s_per_day: f64,
    /// For a component without a curve whose law's terms were chosen by leave-one-out
    /// ([`robust_law`]): the robust spread (ln units) of the law's errors at counts it was not
    /// fitted on, the component's predictive spread in the band. `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_sd: Option<f64>,
}

/// How the calibrated model learns a component without a curve ([`Model::fit_with_options`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LawChoice {
    /// The law's terms chosen by leave-one-out over its measured counts, the band from the
    /// law's left-out errors ([`robust_law`]): the default.
    #[default]
    LeaveOneOut,
    /// The law's terms chosen by AIC on the training runs and the band from the run-to-run
    /// noise ([`scaling_law`]), as autolb did before: kept to measure what the other brings.
    Aic,
}

/// What [`Model::fit_with_options`] takes besides the runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FitOptions {
    /// The domain decompositions the runs reported ([`decomposition`]).
    pub layouts: Layouts,
    /// How a component without a curve is learned.
    pub laws: LawChoice,
}

/// The coupling overhead: ln(coupled SYPD / slowest component's SYPD) is
/// `log_mean - ln overhead::slowdown(speeds, irregularity)` ([`overhead`]), the speeds with
/// each component's coupling time added ([`ComponentModel::coupling_s_per_day`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CoupledFactor {
    /// ln k0: the balance-free part (interpolation, sending); with `irregularity` 0 the whole.
    pub log_mean: f64,
    /// Relative step-time irregularity that makes nearly balanced components wait for each
    /// other (0 in model files written before it existed).
    #[serde(default)]
    pub irregularity: f64,
    /// Predictive spread for a new run (run-to-run spread and the mean's uncertainty).
    pub log_sd: f64,
    /// Runs the factor was fitted on.
    pub runs: usize,
}

/// Which model scores a prediction, as the app, the report and `--json` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// The components' curves alone.
    Standalone,
    /// The model fitted to measured coupled runs.
    Calibrated,
}

impl ModelKind {
    /// The model's name on screen and in files: `standalone` or `calibrated`.
    pub fn label(self) -> &'static str {
        match self {
            ModelKind::Standalone => "standalone",
            ModelKind::Calibrated => "calibrated",
        }
    }
}

impl std::fmt::Display for ModelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

impl Model {
    /// Which of the two models this is.
    pub fn kind(&self) -> ModelKind {
        match self {
            Model::Standalone => ModelKind::Standalone,
            Model::Calibrated(_) => ModelKind::Calibrated,
        }
    }

    /// Whether the model was learned from measured runs.
    pub fn is_calibrated(&self) -> bool {
        matches!(self, Model::Calibrated(_))
    }

    /// Fits the calibrated model on `runs` against the components' standalone curves
    /// (interpolated with `interp`); a component without a curve is learned from the runs
    /// alone (see the module doc). Runs lacking a component, or with a PE count outside its
    /// curve, are not used; with no usable run the answer is the standalone model. Returns the
    /// notes on skipped runs with the model.
    pub fn fit<C: ComponentCurve>(
        components: &[C],
        interp: Method,
        runs: &[MeasuredRun],
    ) -> (Model, Vec<String>) {
        Model::fit_with_steps(components, interp, runs, &steps::Steps::default())
    }

    /// [`Model::fit`] for predictions that use per-step series: the coupling factor is then
    /// learned against the step sum of the measured component speeds (which already holds the
    /// waiting that irregular steps cause), not against the slowest component alone.
    pub fn fit_with_steps<C: ComponentCurve>(
        components: &[C],
        interp: Method,
        runs: &[MeasuredRun],
        steps: &steps::Steps,
    ) -> (Model, Vec<String>) {
        Model::fit_with_options(components, interp, runs, steps, &FitOptions::default())
    }

    /// [`Model::fit_with_steps`] with the decompositions the runs reported and a choice of how
    /// components without a curve are learned ([`FitOptions`]).
    pub fn fit_with_options<C: ComponentCurve>(
        components: &[C],
        interp: Method,
        runs: &[MeasuredRun],
        steps: &steps::Steps,
        options: &FitOptions,
    ) -> (Model, Vec<String>) {
        fit::calibrate(components, interp, runs, steps, true, options)
    }

    /// [`Model::fit_with_steps`], with the components' coupling times per step tried
    /// (`coupling_time`, the model) or not (what the model was before them, to measure what
    /// they bring: [`crate::sim::synthetic_check::synthetic_coupling_time_leave_one_out`]).
    pub(crate) fn fit_terms<C: ComponentCurve>(
        components: &[C],
        interp: Method,
        runs: &[MeasuredRun],
        steps: &steps::Steps,
        coupling_time: bool,
    ) -> (Model, Vec<String>) {
        fit::calibrate(
            components,
            interp,
            runs,
            steps,
            coupling_time,
            &FitOptions::default(),
        )
    }

    /// The speed a component without a standalone curve is measured against: the scaling law
    /// the calibrated model learned for it, at `nproc` ([`scaling_law`]). `None` for a
    /// component with a curve, one the model does not know, and the standalone model.
    pub fn reference_sypd(&self, name: &str, nproc: u32) -> Option<f64> {
        match self {
            Model::Standalone => None,
            Model::Calibrated(m) => m
                .component(name)
                .and_then(|c| c.law.as_ref())
                .map(|law| law.sypd(m.layouts.effective(name, nproc).0)),
        }
    }

    /// Whether the model learned component `name`'s curve from the runs (it has no standalone
    /// curve): [`Model::reference_sypd`] gives its speeds.
    pub fn learned_curve(&self, name: &str) -> bool {
        match self {
            Model::Standalone => false,
            Model::Calibrated(m) => m.component(name).is_some_and(|c| c.law.is_some()),
        }
    }

    /// The factor on component `name`'s standalone speed at `nproc`, with its band: its
    /// coupled-mode ratio and the balance-free overhead `k0`. Its coupling time per step
    /// ([`coupling_time`]) is not a factor (it weighs more the faster the component goes):
    /// [`Model::speed`] adds it, and a run of finite length also pays the fixed cost per run
    /// ([`run_length`]). A component the model never saw gets the global level with the prior's
    /// full width.
    pub fn factor(&self, name: &str, nproc: u32) -> Factor {
        match self {
            Model::Standalone => Factor {
                mid: 1.0,
                low: 1.0,
                high: 1.0,
            },
            Model::Calibrated(m) => {
                let (mean, var) = m.log_ratio(name, nproc);
                let mid = mean + m.coupled.log_mean;
                let sd =
                    (var + m.noise_sd * m.noise_sd + m.coupled.log_sd * m.coupled.log_sd).sqrt();
                Factor {
                    mid: mid.exp(),
                    low: (mid - band_quantile(m.runs) * sd).exp(),
                    high: (mid + band_quantile(m.runs) * sd).exp(),
                }
            }
        }
    }

    /// The adjusted speed of component `name` at `nproc` given its reference speed there (its
    /// standalone curve's, or [`Model::reference_sypd`] for a component without one): what the
    /// prediction's search uses as the candidate's SYPD (for a run of the typical length, with
    /// its share of the fixed cost, [`run_length`]). Cheaper than [`Model::factor`] (no
    /// variance). The fixed cost turns speeds by a rising function, so the min over components
    /// of adjusted speeds is the adjusted min: the search's bottleneck structure holds.
    pub fn adjust(&self, name: &str, nproc: u32, standalone_sypd: f64) -> f64 {
        run_length::lengthen(
            self.steady_adjust(name, nproc, standalone_sypd),
            self.penalty(None),
        )
    }

    /// [`Model::adjust`] for a long run (no fixed cost): the mid value of [`Model::speed`],
    /// computed without the band (the same number, to the last bit), what
    /// [`Model::coupled_sypd`] takes.
    pub fn steady_adjust(&self, name: &str, nproc: u32, standalone_sypd: f64) -> f64 {
        match self {
            Model::Standalone => standalone_sypd,
            Model::Calibrated(m) => {
                let mean = m.log_mean_ratio(name, nproc);
                m.with_coupling_time(name, standalone_sypd * (mean + m.coupled.log_mean).exp())
            }
        }
    }

    /// Component `name`'s long-run coupled speed (SYPD) at `nproc` given its reference speed
    /// there (standalone, or [`Model::reference_sypd`] without a curve), with its band:
    /// [`Model::factor`] on the reference speed, then its coupling time
    /// per step added ([`coupling_time`]); the band keeps the factor's relative width (the
    /// model's predictive spread in ln SYPD). What the app draws as the calibrated curve and
    /// [`Model::estimate`] takes the min of.
    pub fn speed(&self, name: &str, nproc: u32, standalone_sypd: f64) -> Factor {
        let f = self.factor(name, nproc);
        let mid = match self {
            Model::Standalone => standalone_sypd,
            Model::Calibrated(m) => m.with_coupling_time(name, f.mid * standalone_sypd),
        };
        Factor {
            mid,
            low: mid * f.low / f.mid,
            high: mid * f.high / f.mid,
        }
    }

    /// What the fixed cost adds to 1 / SYPD in a run of `simulated_s` seconds (default: the
    /// typical length of the runs the model learned from).
    fn penalty(&self, simulated_s: Option<f64>) -> f64 {
        match self {
            Model::Standalone => 0.0,
            Model::Calibrated(m) => {
                run_length::penalty(m.fixed_s, simulated_s.or(m.typical_simulated_s))
            }
        }
    }

    /// The balance slowdown ([`overhead::slowdown`]) for components going at `speeds`: 1 for
    /// the standalone model.
    pub fn slowdown(&self, speeds: &[f64]) -> f64 {
        match self {
            Model::Standalone => 1.0,
            Model::Calibrated(m) => overhead::slowdown(speeds, m.coupled.irregularity),
        }
    }

    /// Reads a model written by `autolb model fit --out` (JSON).
    pub fn from_json(text: &str) -> Result<Model, String> {
        let file: ModelFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if file.format != MODEL_FORMAT {
            return Err(format!(
                "model format {} is not the {MODEL_FORMAT} this autolb reads; refit with `autolb model fit`",
                file.format
            ));
        }
        Ok(file.model)
    }

    /// The JSON written by `autolb model fit --out`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&ModelFile {
            format: MODEL_FORMAT,
            model: self.clone(),
        })
        .unwrap_or_default()
    }

    /// Names of the components the calibrated model learned (empty for the standalone one).
    pub fn component_names(&self) -> Vec<String> {
        match self {
            Model::Standalone => Vec::new(),
            Model::Calibrated(m) => m.components.iter().map(|c| c.name.clone()).collect(),
        }
    }
}

/// Version of the model file.
pub const MODEL_FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct ModelFile {
    format: u32,
    model: Model,
}

impl Calibrated {
    fn component(&self, name: &str) -> Option<&ComponentModel> {
        self.components.iter().find(|c| c.name == name)
    }

    /// Mean and variance of ln(coupled-mode / reference) of `name` at `nproc`, the reference
    /// being its standalone curve or its learned law; the variance holds the law's own.
    pub fn log_ratio(&self, name: &str, nproc: u32) -> (f64, f64) {
        let p = nproc.max(1);
        match self.component(name) {
            Some(c) => {
                let (mean, var) = c.ratio.predict(f64::from(p).ln());
                let Some(law) = &c.law else {
                    return (mean, var);
                };
                let (effective, layout_var) = self.layouts.effective(name, p);
                (
                    mean,
                    var + law.log_var(effective) + layout_var + self.scatter_var(c, p),
                )
            }
            None => (self.global_log_ratio, LEVEL_PRIOR_SD * LEVEL_PRIOR_SD),
        }
    }

    /// Variance a component without a curve adds to the band beyond the run-to-run noise: the
    /// law's scatter at counts it was not fitted on ([`ComponentModel::scatter_sd`]), or more
    /// where the measured counts around `nproc` disagree with each other (a decomposition
    /// jump among them): the mean square of their errors around the law, the counts within
    /// [`NEIGHBOUR_LN`] of `nproc` in ln weighing by closeness.
    fn scatter_var(&self, c: &ComponentModel, nproc: u32) -> f64 {
        let Some(scatter) = c.scatter_sd else {
            return 0.0;
        };
        let x = f64::from(nproc.max(1)).ln();
        let data = c.ratio.data();
        let (mut sum, mut weight, mut count) = (0.0, 0.0, 0usize);
        for (&xi, &yi) in data.xs.iter().zip(&data.ys) {
            let d = (xi - x).abs();
            if d <= NEIGHBOUR_LN {
                let w = 1.0 - d / NEIGHBOUR_LN;
                sum += w * yi * yi;
                weight += w;
                count += 1;
            }
        }
        let local = if count >= 2 && weight > 0.0 {
            sum / weight
        } else {
            0.0
        };
        ((scatter * scatter).max(local) - self.noise_sd * self.noise_sd).max(0.0)
    }

    /// Component `name`'s coupling time in days of wall time per simulated year (0 when the
    /// model has none for it).
    pub fn coupling_time(&self, name: &str) -> f64 {
        self.component(name)
            .map_or(0.0, |c| coupling_time::from_per_day(c.coupling_s_per_day))
    }

    /// A speed that already holds `k0` with component `name`'s coupling time added:
    /// `k0 * effective(x / k0, tau) = 1 / (1 / x + tau / k0)`.
    fn with_coupling_time(&self, name: &str, x: f64) -> f64 {
        let k0 = self.coupled.log_mean.exp();
        k0 * coupling_time::effective(x / k0, self.coupling_time(name))
    }

    fn log_mean_ratio(&self, name: &str, nproc: u32) -> f64 {
        match self.component(name) {
            Some(c) => c.ratio.mean(f64::from(nproc.max(1)).ln()),
            None => self.global_log_ratio,
        }
    }
}

/// Half-width of the band in predictive standard deviations: the 95 % quantile of Student's t
/// with `runs - 2` degrees of freedom (the spreads are estimated from the runs, the overhead's
/// two parameters fitted on them), by the Cornish-Fisher expansion around [`BAND_Z`]; it
/// tends to [`BAND_Z`] as runs accumulate.
pub fn band_quantile(runs: usize) -> f64 {
    let nu = (runs as f64 - 2.0).max(2.0);
    let z = BAND_Z;
    z + (z.powi(3) + z) / (4.0 * nu)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * nu * nu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::Point;

    fn curve(name: &str, pts: &[(u32, f64)]) -> Curve {
        let p: Vec<Point> = pts
            .iter()
            .map(|&(nproc, sypd)| Point { nproc, sypd })
            .collect();
        Curve::from_points(name, "test", &p).unwrap()
    }

    fn run(a: (u32, f64), b: (u32, f64), coupled: f64) -> MeasuredRun {
        let c = |name: &str, (nproc, sypd): (u32, f64)| {
            MeasuredComponent::from_speed(name, nproc, sypd)
        };
        MeasuredRun {
            path: format!("{}_{}", a.0, b.0),
            components: vec![c("A", a), c("B", b)],
            coupled_sypd: coupled,
            simulated_s: None,
        }
    }

    #[test]
    fn nothing_measured_is_the_standalone_model() {
        let (m, notes) = Model::fit(&[curve("A", &[(10, 1.0), (100, 8.0)])], Method::Linear, &[]);
        assert_eq!(m, Model::Standalone);
        assert!(notes.is_empty());
        let e = m.estimate(&EstimateRequest::known(&["A".into()], &[50], &[4.0]));
        assert_eq!((e.sypd, e.low, e.high), (4.0, 4.0, 4.0));
    }

    #[test]
    fn learns_per_component_ratios_and_the_coupling_factor() {
        let a = curve("A", &[(10, 1.0), (100, 10.0)]);
        let b = curve("B", &[(10, 2.0), (100, 20.0)]);
        // A runs at 0.8 of its curve, B at 0.6; the coupled run at 0.95 of the slowest.
        let runs: Vec<MeasuredRun> = [(20, 40), (40, 20), (60, 30), (80, 50), (30, 90)]
            .iter()
            .map(|&(pa, pb)| {
                let sa = 0.8 * f64::from(pa) / 10.0;
                let sb = 0.6 * 2.0 * f64::from(pb) / 10.0;
                run((pa, sa), (pb, sb), 0.95 * sa.min(sb))
            })
            .collect();
        let (m, notes) = Model::fit(&[a.clone(), b.clone()], Method::Linear, &runs);
        assert!(notes.is_empty(), "{notes:?}");
        assert!(m.is_calibrated());
        let e = m.estimate(&EstimateRequest::curves(&[a, b], Method::Linear, &[50, 50]));
        let truth = 0.95 * (0.8 * 5.0f64).min(0.6 * 10.0);
        assert!((e.sypd / truth - 1.0).abs() < 0.01, "{} vs {truth}", e.sypd);
        assert!(e.low < e.sypd && e.sypd < e.high);
        let back = Model::from_json(&m.to_json()).unwrap();
        assert_eq!(back.factor("A", 50), m.factor("A", 50));
    }

    /// Runs of two lengths with a fixed cost per run: the model learns the cost and predicts
    /// a run of each length; files written before the cost existed still load (no cost).
    #[test]
    fn learns_a_fixed_cost_per_run_from_runs_of_different_lengths() {
        let a = curve("A", &[(10, 1.0), (100, 10.0)]);
        let b = curve("B", &[(10, 2.0), (100, 20.0)]);
        let (short, long) = (7.0 * 86_400.0, 60.0 * 86_400.0);
        let fixed = 100.0;
        let runs: Vec<MeasuredRun> = [(20, 40), (40, 20), (60, 30), (80, 50), (30, 90), (50, 60)]
            .iter()
            .enumerate()
            .map(|(i, &(pa, pb))| {
                let s = if i % 2 == 0 { short } else { long };
                let phi = run_length::penalty(fixed, Some(s));
                let sa = run_length::lengthen(0.8 * f64::from(pa) / 10.0, phi);
                let sb = run_length::lengthen(0.6 * 2.0 * f64::from(pb) / 10.0, phi);
                let mut r = run(
                    (pa, sa),
                    (pb, sb),
                    run_length::lengthen(
                        0.95 * (0.8 * f64::from(pa) / 10.0).min(0.6 * 2.0 * f64::from(pb) / 10.0),
                        phi,
                    ),
                );
                r.simulated_s = Some(s);
                r
            })
            .collect();
        let curves = [a, b];
        let (m, _) = Model::fit(&curves, Method::Linear, &runs);
        let Model::Calibrated(c) = &m else {
            panic!("not calibrated")
        };
        assert!((c.fixed_s / fixed - 1.0).abs() < 0.3, "{}", c.fixed_s);
        for s in [short, long] {
            let e = m.estimate(
                &EstimateRequest::curves(&curves, Method::Linear, &[50, 50]).for_run(Some(s)),
            );
            let truth =
                run_length::lengthen(0.95 * 4.0f64.min(6.0), run_length::penalty(fixed, Some(s)));
            assert!((e.sypd / truth - 1.0).abs() < 0.03, "{} vs {truth}", e.sypd);
            // The request's other forms agree: speeds given (the curves' values at 50 PEs), and
            // curves with no step profiles.
            let names = ["A".to_string(), "B".to_string()];
            let known = EstimateRequest::known(&names, &[50, 50], &[5.0, 10.0]).for_run(Some(s));
            assert_eq!(m.estimate(&known), e);
            let no_steps = steps::Steps::default();
            let stepped = EstimateRequest::stepped(&curves, Method::Linear, &[50, 50], &no_steps);
            assert_eq!(m.estimate(&stepped.for_run(Some(s))), e);
            assert_ne!(m.estimate(&stepped), e, "the run's length is taken");
        }
        // The search's speed (typical length) is an upper bound of the estimate there.
        let e = m.estimate(&EstimateRequest::curves(&curves, Method::Linear, &[50, 50]));
        assert!(m.adjust("A", 50, 5.0).min(m.adjust("B", 50, 10.0)) >= e.sypd * (1.0 - 1e-12));
        // An older file: no fixed cost, no length, no trend.
        let mut v: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
        let model = v["model"].as_object_mut().unwrap();
        model.remove("fixed_s");
        model.remove("typical_simulated_s");
        for comp in model["components"].as_array_mut().unwrap() {
            comp.as_object_mut().unwrap().remove("coupling_s_per_day");
            let ratio = comp["ratio"].as_object_mut().unwrap();
            ratio.remove("slope_sd");
            ratio.remove("centre");
        }
        let old = Model::from_json(&v.to_string()).unwrap();
        let Model::Calibrated(o) = &old else { panic!() };
        assert_eq!((o.fixed_s, o.typical_simulated_s), (0.0, None));
        assert!(o.components.iter().all(|c| c.coupling_s_per_day == 0.0));
        assert!(
            old.estimate(&EstimateRequest::curves(&curves, Method::Linear, &[50, 50]))
                .sypd
                > 0.0
        );
    }

    /// Coupled runs where A, the pace-setter, spends a fixed time per coupling step outside its
    /// compute seconds: the model keeps A's coupling time (not B's, which never sets the pace),
    /// writes it to the model file, and every prediction path adds it.
    #[test]
    fn learns_a_coupling_time_per_step_and_predicts_with_it() {
        let a = curve("A", &[(10, 1.0), (100, 10.0)]);
        let b = curve("B", &[(10, 4.0), (100, 40.0)]);
        // Days per simulated year: 4.5 % of the median pace-setter's (A at 4 SYPD) time, a
        // point of the grid ([`coupling_time::SHARE_GRID`]).
        let tau = 0.045 / 4.0;
        let truth = |pa: u32, pb: u32| {
            let (sa, sb) = (0.8 * f64::from(pa) / 10.0, 0.6 * 4.0 * f64::from(pb) / 10.0);
            (sa, sb, 0.95 * coupling_time::effective(sa, tau).min(sb))
        };
        let runs: Vec<MeasuredRun> = [(20, 40), (40, 50), (60, 70), (80, 90), (30, 60), (100, 100)]
            .iter()
            .map(|&(pa, pb)| {
                let (sa, sb, c) = truth(pa, pb);
                run((pa, sa), (pb, sb), c)
            })
            .collect();
        let curves = [a, b];
        let (m, _) = Model::fit(&curves, Method::Linear, &runs);
        let Model::Calibrated(c) = &m else {
            panic!("not calibrated")
        };
        let learned = c.coupling_time("A");
        assert!((learned / tau - 1.0).abs() < 0.2, "{learned}");
        assert_eq!(c.coupling_time("B"), 0.0);
        let (pa, pb) = (50, 50);
        let e = m.estimate(&EstimateRequest::curves(&curves, Method::Linear, &[pa, pb]));
        assert!((e.sypd / truth(pa, pb).2 - 1.0).abs() < 0.02, "{e:?}");
        assert!(m.adjust("A", pa, 5.0).min(m.adjust("B", pb, 20.0)) >= e.sypd * (1.0 - 1e-12));
        let speed = m.speed("A", pa, 5.0);
        assert!(speed.mid < 5.0 * m.factor("A", pa).mid && speed.low < speed.mid);
        let back = Model::from_json(&m.to_json()).unwrap();
        let Model::Calibrated(b) = &back else {
            panic!()
        };
        assert_eq!(b.coupling_time("A"), learned);
        let again = back.estimate(&EstimateRequest::curves(&curves, Method::Linear, &[pa, pb]));
        assert!((again.sypd / e.sypd - 1.0).abs() < 1e-9);
    }

    #[test]
    fn runs_outside_a_curve_are_skipped_with_a_note() {
        let a = curve("A", &[(10, 1.0), (100, 10.0)]);
        let b = curve("B", &[(10, 2.0), (100, 20.0)]);
        let (m, notes) = Model::fit(&[a, b], Method::Linear, &[run((500, 1.0), (20, 1.0), 1.0)]);
        assert_eq!(m, Model::Standalone);
        assert!(notes[0].contains("outside its curve"), "{notes:?}");
    }

    #[test]
    fn the_band_quantile_is_students_t() {
        // t_{0.95} with 5 and 25 degrees of freedom: 2.015 and 1.708.
        assert!(
            (band_quantile(7) - 2.015).abs() < 0.01,
            "{}",
            band_quantile(7)
        );
        assert!(
            (band_quantile(27) - 1.708).abs() < 0.002,
            "{}",
            band_quantile(27)
        );
        assert!(band_quantile(10_000) - BAND_Z < 1e-3);
    }

    /// A component known only by name: learned from the runs.
    struct Bare(&'static str);

    impl ComponentCurve for Bare {
        fn name(&self) -> &str {
            self.0
        }

        fn standalone(&self) -> Option<&Curve> {
            None
        }
    }

    /// Without curves: each component's coupled-mode speed is learned from its measured
    /// speeds (here Amdahl laws), predicted where no run went with a band that widens there,
    /// and kept in the model file.
    #[test]
    fn learns_components_without_curves_from_the_runs() {
        let law_a = |p: f64| 1.0 / (0.02 + 5.0 / p);
        let law_b = |p: f64| 1.0 / (0.01 + 3.0 / p + 1e-5 * p);
        let runs: Vec<MeasuredRun> = [(50, 60), (80, 40), (120, 100), (160, 70), (200, 150)]
            .iter()
            .map(|&(pa, pb)| {
                let (sa, sb) = (law_a(f64::from(pa)), law_b(f64::from(pb)));
                run((pa, sa), (pb, sb), 0.95 * sa.min(sb))
            })
            .collect();
        let (m, notes) = Model::fit(&[Bare("A"), Bare("B")], Method::Linear, &runs);
        assert!(notes.is_empty(), "{notes:?}");
        assert!(m.learned_curve("A") && m.learned_curve("B"));
        for (name, law) in [("A", &law_a as &dyn Fn(f64) -> f64), ("B", &law_b)] {
            for p in [60u32, 150, 400] {
                let reference = m.reference_sypd(name, p).unwrap();
                let speed = m.steady_adjust(name, p, reference) / m.factor(name, p).mid;
                let err = (speed / law(f64::from(p)) - 1.0).abs();
                assert!(err < 0.02 || p == 400, "{name} {p}: {err}");
                let f = m.speed(name, p, reference);
                let truth = law(f64::from(p)) * m.factor(name, p).mid;
                assert!(f.low < truth && truth < f.high, "{name} {p}: {f:?} {truth}");
            }
        }
        let width = |f: Factor| (f.high / f.low).ln();
        assert!(width(m.factor("A", 800)) > 1.5 * width(m.factor("A", 100)));
        let e = m.estimate(&EstimateRequest::curves(
            &[Bare("A"), Bare("B")],
            Method::Linear,
            &[100, 100],
        ));
        let truth = 0.95 * law_a(100.0).min(law_b(100.0));
        assert!((e.sypd / truth - 1.0).abs() < 0.03, "{} vs {truth}", e.sypd);
        assert!(e.low < e.sypd && e.sypd < e.high);
        let back = Model::from_json(&m.to_json()).unwrap();
        assert_eq!(back.reference_sypd("B", 300), m.reference_sypd("B", 300));
        assert_eq!(back.factor("B", 300), m.factor("B", 300));
        // The standalone model knows nothing of a component without a curve.
        let alone = Model::Standalone.estimate(&EstimateRequest::curves(
            &[Bare("A")],
            Method::Linear,
            &[100],
        ));
        assert!(alone.sypd.is_nan());
    }

    #[test]
    fn the_band_widens_far_from_measured_pes() {
        let a = curve("A", &[(10, 1.0), (1000, 100.0)]);
        let b = curve("B", &[(10, 1.0), (1000, 100.0)]);
        let runs: Vec<MeasuredRun> = [20u32, 24, 28, 32]
            .iter()
            .map(|&p| {
                run(
                    (p, 0.8 * f64::from(p) / 10.0),
                    (p, 0.9 * f64::from(p) / 10.0),
                    0.95 * 0.8 * f64::from(p) / 10.0,
                )
            })
            .collect();
        let (m, _) = Model::fit(&[a, b], Method::Linear, &runs);
        let near = m.factor("A", 26);
        let far = m.factor("A", 800);
        let width = |f: Factor| (f.high / f.low).ln();
        assert!(width(far) > 1.5 * width(near), "{near:?} {far:?}");
    }
}
