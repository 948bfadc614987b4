//! The fast, exact search over the configuration space.
//!
//! The coupled SYPD of a configuration is the minimum over its components, so every
//! configuration has a *bottleneck*: the component (lowest index on ties) and candidate that set
//! its pace. Grouping configurations by bottleneck `(c, i)` with speed `s` turns the search into
//! small independent problems:
//! * the other components may use only candidates at least as fast as `s` (strictly faster for
//!   components before `c`, so each configuration has exactly one bottleneck);
//! * every configuration of the group has the same coupled SYPD `s`, so "kept" (at least as good
//!   as the base case) is just "the balanced PE sum is at most [`Problem::kept_sum_limit`]";
//! * within a group, fittingness only falls as the PE sum grows.
//!
//! Counting configurations and finding the SYPD and CHSY bounds then needs, per group, the number
//! of ways the other components' PEs add up to each total: a small convolution over PE sums
//! measured in units of the greatest common divisor of the candidate spacing. The top N is a
//! best-first walk over groups ordered by their best possible fittingness, with a depth-first
//! enumeration inside a group that stops as soon as the PE sum cannot beat the N-th best.
//!
//! With a machine ([`crate::machine`]) the cost is `24 W / SYPD` for a weight `W` (used PEs,
//! billed cores or node power) that never falls when a component gets more PEs. With packed
//! nodes `W` is a function of the PE sum, so the convolution over PE sums stays exact and only
//! the cost read off each sum changes; a chosen queue's core or node limit becomes a smaller
//! PE-sum cap and its wall-time limit drops the groups that are too slow. Per-component nodes
//! make `W` depend on every component's rounding, not on the sum: those groups are counted by
//! `predict::placed` instead (the same pair sweep for two components, a walk for three or more).
//!
//! Cost, with N candidates in all, a budget of B PEs and PE sums in units of u:
//! * two components (the usual case): O(N log N). The groups are swept from the fastest
//!   bottleneck down while the other component's candidates that are fast enough enter a
//!   Fenwick tree over PE counts, so each group's counts and extreme sums are O(log N) queries;
//! * three or more: about N x (B / u) x N for the convolutions, refused up front beyond
//!   [`super::MAX_SEARCH_WORK`] with an error saying what to change.

use std::cmp::Ordering;

use super::sweep::{allowed_indices, faster_than_bottleneck, sweep_pair, SumCounts};
pub use super::sweep::{Group, Summary};
use super::{placed, rank_order, resources, Problem, Scored};
use crate::metrics;

/// Refuses a problem of three or more components whose convolutions would take too long.
pub fn check_work(problem: &Problem) -> Result<(), super::PredictError> {
    let n = problem.components.len();
    if n <= 2 {
        return Ok(());
    }
    let candidates: u64 = problem
        .components
        .iter()
        .map(|c| c.nproc.len() as u64)
        .sum();
    let unit = sum_unit(problem);
    // With resources each has its own budget: bound by the largest.
    let budget = problem
        .cost_model
        .budgets(problem.settings.max_nproc)
        .into_iter()
        .max()
        .unwrap_or(problem.settings.max_nproc);
    let sums = u64::from(budget / unit) + 1;
    let work = candidates.saturating_mul(sums).saturating_mul(candidates);
    if work > super::MAX_SEARCH_WORK {
        return Err(super::PredictError::SearchTooLarge {
            components: n,
            candidates,
            budget: problem.settings.max_nproc,
            unit,
        });
    }
    Ok(())
}

/// Counts, bounds, all exact.
pub fn summarise(problem: &Problem) -> Summary {
    // Components on different resources: per-resource budgets and weighted units.
    if problem.cost_model.has_resources() {
        return resources::summarise(problem);
    }
    // Per-component nodes bill each component's rounding, not the PE sum: those groups are
    // counted by [`placed`] (the pair sweep for two components, the general loop below else).
    if problem.components.len() == 2 {
        return if problem.cost_model.cost_follows_sum() {
            summarise_pair(problem)
        } else {
            placed::summarise_pair(problem)
        };
    }
    let mut summary = Summary::empty();
    let unit = sum_unit(problem);
    let budget = problem.sum_cap();
    for (c, comp) in problem.components.iter().enumerate() {
        for i in 0..comp.nproc.len() {
            let s = comp.sypd[i];
            let p = comp.nproc[i];
            if p > budget || !problem.sypd_fits_queue(s) {
                continue;
            }
            if !problem.cost_model.cost_follows_sum() {
                placed::summarise_group(problem, c, i, &mut summary);
                continue;
            }
            let Some(sums) = group_sums(problem, c, i, unit, budget) else {
                continue;
            };
            summary.feasible += sums.count_up_to(budget - p);
            let Some(limit) = problem
                .kept_sum_limit(s)
                .map(|l| l.min(budget))
                .filter(|&l| l >= p)
            else {
                continue;
            };
            let kept = sums.count_up_to(limit - p);
            if kept == 0 {
                continue;
            }
            summary.kept += kept;
            summary.sypd_bounds = summary.sypd_bounds.include(s);
            let Some((lo, hi)) = sums.extremes_up_to(limit - p) else {
                continue;
            };
            summary.groups.push(Group {
                component: c,
                index: i,
                sypd: s,
                min_sum: p + lo,
                limit,
                min_weight: problem.weight_at_sum(p + lo),
            });
            for sum in [p + lo, p + hi] {
                let cost = metrics::chsy(problem.weight_at_sum(sum), s);
                summary.cost_bounds = summary.cost_bounds.include(cost);
            }
        }
    }
    summary
}

/// The `top` best configurations for `tts_w`, as candidate indices in rank order.
pub fn top_n(problem: &Problem, tts_w: f64, top: usize) -> Vec<Vec<usize>> {
    let scorer = BoundScorer;
    top_scored(problem, tts_w, top, &scorer)
        .into_iter()
        .map(|c| problem.index_of(&c).expect("a candidate"))
        .collect()
}

/// How the best-first walk scores the configurations of the problem's groups: the search's own
/// speeds ([`Problem::score`]) or a model whose coupled speed lies below them (the full
/// calibrated model, `predict::full_model`). The set of configurations is the problem's
/// either way; only their scores differ.
pub(crate) trait Scorer {
    /// The score of the configuration `index` (candidate indices), a kept one of `group`;
    /// `None` when it cannot rank before `worst` (the current N-th best, if the top N is
    /// full), which a scorer may tell without building the whole score.
    fn score(
        &self,
        problem: &Problem,
        group: &Group,
        index: &[usize],
        tts_w: f64,
        worst: Option<&Scored>,
    ) -> Option<Scored>;

    /// An upper bound of the coupled SYPD of every configuration of `group`, never below
    /// what [`Scorer::score`] gives any of them.
    fn sypd_bound(&self, problem: &Problem, group: &Group) -> f64;

    /// How much a score may exceed the FN its bound implies through rounding (0 when the
    /// score is computed the bound's way).
    fn slack(&self) -> f64 {
        0.0
    }

    /// Walks `group` into `best` its own way (e.g. a branch and bound over a pair); `false`
    /// leaves it to the depth-first walk ([`walk_group`]).
    fn walk(
        &self,
        _problem: &Problem,
        _group: &Group,
        _tts_w: f64,
        _top: usize,
        _best: &mut Vec<Scored>,
    ) -> bool {
        false
    }
}

/// The search's own scores: every configuration of a group goes at its bottleneck's speed.
struct BoundScorer;

impl Scorer for BoundScorer {
    fn score(
        &self,
        problem: &Problem,
        _group: &Group,
        index: &[usize],
        tts_w: f64,
        _worst: Option<&Scored>,
    ) -> Option<Scored> {
        Some(problem.score(index, tts_w))
    }

    fn sypd_bound(&self, _problem: &Problem, group: &Group) -> f64 {
        group.sypd
    }
}

/// The `top` best configurations of `problem` for `tts_w` as `scorer` scores them, in rank
/// order: groups best-first by the FN their speed bound allows at their cheapest
/// configuration, each walked while it can still beat the N-th best.
pub(crate) fn top_scored(
    problem: &Problem,
    tts_w: f64,
    top: usize,
    scorer: &dyn Scorer,
) -> Vec<Scored> {
    let fn_at = |s: f64, weight: f64| {
        let cost = metrics::chsy(weight, s);
        metrics::fittingness_in(tts_w, s, cost, &problem.sypd_bounds, &problem.cost_bounds)
    };
    let slack = scorer.slack();
    let mut groups: Vec<(f64, f64, Group)> = problem
        .groups
        .iter()
        .map(|g| {
            let bound = scorer.sypd_bound(problem, g);
            (fn_at(bound, g.min_weight) + slack, bound, *g)
        })
        .collect();
    groups.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.min_sum.cmp(&b.2.min_sum)));

    let mut best: Vec<Scored> = Vec::with_capacity(top + 1);
    for (fn_max, bound, group) in groups {
        if best.len() == top {
            let worst = &best[top - 1];
            let group_key = (fn_max, problem.total_nproc(group.min_sum));
            if key_worse(group_key, (worst.fittingness, worst.total_nproc)) {
                break;
            }
        }
        if !scorer.walk(problem, &group, tts_w, top, &mut best) {
            walk_group(problem, &group, bound, tts_w, top, scorer, &mut best);
        }
    }
    best
}

/// Whether a configuration of `group` with PEs `nproc` is one the problem keeps (within the
/// group's PE limit, the budgets and the base-case filter, and the chosen queue), judged at
/// the group's speed as the search judges it.
pub(crate) fn kept_in_group(problem: &Problem, group: &Group, nproc: &[u32]) -> bool {
    let sum: u64 = nproc.iter().map(|&p| u64::from(p)).sum();
    let sypd = group.sypd;
    let within =
        !problem.cost_model.has_resources() || (problem.fits(nproc) && problem.keeps(sypd, nproc));
    sum <= u64::from(group.limit) && within && problem.fits_queue(nproc, sypd)
}

/// (fittingness, total) `a` ranks strictly after `b`.
pub(crate) fn key_worse(a: (f64, u32), b: (f64, u32)) -> bool {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)) == Ordering::Greater
}

/// Depth-first enumeration of a group's kept configurations in ascending PE order per
/// component, inserting into `best` and cutting every branch whose smallest possible PE sum
/// already ranks after the current N-th best, at the group's speed bound `sypd_bound`.
fn walk_group(
    problem: &Problem,
    group: &Group,
    sypd_bound: f64,
    tts_w: f64,
    top: usize,
    scorer: &dyn Scorer,
    best: &mut Vec<Scored>,
) {
    let others: Vec<usize> = (0..problem.components.len())
        .filter(|&d| d != group.component)
        .collect();
    let sets: Vec<Vec<usize>> = others
        .iter()
        .map(|&d| allowed_indices(problem, group, d))
        .collect();
    if sets.iter().any(|s| s.is_empty()) {
        return;
    }
    // Smallest PE sum of the remaining components from position k on.
    let mut rest_min = vec![0u32; others.len() + 1];
    for k in (0..others.len()).rev() {
        rest_min[k] = rest_min[k + 1] + problem.components[others[k]].nproc[sets[k][0]];
    }
    let mut index = vec![0usize; problem.components.len()];
    index[group.component] = group.index;
    let p = problem.components[group.component].nproc[group.index];
    let mut ctx = Walk {
        scratch: Vec::with_capacity(problem.components.len()),
        problem,
        group,
        sypd_bound,
        scorer,
        tts_w,
        top,
        others: &others,
        sets: &sets,
        rest_min: &rest_min,
        resources: problem.cost_model.has_resources(),
    };
    ctx.descend(0, p, &mut index, best);
}

struct Walk<'a> {
    /// PEs of the configuration being looked at (reused, so the walk allocates nothing).
    scratch: Vec<u32>,
    problem: &'a Problem,
    group: &'a Group,
    /// No configuration of the group goes faster ([`Scorer::sypd_bound`]).
    sypd_bound: f64,
    scorer: &'a dyn Scorer,
    tts_w: f64,
    top: usize,
    others: &'a [usize],
    sets: &'a [Vec<usize>],
    rest_min: &'a [u32],
    /// Per-resource budgets and the weighted base-case filter (`[[resource]]` tables).
    resources: bool,
}

impl Walk<'_> {
    /// The configuration `index` (set up to position `k`) completed with the remaining
    /// components at their smallest allowed candidates, into `self.scratch`.
    fn lowest_completion(&mut self, k: usize, index: &[usize]) -> &[u32] {
        self.scratch.clear();
        self.scratch.extend(
            index
                .iter()
                .zip(&self.problem.components)
                .map(|(&i, c)| c.nproc[i]),
        );
        for m in k + 1..self.others.len() {
            let d = self.others[m];
            self.scratch[d] = self.problem.components[d].nproc[self.sets[m][0]];
        }
        &self.scratch
    }

    /// The smallest weight any completion of `index` (set up to position `k`) can have: the
    /// remaining components at their smallest allowed candidates. Weights never fall when a
    /// component gets more PEs, so this bounds every completion from below.
    fn lowest_weight(&mut self, k: usize, index: &[usize]) -> f64 {
        let problem = self.problem;
        problem.weight_of(self.lowest_completion(k, index))
    }

    fn descend(&mut self, k: usize, partial: u32, index: &mut Vec<usize>, best: &mut Vec<Scored>) {
        let resources = self.resources;
        if k == self.others.len() {
            // Which configurations are kept is the problem's: at the group's own speed (every
            // configuration of a group goes at its bottleneck's), whatever the scorer says.
            let (problem, sypd) = (self.problem, self.group.sypd);
            let nproc = self.lowest_completion(k, index);
            let within = !resources || (problem.fits(nproc) && problem.keeps(sypd, nproc));
            // Per-component nodes: a node limit of the queue is checked per configuration.
            if within && problem.fits_queue(nproc, sypd) {
                let worst = (best.len() == self.top).then(|| &best[self.top - 1]);
                let scored = self
                    .scorer
                    .score(problem, self.group, index, self.tts_w, worst);
                if let Some(config) = scored {
                    insert_ranked(best, config, self.top);
                }
            }
            return;
        }
        let d = self.others[k];
        for &j in &self.sets[k] {
            let lowest = partial + self.problem.components[d].nproc[j] + self.rest_min[k + 1];
            if lowest > self.group.limit {
                break;
            }
            if resources {
                // Budgets and the base-case filter are monotone per component: once the
                // smallest completion breaks one, every larger candidate does too.
                index[d] = j;
                let (problem, sypd) = (self.problem, self.group.sypd);
                let low = self.lowest_completion(k, index);
                if !problem.fits(low) || !problem.keeps(sypd, low) {
                    break;
                }
            }
            if best.len() == self.top {
                index[d] = j;
                let cost = metrics::chsy(self.lowest_weight(k, index), self.sypd_bound);
                let fn_best = metrics::fittingness_in(
                    self.tts_w,
                    self.sypd_bound,
                    cost,
                    &self.problem.sypd_bounds,
                    &self.problem.cost_bounds,
                ) + self.scorer.slack();
                let worst = &best[self.top - 1];
                let key = (fn_best, self.problem.total_nproc(lowest));
                if key_worse(key, (worst.fittingness, worst.total_nproc)) {
                    break;
                }
            }
            index[d] = j;
            self.descend(
                k + 1,
                partial + self.problem.components[d].nproc[j],
                index,
                best,
            );
        }
    }
}

/// Inserts `config` into `best` (rank order, at most `top`), if it ranks high enough.
pub(crate) fn insert_ranked(best: &mut Vec<Scored>, config: Scored, top: usize) {
    let at = best.partition_point(|b| rank_order(b, &config) == Ordering::Less);
    if at < top {
        best.insert(at, config);
        best.truncate(top);
    }
}

/// The greatest common divisor of every candidate's distance from its component's smallest
/// candidate: all PE sums of a group are its offset plus a multiple of this.
fn sum_unit(problem: &Problem) -> u32 {
    let g = problem
        .components
        .iter()
        .flat_map(|c| c.nproc.iter().map(move |&p| p - c.nproc[0]))
        .fold(0, gcd);
    g.max(1)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// How the other components' PEs of one group can add up: `counts[k]` ways to reach the sum
/// `offset + k * unit` with every component but the last; `last` the last component's steps.
/// The final convolution is never materialised: prefix sums answer every question about it.
struct GroupSums {
    offset: u32,
    unit: u32,
    /// The partial sums of all other components but the last.
    sums: SumCounts,
    /// Steps (in units) of the last other component's allowed candidates, ascending.
    last: Vec<u32>,
}

impl GroupSums {
    /// Number of tuples whose PE sum is at most `cap`.
    fn count_up_to(&self, cap: u32) -> u64 {
        let Some(room) = self.room(cap) else { return 0 };
        self.last
            .iter()
            .take_while(|&&k| k <= room)
            .map(|&k| {
                let upto = ((room - k) as usize).min(self.sums.prefix.len() - 1);
                self.sums.prefix[upto]
            })
            .sum()
    }

    /// Smallest and largest reachable PE sum that is at most `cap`.
    fn extremes_up_to(&self, cap: u32) -> Option<(u32, u32)> {
        let room = self.room(cap)?;
        let first_reachable = self.sums.counts.iter().position(|&n| n > 0)? as u32;
        let lo = first_reachable + *self.last.first()?;
        if lo > room {
            return None;
        }
        let hi = self
            .last
            .iter()
            .take_while(|&&k| k + first_reachable <= room)
            .filter_map(|&k| {
                let upto = ((room - k) as usize).min(self.sums.reach.len() - 1);
                Some(self.sums.reach[upto]? as u32 + k)
            })
            .max()?;
        Some((self.offset + lo * self.unit, self.offset + hi * self.unit))
    }

    /// `cap` in units above the offset.
    fn room(&self, cap: u32) -> Option<u32> {
        cap.checked_sub(self.offset).map(|r| r / self.unit)
    }
}

/// The sums of the group `(c, i)`, or `None` when some other component has no candidate fast
/// enough (the group is empty).
fn group_sums(problem: &Problem, c: usize, i: usize, unit: u32, cap: u32) -> Option<GroupSums> {
    let s = problem.components[c].sypd[i];
    let p = problem.components[c].nproc[i];
    let budget = cap.checked_sub(p)?;
    let mut offset = 0;
    let mut steps: Vec<Vec<u32>> = Vec::new();
    for (d, comp) in problem.components.iter().enumerate() {
        if d == c {
            continue;
        }
        let base = comp.nproc[0];
        offset += base;
        let ks: Vec<u32> = comp
            .nproc
            .iter()
            .zip(&comp.sypd)
            .filter(|(_, &sd)| faster_than_bottleneck(sd, s, d < c))
            .map(|(&pd, _)| (pd - base) / unit)
            .collect();
        if ks.is_empty() {
            return None;
        }
        steps.push(ks);
    }
    let room = budget.checked_sub(offset).map_or(0, |r| r / unit) as usize;
    let last = steps.pop().unwrap_or_else(|| vec![0]);
    // Partial sums never exceed the sum of the largest steps: no need for a longer array.
    let reachable: usize = steps
        .iter()
        .map(|ks| ks.last().copied().unwrap_or(0) as usize)
        .sum();
    let sums = SumCounts::of(&steps, room.min(reachable) + 1);
    Some(GroupSums {
        offset,
        unit,
        sums,
        last,
    })
}

/// [`summarise`] for two components in O(N log N) (see the module doc): the same figures and
/// the same groups in the same order as the general convolution.
fn summarise_pair(problem: &Problem) -> Summary {
    let mut summary = Summary::empty();
    let budget = problem.sum_cap();
    sweep_pair(problem, |c, i, present, lowest| {
        let (comp, other) = (&problem.components[c], &problem.components[1 - c]);
        let (s, p) = (comp.sypd[i], comp.nproc[i]);
        if p > budget || !problem.sypd_fits_queue(s) {
            return;
        }
        // Candidates of the other component with at most `cap` PEs: indices below this.
        let below = |cap: u32| other.nproc.partition_point(|&q| q <= cap);
        summary.feasible += present.count_below(below(budget - p));
        let Some(limit) = problem
            .kept_sum_limit(s)
            .map(|l| l.min(budget))
            .filter(|&l| l >= p)
        else {
            return;
        };
        let kept_below = below(limit - p);
        let kept = present.count_below(kept_below);
        if kept == 0 {
            return;
        }
        summary.kept += kept;
        summary.sypd_bounds = summary.sypd_bounds.include(s);
        let Some(highest) = present.last_below(kept_below) else {
            return;
        };
        let (lo, hi) = (p + other.nproc[lowest], p + other.nproc[highest]);
        summary.groups.push(Group {
            component: c,
            index: i,
            sypd: s,
            min_sum: lo,
            limit,
            min_weight: problem.weight_at_sum(lo),
        });
        for sum in [lo, hi] {
            let cost = metrics::chsy(problem.weight_at_sum(sum), s);
            summary.cost_bounds = summary.cost_bounds.include(cost);
        }
    });
    // The general path lists groups by (component, index); ties in the best-first walk keep
    // that order, so keep it here too.
    summary.groups.sort_by_key(|g| (g.component, g.index));
    summary
}
