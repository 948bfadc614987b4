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
//! (`search::Scorer`):
//! * every candidate's long-run speed is computed once ([`Model::steady_adjust`]), so a
//!   configuration's full coupled SYPD is a min, one slowdown and a division
//!   ([`Model::coupled_sypd`]), the same number [`Model::estimate`] gives;
//! * with two components the slowdown falls as the other component gets faster (it depends
//!   on their speed ratio only), so no configuration of a group is faster than the bottleneck
//!   slowed by the slowdown against the fastest partner candidate it may have, and none is
//!   cheaper than its partner's fewest PEs allow. Groups are visited best-first by that bound;
//!   inside a group a branch and bound over a max-tree of the partner's speeds (ordered by
//!   PEs) bounds every block of partners at once and opens only those that can still beat the
//!   N-th best, so the configurations scored are about those near the top, `O(log N)` work
//!   each: the cost grows like the candidates, not like the configurations.
//! * With three or more components Clark's approximation of the slowdown is not monotone in
//!   each speed, so their groups keep the bottleneck's speed as bound and the search's
//!   depth-first walk (still exact, less pruning); a configuration that cannot enter the top
//!   N is told from its FN before its score is built.
//!
//! Which configurations are compared (the budget, the base-case filter, queues) and the FN
//! normalisation stay the search's, as before; each configuration is scored as the full
//! model predicts it: SYPD, its cost scaled with 1 / SYPD, the coupling cost from the model's
//! component speeds. A property test holds this to a full enumeration with
//! [`Model::estimate`].

use super::search::{self, Group, Scorer};
use super::sweep::faster_than_bottleneck;
use super::{ComponentInput, Prediction, Problem, Scored, MAX_COMPONENTS};
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
    /// Per component, the fastest long-run speed of each block of its candidates.
    trees: Vec<MaxTree>,
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
        let trees = steady.iter().map(|s| MaxTree::new(s)).collect();
        FullScorer {
            model,
            steady,
            fastest_up_to,
            trees,
            slowdown_bound: problem.components.len() == 2
                && (0.0..=MONOTONE_UP_TO).contains(&irregularity),
        }
    }
}

impl Scorer for FullScorer<'_> {
    fn score(
        &self,
        problem: &Problem,
        group: &Group,
        index: &[usize],
        tts_w: f64,
        worst: Option<&Scored>,
    ) -> Option<Scored> {
        // Most configurations a walk looks at cannot enter the top N: tell it from the FN
        // alone, computed without building the score (to within the slack: one that comes
        // close is scored in full, and the full score decides).
        let mut steady = [0.0; MAX_COMPONENTS];
        let mut nproc = [0u32; MAX_COMPONENTS];
        let n = index.len().min(MAX_COMPONENTS);
        for (d, &i) in index.iter().enumerate().take(n) {
            steady[d] = self.steady[d][i];
            nproc[d] = problem.components[d].nproc[i];
        }
        let sypd = self.model.coupled_sypd(&steady[..n], None);
        if let Some(worst) = worst {
            let cost =
                metrics::chsy(problem.weight_of(&nproc[..n]), group.sypd) * (group.sypd / sypd);
            let fn_full = metrics::fittingness_in(
                tts_w,
                sypd,
                cost,
                &problem.sypd_bounds,
                &problem.cost_bounds,
            );
            if fn_full + self.slack() < worst.fittingness {
                return None;
            }
        }
        let mut c = problem.score(index, tts_w);
        let steady = &steady[..n];
        let slower = c.sypd / sypd;
        c.sypd = sypd;
        c.chsy *= slower;
        if let Some(b) = c.billing.as_mut() {
            b.cost *= slower;
        }
        let pairs: Vec<(f64, f64)> = c
            .nproc
            .iter()
            .zip(steady)
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
        Some(c)
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

    fn walk(
        &self,
        problem: &Problem,
        group: &Group,
        tts_w: f64,
        top: usize,
        best: &mut Vec<Scored>,
    ) -> bool {
        if !self.slowdown_bound {
            return false;
        }
        let (c, i) = (group.component(), group.index());
        let d = 1 - c;
        let own = problem.components[c].nproc[i];
        let cap = group.limit().saturating_sub(own);
        let mut pair = PairWalk {
            scorer: self,
            problem,
            group,
            tts_w,
            top,
            c,
            index: [0; 2],
            end: problem.components[d].nproc.partition_point(|&q| q <= cap),
        };
        pair.index[c] = i;
        pair.block(1, 0, self.trees[d].size, best);
        true
    }

    fn slack(&self) -> f64 {
        // The scores come from other expressions than the bound (a product for the cost, the
        // min over every component): allow for their rounding, far below any FN difference
        // that matters, so no configuration is cut by a last-bit difference.
        1e-9
    }
}

/// The largest of each aligned block of values (a segment tree, leaves padded with
/// `-inf`): node 1 holds all, node `k` the halves `2k` and `2k + 1`.
struct MaxTree {
    /// Leaves: the smallest power of two holding the values.
    size: usize,
    nodes: Vec<f64>,
}

impl MaxTree {
    fn new(values: &[f64]) -> MaxTree {
        let size = values.len().next_power_of_two().max(1);
        let mut nodes = vec![f64::NEG_INFINITY; 2 * size];
        nodes[size..size + values.len()].copy_from_slice(values);
        for k in (1..size).rev() {
            nodes[k] = nodes[2 * k].max(nodes[2 * k + 1]);
        }
        MaxTree { size, nodes }
    }
}

/// One group of a two-component problem, walked by branch and bound over the partner's
/// candidates (see the module doc).
struct PairWalk<'a> {
    scorer: &'a FullScorer<'a>,
    problem: &'a Problem,
    group: &'a Group,
    tts_w: f64,
    top: usize,
    /// The bottleneck component (the partner is the other).
    c: usize,
    /// The configuration looked at, candidate indices.
    index: [usize; 2],
    /// Partner candidates below this index fit the group's PE limit beside the bottleneck.
    end: usize,
}

impl PairWalk<'_> {
    /// Opens node `k` of the partner's max-tree, covering partner candidates `lo..hi`, unless
    /// no configuration in it can rank before the N-th best.
    fn block(&mut self, k: usize, lo: usize, hi: usize, best: &mut Vec<Scored>) {
        if lo >= self.end {
            return;
        }
        let d = 1 - self.c;
        let scorer = self.scorer;
        let fastest = scorer.trees[d].nodes[k];
        if fastest == f64::NEG_INFINITY {
            return;
        }
        if best.len() == self.top {
            // The fastest partner of the block slows the bottleneck least; its fewest PEs
            // cost least.
            let bottleneck = scorer.steady[self.c][self.index[self.c]];
            let mut pair = [0.0; 2];
            pair[self.c] = bottleneck;
            pair[d] = fastest.max(bottleneck);
            let sypd = scorer
                .model
                .component_sypd(bottleneck / scorer.model.slowdown(&pair), None)
                .min(self.group.sypd);
            self.index[d] = lo;
            let nproc = self.nproc();
            let cost = metrics::chsy(self.problem.weight_of(&nproc), sypd);
            let fn_best = metrics::fittingness_in(
                self.tts_w,
                sypd,
                cost,
                &self.problem.sypd_bounds,
                &self.problem.cost_bounds,
            ) + scorer.slack();
            let total = self.problem.total_nproc(nproc[0] + nproc[1]);
            let worst = &best[self.top - 1];
            if sypd.is_finite()
                && search::key_worse((fn_best, total), (worst.fittingness, worst.total_nproc))
            {
                return;
            }
        }
        if hi - lo == 1 {
            self.leaf(lo, best);
            return;
        }
        let mid = lo + (hi - lo) / 2;
        self.block(2 * k, lo, mid, best);
        self.block(2 * k + 1, mid, hi, best);
    }

    /// Scores the configuration with partner candidate `j`, if the group holds it.
    fn leaf(&mut self, j: usize, best: &mut Vec<Scored>) {
        let d = 1 - self.c;
        let partner = &self.problem.components[d];
        if !faster_than_bottleneck(partner.sypd[j], self.group.sypd, d < self.c) {
            return;
        }
        self.index[d] = j;
        if !search::kept_in_group(self.problem, self.group, &self.nproc()) {
            return;
        }
        let worst = (best.len() == self.top).then(|| &best[self.top - 1]);
        let scored = self
            .scorer
            .score(self.problem, self.group, &self.index, self.tts_w, worst);
        if let Some(config) = scored {
            search::insert_ranked(best, config, self.top);
        }
    }

    fn nproc(&self) -> [u32; 2] {
        let c = &self.problem.components;
        [c[0].nproc[self.index[0]], c[1].nproc[self.index[1]]]
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
