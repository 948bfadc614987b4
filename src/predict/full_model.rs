//! The top N by the full calibrated model, exactly, at the cost of the search.
//!
//! The search ([`super::search`]) ranks a calibrated model by its balance-free speeds
//! ([`Model::adjust`]): every configuration of a bottleneck group goes at its bottleneck's
//! speed. The full model ([`Model::estimate`]) divides that by the balance slowdown `g >= 1`
//! ([`crate::model::overhead`]), which is largest where the components are balanced, exactly
//! where the best configurations are. `predict` and the app show the full model's numbers, so
//! they rank by it.
//!
//! Re-scoring a shortlist by the balance-free bound and widening it until nothing outside can
//! enter is exact but slow: thousands of near-balanced configurations lie between the bound's
//! top N and the full model's, and the shortlist grows with the square of the candidates. Here
//! the full model scores configurations inside the search's own best-first walk instead
//! ([`search::Scorer`]):
//! * every candidate's long-run speed is computed once ([`Model::steady_adjust`]), so a
//!   configuration's full coupled SYPD is a min, one slowdown and a division
//!   ([`Model::coupled_sypd`]), the same number [`Model::estimate`] gives;
//! * each group gets a tighter speed bound than its bottleneck's speed: with two components
//!   the slowdown falls as the other component gets faster (it depends on their speed ratio
//!   only), so no configuration of the group is faster than the bottleneck slowed by the
//!   slowdown against the fastest candidate of the other component that fits the group's PE
//!   limit. Groups are visited best-first by that bound and each walk stops once it cannot
//!   beat the N-th best, as in the standalone search. With three or more components Clark's
//!   approximation of the slowdown is not monotone in each speed, so their groups keep the
//!   bottleneck's speed as bound (still exact, less pruning).
//!
//! Which configurations are compared (the budget, the base-case filter, queues) and the FN
//! normalisation stay the search's, as before; each configuration is scored as the full
//! model predicts it: SYPD, its cost scaled with 1 / SYPD, the coupling cost from the model's
//! component speeds. A property test holds this to a full enumeration with
//! [`Model::estimate`].

use super::search::{self, Group, Scorer};
use super::{ComponentInput, Prediction, Problem, Scored};
use crate::interp::Interpolant;
use crate::metrics;
use crate::model::{Calibrated, Model};

/// The top N by the full calibrated model (see the module doc); the standalone model's bound
/// is the model itself, so it ranks as [`Problem::rank`] does.
pub fn rank(
    problem: &Problem,
    model: &Model,
    inputs: &[ComponentInput],
    tts_w: f64,
    top: usize,
) -> Prediction {
    let Model::Calibrated(calibrated) = model else {
        return problem.rank(tts_w, top);
    };
    let scorer = FullScorer::new(problem, model, calibrated, inputs);
    let best = search::top_scored(problem, tts_w, top, &scorer);
    Prediction {
        components: problem.names(),
        configurations: problem.configurations,
        considered: problem.considered,
        baseline: problem.baseline(tts_w),
        sypd_bounds: problem.sypd_bounds,
        cost_bounds: problem.cost_bounds,
        tts_w,
        top: best,
        cost: (!problem.cost_model.is_plain()).then_some(problem.cost_model.cost),
    }
}

/// Relative step irregularities up to which the two-component slowdown is known to fall as
/// the speed ratio grows (checked by a test over this whole range); beyond, groups keep the
/// bottleneck's speed as bound.
const MONOTONE_UP_TO: f64 = 2.0;

/// The full model's scores of the problem's configurations.
struct FullScorer<'a> {
    model: &'a Model,
    /// Per component and candidate, the long-run speed ([`Model::steady_adjust`]).
    steady: Vec<Vec<f64>>,
    /// Per component and candidate, the fastest long-run speed among its candidates up to
    /// that one (ascending PEs): the fastest that fits a PE limit.
    fastest_up_to: Vec<Vec<f64>>,
    /// Whether groups get the slowdown bound (two components, a known-monotone slowdown).
    slowdown_bound: bool,
}

impl<'a> FullScorer<'a> {
    fn new(
        problem: &Problem,
        model: &'a Model,
        calibrated: &Calibrated,
        inputs: &[ComponentInput],
    ) -> FullScorer<'a> {
        let interp = problem.settings.interp;
        let steady: Vec<Vec<f64>> = problem
            .components
            .iter()
            .map(|c| {
                let input = inputs.iter().find(|i| i.name() == c.name);
                let interpolant = input
                    .and_then(|i| i.curve.as_ref())
                    .map(|curve| Interpolant::new(interp, &curve.xs(), &curve.ys()));
                c.nproc
                    .iter()
                    .map(|&p| {
                        // The reference speed as the estimate takes it: the curve's, or the law's.
                        let reference = match &interpolant {
                            Some(f) => f.eval(f64::from(p)),
                            None => model.reference_sypd(&c.name, p).unwrap_or(f64::NAN),
                        };
                        model.steady_adjust(&c.name, p, reference)
                    })
                    .collect()
            })
            .collect();
        let fastest_up_to = steady
            .iter()
            .map(|speeds| {
                speeds
                    .iter()
                    .scan(f64::NEG_INFINITY, |m, &s| {
                        *m = m.max(s);
                        Some(*m)
                    })
                    .collect()
            })
            .collect();
        let irregularity = calibrated.coupled.irregularity;
        FullScorer {
            model,
            steady,
            fastest_up_to,
            slowdown_bound: problem.components.len() == 2
                && (0.0..=MONOTONE_UP_TO).contains(&irregularity),
        }
    }
}

impl Scorer for FullScorer<'_> {
    fn score(&self, problem: &Problem, _group: &Group, index: &[usize], tts_w: f64) -> Scored {
        let mut c = problem.score(index, tts_w);
        let steady: Vec<f64> = index
            .iter()
            .zip(&self.steady)
            .map(|(&i, s)| s[i])
            .collect();
        let sypd = self.model.coupled_sypd(&steady, None);
        let slower = c.sypd / sypd;
        c.sypd = sypd;
        c.chsy *= slower;
        if let Some(b) = c.billing.as_mut() {
            b.cost *= slower;
        }
        let pairs: Vec<(f64, f64)> = c
            .nproc
            .iter()
            .zip(&steady)
            .map(|(&n, &s)| (f64::from(n), self.model.component_sypd(s, None)))
            .collect();
        c.coupling_cost = metrics::predicted_coupling_cost(c.sypd, &pairs);
        c.fittingness = metrics::fittingness_in(
            tts_w,
            c.sypd,
            c.cost(),
            &problem.sypd_bounds,
            &problem.cost_bounds,
        );
        c
    }

    fn sypd_bound(&self, problem: &Problem, group: &Group) -> f64 {
        if !self.slowdown_bound {
            return group.sypd;
        }
        let (c, i) = (group.component(), group.index());
        let d = 1 - c;
        let own = problem.components[c].nproc[i];
        // The other component's candidates that fit beside the bottleneck within the group's
        // PE limit: the fastest of them slows the bottleneck least.
        let cap = group.limit().saturating_sub(own);
        let fitting = problem.components[d].nproc.partition_point(|&q| q <= cap);
        let Some(&fastest) = fitting
            .checked_sub(1)
            .and_then(|j| self.fastest_up_to[d].get(j))
        else {
            return group.sypd;
        };
        let bottleneck = self.steady[c][i];
        let mut pair = [0.0; 2];
        pair[c] = bottleneck;
        pair[d] = fastest.max(bottleneck);
        let bound = self
            .model
            .component_sypd(bottleneck / self.model.slowdown(&pair), None);
        if bound.is_finite() {
            bound.min(group.sypd)
        } else {
            group.sypd
        }
    }

    fn slack(&self) -> f64 {
        // The scores come from other expressions than the bound (a product for the cost, the
        // min over every component): allow for their rounding, far below any FN difference
        // that matters, so no configuration is cut by a last-bit difference.
        1e-9
    }
}

/// Whether the balance slowdown of two components falls (never rises) as one of them gets
/// faster, at every irregularity on the model's grid and up to [`MONOTONE_UP_TO`]: what the
/// groups' slowdown bound rests on.
#[cfg(test)]
fn two_component_slowdown_is_monotone() -> bool {
    use crate::model::overhead::{slowdown, SIGMA_GRID};
    let sigmas = SIGMA_GRID
        .iter()
        .copied()
        .chain((0..=40).map(|k| MONOTONE_UP_TO * f64::from(k) / 40.0));
    for sigma in sigmas {
        for order in [false, true] {
            let mut last = f64::INFINITY;
            for k in 0..=5000 {
                let r = 1.0 + f64::from(k) * 0.002;
                let pair = if order { [r, 1.0] } else { [1.0, r] };
                let g = slowdown(&pair, sigma);
                if g > last * (1.0 + 1e-14) {
                    return false;
                }
                last = g;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_component_slowdown_falls_as_the_ratio_grows() {
        assert!(two_component_slowdown_is_monotone());
        let grid = crate::model::overhead::SIGMA_GRID;
        assert!(grid.iter().all(|&s| s <= MONOTONE_UP_TO));
    }
}
