//! Exact counting for per-component node placement.
//!
//! When each component gets its own whole nodes, the bill depends on how every component rounds
//! up (`sum_c ceil(p_c / cpn)`), not on the PE sum: two configurations with the same PE sum can
//! take a different number of nodes. The convolution over PE sums of [`super::search`] then no
//! longer carries the cost, so the groups of such problems are counted here by walking each
//! bottleneck group's configurations within the budget, in ascending PE order with a cut as
//! soon as the PE sum passes the budget. That is exact and visits only feasible
//! configurations of the group; the cost is proportional to their number (about n^2 / 2 for two
//! components at n candidates, the common case). The top N still comes from the best-first walk
//! of [`super::search::top_n`], whose per-component lower bound on the weight stays valid
//! because a weight never falls when a component gets more PEs.

use super::search::{allowed_indices, Group, Summary};
use super::Problem;
use crate::metrics;

/// Counts the group whose bottleneck is candidate `i` of component `c` into `summary`.
pub(crate) fn summarise_group(problem: &Problem, c: usize, i: usize, summary: &mut Summary) {
    let s = problem.components[c].sypd[i];
    let probe = Group::new(c, i, s, 0, 0, 0.0);
    let others: Vec<usize> = (0..problem.components.len()).filter(|&d| d != c).collect();
    let sets: Vec<Vec<usize>> = others
        .iter()
        .map(|&d| allowed_indices(problem, &probe, d))
        .collect();
    if sets.iter().any(|s| s.is_empty()) {
        return;
    }
    let mut rest_min = vec![0u32; others.len() + 1];
    for k in (0..others.len()).rev() {
        rest_min[k] = rest_min[k + 1] + problem.components[others[k]].nproc[sets[k][0]];
    }
    // With resources the base-case filter weighs units by their cost: checked per
    // configuration (see `GroupWalk::visit`), so the sum limit is open.
    let resources = problem.cost_model.has_resources();
    let limit = if resources {
        Some(u32::MAX)
    } else {
        problem.kept_sum_limit(s)
    };
    let mut tally = Tally::default();
    let mut nproc: Vec<u32> = problem.components.iter().map(|c| c.nproc[0]).collect();
    nproc[c] = problem.components[c].nproc[i];
    let walk = GroupWalk {
        problem,
        sypd: s,
        limit,
        resources,
        others: &others,
        sets: &sets,
        rest_min: &rest_min,
    };
    walk.descend(0, nproc[c], &mut nproc, &mut tally);
    summary.feasible += tally.feasible;
    let (Some(limit), Some((lo_w, hi_w)), Some(min_sum)) = (limit, tally.weights, tally.min_sum)
    else {
        return;
    };
    summary.kept += tally.kept;
    summary.sypd_bounds = summary.sypd_bounds.include(s);
    for w in [lo_w, hi_w] {
        summary.chsy_bounds = summary.chsy_bounds.include(metrics::chsy(w, s));
    }
    summary
        .groups
        .push(Group::new(c, i, s, min_sum, limit, lo_w));
}

#[derive(Default)]
struct Tally {
    feasible: u64,
    kept: u64,
    /// Smallest and largest weight over the kept configurations.
    weights: Option<(f64, f64)>,
    min_sum: Option<u32>,
}

struct GroupWalk<'a> {
    problem: &'a Problem,
    sypd: f64,
    limit: Option<u32>,
    /// Per-resource budgets and the weighted base-case filter.
    resources: bool,
    others: &'a [usize],
    sets: &'a [Vec<usize>],
    rest_min: &'a [u32],
}

impl GroupWalk<'_> {
    fn descend(&self, k: usize, partial: u32, nproc: &mut Vec<u32>, tally: &mut Tally) {
        if k == self.others.len() {
            self.visit(partial, nproc, tally);
            return;
        }
        let d = self.others[k];
        for &j in &self.sets[k] {
            let p = self.problem.components[d].nproc[j];
            nproc[d] = p;
            if self.resources {
                // Each budget is monotone: once the smallest completion breaks one, stop.
                let mut low = nproc.clone();
                for m in k + 1..self.others.len() {
                    let e = self.others[m];
                    low[e] = self.problem.components[e].nproc[self.sets[m][0]];
                }
                if !self.problem.fits(&low) {
                    break;
                }
            } else if partial + p + self.rest_min[k + 1] > self.problem.settings.max_nproc {
                break;
            }
            self.descend(k + 1, partial + p, nproc, tally);
        }
    }

    fn visit(&self, sum: u32, nproc: &[u32], tally: &mut Tally) {
        if !self.problem.fits_queue(nproc, self.sypd)
            || (self.resources && !self.problem.fits(nproc))
        {
            return;
        }
        tally.feasible += 1;
        let kept = if self.resources {
            self.problem.keeps(self.sypd, nproc)
        } else {
            self.limit.is_some_and(|l| sum <= l)
        };
        if !kept {
            return;
        }
        tally.kept += 1;
        let w = self.problem.weight_of(nproc);
        tally.weights = Some(match tally.weights {
            None => (w, w),
            Some((lo, hi)) => (lo.min(w), hi.max(w)),
        });
        tally.min_sum = Some(tally.min_sum.map_or(sum, |m| m.min(sum)));
    }
}
