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

use super::{placed, rank_order, resources, Config, Problem};
use crate::metrics::{self, Bounds};

/// The TTS_w-independent figures of a problem.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The bottleneck groups that hold kept configurations, for [`top_n`].
    pub groups: Vec<Group>,
    pub feasible: u64,
    pub kept: u64,
    pub sypd_bounds: Bounds,
    pub chsy_bounds: Bounds,
}

impl Summary {
    /// Nothing counted yet: no groups, and bounds that any first value replaces.
    pub(crate) fn empty() -> Summary {
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
}

/// A bottleneck group with at least one kept configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Group {
    component: usize,
    index: usize,
    sypd: f64,
    /// Smallest balanced PE sum of a kept configuration in the group.
    min_sum: u32,
    /// Largest balanced PE sum a kept configuration of the group may have.
    limit: u32,
    /// Smallest cost weight of a kept configuration in the group (a lower bound per component).
    min_weight: f64,
}

impl Group {
    pub(crate) fn component(&self) -> usize {
        self.component
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    pub(crate) fn new(
        component: usize,
        index: usize,
        sypd: f64,
        min_sum: u32,
        limit: u32,
        min_weight: f64,
    ) -> Group {
        Group {
            component,
            index,
            sypd,
            min_sum,
            limit,
            min_weight,
        }
    }
}

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
                summary.chsy_bounds = summary.chsy_bounds.include(cost);
            }
        }
    }
    summary
}

/// The `top` best configurations for `tts_w`, as candidate indices in rank order.
pub fn top_n(problem: &Problem, tts_w: f64, top: usize) -> Vec<Vec<usize>> {
    let fn_at = |s: f64, weight: f64| {
        let cost = metrics::chsy(weight, s);
        metrics::fittingness_in(tts_w, s, cost, &problem.sypd_bounds, &problem.chsy_bounds)
    };
    let mut groups: Vec<(f64, Group)> = problem
        .groups
        .iter()
        .map(|g| (fn_at(g.sypd, g.min_weight), *g))
        .collect();
    groups.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.min_sum.cmp(&b.1.min_sum)));

    let mut best: Vec<Config> = Vec::with_capacity(top + 1);
    for (fn_max, group) in groups {
        if best.len() == top {
            let worst = &best[top - 1];
            let group_key = (fn_max, problem.total_nproc(group.min_sum));
            if key_worse(group_key, (worst.fittingness, worst.total_nproc)) {
                break;
            }
        }
        walk_group(problem, &group, tts_w, top, &mut best);
    }
    best.into_iter()
        .map(|c| {
            c.nproc
                .iter()
                .enumerate()
                .map(|(d, &p)| problem.candidate_index(d, p).expect("a candidate"))
                .collect()
        })
        .collect()
}

/// (fittingness, total) `a` ranks strictly after `b`.
fn key_worse(a: (f64, u32), b: (f64, u32)) -> bool {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)) == Ordering::Greater
}

/// Depth-first enumeration of a group's kept configurations in ascending PE order per
/// component, inserting into `best` and cutting every branch whose smallest possible PE sum
/// already ranks after the current N-th best.
fn walk_group(problem: &Problem, group: &Group, tts_w: f64, top: usize, best: &mut Vec<Config>) {
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
        problem,
        group,
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
    problem: &'a Problem,
    group: &'a Group,
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
    /// components at their smallest allowed candidates.
    fn lowest_completion(&self, k: usize, index: &[usize]) -> Vec<u32> {
        let mut nproc: Vec<u32> = index
            .iter()
            .zip(&self.problem.components)
            .map(|(&i, c)| c.nproc[i])
            .collect();
        for m in k + 1..self.others.len() {
            let d = self.others[m];
            nproc[d] = self.problem.components[d].nproc[self.sets[m][0]];
        }
        nproc
    }

    /// The smallest weight any completion of `index` (set up to position `k`) can have: the
    /// remaining components at their smallest allowed candidates. Weights never fall when a
    /// component gets more PEs, so this bounds every completion from below.
    fn lowest_weight(&self, k: usize, index: &[usize]) -> f64 {
        self.problem.weight_of(&self.lowest_completion(k, index))
    }

    fn descend(&mut self, k: usize, partial: u32, index: &mut Vec<usize>, best: &mut Vec<Config>) {
        let resources = self.resources;
        if k == self.others.len() {
            let config = self.problem.score(index, self.tts_w);
            let within = !resources
                || (self.problem.fits(&config.nproc)
                    && self.problem.keeps(config.sypd, &config.nproc));
            // Per-component nodes: a node limit of the queue is checked per configuration.
            if within && self.problem.fits_queue(&config.nproc, config.sypd) {
                insert_ranked(best, config, self.top);
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
                let low = self.lowest_completion(k, index);
                if !self.problem.fits(&low) || !self.problem.keeps(self.group.sypd, &low) {
                    break;
                }
            }
            if best.len() == self.top {
                index[d] = j;
                let cost = metrics::chsy(self.lowest_weight(k, index), self.group.sypd);
                let fn_best = metrics::fittingness_in(
                    self.tts_w,
                    self.group.sypd,
                    cost,
                    &self.problem.sypd_bounds,
                    &self.problem.chsy_bounds,
                );
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

fn insert_ranked(best: &mut Vec<Config>, config: Config, top: usize) {
    let at = best.partition_point(|b| rank_order(b, &config) == Ordering::Less);
    if at < top {
        best.insert(at, config);
        best.truncate(top);
    }
}

/// Candidates of component `d` that cannot undercut the group's bottleneck.
pub(crate) fn allowed_indices(problem: &Problem, group: &Group, d: usize) -> Vec<usize> {
    let comp = &problem.components[d];
    (0..comp.nproc.len())
        .filter(|&j| faster_than_bottleneck(comp.sypd[j], group.sypd, d < group.component))
        .collect()
}

/// Ties go to the lowest component index, so earlier components must be strictly faster.
pub(crate) fn faster_than_bottleneck(sypd: f64, bottleneck: f64, earlier: bool) -> bool {
    if earlier {
        sypd > bottleneck
    } else {
        sypd >= bottleneck
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

/// Ways to reach each sum, in units, of one step from each of several lists, below a length.
/// Shared by the plain search's groups and the per-resource sums of `resources.rs`.
pub(crate) struct SumCounts {
    /// counts[k] = ways to reach the sum k.
    pub(crate) counts: Vec<u64>,
    /// prefix[k] = counts[0..=k] summed.
    pub(crate) prefix: Vec<u64>,
    /// reach[k] = the largest m <= k with counts[m] > 0, if any.
    pub(crate) reach: Vec<Option<usize>>,
}

impl SumCounts {
    /// Convolves `lists` (each a component's steps in units, ascending) into the ways to reach
    /// every sum below `len`; sums at or past `len` are dropped.
    pub(crate) fn of(lists: &[Vec<u32>], len: usize) -> SumCounts {
        let mut counts = vec![0u64; len];
        if let Some(first) = counts.first_mut() {
            *first = 1;
        }
        for steps in lists {
            let mut next = vec![0u64; len];
            for (k, &n) in counts.iter().enumerate() {
                if n == 0 {
                    continue;
                }
                for &step in steps {
                    let at = k + step as usize;
                    if at >= len {
                        break;
                    }
                    next[at] += n;
                }
            }
            counts = next;
        }
        let prefix = counts
            .iter()
            .scan(0u64, |acc, &n| {
                *acc += n;
                Some(*acc)
            })
            .collect();
        let reach = counts
            .iter()
            .enumerate()
            .scan(None, |acc, (k, &n)| {
                if n > 0 {
                    *acc = Some(k);
                }
                Some(*acc)
            })
            .collect();
        SumCounts {
            counts,
            prefix,
            reach,
        }
    }
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
            summary.chsy_bounds = summary.chsy_bounds.include(cost);
        }
    });
    // The general path lists groups by (component, index); ties in the best-first walk keep
    // that order, so keep it here too.
    summary.groups.sort_by_key(|g| (g.component, g.index));
    summary
}

/// The sweep the two-component searches share. For each component `c` in turn its candidates
/// are taken as bottlenecks from the fastest down, while the other component's candidates that
/// cannot undercut the current bottleneck enter a Fenwick tree over their positions (ascending
/// PEs): the set only grows, so all groups cost O(N log N) together.
/// `visit(c, i, present, lowest)` sees every bottleneck `i` of `c` with at least one such
/// candidate; `lowest` is the smallest present position (the fewest PEs).
pub(crate) fn sweep_pair(problem: &Problem, mut visit: impl FnMut(usize, usize, &Fenwick, usize)) {
    for c in 0..2 {
        let d = 1 - c;
        let (comp, other) = (&problem.components[c], &problem.components[d]);
        // Bottlenecks from the fastest down; the other's candidates from the fastest down.
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
            // Without a candidate of the other component fast enough the group is empty.
            if let Some(lowest) = lowest {
                visit(c, i, &present, lowest);
            }
        }
    }
}

/// A Fenwick (binary indexed) tree of which positions are present: counts below a position and
/// the last present position below one, both in O(log n).
pub(crate) struct Fenwick {
    tree: Vec<u64>,
}

impl Fenwick {
    pub(crate) fn new(n: usize) -> Fenwick {
        Fenwick {
            tree: vec![0; n + 1],
        }
    }

    pub(crate) fn add(&mut self, position: usize) {
        let mut k = position + 1;
        while k < self.tree.len() {
            self.tree[k] += 1;
            k += k & k.wrapping_neg();
        }
    }

    /// Present positions in `0..end`.
    pub(crate) fn count_below(&self, end: usize) -> u64 {
        let mut k = end.min(self.tree.len() - 1);
        let mut total = 0;
        while k > 0 {
            total += self.tree[k];
            k -= k & k.wrapping_neg();
        }
        total
    }

    /// The largest present position in `0..end`.
    pub(crate) fn last_below(&self, end: usize) -> Option<usize> {
        let count = self.count_below(end);
        if count == 0 {
            return None;
        }
        // The position of the count-th present one: descend the tree.
        let mut position = 0;
        let mut remaining = count;
        let mut step = (self.tree.len() - 1).next_power_of_two();
        while step > 0 {
            let next = position + step;
            if next < self.tree.len() && self.tree[next] < remaining {
                position = next;
                remaining -= self.tree[next];
            }
            step >>= 1;
        }
        Some(position) // 0-based index of the count-th present position
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenwick_counts_and_finds_the_last_present() {
        let mut f = Fenwick::new(10);
        for p in [2, 5, 7] {
            f.add(p);
        }
        assert_eq!(f.count_below(0), 0);
        assert_eq!(f.count_below(3), 1);
        assert_eq!(f.count_below(10), 3);
        assert_eq!(f.last_below(2), None);
        assert_eq!(f.last_below(3), Some(2));
        assert_eq!(f.last_below(7), Some(5));
        assert_eq!(f.last_below(8), Some(7));
        assert_eq!(f.last_below(100), Some(7));
    }
}
