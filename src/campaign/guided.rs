//! The guided strategy (`strategy = "guided"`): after every iteration it refits a calibrated
//! model on every run measured so far and puts the next runs where the model says they can
//! still beat the best measured configuration, most informative first.
//!
//! One iteration's plan, in order (the README explains the rules):
//! 1. Fit: every measured run gives each component's coupled-mode speed (the run's SYPD over
//!    the share of the wall time the component computed, from its partial coupling cost) and
//!    so its slowdown against the standalone curve at that PE count. The slowdown of each
//!    component is a Gaussian process in `ln nproc` around the component's mean slowdown (a
//!    global correction), so it follows the measurements near them and falls back to the
//!    corrected standalone curve, with a wider band, far from them. The coupled SYPD of a
//!    configuration is the slowest component's speed times the measured coupling overhead.
//! 2. Score: every configuration of the prediction's candidates at `minimum_step` spacing
//!    (allowed lists, limits, budget) gets its FN from the model's mean and from the top of
//!    its band, on one normalisation (the model's kept configurations plus the measured ones).
//! 3. Choose, up to as many tests as the campaign started with:
//!    * `donor/recipient`: the move of Algorithm 1 from the best measured configuration (step
//!      `initial_step`, halved while the target was measured, down to `minimum_step`), when
//!      the model's band lets it beat the best;
//!    * `model`: the configurations whose upper FN beats the best measured FN, by expected
//!      improvement (at least 0.001), no two within `initial_step / 2` PEs of each other in
//!      one iteration, all within `initial_step` PEs of one of the two best measured
//!      configurations (a trust region that moves with the best).
//!
//!    A configuration within `minimum_step` PEs (in every component) of a measured one counts
//!    as measured: it is never run again except as a repetition.
//! 4. Repeat: once nothing unmeasured can beat the best, the best and up to three runners-up
//!    whose FN is within what a 2 % SYPD difference moves FN of the best, run once more if they
//!    have fewer than `repetitions` runs; then step 3 is tried again on the new means.
//! 5. Stop when there is nothing to choose and nothing to repeat.

use std::path::Path;

use super::algorithm::{self, describe, Limits};
use super::state::{Decision, Outcome, RunMetrics, RunState, State};
use super::strategy::{limits_of, Plan, PlannedTest, Strategy};
use crate::curve::Curve;
use crate::interp::{Interpolant, Method};
use crate::metrics::Bounds;
use crate::predict::{self, ComponentInput};

/// The strategy's constants (documented in the README).
pub mod tuning {
    /// The band is the mean plus or minus this many standard deviations (about 95 %).
    pub const BAND_Z: f64 = 2.0;
    /// An unmeasured configuration is worth a run when its upper FN beats the best measured
    /// FN by more than this.
    pub const PLAUSIBLE_MARGIN: f64 = 0.0;
    /// A configuration is "close to the best" (worth a repetition) when its FN is within what
    /// this relative SYPD difference moves the best's FN.
    pub const CLOSE_SYPD: f64 = 0.02;
    /// A model choice is dropped when its expected improvement is below this share of the
    /// iteration's first choice (so iterations shrink as the model converges).
    pub const MIN_EI_SHARE: f64 = 0.2;
    /// Nor is a configuration run whose expected FN gain is below this: a measurement far from
    /// the answer costs a run and, since the answer's FN is normalised over every measured
    /// configuration, widens the normalisation and can move the answer.
    pub const MIN_EI: f64 = 0.001;
    /// Prior standard deviation of a component's slowdown around its mean.
    pub const PRIOR_SD: f64 = 0.08;
    /// Correlation length of the slowdown in `ln nproc` (0.2: about 20 % more PEs).
    pub const LENGTH: f64 = 0.2;
    /// Measurement noise of one run's slowdown (relative).
    pub const NOISE_SD: f64 = 0.015;
    /// Prior slowdown (coupled over standalone speed) before anything is measured.
    pub const PRIOR_SLOWDOWN: f64 = 0.9;
    /// At most this many configurations are repeated (the best and the closest runners-up).
    pub const REPEAT_AT_MOST: usize = 4;
    /// The model only proposes configurations within `initial_step` PEs (in every component)
    /// of one of this many best measured configurations: a trust region that moves with the
    /// best, so the measured set stays where the answer is (the answer's FN is normalised over
    /// the measured configurations, and far-off ones would change it).
    pub const TRUST_AROUND: usize = 2;
}

/// See the module documentation.
pub struct Guided;

impl Strategy for Guided {
    fn plan(&self, state: &State, dir: Option<&Path>) -> Plan {
        let Some(last) = state.iterations.last() else {
            return Plan::default();
        };
        let finish_all = |reason: String| Plan {
            decisions: last
                .tests
                .iter()
                .map(|t| {
                    finished(
                        t.runs.iter().filter_map(|r| r.metrics.as_ref()),
                        reason.clone(),
                    )
                })
                .collect(),
            next: Vec::new(),
        };
        let curves = match dir.map(|d| load_curves(state, d)) {
            Some(Ok(c)) => c,
            Some(Err(e)) => {
                return finish_all(format!("the guided strategy cannot read the curves: {e}"))
            }
            None => return finish_all("the guided strategy needs the campaign directory".into()),
        };
        let view = match Landscape::new(state, &curves) {
            Ok(v) => v,
            Err(e) => {
                return finish_all(format!(
                    "the guided strategy cannot score configurations: {e}"
                ))
            }
        };
        let chosen = choose(state, &view);
        let why_stop = match &chosen.stop {
            Some(reason) => reason.clone(),
            None => "measured; the model chose the next tests".to_string(),
        };
        let mut plan = Plan::default();
        for t in &last.tests {
            let continues = chosen.next.iter().find(|n| n.test == Some(t.test));
            let metrics = t.runs.iter().filter_map(|r| r.metrics.as_ref());
            plan.decisions.push(match continues {
                Some(n) => Decision {
                    next: Some(n.nproc.clone()),
                    step: n.step,
                    outcome: Outcome::Continue,
                    ..finished(metrics, String::new())
                },
                None if t.runs.iter().all(|r| r.state == RunState::Failed) => Decision {
                    outcome: Outcome::Failed {
                        reason: "every run of this test failed".into(),
                    },
                    ..finished(metrics, String::new())
                },
                None => finished(metrics, why_stop.clone()),
            });
        }
        plan.next = chosen.next;
        plan
    }
}

/// A decision that ends a test, with the donor and recipient of its measurements for the record.
fn finished<'a>(metrics: impl IntoIterator<Item = &'a RunMetrics>, reason: String) -> Decision {
    let means = algorithm::mean_metrics(metrics);
    let dr = means
        .as_ref()
        .and_then(|m| algorithm::donor_and_recipient(&m.partial_coupling_cost));
    Decision {
        donor: dr.map(|d| d.0),
        recipient: dr.map(|d| d.1),
        step: 0,
        next: None,
        outcome: Outcome::Finished { reason },
        notes: Vec::new(),
    }
}

fn load_curves(state: &State, dir: &Path) -> Result<Vec<Curve>, String> {
    state
        .components
        .iter()
        .map(|c| Curve::load(c.name.clone(), &dir.join(&c.curve)).map_err(|e| e.to_string()))
        .collect()
}

/// Every run of one configuration, over all iterations.
#[derive(Debug, Clone)]
pub struct MeasuredConfig {
    pub nproc: Vec<u32>,
    /// The test that first ran it (repetitions go on under this id).
    pub test: u32,
    pub runs: Vec<RunMetrics>,
    /// Runs made, failed ones included.
    pub attempts: u32,
}

/// The campaign's configurations with all their runs, in the order they were first run.
pub fn measured_configs(state: &State) -> Vec<MeasuredConfig> {
    let mut out: Vec<MeasuredConfig> = Vec::new();
    for test in state.iterations.iter().flat_map(|it| &it.tests) {
        let k = match out.iter().position(|m| m.nproc == test.nproc) {
            Some(k) => k,
            None => {
                out.push(MeasuredConfig {
                    nproc: test.nproc.clone(),
                    test: test.test,
                    runs: Vec::new(),
                    attempts: 0,
                });
                out.len() - 1
            }
        };
        out[k].attempts += test.runs.len() as u32;
        out[k]
            .runs
            .extend(test.runs.iter().filter_map(|r| r.metrics.clone()));
    }
    out
}

/// Each component's coupled-mode speed in one run: the run's SYPD over the share of the wall
/// time the component computed. The partial coupling cost is `coupling_s * p / (wall * P)`
/// (method.md, eq. 5), so that share is `1 - cost * P / p`.
pub fn component_speeds(m: &RunMetrics, nproc: &[u32]) -> Vec<f64> {
    let total: f64 = nproc.iter().map(|&p| f64::from(p)).sum();
    m.partial_coupling_cost
        .iter()
        .zip(nproc)
        .map(|(cost, &p)| {
            let computing = (1.0 - cost * total / f64::from(p)).clamp(0.05, 1.0);
            m.sypd / computing
        })
        .collect()
}

/// A Gaussian process in one variable with a squared-exponential kernel around a constant
/// mean: small (tens of points), exact, no hyper-parameter search.
#[derive(Debug, Clone)]
pub struct Gp {
    xs: Vec<f64>,
    mean: f64,
    alpha: Vec<f64>,
    /// Lower Cholesky factor of `K + noise`, row-major.
    chol: Vec<f64>,
    sd: f64,
    length: f64,
}

impl Gp {
    /// Fits `ys` at `xs` around `mean`.
    pub fn fit(xs: &[f64], ys: &[f64], mean: f64, sd: f64, length: f64, noise: f64) -> Gp {
        let n = xs.len();
        let k = |a: f64, b: f64| sd * sd * (-(a - b).powi(2) / (2.0 * length * length)).exp();
        let mut m = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                m[i * n + j] = k(xs[i], xs[j]) + if i == j { noise * noise } else { 0.0 };
            }
        }
        // Cholesky; the noise on the diagonal keeps it positive definite.
        let mut l = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let s: f64 = (0..j).map(|q| l[i * n + q] * l[j * n + q]).sum();
                if i == j {
                    l[i * n + i] = (m[i * n + i] - s).max(1e-12).sqrt();
                } else {
                    l[i * n + j] = (m[i * n + j] - s) / l[j * n + j];
                }
            }
        }
        let resid: Vec<f64> = ys.iter().map(|y| y - mean).collect();
        let z = forward(&l, n, &resid);
        let alpha = backward(&l, n, &z);
        Gp {
            xs: xs.to_vec(),
            mean,
            alpha,
            chol: l,
            sd,
            length,
        }
    }

    /// Posterior mean and standard deviation at `x`.
    pub fn predict(&self, x: f64) -> (f64, f64) {
        let n = self.xs.len();
        let ks: Vec<f64> = self
            .xs
            .iter()
            .map(|&a| {
                self.sd * self.sd * (-(a - x).powi(2) / (2.0 * self.length * self.length)).exp()
            })
            .collect();
        let mu = self.mean + ks.iter().zip(&self.alpha).map(|(k, a)| k * a).sum::<f64>();
        let v = forward(&self.chol, n, &ks);
        let var = self.sd * self.sd - v.iter().map(|x| x * x).sum::<f64>();
        (mu, var.max(0.0).sqrt())
    }
}

fn forward(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut z = vec![0.0; n];
    for i in 0..n {
        let s: f64 = (0..i).map(|q| l[i * n + q] * z[q]).sum();
        z[i] = (b[i] - s) / l[i * n + i];
    }
    z
}

fn backward(l: &[f64], n: usize, z: &[f64]) -> Vec<f64> {
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|q| l[q * n + i] * x[q]).sum();
        x[i] = (z[i] - s) / l[i * n + i];
    }
    x
}

/// The calibrated model of one campaign: per component, the slowdown against the standalone
/// curve; and the coupling overhead (coupled SYPD over the slowest component's speed).
pub struct Calibrated {
    standalone: Vec<Interpolant>,
    slowdown: Vec<Gp>,
    overhead: f64,
}

/// A prediction with its band.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Predicted {
    pub sypd: f64,
    pub low: f64,
    pub high: f64,
}

impl Calibrated {
    /// Fits the model on every measured run of `configs`.
    pub fn fit(curves: &[Curve], interp: Method, configs: &[MeasuredConfig]) -> Calibrated {
        use tuning::*;
        let standalone: Vec<Interpolant> = curves
            .iter()
            .map(|c| Interpolant::new(interp, &c.xs(), &c.ys()))
            .collect();
        let n = curves.len();
        let mut points: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); n];
        let mut overheads = Vec::new();
        for cfg in configs {
            for run in &cfg.runs {
                let speeds = component_speeds(run, &cfg.nproc);
                for (c, (&s, &p)) in speeds.iter().zip(&cfg.nproc).enumerate() {
                    let alone = standalone[c].eval(f64::from(p));
                    if alone > 0.0 && s.is_finite() {
                        points[c].0.push(f64::from(p).ln());
                        points[c].1.push(s / alone);
                    }
                }
                let slowest = speeds.iter().copied().fold(f64::INFINITY, f64::min);
                if slowest.is_finite() && slowest > 0.0 {
                    overheads.push((run.sypd / slowest).min(1.0));
                }
            }
        }
        let slowdown = points
            .iter()
            .map(|(xs, ys)| {
                let mean = if ys.is_empty() {
                    PRIOR_SLOWDOWN
                } else {
                    ys.iter().sum::<f64>() / ys.len() as f64
                };
                Gp::fit(xs, ys, mean, PRIOR_SD, LENGTH, NOISE_SD)
            })
            .collect();
        let overhead = if overheads.is_empty() {
            1.0
        } else {
            overheads.iter().sum::<f64>() / overheads.len() as f64
        };
        Calibrated {
            standalone,
            slowdown,
            overhead,
        }
    }

    /// One component's coupled-mode speed at `nproc`: (mean, standard deviation).
    pub fn component(&self, c: usize, nproc: u32) -> (f64, f64) {
        let alone = self.standalone[c].eval(f64::from(nproc));
        let (mu, sd) = self.slowdown[c].predict(f64::from(nproc).ln());
        (alone * mu, alone * sd)
    }

    /// The coupled SYPD of a configuration with its band (mean ± [`tuning::BAND_Z`] sd of
    /// every component's speed; the slowest sets the pace).
    pub fn predict(&self, nproc: &[u32]) -> Predicted {
        let mut out = Predicted {
            sypd: f64::INFINITY,
            low: f64::INFINITY,
            high: f64::INFINITY,
        };
        for (c, &p) in nproc.iter().enumerate() {
            let (mu, sd) = self.component(c, p);
            out.sypd = out.sypd.min(mu);
            out.low = out.low.min(mu - tuning::BAND_Z * sd);
            out.high = out.high.min(mu + tuning::BAND_Z * sd);
        }
        Predicted {
            sypd: out.sypd * self.overhead,
            low: out.low.max(0.0) * self.overhead,
            high: out.high * self.overhead,
        }
    }
}

/// Everything scored: the candidates with the model's prediction, the measured
/// configurations, and the normalisation FN uses for both.
struct Landscape {
    candidates: Vec<(Vec<u32>, Predicted)>,
    measured: Vec<MeasuredConfig>,
    sypd: Bounds,
    chsy: Bounds,
    tts_w: f64,
    extra_pes: u32,
    names: Vec<String>,
    limits: Vec<Limits>,
    model: Calibrated,
}

impl Landscape {
    fn new(state: &State, curves: &[Curve]) -> Result<Landscape, String> {
        let s = &state.settings;
        let interp = s.interp.unwrap_or_default();
        let measured = measured_configs(state);
        let model = Calibrated::fit(curves, interp, &measured);
        let inputs: Vec<ComponentInput> = state
            .components
            .iter()
            .zip(curves)
            .map(|(c, curve)| ComponentInput {
                curve: curve.clone(),
                allowed: c.allowed.clone(),
                min_nproc: Some(c.low),
                max_nproc: Some(c.high),
            })
            .collect();
        let settings = predict::Settings {
            max_nproc: s.max_nproc,
            step: s.minimum_step.max(1),
            tts_w: s.tts_w,
            top: 1,
            interp,
            extra_pes: s.extra_pes,
        };
        let problem = predict::Problem::new(&inputs, &settings).map_err(|e| e.to_string())?;
        let lists: Vec<&[u32]> = problem
            .components
            .iter()
            .map(|c| c.nproc.as_slice())
            .collect();
        let mut candidates = Vec::new();
        enumerate(&lists, s.max_nproc, &mut Vec::new(), &mut |nproc| {
            candidates.push((nproc.to_vec(), model.predict(nproc)));
        });
        // Normalise over the model's kept configurations (method.md, prediction step 5) and
        // every measured configuration.
        let total = |n: &[u32]| f64::from(n.iter().sum::<u32>() + s.extra_pes);
        let base = model.predict(&problem.baseline_nproc);
        let base_p = total(&problem.baseline_nproc);
        let kept = candidates
            .iter()
            .filter(|(n, p)| (p.sypd / base.sypd).powi(2) * (base_p / total(n)) >= 1.0 - 1e-12);
        let mut points: Vec<(f64, f64)> = kept
            .map(|(n, p)| (p.sypd, 24.0 * total(n) / p.sypd))
            .collect();
        for m in &measured {
            if let Some(means) = algorithm::mean_metrics(&m.runs) {
                points.push((means.sypd, means.chsy));
            }
        }
        let sypd = Bounds::of(points.iter().map(|p| p.0)).ok_or("nothing to compare")?;
        let chsy = Bounds::of(points.iter().map(|p| p.1)).ok_or("nothing to compare")?;
        Ok(Landscape {
            candidates,
            measured,
            sypd,
            chsy,
            tts_w: s.tts_w,
            extra_pes: s.extra_pes,
            names: state.component_names(),
            limits: limits_of(state),
            model,
        })
    }

    fn total(&self, nproc: &[u32]) -> f64 {
        f64::from(nproc.iter().sum::<u32>() + self.extra_pes)
    }

    /// FN of a configuration running at `sypd`, on this landscape's normalisation.
    fn fn_at(&self, nproc: &[u32], sypd: f64) -> f64 {
        let chsy = 24.0 * self.total(nproc) / sypd;
        crate::metrics::fittingness_in(self.tts_w, sypd, chsy, &self.sypd, &self.chsy)
    }
}

/// Calls `f` with every configuration taking one entry of each list within `budget`.
fn enumerate(lists: &[&[u32]], budget: u32, prefix: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) {
    let Some((first, rest)) = lists.split_first() else {
        f(prefix);
        return;
    };
    let used: u32 = prefix.iter().sum();
    let rest_min: u32 = rest.iter().map(|l| l.first().copied().unwrap_or(0)).sum();
    for &p in first.iter() {
        if used + p + rest_min > budget {
            break;
        }
        prefix.push(p);
        enumerate(rest, budget, prefix, f);
        prefix.pop();
    }
}

/// What [`choose`] decided.
struct Chosen {
    next: Vec<PlannedTest>,
    /// Why the campaign stops, when it does.
    stop: Option<String>,
}

/// Within `minimum_step` PEs of `b` in every component: the same configuration for the search.
fn near(a: &[u32], b: &[u32], minimum_step: u32) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(*y) < minimum_step)
}

fn within(a: &[u32], b: &[u32], radius: u32) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(*y) < radius)
}

/// Expected improvement over `best` of a normal(mu, sd) value.
fn expected_improvement(mu: f64, sd: f64, best: f64) -> f64 {
    if sd <= 1e-12 {
        return (mu - best).max(0.0);
    }
    let u = (mu - best) / sd;
    let pdf = (-0.5 * u * u).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let cdf = 0.5 * (1.0 + erf(u / std::f64::consts::SQRT_2));
    (mu - best) * cdf + sd * pdf
}

/// Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7), enough for ranking.
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    if x >= 0.0 {
        y
    } else {
        -y
    }
}

fn choose(state: &State, view: &Landscape) -> Chosen {
    use tuning::*;
    let s = &state.settings;
    let max_tests = state
        .iterations
        .first()
        .map(|it| it.tests.len())
        .unwrap_or(1)
        .max(1);
    // The best measured configuration, by FN on the landscape's normalisation.
    let scored: Vec<(usize, f64)> = view
        .measured
        .iter()
        .enumerate()
        .filter_map(|(k, m)| {
            let means = algorithm::mean_metrics(&m.runs)?;
            Some((k, view.fn_at(&m.nproc, means.sypd)))
        })
        .collect();
    let Some(&(best_k, best_fn)) = scored.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Chosen {
            next: Vec::new(),
            stop: Some("nothing was measured: every run failed".into()),
        };
    };
    let best = &view.measured[best_k];
    let taken = |n: &[u32], planned: &[PlannedTest]| {
        view.measured
            .iter()
            .any(|m| near(&m.nproc, n, s.minimum_step))
            || planned.iter().any(|p| near(&p.nproc, n, s.minimum_step))
    };
    let mut next: Vec<PlannedTest> = Vec::new();

    // Local evidence: Algorithm 1's move from the best, when the band lets it win.
    if let Some(means) = algorithm::mean_metrics(&best.runs) {
        if let Some((donor, recipient)) =
            algorithm::donor_and_recipient(&means.partial_coupling_cost)
        {
            let mut step = s.initial_step;
            while step >= s.minimum_step && step > 0 {
                if let Some(target) = algorithm::move_pes(
                    &best.nproc,
                    donor,
                    recipient,
                    step,
                    &view.limits,
                    s.max_nproc,
                ) {
                    if !taken(&target, &next) {
                        let p = view.model.predict(&target);
                        let upper = view.fn_at(&target, p.high);
                        if upper > best_fn + PLAUSIBLE_MARGIN {
                            next.push(PlannedTest {
                                test: None,
                                nproc: target,
                                step,
                                runs: 1,
                                reason: Some(format!(
                                    "donor/recipient: {} PEs {} -> {} from the best ({}); model: upper FN {upper:.3} > best {best_fn:.3}",
                                    step,
                                    view.names[donor],
                                    view.names[recipient],
                                    describe(&view.names, &best.nproc)
                                )),
                            });
                        }
                        break;
                    }
                }
                step /= 2;
            }
        }
    }

    // The model: every unmeasured configuration whose upper FN beats the best, by expected
    // improvement, spread out.
    let mut ranked = scored.clone();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let centres: Vec<&[u32]> = ranked
        .iter()
        .take(TRUST_AROUND)
        .map(|&(k, _)| view.measured[k].nproc.as_slice())
        .collect();
    let trusted = |n: &[u32]| centres.iter().any(|c| within(c, n, s.initial_step + 1));
    let mut options: Vec<(f64, f64, usize)> = view
        .candidates
        .iter()
        .enumerate()
        .filter_map(|(k, (n, p))| {
            if !trusted(n) {
                return None;
            }
            let upper = view.fn_at(n, p.high);
            if upper <= best_fn + PLAUSIBLE_MARGIN || taken(n, &[]) {
                return None;
            }
            let mu = view.fn_at(n, p.sypd);
            let sd = ((upper - mu) / BAND_Z).max(0.0);
            Some((expected_improvement(mu, sd, best_fn), upper, k))
        })
        .collect();
    options.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
    let radius = (s.initial_step / 2).max(s.minimum_step);
    let first_ei = options.first().map(|o| o.0).unwrap_or(0.0);
    for (ei, upper, k) in &options {
        if next.len() >= max_tests || *ei < MIN_EI_SHARE * first_ei || *ei < MIN_EI {
            break;
        }
        let nproc = &view.candidates[*k].0;
        if taken(nproc, &next) || next.iter().any(|p| within(&p.nproc, nproc, radius)) {
            continue;
        }
        next.push(PlannedTest {
            test: None,
            nproc: nproc.clone(),
            step: 0,
            runs: 1,
            reason: Some(format!(
                "model: upper FN {upper:.3} > best {best_fn:.3} (expected gain {ei:.4})"
            )),
        });
    }
    if !next.is_empty() {
        return Chosen { next, stop: None };
    }

    // Nothing unmeasured can win: repeat what is close to the best before answering.
    let noise_fn = best_fn
        - view.fn_at(
            &best.nproc,
            algorithm::mean_metrics(&best.runs).map_or(0.0, |m| m.sypd) * (1.0 - CLOSE_SYPD),
        );
    for &(k, f) in ranked.iter().take(REPEAT_AT_MOST) {
        let m = &view.measured[k];
        if f >= best_fn - noise_fn && m.attempts < s.repetitions {
            next.push(PlannedTest {
                test: Some(m.test),
                nproc: m.nproc.clone(),
                step: 0,
                runs: 1,
                reason: Some(format!(
                    "repetition: FN {f:.3} is within {noise_fn:.3} of the best {best_fn:.3} ({} of at most {} runs)",
                    m.attempts + 1,
                    s.repetitions
                )),
            });
        }
    }
    if !next.is_empty() {
        return Chosen { next, stop: None };
    }
    Chosen {
        next,
        stop: Some(format!(
            "no unmeasured configuration can beat the best FN {best_fn:.3} by the model's band by an expected {MIN_EI} or more"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gp_follows_points_and_widens_away_from_them() {
        let gp = Gp::fit(&[0.0, 1.0], &[1.0, 2.0], 1.5, 0.5, 0.5, 0.01);
        let (m0, s0) = gp.predict(0.0);
        assert!((m0 - 1.0).abs() < 0.02, "{m0}");
        let (m_far, s_far) = gp.predict(10.0);
        assert!((m_far - 1.5).abs() < 1e-6);
        assert!(s0 < 0.05 && (s_far - 0.5).abs() < 1e-6, "{s0} {s_far}");
    }

    #[test]
    fn component_speed_inverts_the_partial_coupling_cost() {
        // 100 s wall on 100 + 100 PEs; A computes 90 s (waits 10), B computes 60 s.
        let m = RunMetrics {
            sypd: 10.0,
            chsy: 0.0,
            coupling_cost: 0.0,
            partial_coupling_cost: vec![
                10.0 * 100.0 / (100.0 * 200.0),
                40.0 * 100.0 / (100.0 * 200.0),
            ],
        };
        let s = component_speeds(&m, &[100, 100]);
        assert!((s[0] - 10.0 / 0.9).abs() < 1e-9 && (s[1] - 10.0 / 0.6).abs() < 1e-9);
    }

    #[test]
    fn expected_improvement_is_positive_and_grows_with_mean_and_spread() {
        let a = expected_improvement(0.9, 0.01, 0.91);
        let b = expected_improvement(0.9, 0.05, 0.91);
        let c = expected_improvement(0.92, 0.01, 0.91);
        assert!(a > 0.0 && b > a && c > a);
        assert!((erf(1.0) - 0.842_700_79).abs() < 1e-6);
    }

    #[test]
    fn enumeration_respects_the_budget() {
        let mut seen = Vec::new();
        enumerate(&[&[1, 2, 3], &[1, 2]], 4, &mut Vec::new(), &mut |n| {
            seen.push(n.to_vec())
        });
        assert_eq!(
            seen,
            vec![vec![1, 1], vec![1, 2], vec![2, 1], vec![2, 2], vec![3, 1]]
        );
    }
}
