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
use super::{ComponentCurve, EstimateRequest, MeasuredRun, Model};
use crate::interp::Method;

/// One run's row of the check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRow {
    /// The run (its directory).
    pub path: String,
    /// Its PEs by component.
    pub nproc: BTreeMap<String, u32>,
    /// Its measured coupled SYPD.
    pub measured_sypd: f64,
    /// The standalone model's prediction; `None` when a component has no curve (there is no
    /// standalone model without one).
    pub standalone_sypd: Option<f64>,
    /// The calibrated model's prediction, fitted without the run.
    pub calibrated_sypd: f64,
    /// The calibrated band's low end.
    pub low: f64,
    /// The calibrated band's high end.
    pub high: f64,
}

impl CheckRow {
    /// The standalone model's relative error, when it has a prediction.
    pub fn standalone_error(&self) -> Option<f64> {
        self.standalone_sypd
            .map(|s| rel_error(s, self.measured_sypd))
    }
    /// The calibrated model's relative error.
    pub fn calibrated_error(&self) -> f64 {
        rel_error(self.calibrated_sypd, self.measured_sypd)
    }
    /// Whether the measured SYPD lies in the calibrated band.
    pub fn covered(&self) -> bool {
        self.low <= self.measured_sypd && self.measured_sypd <= self.high
    }
}

/// Mean, median and max absolute relative error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ErrorStats {
    /// Mean absolute relative error.
    pub mean: f64,
    /// Median absolute relative error.
    pub median: f64,
    /// Largest absolute relative error.
    pub max: f64,
}

impl ErrorStats {
    /// The statistics of `errors` (signed; their absolute values count), NaN when empty.
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

/// The check's figures over its rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CheckSummary {
    /// The standalone model's errors; `None` when a component has no curve.
    pub standalone: Option<ErrorStats>,
    /// The calibrated model's errors.
    pub calibrated: ErrorStats,
    /// Fraction of runs whose measured SYPD lies in the calibrated band.
    pub coverage: f64,
}

/// The whole check (`--json` prints exactly this).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// One row per usable run.
    pub runs: Vec<CheckRow>,
    /// The errors and the band's coverage over the rows.
    pub summary: CheckSummary,
}

/// Leave-one-out (grouped by configuration) over `runs`. Runs the model cannot use (missing a
/// component, outside a curve) are left out of the table; the notes say so. Components
/// without a curve are learned from the training runs of each fold.
pub fn leave_one_out<C: ComponentCurve>(
    curves: &[C],
    interp: Method,
    runs: &[MeasuredRun],
) -> (Check, Vec<String>) {
    leave_one_out_with_steps(curves, interp, runs, &Steps::default())
}

/// [`leave_one_out`] where both models use the per-step series in `steps`
/// ([`super::steps`]) for the coupled SYPD.
pub fn leave_one_out_with_steps<C: ComponentCurve>(
    curves: &[C],
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
pub fn leave_one_out_by<C: ComponentCurve>(
    curves: &[C],
    interp: Method,
    runs: &[MeasuredRun],
    steps: &Steps,
    fit: &dyn Fn(&[MeasuredRun]) -> Model,
) -> (Check, Vec<String>) {
    let names: Vec<String> = curves.iter().map(|c| c.name().to_string()).collect();
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
pub fn row<C: ComponentCurve>(
    model: &Model,
    curves: &[C],
    interp: Method,
    run: &MeasuredRun,
    names: &[String],
) -> CheckRow {
    row_with_steps(model, curves, interp, run, names, &Steps::default())
}

fn row_with_steps<C: ComponentCurve>(
    model: &Model,
    curves: &[C],
    interp: Method,
    run: &MeasuredRun,
    names: &[String],
    steps: &Steps,
) -> CheckRow {
    let nproc = run.nproc_of(names).unwrap_or_default();
    let all_curves = curves.iter().all(|c| c.standalone().is_some());
    let standalone = all_curves.then(|| {
        Model::Standalone
            .estimate(&EstimateRequest::stepped(curves, interp, &nproc, steps))
            .sypd
    });
    // The run's length is known before it runs: the prediction is for that length.
    let calibrated = model.estimate(
        &EstimateRequest::stepped(curves, interp, &nproc, steps).for_run(run.simulated_s),
    );
    CheckRow {
        path: run.path.clone(),
        nproc: names.iter().cloned().zip(nproc.iter().copied()).collect(),
        measured_sypd: run.coupled_sypd,
        standalone_sypd: standalone,
        calibrated_sypd: calibrated.sypd,
        low: calibrated.low,
        high: calibrated.high,
    }
}

/// The errors and coverage of `rows`.
pub fn summarise(rows: &[CheckRow]) -> CheckSummary {
    let sa: Option<Vec<f64>> = rows.iter().map(CheckRow::standalone_error).collect();
    let ca: Vec<f64> = rows.iter().map(CheckRow::calibrated_error).collect();
    let covered = rows.iter().filter(|r| r.covered()).count();
    CheckSummary {
        standalone: sa.filter(|v| !v.is_empty()).map(|v| ErrorStats::of(&v)),
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
pub fn few_runs<C: ComponentCurve>(
    curves: &[C],
    interp: Method,
    runs: &[MeasuredRun],
    k: usize,
    draws: usize,
    seed: u64,
    steps: &Steps,
) -> Vec<f64> {
    let names: Vec<String> = curves.iter().map(|c| c.name().to_string()).collect();
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
