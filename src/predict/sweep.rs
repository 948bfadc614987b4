//! The machinery the exact searches share: the bottleneck groups and the TTS_w-independent
//! summary they add up to, the partial-sum convolution over PE counts, and the two-component
//! sweep over a Fenwick tree. The plain search (`search`), the per-component node placement
//! (`placed`) and the per-resource sums (`resources`) all build on it, and it depends on none
//! of them, so none of the three needs another for these parts.

use super::Problem;
use crate::metrics::Bounds;

/// The TTS_w-independent figures of a problem.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The bottleneck groups that hold kept configurations, for [`super::search::top_n`].
    pub groups: Vec<Group>,
    /// Feasible configurations (within the budget, and the queue when there is one).
    pub feasible: u64,
    /// Kept configurations: feasible and at least as good as the base case.
    pub kept: u64,
    /// Min and max coupled SYPD over the kept configurations (FN's normalisation).
    pub sypd_bounds: Bounds,
    /// Min and max of the chosen cost over the kept configurations (CHSY without a machine).
    pub cost_bounds: Bounds,
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
            cost_bounds: Bounds {
                min: f64::INFINITY,
                max: f64::NEG_INFINITY,
            },
        }
    }
}

/// A bottleneck group with at least one kept configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Group {
    pub(super) component: usize,
    pub(super) index: usize,
    pub(super) sypd: f64,
    /// Smallest balanced PE sum of a kept configuration in the group.
    pub(super) min_sum: u32,
    /// Largest balanced PE sum a kept configuration of the group may have.
    pub(super) limit: u32,
    /// Smallest cost weight of a kept configuration in the group (a lower bound per component).
    pub(super) min_weight: f64,
}

impl Group {
    pub(crate) fn component(&self) -> usize {
        self.component
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// The largest balanced PE sum a kept configuration of the group may have.
    pub(crate) fn limit(&self) -> u32 {
        self.limit
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
