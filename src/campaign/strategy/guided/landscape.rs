//! What the guided strategy knows after an iteration: every configuration measured so far with
//! all its runs, the calibrated model ([`crate::model`]) fitted on them, and one fixed
//! normalisation of FN to compare measured and predicted configurations on.

use super::super::algorithm1::{self, Budgets, Limits};
use super::super::limits_of;
use crate::campaign::state::{FrozenSettings, RunMetrics, State};
use crate::curve::Curve;
use crate::interp::Interpolant;
use crate::metrics::Bounds;
use crate::model::{guide, Estimate, EstimateRequest, MeasuredComponent, MeasuredRun, Model};
use crate::predict::{self, ComponentInput, ProblemOptions};

/// Every run of one configuration, over all iterations.
#[derive(Debug, Clone)]
pub struct MeasuredConfig {
    /// PEs per component.
    pub nproc: Vec<u32>,
    /// The test that first ran it (repetitions go on under this id).
    pub test: u32,
    /// Metrics of its measured runs (failed runs count in `attempts` only).
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

/// Each component's coupled-mode speed in one run: the run's SYPD over the share of the wall time
/// the component computed. The partial coupling cost is `coupling_s * p / (wall * P)` (paper eq. 5;
/// the guide's `method/prediction.md`, *Metrics*), so that share is `1 - cost * P / p`.
///
/// `unit_cost` weighs each component's units as the measurement did (its resource's unit cost
/// with `[[resource]]` tables, else 1 each): the share only needs `p` and `P` in the same units.
pub fn component_speeds(m: &RunMetrics, nproc: &[u32], unit_cost: &[f64]) -> Vec<f64> {
    let weighted: Vec<f64> = nproc
        .iter()
        .enumerate()
        .map(|(c, &p)| unit_cost.get(c).copied().unwrap_or(1.0) * f64::from(p))
        .collect();
    let total: f64 = weighted.iter().sum();
    m.partial_coupling_cost
        .iter()
        .zip(&weighted)
        .map(|(cost, &p)| {
            let computing = (1.0 - cost * total / p).clamp(0.05, 1.0);
            m.sypd / computing
        })
        .collect()
}

/// The runs of `measured` as the model learns from them. They are taken from the state's
/// metrics (the campaign measured them once, from the same timing output), not read again from
/// the run directories: a run recorded with `campaign record --timing PATH` may keep its
/// timing output elsewhere, and the plan must not depend on files that may since have moved.
pub fn measured_runs(
    names: &[String],
    measured: &[MeasuredConfig],
    unit_cost: &[f64],
) -> Vec<MeasuredRun> {
    let mut out = Vec::new();
    for m in measured {
        for (r, run) in m.runs.iter().enumerate() {
            let speeds = component_speeds(run, &m.nproc, unit_cost);
            out.push(MeasuredRun {
                path: format!("test {} run {}", m.test, r + 1),
                components: names
                    .iter()
                    .zip(&m.nproc)
                    .zip(speeds)
                    .map(|((name, &nproc), sypd)| {
                        MeasuredComponent::from_speed(name.clone(), nproc, sypd)
                    })
                    .collect(),
                coupled_sypd: run.sypd,
                // A campaign's runs all simulate the same length, so there is no fixed
                // cost per run to tell apart from the speed.
                simulated_s: None,
            });
        }
    }
    out
}

/// Can a configuration run within the campaign's budget? The one place the guided strategy
/// asks, for the model's candidates and for the donor/recipient moves alike. The candidate
/// enumeration prunes with it on the smallest completion of a partial configuration, which is
/// sound as long as the check only gets harder with more PEs in any component.
pub fn within_budget(budgets: &Budgets, nproc: &[u32]) -> bool {
    budgets.fits(nproc)
}

/// Calls `f` with every configuration taking one entry of each (ascending) list that
/// `feasible` accepts; a partial configuration is completed with each remaining list's first
/// entry to prune.
pub fn enumerate(
    lists: &[Vec<u32>],
    feasible: &dyn Fn(&[u32]) -> bool,
    prefix: &mut Vec<u32>,
    f: &mut dyn FnMut(&[u32]),
) {
    let Some((first, rest)) = lists.split_first() else {
        f(prefix);
        return;
    };
    let smallest_rest: Vec<u32> = rest.iter().filter_map(|l| l.first().copied()).collect();
    for &p in first {
        prefix.push(p);
        let mut completed = prefix.clone();
        completed.extend(&smallest_rest);
        if !feasible(&completed) {
            prefix.pop();
            break;
        }
        enumerate(rest, feasible, prefix, f);
        prefix.pop();
    }
}

/// The model's belief about a configuration's FN (at its mean speed, on the landscape's
/// normalisation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Belief {
    /// FN at the model's mean speed of the configuration.
    pub mean: f64,
    /// One standard deviation of the mean speed, in FN.
    pub sd: f64,
    /// The top of the band.
    pub upper: f64,
}

/// Everything scored: the model, the candidates' PE counts, the measured configurations, and
/// the normalisation FN uses for all of them.
pub struct Landscape {
    /// The model fitted on the campaign's runs so far (with the curves).
    pub model: Model,
    /// The components' names, in component order.
    pub names: Vec<String>,
    /// Every configuration run so far, with its runs.
    pub measured: Vec<MeasuredConfig>,
    /// The PE counts each component may take.
    pub limits: Vec<Limits>,
    /// Per component, the candidate PE counts of the prediction at `minimum_step` spacing
    /// (allowed lists and limits applied), ascending.
    pub lists: Vec<Vec<u32>>,
    /// The model's best configuration among the prediction's candidates.
    pub predicted_best: Option<Vec<u32>>,
    /// Each component's curve interpolated; `None`: the model's learnt law instead.
    standalone: Vec<Option<Interpolant>>,
    /// FN's normalisation: the bounds of the model's predicted landscape, i.e. of the kept
    /// configurations of the prediction ranked with this model (the guide's `method/prediction.md`,
    /// step 5).
    sypd: Bounds,
    cost: Bounds,
    settings: FrozenSettings,
}

impl Landscape {
    /// Fits the model on the campaign's measured runs and scores the prediction's candidates with
    /// it; an error (in words) when the prediction cannot be built.
    /// A component without a curve (`None`, a cold start) is learnt by the model from the
    /// coupled runs alone; the model must have learnt it (three or more PE counts measured),
    /// else its speeds are not numbers.
    pub fn new(state: &State, curves: &[Option<Curve>]) -> Result<Landscape, String> {
        let s = &state.settings;
        let interp = s.interp.unwrap_or_default();
        let names = state.component_names();
        let measured = measured_configs(state);
        let unit_cost: Vec<f64> = (0..names.len())
            .map(|c| s.cost_model.as_ref().map_or(1.0, |m| m.unit_cost_of(c)))
            .collect();
        let runs = measured_runs(&names, &measured, &unit_cost);
        let inputs: Vec<ComponentInput> = state
            .components
            .iter()
            .zip(curves)
            .map(|(c, curve)| ComponentInput {
                name: c.name.clone(),
                curve: curve.clone(),
                allowed: c.allowed.clone(),
                min_nproc: Some(c.low),
                max_nproc: Some(c.high),
                thread_curves: Vec::new(),
            })
            .collect();
        let (model, _skipped) = Model::fit(&inputs, interp, &runs);
        if let Some(unknown) = inputs
            .iter()
            .find(|c| c.curve.is_none() && !model.learned_curve(&c.name))
        {
            return Err(format!(
                "the model has not learnt {}'s curve from the coupled runs yet (it needs three or more PE counts measured)",
                unknown.name
            ));
        }
        let settings = predict::Settings {
            max_nproc: s.max_nproc,
            step: s.minimum_step.max(1),
            tts_w: s.tts_w,
            top: 1,
            interp,
            extra_pes: s.extra_pes,
        };
        let cost_model = s.cost_model.clone().unwrap_or_default();
        let problem = predict::Problem::build(
            &inputs,
            &settings,
            ProblemOptions {
                model: Some(&model),
                cost_model: Some(&cost_model),
            },
        )
        .map_err(|e| e.to_string())?;
        let lists = problem.components.iter().map(|c| c.nproc.clone()).collect();
        let best = problem
            .rank(s.tts_w, 1)
            .top
            .first()
            .map(|b| b.nproc.clone());
        Ok(Landscape {
            standalone: curves
                .iter()
                .map(|c| {
                    c.as_ref()
                        .map(|c| Interpolant::new(interp, &c.xs(), &c.ys()))
                })
                .collect(),
            predicted_best: best,
            sypd: problem.sypd_bounds,
            cost: problem.cost_bounds,
            model,
            names,
            measured,
            limits: limits_of(state),
            lists,
            settings: s.clone(),
        })
    }

    /// The bounds FN is normalised on here.
    pub fn normalisation(&self) -> crate::campaign::state::Normalisation {
        crate::campaign::state::Normalisation {
            sypd: self.sypd,
            cost: self.cost,
        }
    }

    /// The campaign's frozen settings.
    pub fn settings(&self) -> &FrozenSettings {
        &self.settings
    }

    /// The model's estimate of a configuration (any PE counts within the curves).
    pub fn estimate(&self, nproc: &[u32]) -> Estimate {
        let standalone: Vec<f64> = self
            .standalone
            .iter()
            .zip(&self.names)
            .zip(nproc)
            .map(|((i, name), &p)| match i {
                Some(i) => i.eval(f64::from(p)),
                None => self.model.reference_sypd(name, p).unwrap_or(f64::NAN),
            })
            .collect();
        self.model
            .estimate(&EstimateRequest::known(&self.names, nproc, &standalone))
    }

    /// What the model says about a configuration's FN at its mean speed: the mean, one
    /// standard deviation and the top of the band ([`crate::model::guide::mean_log_sd`]).
    pub fn belief(&self, nproc: &[u32]) -> Belief {
        let e = self.estimate(nproc);
        let sd = guide::mean_log_sd(&self.model, &e);
        let z = guide::band_sds(&self.model);
        let mean = self.fn_at(nproc, e.sypd);
        Belief {
            mean,
            sd: self.fn_at(nproc, e.sypd * sd.exp()) - mean,
            upper: self.fn_at(nproc, e.sypd * (z * sd).exp()),
        }
    }

    /// The top of the band of a configuration's FN at its mean speed.
    pub fn upper_fn(&self, nproc: &[u32]) -> f64 {
        self.belief(nproc).upper
    }

    /// The cost FN weighs for a configuration at `sypd`: CHSY, or the machine's cost as the
    /// campaign status bills it.
    pub fn cost(&self, nproc: &[u32], sypd: f64) -> f64 {
        let s = &self.settings;
        match &s.cost_model {
            Some(m) => crate::metrics::chsy(m.weight_of(nproc, s.extra_pes), sypd),
            None => crate::metrics::chsy(f64::from(nproc.iter().sum::<u32>() + s.extra_pes), sypd),
        }
    }

    /// FN of a configuration running at `sypd`, on this landscape's normalisation.
    pub fn fn_at(&self, nproc: &[u32], sypd: f64) -> f64 {
        crate::metrics::fittingness_in(
            self.settings.tts_w,
            sypd,
            self.cost(nproc, sypd),
            &self.sypd,
            &self.cost,
        )
    }

    /// A measured configuration's FN at the mean SYPD of its runs (`None`: every run failed).
    pub fn measured_fn(&self, m: &MeasuredConfig) -> Option<f64> {
        let means = algorithm1::mean_metrics(&m.runs)?;
        Some(self.fn_at(&m.nproc, means.sypd))
    }

    /// Every candidate configuration within the budget that `keep` accepts; `near` narrows
    /// each component's list first (cheap pruning: a configuration passes `keep` only if each
    /// of its PE counts passes `near`).
    pub fn candidates(
        &self,
        near: &dyn Fn(usize, u32) -> bool,
        keep: &dyn Fn(&[u32]) -> bool,
    ) -> Vec<Vec<u32>> {
        let lists: Vec<Vec<u32>> = self
            .lists
            .iter()
            .enumerate()
            .map(|(c, l)| l.iter().copied().filter(|&p| near(c, p)).collect())
            .collect();
        let mut out = Vec::new();
        // Built once: the enumeration asks for every partial configuration.
        let budgets = self.settings.budgets();
        let budget = |n: &[u32]| within_budget(&budgets, n);
        enumerate(&lists, &budget, &mut Vec::new(), &mut |n| {
            if keep(n) {
                out.push(n.to_vec());
            }
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = component_speeds(&m, &[100, 100], &[]);
        assert!((s[0] - 10.0 / 0.9).abs() < 1e-9 && (s[1] - 10.0 / 0.6).abs() < 1e-9);
    }

    #[test]
    fn every_run_of_a_configuration_becomes_one_measured_run_for_the_model() {
        let run = |sypd: f64| RunMetrics {
            sypd,
            chsy: 0.0,
            coupling_cost: 0.0,
            // A waits 10 % of the wall time, B 40 % (equal PEs: cost = share / 2).
            partial_coupling_cost: vec![0.05, 0.2],
        };
        let measured = [MeasuredConfig {
            nproc: vec![100, 100],
            test: 3,
            runs: vec![run(10.0), run(11.0)],
            attempts: 3,
        }];
        let names = vec!["A".to_string(), "B".to_string()];
        let runs = measured_runs(&names, &measured, &[]);
        assert_eq!(runs.len(), 2, "one per measured run, failed ones left out");
        assert_eq!(runs[1].coupled_sypd, 11.0);
        assert_eq!(runs[1].nproc_of(&names), Some(vec![100, 100]));
        let a = runs[1].component("A").unwrap().sypd;
        let b = runs[1].component("B").unwrap().sypd;
        assert!((a - 11.0 / 0.9).abs() < 1e-9 && (b - 11.0 / 0.6).abs() < 1e-9);
        assert_eq!(runs[1].slowest_sypd(), Some(a));
    }

    #[test]
    fn enumeration_respects_the_budget() {
        let mut seen = Vec::new();
        let budget = |n: &[u32]| n.iter().sum::<u32>() <= 4;
        enumerate(
            &[vec![1, 2, 3], vec![1, 2]],
            &budget,
            &mut Vec::new(),
            &mut |n| seen.push(n.to_vec()),
        );
        assert_eq!(
            seen,
            vec![vec![1, 1], vec![1, 2], vec![2, 1], vec![2, 2], vec![3, 1]]
        );
    }
}
