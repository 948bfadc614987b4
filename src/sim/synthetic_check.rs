//! How good is the model on truths it never sees? Leave-one-out ([`crate::model::check`]) on
//! synthetic coupled cases ([`super::synthetic`]) whose stand-in runs carry a known hidden
//! effect: plain runs, runs of different lengths with a fixed cost per run, and a coupling time
//! per step; and the model without curves ([`crate::model::scaling_law`]), by leave-one-out
//! and by how well its learned curves and their bands reach the half of each component's range
//! it never saw. The checks need the stand-in model, which sits above the performance model, so
//! they live here and not in `model`; the accuracy tests and the `model_accuracy` example run
//! them.

use super::synthetic::SyntheticCase;
use super::SimSettings;
use crate::interp::Method;
use crate::model::check::{leave_one_out, leave_one_out_by, median_sorted, CheckSummary};
use crate::model::run_length::{lengthen, penalty};
use crate::model::steps::Steps;
use crate::model::{MeasuredRun, Model};
use crate::predict::ComponentInput;

/// Leave-one-out on synthetic truths: for each case seed, a random `components`-component
/// case ([`super::synthetic`]), `runs` stand-in runs of random configurations, and the
/// leave-one-out check against the case's standalone curves (which the model sees; the truth
/// it never sees). Returns one summary per case.
pub fn synthetic_leave_one_out(
    seeds: std::ops::Range<u64>,
    components: usize,
    runs: usize,
) -> Vec<CheckSummary> {
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
/// wall time at the case's median speed ([`crate::model::run_length`]). Returns per case the summary
/// when the model knows each run's length and when it does not (`simulated_s` unknown: it
/// cannot learn the fixed cost).
pub fn synthetic_run_length_leave_one_out(
    seeds: std::ops::Range<u64>,
    components: usize,
    runs: usize,
    fixed_share: f64,
) -> Vec<(CheckSummary, CheckSummary)> {
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
    /// The same with a model that never tries a coupling time ([`crate::model::coupling_time`]).
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

/// The synthetic case's components without their curves: what the model learns from runs.
fn without_curves(case: &SyntheticCase) -> Vec<ComponentInput> {
    case.components
        .iter()
        .map(|c| {
            let curve = &c.standalone;
            ComponentInput::without_curve(&c.name, curve.first_nproc(), curve.last_nproc())
        })
        .collect()
}

/// [`synthetic_leave_one_out`] with and without the standalone curves: per case, the summary
/// of leave-one-out with the curves and with none (every component learned from the training
/// runs of each fold).
pub fn synthetic_leave_one_out_without_curves(
    seeds: std::ops::Range<u64>,
    components: usize,
    runs: usize,
) -> Vec<(CheckSummary, CheckSummary)> {
    seeds
        .map(|seed| {
            let case = SyntheticCase::generate(seed, components);
            let measured: Vec<MeasuredRun> = case
                .random_configurations(runs, seed)
                .iter()
                .enumerate()
                .filter_map(|(i, nproc)| case.measured_run(nproc, i as u64).ok())
                .collect();
            let interp = Method::default();
            let with = leave_one_out(&case.standalone_curves(), interp, &measured).0;
            let without = leave_one_out(&without_curves(&case), interp, &measured).0;
            (with.summary, without.summary)
        })
        .collect()
}

/// How a learned curve reaches where no run went ([`synthetic_extrapolation`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extrapolation {
    /// Predictions made (component speeds of held-out runs).
    pub predictions: usize,
    /// Median of |ln(predicted / measured)|.
    pub median_log_error: f64,
    /// Median half-width of the band, in ln units.
    pub median_half_width: f64,
    /// Fraction of the measured speeds inside the band.
    pub coverage: f64,
}

/// The learned curves away from the runs: for each case and each component, the runs are
/// split at the median of that component's PEs; the model without curves is fitted on one
/// half and predicts the component's own speed (its compute SYPD) in every run of the other
/// half, upwards (`upwards`: trained below, predicting above) or downwards. A hard test: the
/// predictions lie up to several times the PEs away from any training run.
pub fn synthetic_extrapolation(
    seeds: std::ops::Range<u64>,
    components: usize,
    runs: usize,
    upwards: bool,
) -> Extrapolation {
    let (mut errors, mut widths, mut covered) = (Vec::new(), Vec::new(), 0usize);
    for seed in seeds {
        let case = SyntheticCase::generate(seed, components);
        let measured: Vec<MeasuredRun> = case
            .random_configurations(runs, seed)
            .iter()
            .enumerate()
            .filter_map(|(i, nproc)| case.measured_run(nproc, i as u64).ok())
            .collect();
        let inputs = without_curves(&case);
        for name in case.names() {
            let mut pes: Vec<u32> = measured.iter().filter_map(|r| r.nproc(&name)).collect();
            pes.sort_unstable();
            let Some(&cut) = pes.get(pes.len() / 2) else {
                continue;
            };
            let below = |r: &MeasuredRun| r.nproc(&name).is_some_and(|p| p <= cut);
            let train: Vec<MeasuredRun> = measured
                .iter()
                .filter(|r| below(r) == upwards)
                .cloned()
                .collect();
            let (model, _) = Model::fit(&inputs, Method::default(), &train);
            for run in measured.iter().filter(|r| below(r) != upwards) {
                let Some(c) = run.component(&name) else {
                    continue;
                };
                let Some(reference) = model.reference_sypd(&name, c.nproc) else {
                    continue;
                };
                let f = model.speed(&name, c.nproc, reference);
                errors.push((f.mid / c.sypd).ln().abs());
                widths.push((f.high / f.mid).ln());
                covered += usize::from(f.low <= c.sypd && c.sypd <= f.high);
            }
        }
    }
    errors.sort_by(f64::total_cmp);
    widths.sort_by(f64::total_cmp);
    Extrapolation {
        predictions: errors.len(),
        median_log_error: median_sorted(&errors),
        median_half_width: median_sorted(&widths),
        coverage: covered as f64 / errors.len().max(1) as f64,
    }
}
