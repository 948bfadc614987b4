//! The exact search with components on different hardware (`[[resource]]` tables).
//!
//! Two things change against [`super::search`]: every resource has its own budget, and the
//! base-case filter and the cost weigh each unit by its resource's `unit_cost`, so neither is a
//! function of the plain PE sum any more. Both stay monotone: a configuration fits all budgets
//! and is kept only if every configuration with fewer units of some component does too.
//!
//! Two components (the CPU atmosphere with a GPU ocean): the bottleneck groups are swept as in the
//! CPU-only pair search (the same `sweep_pair`), with the other component's fast-enough candidates
//! in a Fenwick tree. The budgets *decouple*: on different resources the other component's feasible
//! candidates are simply those within its own resource's budget, whatever the bottleneck's PEs (on
//! one resource, within what the bottleneck leaves). The kept ones are a prefix of those, found by
//! a binary search with the filter itself (same floating-point expression as the naive
//! enumeration). Each group is then O(log N): O(N log N) in all, like the CPU-only pair.
//!
//! One or three and more components: per group, a convolution over each resource's unit sums
//! within its own budget (the budgets decouple, so the feasible count is a product), then the
//! weighted base-case filter as a threshold on the last resource's sums for every combination of
//! the others' reachable sums. With per-component nodes and node-hours the bill depends on each
//! component's rounding, not on the sums: those groups are walked (`predict::placed`, exact:
//! every other component but the last, which is counted by binary searches).

use super::placed;
use super::sweep::{faster_than_bottleneck, sweep_pair, Group, SumCounts, Summary};
use super::{Candidates, PredictError, Problem};
use crate::machine::CostModel;
use crate::metrics;

/// Refuses a base case (every component at its first candidate) over a resource's budget.
pub(super) fn check_base(
    components: &[Candidates],
    model: &CostModel,
    max_nproc: u32,
) -> Result<(), PredictError> {
    let base: Vec<u32> = components.iter().map(|c| c.nproc[0]).collect();
    let units = model.units_per_resource(&base);
    for (r, (&u, budget)) in units.iter().zip(model.budgets(max_nproc)).enumerate() {
        if u > budget {
            let (names, nproc): (Vec<String>, Vec<u32>) = components
                .iter()
                .enumerate()
                .filter(|&(c, _)| model.resource_of(c) == r)
                .map(|(_, c)| (c.name.clone(), c.nproc[0]))
                .unzip();
            let detail = super::ConfigurationText::new(&names, &nproc).to_string();
            return Err(PredictError::ResourceBelowBase {
                resource: model.resources[r].name.clone(),
                budget,
                base: u,
                detail,
            });
        }
    }
    Ok(())
}

/// Counts, bounds and groups, all exact (see the module doc).
pub(super) fn summarise(problem: &Problem) -> Summary {
    if problem.components.len() == 2 {
        return summarise_pair(problem);
    }
    let mut summary = Summary::empty();
    let model = &problem.cost_model;
    let by_sums = model.cost_follows_resource_sums();
    for (c, comp) in problem.components.iter().enumerate() {
        let budget = model.budget_of(c, problem.settings.max_nproc);
        for i in 0..comp.nproc.len() {
            if comp.nproc[i] > budget {
                continue;
            }
            if by_sums {
                summarise_group(problem, c, i, &mut summary);
            } else {
                placed::summarise_group(problem, c, i, &mut summary);
            }
        }
    }
    summary
}

/// How the balanced units on one resource can add up within a bottleneck group: `counts[k]`
/// ways to reach `offset + k * unit` units, within the resource's budget.
struct ResourceSums {
    offset: u32,
    unit: u32,
    sums: SumCounts,
}

impl ResourceSums {
    /// Units at position `k`.
    fn units(&self, k: usize) -> u32 {
        self.offset + k as u32 * self.unit
    }
}

/// The sums of resource `r` in the group whose bottleneck is candidate `i` of component `c`:
/// the bottleneck's own units if it runs on `r`, and every other component on `r` at its
/// candidates that cannot undercut the bottleneck. `None` when some component has no such
/// candidate or the smallest sum is over the budget (the group has no feasible configuration).
fn resource_sums(problem: &Problem, c: usize, i: usize, r: usize) -> Option<ResourceSums> {
    let model = &problem.cost_model;
    let s = problem.components[c].sypd[i];
    let sets: Vec<Vec<u32>> = problem
        .components
        .iter()
        .enumerate()
        .filter(|&(d, _)| model.resource_of(d) == r)
        .map(|(d, comp)| {
            if d == c {
                vec![comp.nproc[i]]
            } else {
                comp.nproc
                    .iter()
                    .zip(&comp.sypd)
                    .filter(|&(_, &sd)| faster_than_bottleneck(sd, s, d < c))
                    .map(|(&p, _)| p)
                    .collect()
            }
        })
        .collect();
    if sets.iter().any(Vec::is_empty) {
        return None;
    }
    let offset: u32 = sets.iter().map(|v| v[0]).sum();
    let unit = sets
        .iter()
        .flat_map(|v| v.iter().map(move |&p| p - v[0]))
        .fold(0, gcd)
        .max(1);
    let budget = model.budgets(problem.settings.max_nproc)[r];
    let room = budget.checked_sub(offset)? / unit;
    let reachable: u32 = sets.iter().map(|v| (v[v.len() - 1] - v[0]) / unit).sum();
    let steps: Vec<Vec<u32>> = sets
        .iter()
        .map(|v| v.iter().map(|&p| (p - v[0]) / unit).collect())
        .collect();
    Some(ResourceSums {
        offset,
        unit,
        sums: SumCounts::of(&steps, room.min(reachable) as usize + 1),
    })
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Counts one group by per-resource convolutions (budgets decouple per resource) and a
/// threshold on the last resource's sums for the weighted base-case filter: every combination
/// of reachable sums on the other resources, then a binary search on the last one. Exact: the
/// weights are computed from the units per resource with the same expression as for a
/// configuration ([`CostModel::used_weight_of_units`], [`CostModel::weight_of_units`]).
fn summarise_group(problem: &Problem, c: usize, i: usize, summary: &mut Summary) {
    let model = &problem.cost_model;
    let extras = problem.settings.extra_pes;
    let s = problem.components[c].sypd[i];
    let Some(sums) = (0..model.resources.len())
        .map(|r| resource_sums(problem, c, i, r))
        .collect::<Option<Vec<ResourceSums>>>()
    else {
        return;
    };
    summary.feasible += sums
        .iter()
        .map(|r| r.sums.prefix[r.sums.prefix.len() - 1])
        .product::<u64>();
    let (head, last) = sums.split_at(sums.len() - 1);
    let last = &last[0];
    let mut kept = 0u64;
    let mut highest: Option<f64> = None;
    let mut position = vec![0usize; head.len()];
    let mut units: Vec<u32> = sums.iter().map(|r| r.offset).collect();
    loop {
        let ways: u64 = position
            .iter()
            .zip(head)
            .map(|(&k, r)| r.sums.counts[k])
            .product();
        if ways > 0 {
            for (r, (&k, rs)) in position.iter().zip(head).enumerate() {
                units[r] = rs.units(k);
            }
            let keeps = |k: usize, units: &mut Vec<u32>| {
                units[head.len()] = last.units(k);
                problem.keeps_weight(s, model.used_weight_of_units(units, extras))
            };
            // Kept sums on the last resource: a prefix of 0..len (the filter is monotone).
            let (mut lo, mut hi) = (0usize, last.sums.counts.len());
            while lo < hi {
                let mid = (lo + hi) / 2;
                if keeps(mid, &mut units) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if lo > 0 {
                kept += ways * last.sums.prefix[lo - 1];
                if let Some(top) = last.sums.reach[lo - 1] {
                    units[head.len()] = last.units(top);
                    let w = model.weight_of_units(&units, extras);
                    highest = Some(highest.map_or(w, |h: f64| h.max(w)));
                }
            }
        }
        if !advance(&mut position, head) {
            break;
        }
    }
    let Some(highest) = highest else {
        return;
    };
    // The smallest sums on every resource: kept whenever anything is (monotone filter).
    let lowest: Vec<u32> = sums
        .iter()
        .map(|r| r.units(r.sums.counts.iter().position(|&n| n > 0).unwrap_or(0)))
        .collect();
    let min_weight = model.weight_of_units(&lowest, extras);
    summary.kept += kept;
    summary.sypd_bounds = summary.sypd_bounds.include(s);
    for w in [min_weight, highest] {
        summary.cost_bounds = summary.cost_bounds.include(metrics::chsy(w, s));
    }
    summary.groups.push(Group::new(
        c,
        i,
        s,
        lowest.iter().sum(),
        u32::MAX,
        min_weight,
    ));
}

/// Odometer over every resource's sums but the last; false once all were visited.
fn advance(position: &mut [usize], head: &[ResourceSums]) -> bool {
    for (k, r) in position.iter_mut().zip(head).rev() {
        *k += 1;
        if *k < r.sums.counts.len() {
            return true;
        }
        *k = 0;
    }
    false
}

/// The pair sweep with per-resource budgets and the weighted base-case filter.
fn summarise_pair(problem: &Problem) -> Summary {
    let mut summary = Summary::empty();
    let model = &problem.cost_model;
    let max_nproc = problem.settings.max_nproc;
    let same_resource = model.resource_of(0) == model.resource_of(1);
    sweep_pair(problem, |c, i, present, lowest| {
        let d = 1 - c;
        let (comp, other) = (&problem.components[c], &problem.components[d]);
        let (own_budget, other_budget) =
            (model.budget_of(c, max_nproc), model.budget_of(d, max_nproc));
        let pair = |p: u32, q: u32| if c == 0 { [p, q] } else { [q, p] };
        let (s, p) = (comp.sypd[i], comp.nproc[i]);
        if p > own_budget {
            return;
        }
        // The other's PEs may go up to its own budget, less what the bottleneck takes when
        // both share a resource.
        let cap = if same_resource {
            other_budget - p
        } else {
            other_budget
        };
        let feasible_below = other.nproc.partition_point(|&q| q <= cap);
        summary.feasible += present.count_below(feasible_below);
        // Kept: a prefix of the feasible candidates (the filter is monotone).
        let kept_below =
            other.nproc[..feasible_below].partition_point(|&q| problem.keeps(s, &pair(p, q)));
        let kept = present.count_below(kept_below);
        if kept == 0 {
            return;
        }
        summary.kept += kept;
        summary.sypd_bounds = summary.sypd_bounds.include(s);
        let Some(highest) = present.last_below(kept_below) else {
            return;
        };
        let (lo, hi) = (pair(p, other.nproc[lowest]), pair(p, other.nproc[highest]));
        let min_weight = problem.weight_of(&lo);
        summary.groups.push(Group::new(
            c,
            i,
            s,
            p + other.nproc[lowest],
            u32::MAX,
            min_weight,
        ));
        for w in [min_weight, problem.weight_of(&hi)] {
            summary.cost_bounds = summary.cost_bounds.include(metrics::chsy(w, s));
        }
    });
    summary.groups.sort_by_key(|g| (g.component(), g.index()));
    summary
}
