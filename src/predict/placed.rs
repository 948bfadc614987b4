//! Exact counting for per-component node placement.
//!
//! When each component gets its own whole nodes, the bill depends on how every component rounds
//! up (`sum_c ceil(p_c / cpn)`), not on the PE sum: two configurations with the same PE sum can
//! take a different number of nodes. The convolution over PE sums of [`super::search`] then no
//! longer carries the cost. What a bottleneck group needs is still monotone per component,
//! though: a component's nodes never fall when it gets more PEs, so neither do the job's nodes,
//! its allocated cores or its weight, and "fits the budget", "fits the chosen queue" and "kept"
//! (the PE sum within [`Problem::kept_sum_limit`]; with `[[resource]]` tables every resource's
//! budget and the weighted base-case filter) each hold for a prefix of a component's candidates
//! once the others are fixed.
//!
//! * Two components (the common case): the pair sweep of [`super::search`]. Within the group
//!   `(c, i)` the other component's allowed candidates sit in a Fenwick tree; the feasible ones
//!   are those below a position found by binary searches (the budget, then the queue with the
//!   configuration's own node count), the kept ones a shorter prefix, and the weight's extremes
//!   are at the smallest and the largest kept candidate. O(log N) per group, O(N log N) in all,
//!   against the walk's O(N^2) (2 million configurations at step 1 and a budget of 2000).
//! * Three or more (and components on `[[resource]]`s other than the pair): each group walks
//!   the other components but the last in ascending PE order, with a cut as soon as the smallest
//!   completion breaks the budget, and counts the last one by binary searches for its feasible
//!   and kept prefixes ([`GroupWalk::count_last`]): N^(k-2) log N per group for k components
//!   instead of N^(k-1).
//!
//! The top N still comes from the best-first walk of [`super::search::top_n`], whose
//! per-component lower bound on the weight stays valid because a weight never falls when a
//! component gets more PEs.

use super::sweep::{allowed_indices, sweep_pair, Group, Summary};
use super::Problem;
use crate::metrics;

/// Counts, bounds and groups of a two-component problem with per-component nodes: the same
/// figures and the same groups in the same order as [`summarise_group`] over every group.
pub(crate) fn summarise_pair(problem: &Problem) -> Summary {
    let mut summary = Summary::empty();
    let budget = problem.settings.max_nproc;
    sweep_pair(problem, |c, i, present, lowest| {
        let (comp, other) = (&problem.components[c], &problem.components[1 - c]);
        let (s, p) = (comp.sypd[i], comp.nproc[i]);
        if p > budget || !problem.sypd_fits_queue(s) {
            return;
        }
        let pair = |q: u32| if c == 0 { [p, q] } else { [q, p] };
        // Feasible: within the budget, then within the chosen queue, whose cores and nodes
        // grow with the other's PEs (its wall-time limit was checked for the group above).
        let within = other.nproc.partition_point(|&q| q <= budget - p);
        let feasible_below =
            other.nproc[..within].partition_point(|&q| problem.fits_queue(&pair(q), s));
        summary.feasible += present.count_below(feasible_below);
        let Some(limit) = problem.kept_sum_limit(s) else {
            return;
        };
        let kept_below = limit.checked_sub(p).map_or(0, |room| {
            other.nproc[..feasible_below].partition_point(|&q| q <= room)
        });
        let kept = present.count_below(kept_below);
        let Some(highest) = present.last_below(kept_below) else {
            return;
        };
        // The weight never falls as the other's PEs grow: its extremes over the kept
        // configurations are at the fewest and the most PEs.
        let (q_lo, q_hi) = (other.nproc[lowest], other.nproc[highest]);
        let (lo_w, hi_w) = (
            problem.weight_of(&pair(q_lo)),
            problem.weight_of(&pair(q_hi)),
        );
        summary.kept += kept;
        summary.sypd_bounds = summary.sypd_bounds.include(s);
        for w in [lo_w, hi_w] {
            summary.cost_bounds = summary.cost_bounds.include(metrics::chsy(w, s));
        }
        summary
            .groups
            .push(Group::new(c, i, s, p + q_lo, limit, lo_w));
    });
    summary.groups.sort_by_key(|g| (g.component(), g.index()));
    summary
}

/// Counts the group whose bottleneck is candidate `i` of component `c` into `summary`.
pub(crate) fn summarise_group(problem: &Problem, c: usize, i: usize, summary: &mut Summary) {
    summarise_group_by(problem, c, i, summary, true);
}

/// [`summarise_group`], with the last other component counted by binary searches
/// (`search_last`) or configuration by configuration (the reference the tests compare with).
fn summarise_group_by(
    problem: &Problem,
    c: usize,
    i: usize,
    summary: &mut Summary,
    search_last: bool,
) {
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
        search_last,
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
        summary.cost_bounds = summary.cost_bounds.include(metrics::chsy(w, s));
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
    /// Count the last other component by binary searches instead of one by one.
    search_last: bool,
}

impl GroupWalk<'_> {
    fn descend(&self, k: usize, partial: u32, nproc: &mut Vec<u32>, tally: &mut Tally) {
        if k == self.others.len() {
            self.visit(partial, nproc, tally);
            return;
        }
        if self.search_last && k + 1 == self.others.len() {
            self.count_last(k, partial, nproc, tally);
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

    /// The last other component (position `k`), every other one fixed in `nproc`: being
    /// feasible and being kept only get harder as its PEs grow, so its feasible candidates are a
    /// prefix of its allowed ones and the kept ones a shorter prefix, each found by a binary
    /// search with the same checks as [`GroupWalk::visit`]. The weight's extremes are at the
    /// ends of the kept prefix.
    fn count_last(&self, k: usize, partial: u32, nproc: &mut [u32], tally: &mut Tally) {
        let d = self.others[k];
        let candidates = &self.problem.components[d].nproc;
        let set = &self.sets[k];
        let feasible = set.partition_point(|&j| {
            nproc[d] = candidates[j];
            self.feasible(partial + candidates[j], nproc)
        });
        let kept = set[..feasible].partition_point(|&j| {
            nproc[d] = candidates[j];
            self.kept(partial + candidates[j], nproc)
        });
        tally.feasible += feasible as u64;
        if kept == 0 {
            return;
        }
        tally.kept += kept as u64;
        for j in [set[0], set[kept - 1]] {
            nproc[d] = candidates[j];
            tally.include(self.problem.weight_of(nproc), partial + candidates[j]);
        }
    }

    fn visit(&self, sum: u32, nproc: &[u32], tally: &mut Tally) {
        if !self.feasible(sum, nproc) {
            return;
        }
        tally.feasible += 1;
        if !self.kept(sum, nproc) {
            return;
        }
        tally.kept += 1;
        tally.include(self.problem.weight_of(nproc), sum);
    }

    /// Within every budget and the chosen queue.
    fn feasible(&self, sum: u32, nproc: &[u32]) -> bool {
        let within = if self.resources {
            self.problem.fits(nproc)
        } else {
            sum <= self.problem.settings.max_nproc
        };
        within && self.problem.fits_queue(nproc, self.sypd)
    }

    /// At least as good as the base case (for a feasible configuration).
    fn kept(&self, sum: u32, nproc: &[u32]) -> bool {
        if self.resources {
            self.problem.keeps(self.sypd, nproc)
        } else {
            self.limit.is_some_and(|l| sum <= l)
        }
    }
}

impl Tally {
    /// Counts a kept configuration's weight and PE sum into the extremes.
    fn include(&mut self, weight: f64, sum: u32) {
        self.weights = Some(match self.weights {
            None => (weight, weight),
            Some((lo, hi)) => (lo.min(weight), hi.max(weight)),
        });
        self.min_sum = Some(self.min_sum.map_or(sum, |m| m.min(sum)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::{Curve, Point};
    use crate::machine::{CostKind, CostModel, Machine, Placement, Queue, Resource};
    use crate::predict::{ComponentInput, ProblemOptions, Settings};

    /// A small deterministic generator (xorshift64): enough variety, no dependency.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u32) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % u64::from(n)) as u32
        }
    }

    /// `count` random components (speeds from a small set, so ties are common), sometimes with
    /// an allowed list, on per-component nodes with a random cost, extras and maybe a queue;
    /// with `resources`, node-hours on two `[[resource]]`s with their own nodes, unit costs and
    /// budgets (no queue).
    fn random_problem(rng: &mut Rng, count: usize, resources: bool) -> Option<Problem> {
        let names = ["A", "B", "C", "D"];
        // Fewer PEs with more components, so the walk the tests compare with stays quick.
        let span = if count > 2 { 60 } else { 150 };
        let mut inputs = Vec::new();
        for &name in &names[..count] {
            let mut nprocs: Vec<u32> = (0..2 + rng.below(4)).map(|_| 1 + rng.below(span)).collect();
            nprocs.sort_unstable();
            nprocs.dedup();
            let points: Vec<Point> = nprocs
                .iter()
                .map(|&nproc| Point {
                    nproc,
                    sypd: f64::from(1 + rng.below(7)) * 0.5,
                })
                .collect();
            let curve = Curve::from_points(name, "random", &points).ok()?;
            let allowed = (rng.below(3) == 0).then(|| {
                (0..1 + rng.below(12))
                    .map(|_| 1 + rng.below(span))
                    .collect()
            });
            inputs.push(ComponentInput {
                allowed,
                ..ComponentInput::new(curve)
            });
        }
        let settings = Settings {
            max_nproc: 1 + rng.below(2 * span),
            step: 1 + rng.below(5),
            extra_pes: rng.below(20),
            ..Settings::default()
        };
        let cores_per_node = 1 + rng.below(40);
        let machine = Some(Machine {
            cores_per_node,
            placement: Placement::PerComponent,
            extras_share_node: rng.below(2) == 0,
            node_power_w: Some(450.0),
        });
        let model = if resources {
            let resource = |name: &str, units_per_node: u32, rng: &mut Rng| Resource {
                name: name.into(),
                units_per_node,
                unit_cost: [1.0, 2.5, 0.7][rng.below(3) as usize],
                max_units: (rng.below(2) == 0).then(|| 1 + rng.below(300)),
            };
            let gpu_node = 1 + rng.below(8);
            CostModel {
                machine,
                cost: CostKind::NodeHours,
                resources: vec![
                    resource("cpu", cores_per_node, rng),
                    resource("gpu", gpu_node, rng),
                ],
                component_resource: (0..count).map(|_| rng.below(2) as usize).collect(),
                ..CostModel::default()
            }
        } else {
            let queue = Queue {
                name: "q".into(),
                max_nproc: (rng.below(2) == 0).then(|| 1 + rng.below(400)),
                max_nodes: (rng.below(2) == 0).then(|| 1 + rng.below(20)),
                max_walltime_h: None,
                chunk_years: None,
                partition: None,
                qos: None,
            };
            CostModel {
                machine,
                cost: [CostKind::NodeHours, CostKind::Energy, CostKind::CoreHours]
                    [rng.below(3) as usize],
                queue: (rng.below(2) == 0).then(|| "q".into()),
                queues: vec![queue],
                ..CostModel::default()
            }
        };
        Problem::build(
            &inputs,
            &settings,
            ProblemOptions {
                model: None,
                cost_model: Some(&model),
            },
        )
        .ok()
    }

    /// Every group of `problem` counted by [`summarise_group_by`], as the general loops of
    /// `search::summarise` and `resources::summarise` run it.
    fn walked(problem: &Problem, search_last: bool) -> Summary {
        let mut summary = Summary::empty();
        for (c, comp) in problem.components.iter().enumerate() {
            let budget = problem.cost_model.budget_of(c, problem.settings.max_nproc);
            for i in 0..comp.nproc.len() {
                if comp.nproc[i] <= budget && problem.sypd_fits_queue(comp.sypd[i]) {
                    summarise_group_by(problem, c, i, &mut summary, search_last);
                }
            }
        }
        summary
    }

    #[test]
    fn the_pair_sweep_finds_the_walks_groups_and_figures() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut compared = 0;
        for _ in 0..3000 {
            let Some(problem) = random_problem(&mut rng, 2, false) else {
                continue;
            };
            // Every group, its smallest sum, limit and weight, in the same order.
            assert_eq!(
                summarise_pair(&problem),
                walked(&problem, false),
                "{problem:?}"
            );
            compared += 1;
        }
        assert!(compared > 500, "only {compared} valid random problems");
    }

    #[test]
    fn counting_the_last_component_by_search_equals_the_walk() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut compared = 0;
        for round in 0..1500 {
            let count = 1 + round % 4;
            let resources = round % 3 == 0;
            let Some(problem) = random_problem(&mut rng, count, resources) else {
                continue;
            };
            assert_eq!(
                walked(&problem, true),
                walked(&problem, false),
                "{problem:?}"
            );
            compared += 1;
        }
        assert!(compared > 500, "only {compared} valid random problems");
    }
}
