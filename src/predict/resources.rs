//! The exact search with components on different hardware (`[[resource]]` tables).
//!
//! Two things change against [`super::search`]: every resource has its own budget, and the
//! base-case filter and the cost weigh each unit by its resource's `unit_cost`, so neither is a
//! function of the plain PE sum any more. Both stay monotone: a configuration fits all budgets
//! and is kept only if every configuration with fewer units of some component does too.
//!
//! Two components (the CPU atmosphere with a GPU ocean): the bottleneck groups are swept as in
//! the CPU-only pair search, with the other component's fast-enough candidates in a Fenwick
//! tree. The budgets *decouple*: on different resources the other component's feasible
//! candidates are simply those within its own resource's budget, whatever the bottleneck's PEs
//! (on one resource, within what the bottleneck leaves). The kept ones are a prefix of those,
//! found by a binary search with the filter itself (same floating-point expression as the
//! naive enumeration). Each group is then O(log N): O(N log N) in all, like the CPU-only pair.
//!
//! Three or more components: each group's feasible configurations are walked in ascending
//! order per component and cut as soon as the smallest completion breaks a budget
//! ([`super::placed`]): exact, proportional to the number of feasible configurations.

use super::placed;
use super::search::{faster_than_bottleneck, Fenwick, Group, Summary};
use super::{Candidates, PredictError, Problem};
use crate::machine::CostModel;
use crate::metrics::{self, Bounds};

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
            let detail = components
                .iter()
                .enumerate()
                .filter(|&(c, _)| model.resource_of(c) == r)
                .map(|(_, c)| format!("{} {}", c.name, c.nproc[0]))
                .collect::<Vec<_>>()
                .join(" + ");
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

fn empty_summary() -> Summary {
    Summary {
        groups: Vec::new(),
        feasible: 0,
        kept: 0,
        sypd_bounds: Bounds {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        },
        chsy_bounds: Bounds {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        },
    }
}

/// Counts, bounds and groups, all exact (see the module doc).
pub(super) fn summarise(problem: &Problem) -> Summary {
    if problem.components.len() == 2 {
        return summarise_pair(problem);
    }
    let mut summary = empty_summary();
    let model = &problem.cost_model;
    for (c, comp) in problem.components.iter().enumerate() {
        let budget = model.budget_of(c, problem.settings.max_nproc);
        for i in 0..comp.nproc.len() {
            if comp.nproc[i] <= budget {
                placed::summarise_group(problem, c, i, &mut summary);
            }
        }
    }
    summary
}

/// The pair sweep with per-resource budgets and the weighted base-case filter.
fn summarise_pair(problem: &Problem) -> Summary {
    let mut summary = empty_summary();
    let model = &problem.cost_model;
    let max_nproc = problem.settings.max_nproc;
    let same_resource = model.resource_of(0) == model.resource_of(1);
    for c in 0..2 {
        let d = 1 - c;
        let (comp, other) = (&problem.components[c], &problem.components[d]);
        let (own_budget, other_budget) =
            (model.budget_of(c, max_nproc), model.budget_of(d, max_nproc));
        let pair = |p: u32, q: u32| if c == 0 { [p, q] } else { [q, p] };
        let mut groups: Vec<usize> = (0..comp.nproc.len()).collect();
        groups.sort_by(|&a, &b| comp.sypd[b].total_cmp(&comp.sypd[a]));
        let mut entering: Vec<usize> = (0..other.nproc.len()).collect();
        entering.sort_by(|&a, &b| other.sypd[b].total_cmp(&other.sypd[a]));
        let mut present = Fenwick::new(other.nproc.len());
        let mut lowest: Option<usize> = None;
        let mut next = 0;
        for i in groups {
            let s = comp.sypd[i];
            while next < entering.len()
                && faster_than_bottleneck(other.sypd[entering[next]], s, d < c)
            {
                let j = entering[next];
                present.add(j);
                lowest = Some(lowest.map_or(j, |l: usize| l.min(j)));
                next += 1;
            }
            let (Some(lowest), p) = (lowest, comp.nproc[i]) else {
                continue;
            };
            if p > own_budget {
                continue;
            }
            // The other's PEs may go up to its own budget, less what the bottleneck takes
            // when both share a resource.
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
                continue;
            }
            summary.kept += kept;
            summary.sypd_bounds = summary.sypd_bounds.include(s);
            let Some(highest) = present.last_below(kept_below) else {
                continue;
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
                summary.chsy_bounds = summary.chsy_bounds.include(metrics::chsy(w, s));
            }
        }
    }
    summary.groups.sort_by_key(|g| (g.component(), g.index()));
    summary
}
