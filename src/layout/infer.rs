//! The layout a set of PE ranges implies, the cores they take, and the per-PE sum of times.
//!
//! CIME places each component on PEs `root_pe, root_pe + stride, ...` (`tasks` of them, each
//! with `threads` threads). Components whose PEs overlap take turns; groups of components that
//! share no PE run side by side. [`infer`] builds the tree from that rule alone, so it needs
//! nothing but the ranges a timing file states.

use std::collections::{BTreeSet, HashMap};

use super::Layout;

/// Where a component runs: `tasks` MPI tasks of `threads` threads on PEs `root_pe`,
/// `root_pe + stride`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PeRange {
    /// MPI tasks.
    pub tasks: u32,
    /// OpenMP threads per task.
    pub threads: u32,
    /// The first PE.
    pub root_pe: u32,
    /// PEs between consecutive tasks.
    pub stride: u32,
}

impl PeRange {
    /// One past the last PE the range reaches: `root_pe + tasks x stride` (CIME's count).
    pub fn end(&self) -> u64 {
        u64::from(self.root_pe) + u64::from(self.tasks) * u64::from(self.stride.max(1))
    }

    /// The PEs of the range.
    pub fn pes(&self) -> impl Iterator<Item = u64> + '_ {
        (0..u64::from(self.tasks))
            .map(|i| u64::from(self.root_pe) + i * u64::from(self.stride.max(1)))
    }
}

/// Cores the ranges take as CIME counts them: the highest PE end times the most threads any
/// component uses (one threaded component makes every PE count that many cores).
pub fn cores(ranges: &[PeRange]) -> u64 {
    let end = ranges.iter().map(PeRange::end).max().unwrap_or(0);
    let threads = ranges
        .iter()
        .map(|r| u64::from(r.threads.max(1)))
        .max()
        .unwrap_or(1);
    end * threads
}

/// The layout the ranges imply (`None` for no components). Components sharing no PE (directly
/// or through others) run side by side; within a group sharing PEs, those on all of the group's
/// PEs run one after the other, before the rest, which is laid out the same way. A group where
/// no component covers the others' PEs is taken as one after the other (the cautious reading).
/// Parts keep the order the components are given in; side-by-side groups go by lowest PE.
pub fn infer(components: &[(String, PeRange)]) -> Option<Layout> {
    let sets: Vec<BTreeSet<u64>> = components.iter().map(|(_, r)| r.pes().collect()).collect();
    let all: Vec<usize> = (0..components.len()).collect();
    infer_group(components, &sets, &all)
}

fn infer_group(
    components: &[(String, PeRange)],
    sets: &[BTreeSet<u64>],
    members: &[usize],
) -> Option<Layout> {
    if members.is_empty() {
        return None;
    }
    let groups = connected(sets, members);
    if groups.len() > 1 {
        let mut parts: Vec<(u64, Layout)> = groups
            .iter()
            .filter_map(|g| {
                let lowest = g.iter().filter_map(|&i| sets[i].first().copied()).min()?;
                Some((lowest, infer_group(components, sets, g)?))
            })
            .collect();
        parts.sort_by_key(|(lowest, _)| *lowest);
        return Some(Layout::beside(parts.into_iter().map(|(_, l)| l).collect()));
    }
    let union: BTreeSet<u64> = members
        .iter()
        .flat_map(|&i| sets[i].iter().copied())
        .collect();
    let (spanning, rest): (Vec<usize>, Vec<usize>) =
        members.iter().partition(|&&i| sets[i].len() == union.len());
    let leaf = |i: usize| Layout::Component(components[i].0.clone());
    if spanning.is_empty() {
        return Some(Layout::after(members.iter().map(|&i| leaf(i)).collect()));
    }
    let mut parts: Vec<Layout> = spanning.into_iter().map(leaf).collect();
    parts.extend(infer_group(components, sets, &rest));
    Some(Layout::after(parts))
}

/// The members split into groups linked by shared PEs, each in the given order.
fn connected(sets: &[BTreeSet<u64>], members: &[usize]) -> Vec<Vec<usize>> {
    let mut group_of: Vec<usize> = (0..members.len()).collect();
    fn root(group_of: &mut [usize], mut i: usize) -> usize {
        while group_of[i] != i {
            group_of[i] = group_of[group_of[i]];
            i = group_of[i];
        }
        i
    }
    for a in 0..members.len() {
        for b in a + 1..members.len() {
            if !sets[members[a]].is_disjoint(&sets[members[b]]) {
                let (ra, rb) = (root(&mut group_of, a), root(&mut group_of, b));
                group_of[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (k, &i) in members.iter().enumerate() {
        let r = root(&mut group_of, k);
        match groups.iter_mut().find(|(g, _)| *g == r) {
            Some((_, g)) => g.push(i),
            None => groups.push((r, vec![i])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}

/// The per-PE sum: for every PE, the times of the components on it added up; the largest over
/// the PEs. It ignores which components could overlap in time across PEs, so it is a lower
/// bound of sorts that the tree model is compared with.
pub fn per_pe_time(components: &[(PeRange, f64)]) -> f64 {
    let mut per_pe: HashMap<u64, f64> = HashMap::new();
    for (range, time) in components {
        for pe in range.pes() {
            *per_pe.entry(pe).or_default() += time;
        }
    }
    per_pe.values().copied().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(tasks: u32, root_pe: u32) -> PeRange {
        PeRange {
            tasks,
            threads: 1,
            root_pe,
            stride: 1,
        }
    }

    fn named(list: &[(&str, PeRange)]) -> Vec<(String, PeRange)> {
        list.iter().map(|(n, r)| (n.to_string(), *r)).collect()
    }

    #[test]
    fn cesm_default_shape_comes_back_from_its_ranges() {
        let c = named(&[
            ("atm", r(1536, 0)),
            ("lnd", r(768, 768)),
            ("ice", r(768, 0)),
            ("ocn", r(500, 1536)),
        ]);
        assert_eq!(infer(&c).unwrap().to_string(), "(atm ; (ice | lnd)) | ocn");
        assert_eq!(cores(&c.iter().map(|(_, r)| *r).collect::<Vec<_>>()), 2036);
    }

    #[test]
    fn shapes_of_sequential_and_strided_ranges() {
        let seq = named(&[("atm", r(64, 0)), ("lnd", r(64, 0)), ("ocn", r(64, 0))]);
        assert_eq!(infer(&seq).unwrap().to_string(), "atm ; lnd ; ocn");
        // Interleaved by stride 2: disjoint PEs, so side by side.
        let even = PeRange {
            stride: 2,
            ..r(8, 0)
        };
        let odd = PeRange {
            stride: 2,
            ..r(8, 1)
        };
        let c = named(&[("a", even), ("b", odd)]);
        assert_eq!(infer(&c).unwrap().to_string(), "a | b");
        assert_eq!(cores(&[even, odd]), 17);
        // A chain (a overlaps b, b overlaps c, nobody covers all): one after the other.
        let chain = named(&[("a", r(10, 0)), ("b", r(10, 5)), ("c", r(10, 10))]);
        assert_eq!(infer(&chain).unwrap().to_string(), "a ; b ; c");
        assert_eq!(infer(&[]), None);
    }

    #[test]
    fn cores_take_the_most_threads_over_the_highest_pe() {
        let threaded = PeRange {
            threads: 3,
            ..r(256, 1152)
        };
        assert_eq!(cores(&[r(1152, 0), threaded, r(32, 1408)]), 1440 * 3);
    }

    #[test]
    fn per_pe_sum_adds_times_on_shared_pes() {
        let t = per_pe_time(&[(r(4, 0), 10.0), (r(2, 2), 5.0), (r(2, 4), 12.0)]);
        assert_eq!(t, 15.0);
    }
}
