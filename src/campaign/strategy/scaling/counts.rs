//! Which PE counts a component can be measured at: its range, snapped to its allowed list, to
//! the campaign's `step` and to whole nodes of the `[machine]`. The first series is log-spaced
//! over the range, because scalability curves change on a log scale (a doubling costs the
//! same wherever it starts).

/// The PE counts a component may run at.
#[derive(Debug, Clone, PartialEq)]
pub enum Grid {
    /// Exactly these counts, ascending (an allowed list within the range).
    List(Vec<u32>),
    /// Multiples of `every` within `low..=high`.
    Multiples {
        /// The spacing: `step`, whole nodes, or both.
        every: u32,
        /// The component's fewest PEs.
        low: u32,
        /// The component's most PEs.
        high: u32,
    },
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Grid {
    /// The grid of a component with limits `low..=high`, an optional allowed list, the
    /// campaign's `step` and the node size (`cores_per_node` of a `[machine]`). A rule no count
    /// in the range can meet is dropped (whole nodes first, then `step`), so the grid is never
    /// empty while the range or the allowed list holds a count. An allowed list keeps only its
    /// whole-node counts when they are at least `wanted` (the counts the first series asks
    /// for): fewer would shrink the curve without a word (NEMO's ORCA1 list has two multiples
    /// of 48), so then every allowed count stays, some leaving part of a node unused.
    pub fn new(
        low: u32,
        high: u32,
        allowed: Option<&[u32]>,
        step: u32,
        cores_per_node: Option<u32>,
        wanted: u32,
    ) -> Grid {
        let node = cores_per_node.unwrap_or(1).max(1);
        if let Some(list) = allowed {
            let within: Vec<u32> = list
                .iter()
                .copied()
                .filter(|p| (low..=high).contains(p))
                .collect();
            let whole: Vec<u32> = within.iter().copied().filter(|p| p % node == 0).collect();
            let mut chosen = if whole.is_empty() || whole.len() < wanted as usize {
                within
            } else {
                whole
            };
            chosen.sort_unstable();
            chosen.dedup();
            return Grid::List(chosen);
        }
        let step = u64::from(step.max(1));
        let node = u64::from(node);
        let both = step / gcd(step, node) * node;
        for every in [both, node, step, 1] {
            let Ok(every) = u32::try_from(every) else {
                continue;
            };
            if low.div_ceil(every).saturating_mul(every) <= high {
                return Grid::Multiples { every, low, high };
            }
        }
        Grid::Multiples {
            every: 1,
            low,
            high,
        }
    }

    /// The count of the grid nearest `target` on a log scale; `None` for an empty grid.
    pub fn snap(&self, target: f64) -> Option<u32> {
        let candidates: Vec<u32> = match self {
            Grid::List(list) => {
                let at = list.partition_point(|&p| f64::from(p) < target);
                [at.checked_sub(1), Some(at)]
                    .into_iter()
                    .flatten()
                    .filter_map(|i| list.get(i).copied())
                    .collect()
            }
            &Grid::Multiples { every, low, high } => {
                let first = low.div_ceil(every).saturating_mul(every);
                let last = high / every * every;
                if first > last {
                    return None;
                }
                let below = ((target / f64::from(every)).floor() * f64::from(every))
                    .clamp(f64::from(first), f64::from(last));
                let above = (below + f64::from(every)).min(f64::from(last));
                vec![below as u32, above as u32]
            }
        };
        let distance = |p: u32| (f64::from(p).ln() - target.max(1.0).ln()).abs();
        candidates
            .into_iter()
            .min_by(|&a, &b| distance(a).total_cmp(&distance(b)).then(a.cmp(&b)))
    }

    /// The smallest and largest count of the grid.
    pub fn ends(&self) -> Option<(u32, u32)> {
        match self {
            Grid::List(list) => Some((*list.first()?, *list.last()?)),
            &Grid::Multiples { every, low, high } => {
                let first = low.div_ceil(every).saturating_mul(every);
                let last = high / every * every;
                (first <= last).then_some((first, last))
            }
        }
    }

    /// `count` counts log-spaced between the ends of the grid, snapped to it, ascending and
    /// without repeats (fewer when the grid has fewer).
    pub fn series(&self, count: u32) -> Vec<u32> {
        let Some((first, last)) = self.ends() else {
            return Vec::new();
        };
        let (a, b) = (f64::from(first).ln(), f64::from(last).ln());
        let n = count.max(2);
        let mut out: Vec<u32> = (0..n)
            .filter_map(|k| self.snap((a + (b - a) * f64::from(k) / f64::from(n - 1)).exp()))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How many counts the grid has.
    pub fn len(&self) -> u64 {
        match self {
            Grid::List(list) => list.len() as u64,
            Grid::Multiples { every, .. } => self
                .ends()
                .map_or(0, |(first, last)| u64::from((last - first) / every) + 1),
        }
    }

    /// Whether the grid has no count.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `p` is on the grid.
    pub fn contains(&self, p: u32) -> bool {
        match self {
            Grid::List(list) => list.binary_search(&p).is_ok(),
            &Grid::Multiples { every, low, high } => {
                (low..=high).contains(&p) && p.is_multiple_of(every)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_series_is_log_spaced_and_snapped_to_whole_nodes() {
        let grid = Grid::new(48, 960, None, 1, Some(48), 6);
        assert_eq!(grid.series(6), vec![48, 96, 144, 288, 528, 960]);
        let grid = Grid::new(50, 1000, None, 10, None, 5);
        let s = grid.series(5);
        assert_eq!(s.first(), Some(&50));
        assert_eq!(s.last(), Some(&1000));
        assert!(s.iter().all(|p| p % 10 == 0), "{s:?}");
    }

    #[test]
    fn an_allowed_list_is_the_grid_and_whole_nodes_are_kept_when_they_can_be() {
        let list = [20, 29, 48, 96, 100, 144, 2000];
        let grid = Grid::new(20, 150, Some(&list), 1, Some(48), 3);
        assert_eq!(grid, Grid::List(vec![48, 96, 144]));
        // Asked for more counts than whole nodes give: every allowed count stays.
        let grid = Grid::new(20, 150, Some(&list), 1, Some(48), 4);
        assert_eq!(grid, Grid::List(vec![20, 29, 48, 96, 100, 144]));
        assert_eq!(grid.series(4).len(), 4);
        let grid = Grid::new(20, 47, Some(&list), 1, Some(48), 2);
        assert_eq!(grid, Grid::List(vec![20, 29]));
        assert_eq!(grid.snap(25.0), Some(29));
    }

    #[test]
    fn a_range_smaller_than_a_node_keeps_the_step() {
        let grid = Grid::new(10, 40, None, 5, Some(48), 2);
        assert_eq!(
            grid,
            Grid::Multiples {
                every: 5,
                low: 10,
                high: 40
            }
        );
        assert_eq!(grid.series(2), vec![10, 40]);
    }

    proptest! {
        /// Every count of a series is on the grid, and the ends are the grid's ends.
        #[test]
        fn series_stay_on_the_grid(low in 1u32..500, span in 0u32..5000, step in 1u32..64,
                                   node in proptest::option::of(1u32..128), n in 2u32..12) {
            let high = low + span;
            let grid = Grid::new(low, high, None, step, node, n);
            let s = grid.series(n);
            prop_assert!(!s.is_empty());
            prop_assert!(s.len() <= n as usize);
            for p in &s {
                prop_assert!(grid.contains(*p), "{p} off {grid:?}");
            }
            let (first, last) = grid.ends().unwrap();
            prop_assert_eq!(s[0], first);
            prop_assert_eq!(*s.last().unwrap(), last);
        }
    }
}
