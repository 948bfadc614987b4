//! How good is the model? Leave-one-out over measured runs (`autolb model check`) and the
//! few-runs test (fit on k runs, predict the others), with errors as fractions.
//!
//! Leave-one-out holds out every run of the same configuration together (repetitions of one
//! configuration would otherwise predict each other and flatter the model).

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

use super::steps::Steps;
use super::{MeasuredRun, Model};
use crate::curve::Curve;
use crate::interp::Method;

/// One run's row of the check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRow {
    pub path: String,
    pub nproc: BTreeMap<String, u32>,
    pub measured_sypd: f64,
    pub standalone_sypd: f64,
    pub calibrated_sypd: f64,
    pub low: f64,
    pub high: f64,
}

impl CheckRow {
    pub fn standalone_error(&self) -> f64 {
        rel_error(self.standalone_sypd, self.measured_sypd)
    }
    pub fn calibrated_error(&self) -> f64 {
        rel_error(self.calibrated_sypd, self.measured_sypd)
    }
    pub fn covered(&self) -> bool {
        self.low <= self.measured_sypd && self.measured_sypd <= self.high
    }
}

/// Mean, median and max absolute relative error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ErrorStats {
    pub mean: f64,
    pub median: f64,
    pub max: f64,
}

impl ErrorStats {
    pub fn of(errors: &[f64]) -> ErrorStats {
        if errors.is_empty() {
            return ErrorStats {
                mean: f64::NAN,
                median: f64::NAN,
                max: f64::NAN,
            };
        }
        let mut v: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
        v.sort_by(f64::total_cmp);
        ErrorStats {
            mean: v.iter().sum::<f64>() / v.len() as f64,
            median: median_sorted(&v),
            max: v[v.len() - 1],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CheckSummary {
    pub standalone: ErrorStats,
    pub calibrated: ErrorStats,
    /// Fraction of runs whose measured SYPD lies in the calibrated band.
    pub coverage: f64,
}

/// The whole check (`--json` prints exactly this).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub runs: Vec<CheckRow>,
    pub summary: CheckSummary,
}

/// Leave-one-out (grouped by configuration) over `runs`. Runs the model cannot use (missing a
/// component, outside a curve) are left out of the table; the notes say so.
pub fn leave_one_out(
    curves: &[Curve],
    interp: Method,
    runs: &[MeasuredRun],
) -> (Check, Vec<String>) {
    leave_one_out_with_steps(curves, interp, runs, &Steps::default())
}

/// [`leave_one_out`] where both models use the per-step series in `steps`
/// ([`super::steps`]) for the coupled SYPD.
pub fn leave_one_out_with_steps(
    curves: &[Curve],
    interp: Method,
    runs: &[MeasuredRun],
    steps: &Steps,
) -> (Check, Vec<String>) {
    leave_one_out_by(curves, interp, runs, steps, &|train| {
        Model::fit_with_steps(curves, interp, train, steps).0
    })
}

/// [`leave_one_out_with_steps`] with the model of each fold fitted by `fit` on its training
/// runs.
fn leave_one_out_by(
    curves: &[Curve],
    interp: Method,
    runs: &[MeasuredRun],
    steps: &Steps,
    fit: &dyn Fn(&[MeasuredRun]) -> Model,
) -> (Check, Vec<String>) {
    let names: Vec<String> = curves.iter().map(|c| c.name.clone()).collect();
    let (_, notes) = Model::fit(curves, interp, runs);
    let skipped: Vec<&str> = notes
        .iter()
        .filter_map(|n| n.split(": not used").next())
        .collect();
    let usable: Vec<&MeasuredRun> = runs
        .iter()
        .filter(|r| !skipped.contains(&r.path.as_str()))
        .collect();
    let mut rows = Vec::new();
    for run in &usable {
        let key = run.nproc_of(&names);
        let train: Vec<MeasuredRun> = usable
            .iter()
            .filter(|o| o.nproc_of(&names) != key)
            .map(|o| (*o).clone())
            .collect();
        let model = fit(&train);
        rows.push(row_with_steps(&model, curves, interp, run, &names, steps));
    }
    (
        Check {
            summary: summarise(&rows),
            runs: rows,
        },
        notes,
    )
}

/// Predicts `run` with `model` (and the standalone model) as a check row.
pub fn row(
    model: &Model,
    curves: &[Curve],
    interp: Method,
    run: &MeasuredRun,
    names: &[String],
) -> CheckRow {
    row_with_steps(model, curves, interp, run, names, &Steps::default())
}

fn row_with_steps(
    model: &Model,
    curves: &[Curve],
    interp: Method,
    run: &MeasuredRun,
    names: &[String],
    steps: &Steps,
) -> CheckRow {
    let nproc = run.nproc_of(names).unwrap_or_default();
    let standalone = Model::Standalone.estimate_with_steps(curves, interp, &nproc, steps);
    // The run's length is known before it runs: the prediction is for that length.
    let calibrated = model.estimate_with_steps_for(curves, interp, &nproc, steps, run.simulated_s);
    CheckRow {
        path: run.path.clone(),
        nproc: names.iter().cloned().zip(nproc.iter().copied()).collect(),
        measured_sypd: run.coupled_sypd,
        standalone_sypd: standalone.sypd,
        calibrated_sypd: calibrated.sypd,
        low: calibrated.low,
        high: calibrated.high,
    }
}

pub fn summarise(rows: &[CheckRow]) -> CheckSummary {
    let sa: Vec<f64> = rows.iter().map(CheckRow::standalone_error).collect();
    let ca: Vec<f64> = rows.iter().map(CheckRow::calibrated_error).collect();
    let covered = rows.iter().filter(|r| r.covered()).count();
    CheckSummary {
        standalone: ErrorStats::of(&sa),
        calibrated: ErrorStats::of(&ca),
        coverage: if rows.is_empty() {
            f64::NAN
        } else {
            covered as f64 / rows.len() as f64
        },
    }
}

/// The few-runs test: `draws` times, fit on `k` runs drawn at random (seeded) and predict all
/// the others (with per-step series `steps`, possibly empty); returns the median absolute
/// error of each draw.
pub fn few_runs(
    curves: &[Curve],
    interp: Method,
    runs: &[MeasuredRun],
    k: usize,
    draws: usize,
    seed: u64,
    steps: &Steps,
) -> Vec<f64> {
    let names: Vec<String> = curves.iter().map(|c| c.name.clone()).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(draws);
    for _ in 0..draws {
        let mut idx: Vec<usize> = (0..runs.len()).collect();
        idx.shuffle(&mut rng);
        let (train, test) = idx.split_at(k.min(runs.len()));
        let train: Vec<MeasuredRun> = train.iter().map(|&i| runs[i].clone()).collect();
        let (model, _) = Model::fit_with_steps(curves, interp, &train, steps);
        let errors: Vec<f64> = test
            .iter()
            .map(|&i| {
                row_with_steps(&model, curves, interp, &runs[i], &names, steps).calibrated_error()
            })
            .collect();
        out.push(ErrorStats::of(&errors).median);
    }
    out
}

/// Signed relative error of a prediction against a measurement.
pub fn rel_error(predicted: f64, measured: f64) -> f64 {
    predicted / measured - 1.0
}

/// Median of a sorted slice.
pub fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Leave-one-out on synthetic truths: for each case seed, a random `components`-component
/// case ([`crate::sim::synthetic`]), `runs` stand-in runs of random configurations, and the
/// leave-one-out check against the case's standalone curves (which the model sees; the truth
/// it never sees). Returns one summary per case.
pub fn synthetic_leave_one_out(
    seeds: std::ops::Range<u64>,
    components: usize,
    runs: usize,
) -> Vec<CheckSummary> {
    use crate::sim::synthetic::SyntheticCase;
    seeds
        .map(|seed| {
            let case = SyntheticCase::generate(seed, components);
            let measured: Vec<MeasuredRun> = case
                .random_configurations(runs, seed)
                .iter()
                .enumerate()
                .filter_map(|(i, nproc)| case.measured_run(nproc, i as u64).ok())
                .collect();
            leave_one_out(&case.standalone_curves(), Method::default(), &measured)
                .0
                .summary
        })
        .collect()
}

/// [`synthetic_leave_one_out`] where the runs have different lengths (a week, a month, two
/// months, in turn) and pay a hidden fixed cost per run of `fixed_share` of a week-long run's
/// wall time at the case's median speed ([`super::run_length`]). Returns per case the summary
/// when the model knows each run's length and when it does not (`simulated_s` unknown: it
/// cannot learn the fixed cost).
pub fn synthetic_run_length_leave_one_out(
    seeds: std::ops::Range<u64>,
    components: usize,
    runs: usize,
    fixed_share: f64,
) -> Vec<(CheckSummary, CheckSummary)> {
    use super::run_length::{lengthen, penalty};
    use crate::sim::synthetic::SyntheticCase;
    const DAY: f64 = 86_400.0;
    let lengths = [7.0 * DAY, 31.0 * DAY, 59.0 * DAY];
    seeds
        .map(|seed| {
            let case = SyntheticCase::generate(seed, components);
            let mut measured: Vec<MeasuredRun> = case
                .random_configurations(runs, seed)
                .iter()
                .enumerate()
                .filter_map(|(i, nproc)| case.measured_run(nproc, i as u64).ok())
                .collect();
            let mut speeds: Vec<f64> = measured.iter().map(|r| r.coupled_sypd).collect();
            speeds.sort_by(f64::total_cmp);
            let week_wall_s = lengths[0] / (365.0 * median_sorted(&speeds));
            let fixed_s = fixed_share * week_wall_s;
            for (i, run) in measured.iter_mut().enumerate() {
                let s = lengths[i % lengths.len()];
                let phi = penalty(fixed_s, Some(s));
                run.simulated_s = Some(s);
                run.coupled_sypd = lengthen(run.coupled_sypd, phi);
                for c in &mut run.components {
                    c.sypd = lengthen(c.sypd, phi);
                }
            }
            let curves = case.standalone_curves();
            let known = leave_one_out(&curves, Method::default(), &measured)
                .0
                .summary;
            for run in &mut measured {
                run.simulated_s = None;
            }
            let unknown = leave_one_out(&curves, Method::default(), &measured)
                .0
                .summary;
            (known, unknown)
        })
        .collect()
}

/// One case of [`synthetic_coupling_time_leave_one_out`].
#[derive(Debug, Clone, PartialEq)]
pub struct CouplingTimeCase {
    /// Leave-one-out with the model (coupling times kept where the BIC says).
    pub model: CheckSummary,
    /// The same with a model that never tries a coupling time ([`super::coupling_time`]).
    pub without_term: CheckSummary,
    /// The hidden coupling time of every component, wall seconds per simulated day.
    pub hidden_s_per_day: f64,
    /// Per component, the coupling time the model fitted on all the case's runs learned.
    pub learned_s_per_day: Vec<f64>,
}

/// [`synthetic_leave_one_out`] where every component of the stand-in spends a hidden fixed
/// time interpolating and sending per coupling step: `share` of the median pace-setter's step
/// (at the truth's speeds of the drawn configurations; 0: none at all, not even the stand-in's
/// default few milliseconds). Its compute seconds do not hold that time, its coupled run
/// does. Returns per case leave-one-out with the model and without the coupling time term,
/// the hidden time and what the model learned from all runs.
pub fn synthetic_coupling_time_leave_one_out(
    seeds: std::ops::Range<u64>,
    components: usize,
    runs: usize,
    share: f64,
) -> Vec<CouplingTimeCase> {
    use crate::sim::synthetic::SyntheticCase;
    use crate::sim::SimSettings;
    const DAY: f64 = 86_400.0;
    seeds
        .map(|seed| {
            let case = SyntheticCase::generate(seed, components);
            let configurations = case.random_configurations(runs, seed);
            let mut paces: Vec<f64> = configurations
                .iter()
                .map(|nproc| {
                    case.components
                        .iter()
                        .zip(nproc)
                        .map(|(c, &p)| c.coupled_sypd(p))
                        .fold(f64::INFINITY, f64::min)
                })
                .collect();
            paces.sort_by(f64::total_cmp);
            let base = case.base_settings();
            let period = base.period();
            let step_s = share * period / (365.0 * median_sorted(&paces));
            let settings = SimSettings {
                interp_s: Some(step_s),
                put_s: Some(0.0),
                fields: Some(1),
                ..base
            };
            let measured: Vec<MeasuredRun> = configurations
                .iter()
                .enumerate()
                .filter_map(|(i, nproc)| case.measured_run_with(&settings, nproc, i as u64).ok())
                .collect();
            let curves = case.standalone_curves();
            let interp = Method::default();
            let no_steps = Steps::default();
            let model = leave_one_out(&curves, interp, &measured).0.summary;
            let without_term = leave_one_out_by(&curves, interp, &measured, &no_steps, &|train| {
                Model::fit_terms(&curves, interp, train, &no_steps, false).0
            })
            .0
            .summary;
            let learned_s_per_day = match Model::fit(&curves, interp, &measured).0 {
                Model::Calibrated(m) => m.components.iter().map(|c| c.coupling_s_per_day).collect(),
                Model::Standalone => Vec::new(),
            };
            CouplingTimeCase {
                model,
                without_term,
                hidden_s_per_day: step_s * DAY / period,
                learned_s_per_day,
            }
        })
        .collect()
}
