//! The speed/cost trade-off of a prediction: the Pareto front of the kept configurations and the
//! exact TTS_w intervals in which each configuration is the top-1.
//!
//! **The front.** A kept configuration is on the front when no other kept configuration is at least
//! as fast *and* at least as cheap, and strictly better in one of the two (SYPD higher or cost
//! lower). The cost is the one FN weighs: CHSY, or with a `[machine]` the billed cost (node-hours
//! or energy, [`crate::machine`]); with a chosen queue only the configurations that fit it count.
//! Configurations that land on the same point (same SYPD and same cost) are one point of the front,
//! represented by the first of them in the ranking order (the guide's `method/prediction.md`, step
//! 6: fewer total PEs, then the PE counts in component order ascending). The speeds are the
//! problem's candidate speeds, so a problem built with a calibrated model has that model's front.
//!
//! Grouping by bottleneck (see [`super::search`]) makes this cheap: every configuration of the
//! group `(c, i)` runs at that candidate's SYPD and its cost weight never falls when a component
//! gets more PEs (nodes round up, they never round down), so the group's smallest member is at
//! least as cheap as every other member, takes the fewest PEs, and fits every queue another
//! member fits: only it can represent the group on the front. That member is unique: every other
//! component at its smallest candidate that does not undercut the bottleneck. Finding it is a
//! binary search per other component, and the front is a sweep over the groups by SYPD. With
//! `G` groups (at most the candidates of all components together) the cost is `O(G log G)`.
//!
//! **The intervals.** For fixed normalisation bounds (they come from the kept set, which does not
//! depend on TTS_w) fittingness is linear in `w`: `FN(w) = (1 - CHSY_n) + w (SYPD_n + CHSY_n - 1)`.
//! For `w` in (0, 1] a dominated configuration always scores strictly below the one dominating it,
//! so the top-1 is on the front; along the front (by SYPD ascending) the slopes rise, and the upper
//! envelope of those lines, clipped to [0, 1], gives the exact breakpoints (one convex-hull pass).
//! At a breakpoint the lines tie and the ranking order (the guide's `method/prediction.md`, step 6)
//! gives the point to the configuration with fewer PEs, which on the front is the slower, cheaper
//! one: the first interval is closed, `[0, to]`, and each later one is `(from, to]`. (With
//! per-component node placement a cheaper bill can take more PEs, when its components round up to
//! fewer nodes; then the single TTS_w of such a breakpoint goes to the faster neighbour. The
//! intervals themselves are exact.) At `w = 0` alone fittingness ignores speed, so a configuration
//! off the front with the same CHSY and fewer PEs can win there; it then gets the single-point
//! interval `[0, 0]`.

use std::cmp::Ordering;

use serde::Serialize;

use super::{Problem, Scored};
use crate::metrics;

/// A configuration that is the top-1 for every TTS_w in its interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Winner {
    /// Lower end: inclusive for the first winner (always 0), exclusive for the others.
    pub tts_w_from: f64,
    /// Upper end, inclusive; the last winner's is 1.
    pub tts_w_to: f64,
    /// Scored at [`Settings::tts_w`](super::Settings::tts_w) of the problem.
    pub config: Scored,
}

impl Winner {
    /// Whether this winner holds at `w`, given whether it is the first interval.
    pub fn holds_at(&self, w: f64, first: bool) -> bool {
        let above_from = if first {
            w >= self.tts_w_from
        } else {
            w > self.tts_w_from
        };
        above_from && w <= self.tts_w_to
    }
}

/// The smallest kept member of one bottleneck group: its candidate indices, speed, PEs and the
/// cost FN weighs (CHSY without a machine).
#[derive(Debug, Clone, PartialEq)]
struct Leader {
    index: Vec<usize>,
    nproc: Vec<u32>,
    sypd: f64,
    total: u32,
    cost: f64,
}

impl Problem {
    /// The Pareto front of the kept configurations by SYPD (higher is better) and cost (CHSY or
    /// the billed cost; lower is better), in ascending SYPD (and so ascending cost), scored at
    /// `tts_w`.
    pub fn front(&self, tts_w: f64) -> Vec<Scored> {
        front_leaders(&self.leaders())
            .into_iter()
            .map(|l| self.score(&l.index, tts_w))
            .collect()
    }

    /// The top-1 configuration of every TTS_w in [0, 1], as contiguous intervals from 0 to 1 in
    /// ascending TTS_w. Configurations are scored at the problem's own TTS_w.
    pub fn winners(&self) -> Vec<Winner> {
        self.trade_off(self.settings.tts_w).1
    }

    /// [`Problem::front`] (scored at `tts_w`) and [`Problem::winners`] in one pass.
    pub fn trade_off(&self, tts_w: f64) -> (Vec<Scored>, Vec<Winner>) {
        let leaders = self.leaders();
        let front = front_leaders(&leaders);
        let winners = self.winners_of(&leaders, &front);
        let scored = front.iter().map(|l| self.score(&l.index, tts_w)).collect();
        (scored, winners)
    }

    fn winners_of(&self, leaders: &[Leader], front: &[Leader]) -> Vec<Winner> {
        let lines: Vec<Line> = front.iter().map(|l| self.line(l)).collect();
        let mut spans = envelope(&lines);
        // At w = 0 speed does not count: the cheapest kept configuration (fewest PEs on ties)
        // wins, which may lie off the front when it ties a front point's CHSY.
        if let Some(at_zero) = leaders.iter().min_by(|a, b| zero_order(self, a, b)) {
            let hull_first = front.get(spans[0].line).map(|l| &l.nproc);
            if hull_first != Some(&at_zero.nproc) {
                if spans[0].to <= 0.0 {
                    spans.remove(0);
                }
                let tts_w = self.settings.tts_w;
                let mut out = vec![Winner {
                    tts_w_from: 0.0,
                    tts_w_to: 0.0,
                    config: self.score(&at_zero.index, tts_w),
                }];
                out.extend(spans.iter().map(|s| Winner {
                    tts_w_from: s.from,
                    tts_w_to: s.to,
                    config: self.score(&front[s.line].index, tts_w),
                }));
                return out;
            }
        }
        spans
            .iter()
            .map(|s| Winner {
                tts_w_from: s.from,
                tts_w_to: s.to,
                config: self.score(&front[s.line].index, self.settings.tts_w),
            })
            .collect()
    }

    /// Fittingness of a leader as a line in w, through the same normalisation as the ranking.
    fn line(&self, l: &Leader) -> Line {
        let at = |w: f64| {
            metrics::fittingness_in(w, l.sypd, l.cost, &self.sypd_bounds, &self.cost_bounds)
        };
        let (at0, at1) = (at(0.0), at(1.0));
        Line {
            intercept: at0,
            slope: at1 - at0,
        }
    }

    /// The smallest kept member of every bottleneck group that has one.
    fn leaders(&self) -> Vec<Leader> {
        let fastest: Vec<FastestBelow> = self.components.iter().map(FastestBelow::new).collect();
        let budget = self.settings.max_nproc;
        let mut leaders = Vec::new();
        for (c, comp) in self.components.iter().enumerate() {
            'group: for (i, (&p, &s)) in comp.nproc.iter().zip(&comp.sypd).enumerate() {
                let mut index = vec![0usize; self.components.len()];
                index[c] = i;
                let mut sum = p;
                for (d, lookup) in fastest.iter().enumerate() {
                    if d == c {
                        continue;
                    }
                    // Components before the bottleneck must be strictly faster (ties go to the
                    // lowest index), as in the search's grouping.
                    let Some(j) = lookup.smallest_at_least(s, d < c) else {
                        continue 'group;
                    };
                    index[d] = j;
                    sum += self.components[d].nproc[j];
                }
                let resources = self.cost_model.has_resources();
                if !resources
                    && (sum > budget || self.kept_sum_limit(s).is_none_or(|limit| sum > limit))
                {
                    continue;
                }
                let total = self.total_nproc(sum);
                let nproc: Vec<u32> = index
                    .iter()
                    .zip(&self.components)
                    .map(|(&j, comp)| comp.nproc[j])
                    .collect();
                // [[resource]] tables: a budget per resource and the weighted base-case filter,
                // both monotone, so again the smallest member decides for the group.
                if resources && !(self.fits(&nproc) && self.keeps(s, &nproc)) {
                    continue;
                }
                // Allocated cores and nodes never fall as PEs grow and the speed is the group's:
                // when the smallest member does not fit the chosen queue, no member does.
                if !self.fits_queue(&nproc, s) {
                    continue;
                }
                let cost = metrics::chsy(self.weight_of(&nproc), s);
                leaders.push(Leader {
                    index,
                    nproc,
                    sypd: s,
                    total,
                    cost,
                });
            }
        }
        leaders
    }
}

/// For one component: the smallest candidate whose SYPD reaches a threshold, by binary search
/// over the candidates sorted by SYPD descending with a running minimum of their index.
struct FastestBelow {
    /// SYPD of the candidates, descending.
    sypd_desc: Vec<f64>,
    /// `smallest[k]` = the smallest candidate index among the first `k + 1` of `sypd_desc`.
    smallest: Vec<usize>,
}

impl FastestBelow {
    fn new(comp: &super::Candidates) -> FastestBelow {
        let mut order: Vec<usize> = (0..comp.sypd.len()).collect();
        order.sort_by(|&a, &b| comp.sypd[b].total_cmp(&comp.sypd[a]).then(a.cmp(&b)));
        let sypd_desc = order.iter().map(|&j| comp.sypd[j]).collect();
        let smallest = order
            .iter()
            .scan(usize::MAX, |m, &j| {
                *m = (*m).min(j);
                Some(*m)
            })
            .collect();
        FastestBelow {
            sypd_desc,
            smallest,
        }
    }

    /// The smallest candidate (candidates ascend in PEs) with SYPD above `s` (`strict`) or at
    /// least `s`.
    fn smallest_at_least(&self, s: f64, strict: bool) -> Option<usize> {
        let count = if strict {
            self.sypd_desc.partition_point(|&v| v > s)
        } else {
            self.sypd_desc.partition_point(|&v| v >= s)
        };
        count.checked_sub(1).map(|k| self.smallest[k])
    }
}

/// The leaders no other leader dominates, one per point, in ascending SYPD.
fn front_leaders(leaders: &[Leader]) -> Vec<Leader> {
    let mut order: Vec<&Leader> = leaders.iter().collect();
    // Fastest first; on equal SYPD the cheapest, then the ranking order's tie-breaks (fewer
    // total PEs: a billed cost can tie between different PE totals; then the PE counts).
    order.sort_by(|a, b| {
        b.sypd
            .total_cmp(&a.sypd)
            .then(a.cost.total_cmp(&b.cost))
            .then(a.total.cmp(&b.total))
            .then_with(|| a.nproc.cmp(&b.nproc))
            // Equal cores at other thread counts: the index order is (cores, threads).
            .then_with(|| a.index.cmp(&b.index))
    });
    let mut front: Vec<Leader> = Vec::new();
    let mut cheapest_faster = f64::INFINITY;
    let mut k = 0;
    while k < order.len() {
        // The first of a run of equal SYPD is the only one of the run that can be on the front.
        let first = order[k];
        if first.cost < cheapest_faster {
            front.push(first.clone());
        }
        let mut end = k;
        while end < order.len() && order[end].sypd == first.sypd {
            end += 1;
        }
        cheapest_faster = cheapest_faster.min(first.cost);
        k = end;
    }
    front.reverse();
    front
}

/// The order of the top-1 at w = 0: fittingness `1 - CHSY_n` descending, then the ranking order.
fn zero_order(problem: &Problem, a: &Leader, b: &Leader) -> Ordering {
    let fn0 = |l: &Leader| problem.line(l).intercept;
    fn0(b)
        .total_cmp(&fn0(a))
        .then(a.total.cmp(&b.total))
        .then_with(|| a.nproc.cmp(&b.nproc))
        .then_with(|| a.index.cmp(&b.index))
}

/// `FN(w) = intercept + w * slope`.
#[derive(Debug, Clone, Copy)]
struct Line {
    intercept: f64,
    slope: f64,
}

/// The w where two lines meet (`b` rising faster than `a`).
fn meet(a: Line, b: Line) -> f64 {
    (a.intercept - b.intercept) / (b.slope - a.slope)
}

/// One piece of the upper envelope on [0, 1]: line `line` wins on (from, to] (the first on
/// [0, to]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    line: usize,
    from: f64,
    to: f64,
}

/// The upper envelope on [0, 1] of lines given in front order (ascending SYPD, so with rising
/// slopes). Where lines tie, the earlier one (fewer PEs) wins, as the ranking order says.
fn envelope(lines: &[Line]) -> Vec<Span> {
    let mut hull: Vec<usize> = Vec::new();
    for (k, &line) in lines.iter().enumerate() {
        if let Some(&top) = hull.last() {
            // Parallel (or, after rounding, falling) slopes: the earlier line is at least as
            // high everywhere and wins ties, so the new one never wins.
            if line.slope <= lines[top].slope {
                continue;
            }
        }
        while hull.len() >= 2 {
            let (a, b) = (lines[hull[hull.len() - 2]], lines[hull[hull.len() - 1]]);
            // `b` wins nowhere if the new line overtakes `a` no later than `b` does.
            if meet(a, line) <= meet(a, b) {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(k);
    }
    let mut spans = Vec::new();
    let mut from = f64::NEG_INFINITY;
    for (h, &k) in hull.iter().enumerate() {
        let to = match hull.get(h + 1) {
            Some(&next) => meet(lines[k], lines[next]),
            None => f64::INFINITY,
        };
        let first = spans.is_empty();
        // Clip (from, to] to [0, 1]; the first clipped piece is closed at 0.
        let wins_somewhere = if first { to >= 0.0 } else { true } && from < 1.0 && from < to;
        if wins_somewhere {
            spans.push(Span {
                line: k,
                from: from.max(0.0),
                to: to.min(1.0),
            });
        }
        from = to;
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(intercept: f64, slope: f64) -> Line {
        Line { intercept, slope }
    }

    #[test]
    fn envelope_of_three_lines_by_hand() {
        // 1 - w/2, 0.5 + 0.25 w... meets the first at w = 2/3; w meets the first at 2/3 too: the
        // middle line wins nowhere, the third from 2/3 on.
        let spans = envelope(&[line(1.0, -0.5), line(0.6, 0.1), line(0.0, 1.0)]);
        assert_eq!(spans.len(), 2, "{spans:?}");
        assert_eq!((spans[0].line, spans[0].from), (0, 0.0));
        assert!((spans[0].to - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!((spans[1].line, spans[1].to), (2, 1.0));
    }

    #[test]
    fn envelope_keeps_the_middle_line_where_it_wins() {
        // 1 - w, 0.8 - 0.2 w... no: 0.7 + 0 w, and w. Crossings at 0.3 and 0.7.
        let spans = envelope(&[line(1.0, -1.0), line(0.7, 0.0), line(0.0, 1.0)]);
        let lines: Vec<usize> = spans.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![0, 1, 2]);
        assert!((spans[0].to - 0.3).abs() < 1e-12);
        assert!((spans[1].to - 0.7).abs() < 1e-12);
    }

    #[test]
    fn envelope_clips_lines_that_win_outside_zero_one() {
        // The second line only overtakes the first at w = 2.
        let spans = envelope(&[line(1.0, 0.0), line(0.0, 0.5)]);
        assert_eq!(
            spans,
            vec![Span {
                line: 0,
                from: 0.0,
                to: 1.0
            }]
        );
        // The first line only wins below w = -1.
        let spans = envelope(&[line(0.0, 0.0), line(1.0, 1.0)]);
        assert_eq!(
            spans,
            vec![Span {
                line: 1,
                from: 0.0,
                to: 1.0
            }]
        );
    }

    #[test]
    fn a_tie_at_zero_goes_to_the_earlier_line_for_that_point_only() {
        let spans = envelope(&[line(1.0, 0.0), line(1.0, 1.0)]);
        assert_eq!(
            spans,
            vec![
                Span {
                    line: 0,
                    from: 0.0,
                    to: 0.0
                },
                Span {
                    line: 1,
                    from: 0.0,
                    to: 1.0
                }
            ]
        );
    }
}
