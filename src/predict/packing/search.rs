//! The exact search for the fastest packing of a node count (see the parent module's doc):
//! every thread choice and every packing of a regular node, the first node's best mix by
//! bisection on the coupled speed, held by a property test to a plain enumeration.

use super::{NodeGroup, Packing, PackingError, PackingProblem, Pinned, ThreadSpeeds};
use crate::metrics;

impl PackingProblem {
    /// The thread options a choice of option indices picks, one per component.
    fn options_of(&self, choice: &[usize]) -> Vec<&ThreadSpeeds> {
        choice
            .iter()
            .zip(&self.components)
            .map(|(&i, c)| &c.options[i])
            .collect()
    }

    /// Every choice of one thread option per component, as option indices.
    fn thread_choices(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new()];
        for c in &self.components {
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    (0..c.options.len()).map(move |i| {
                        let mut v = prefix.clone();
                        v.push(i);
                        v
                    })
                })
                .collect();
        }
        out
    }

    fn packing(
        &self,
        nodes: u32,
        options: &[&ThreadSpeeds],
        regular: &[u32],
        first: &[u32],
        sypd: f64,
    ) -> Packing {
        let threads: Vec<u32> = options.iter().map(|o| o.threads).collect();
        self.groups_of(nodes, threads, regular, first, sypd)
    }

    /// The packing of `nodes` nodes with `regular` ranks of each component (of `threads`
    /// cores each) on every node but the first and `first` on the first, the helpers where
    /// they are pinned, as node groups; `regular` and `first` must fit their nodes.
    pub(crate) fn groups_of(
        &self,
        nodes: u32,
        threads: Vec<u32>,
        regular: &[u32],
        first: &[u32],
        sypd: f64,
    ) -> Packing {
        let (reg_cap, first_cap) = self.node_capacities().expect("checked by the caller");
        let cores = |r: &[u32]| r.iter().zip(&threads).map(|(r, t)| r * t).sum::<u32>();
        let ranks = (0..regular.len())
            .map(|c| (nodes - 1) * regular[c] + first[c])
            .collect();
        let first_group = NodeGroup {
            nodes: 1,
            ranks: first.to_vec(),
            helpers: self.helper_ranks(true),
            idle_cores: first_cap - cores(first),
        };
        let mut groups = vec![first_group];
        if nodes > 1 {
            let rest = NodeGroup {
                nodes: nodes - 1,
                ranks: regular.to_vec(),
                helpers: self.helper_ranks(false),
                idle_cores: reg_cap - cores(regular),
            };
            if rest.ranks == groups[0].ranks && rest.helpers == groups[0].helpers {
                groups[0].nodes = nodes;
            } else {
                groups.push(rest);
            }
        }
        Packing {
            nodes,
            threads,
            ranks,
            groups,
            sypd,
        }
    }
}

/// Every packing of `capacity` cores: ranks per component with `sum ranks * threads <=
/// capacity`, in lexicographic order.
fn node_mixes(threads: &[u32], capacity: u32) -> Vec<Vec<u32>> {
    fn go(threads: &[u32], left: u32, prefix: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        match threads.split_first() {
            None => out.push(prefix.clone()),
            Some((&t, rest)) => {
                for r in 0..=left / t {
                    prefix.push(r);
                    go(rest, left - r * t, prefix, out);
                    prefix.pop();
                }
            }
        }
    }
    let mut out = Vec::new();
    go(threads, capacity, &mut Vec::new(), &mut out);
    out
}

/// The mixes of the nodes after the first: every packing of `capacity` cores, or none (all
/// zeros) for a one-node job.
fn regular_mixes(nodes: u32, threads: &[u32], capacity: u32) -> Vec<Vec<u32>> {
    if nodes == 1 {
        vec![vec![0; threads.len()]]
    } else {
        node_mixes(threads, capacity)
    }
}

/// The first node's best mix over `base` ranks already on the other nodes: the highest coupled
/// speed, then the fewest cores. Returns the speed and the first node's ranks.
fn best_first_node(
    options: &[&ThreadSpeeds],
    base: &[u32],
    capacity: u32,
) -> Option<(f64, Vec<u32>)> {
    // For each component, the best speed reachable with at most k ranks on the first node and
    // the fewest ranks that reach it: a running maximum over k.
    let running: Vec<Vec<(f64, u32)>> = options
        .iter()
        .zip(base)
        .map(|(o, &b)| {
            let mut best = (f64::NEG_INFINITY, 0);
            (0..=capacity / o.threads)
                .map(|k| {
                    if let Some(s) = o.at(b + k) {
                        if s > best.0 {
                            best = (s, k);
                        }
                    }
                    best
                })
                .collect()
        })
        .collect();
    // Fewest ranks of component c that reach speed `s`, if any (first k whose running best is
    // at least s; the running best never falls).
    let need = |c: usize, s: f64| -> Option<u32> {
        let r = &running[c];
        let k = r.partition_point(|&(v, _)| v < s);
        r.get(k).map(|&(_, at)| at)
    };
    let cores_for = |s: f64| -> Option<(u32, Vec<u32>)> {
        let mut cores = 0;
        let mut ranks = Vec::with_capacity(options.len());
        for (c, o) in options.iter().enumerate() {
            let k = need(c, s)?;
            cores += k * o.threads;
            ranks.push(k);
        }
        (cores <= capacity).then_some((cores, ranks))
    };
    if let [a, b] = running.as_slice() {
        // Two components: the best speed is the best of "k ranks of the first, as many of the
        // second as fit", one pass instead of a sort and a bisection.
        let (ta, tb) = (options[0].threads, options[1].threads);
        let s = (0..a.len())
            .map(|k| {
                let left = (capacity - k as u32 * ta) / tb;
                a[k].0.min(b[(left as usize).min(b.len() - 1)].0)
            })
            .fold(f64::NEG_INFINITY, f64::max);
        if !s.is_finite() {
            return None;
        }
        let (_, ranks) = cores_for(s)?;
        return Some((s, ranks));
    }
    let mut speeds: Vec<f64> = running
        .iter()
        .flat_map(|r| r.iter().map(|&(v, _)| v))
        .filter(|v| v.is_finite())
        .collect();
    speeds.sort_by(f64::total_cmp);
    speeds.dedup();
    // Feasibility falls as the speed rises: bisect for the highest feasible speed.
    let feasible = speeds.partition_point(|&s| cores_for(s).is_some());
    let s = *speeds.get(feasible.checked_sub(1)?)?;
    let (_, ranks) = cores_for(s)?;
    // The speed reached is the slowest component's at these ranks, at least `s` by construction.
    let reached = options
        .iter()
        .zip(base.iter().zip(&ranks))
        .map(|(o, (&b, &k))| o.at(b + k).unwrap_or(f64::NEG_INFINITY))
        .fold(f64::INFINITY, f64::min);
    Some((reached, ranks))
}

/// Whether `a` (speed, used cores, threads, regular ranks) beats `b`: faster, then fewer cores,
/// then the smaller thread and rank vectors, so the answer does not depend on the search order.
fn better(a: (f64, u32, &[u32], &[u32]), b: (f64, u32, &[u32], &[u32])) -> bool {
    a.0.total_cmp(&b.0)
        .then(b.1.cmp(&a.1))
        .then(b.2.cmp(a.2))
        .then(b.3.cmp(a.3))
        .is_gt()
}

/// The best packing so far in [`best_packing`]'s walk.
struct Found {
    sypd: f64,
    used: u32,
    threads: Vec<u32>,
    /// Ranks per component on each node but the first.
    regular: Vec<u32>,
    /// Ranks per component on the first node.
    first: Vec<u32>,
    /// The thread option of each component.
    choice: Vec<usize>,
}

/// The fastest packing of `nodes` nodes (then the one using fewest cores), or `None` when no
/// packing lets every component run.
pub fn best_packing(problem: &PackingProblem, nodes: u32) -> Result<Option<Packing>, PackingError> {
    if nodes == 0 {
        return Err(PackingError::NoNodes);
    }
    let (reg_cap, first_cap) = problem.capacities()?;
    let mut best: Option<Found> = None;
    for choice in problem.thread_choices() {
        let options = problem.options_of(&choice);
        let threads: Vec<u32> = options.iter().map(|o| o.threads).collect();
        let regulars = regular_mixes(nodes, &threads, reg_cap);
        for regular in regulars {
            let base: Vec<u32> = regular.iter().map(|r| r * (nodes - 1)).collect();
            let Some((sypd, first)) = best_first_node(&options, &base, first_cap) else {
                continue;
            };
            let cores = |r: &[u32]| r.iter().zip(&threads).map(|(r, t)| r * t).sum::<u32>();
            let used = (nodes - 1) * cores(&regular) + cores(&first);
            let wins = best.as_ref().is_none_or(|b| {
                better(
                    (sypd, used, &threads, &regular),
                    (b.sypd, b.used, &b.threads, &b.regular),
                )
            });
            if wins {
                best = Some(Found {
                    sypd,
                    used,
                    threads: threads.clone(),
                    regular,
                    first,
                    choice: choice.clone(),
                });
            }
        }
    }
    Ok(best.map(|b| {
        let options = problem.options_of(&b.choice);
        problem.packing(nodes, &options, &b.regular, &b.first, b.sypd)
    }))
}

/// The plain enumeration the search is held to: every mix of the first node against every mix
/// of the other nodes, at every thread choice. Returns the best speed and the cores it uses
/// (the helpers' included).
#[doc(hidden)]
pub fn naive_best(
    problem: &PackingProblem,
    nodes: u32,
) -> Result<Option<(f64, u32)>, PackingError> {
    if nodes == 0 {
        return Err(PackingError::NoNodes);
    }
    let (reg_cap, first_cap) = problem.capacities()?;
    let helpers =
        nodes * problem.helper_cores(Pinned::PerNode) + problem.helper_cores(Pinned::FirstNode);
    let mut best: Option<(f64, u32)> = None;
    for choice in problem.thread_choices() {
        let options = problem.options_of(&choice);
        let threads: Vec<u32> = options.iter().map(|o| o.threads).collect();
        let cores = |r: &[u32]| r.iter().zip(&threads).map(|(r, t)| r * t).sum::<u32>();
        let regulars = regular_mixes(nodes, &threads, reg_cap);
        for regular in &regulars {
            for first in node_mixes(&threads, first_cap) {
                let speeds: Option<Vec<f64>> = options
                    .iter()
                    .enumerate()
                    .map(|(c, o)| o.at((nodes - 1) * regular[c] + first[c]))
                    .collect();
                let Some(speeds) = speeds else { continue };
                let s = metrics::coupled_sypd(&speeds);
                let used = helpers + (nodes - 1) * cores(regular) + cores(&first);
                let wins = best.is_none_or(|(bs, bu)| s > bs || (s == bs && used < bu));
                if wins {
                    best = Some((s, used));
                }
            }
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::packing::fixtures::{ecearth4_like, helper, saturating};
    use crate::predict::packing::PackedComponent;
    use proptest::prelude::*;

    #[test]
    fn an_ecearth4_like_node_is_filled_with_the_helpers_placed() {
        let problem = ecearth4_like("oifs");
        let p = best_packing(&problem, 4).unwrap().unwrap();
        assert_eq!(p.nodes, 4);
        assert_eq!(p.groups.iter().map(|g| g.nodes).sum::<u32>(), 4);
        for g in &p.groups {
            let used: u32 = g.ranks[0] * 4 + g.ranks[1] + g.helpers.iter().sum::<u32>();
            assert_eq!(used + g.idle_cores, 112, "{g:?}");
        }
        // rnfm on the first node only, XIOS on every node.
        assert_eq!(p.groups[0].helpers, vec![1, 1]);
        assert_eq!(p.groups.last().unwrap().helpers[0], 1);
        if p.groups.len() > 1 {
            assert_eq!(p.groups[1].helpers, vec![1, 0]);
        }
        let totals: Vec<u32> = (0..2)
            .map(|c| p.groups.iter().map(|g| g.nodes * g.ranks[c]).sum())
            .collect();
        assert_eq!(totals, p.ranks);
        // Nothing the enumeration finds is faster.
        let (s, used) = naive_best(&problem, 4).unwrap().unwrap();
        assert_eq!((p.sypd, p.used_cores(112)), (s, used));
    }

    #[test]
    fn helpers_that_fill_the_node_are_refused_with_the_fix() {
        let problem = PackingProblem {
            cores_per_node: 2,
            components: vec![PackedComponent {
                name: "oifs".into(),
                options: vec![saturating(1, 1.0, 10.0, 10)],
            }],
            helpers: vec![
                helper("xios", Pinned::PerNode),
                helper("rnfm", Pinned::FirstNode),
            ],
        };
        let e = best_packing(&problem, 2).unwrap_err();
        assert!(e.to_string().contains("raise cores_per_node"), "{e}");
    }

    #[test]
    fn a_component_that_cannot_run_anywhere_gives_no_packing() {
        let problem = PackingProblem {
            cores_per_node: 8,
            components: vec![
                PackedComponent {
                    name: "a".into(),
                    options: vec![saturating(1, 1.0, 10.0, 100)],
                },
                PackedComponent {
                    name: "b".into(),
                    options: vec![ThreadSpeeds {
                        threads: 1,
                        sypd: vec![None; 100],
                    }],
                },
            ],
            helpers: vec![],
        };
        assert_eq!(best_packing(&problem, 3).unwrap(), None);
    }

    fn speeds_strategy(max: usize) -> impl Strategy<Value = Vec<Option<f64>>> {
        // Arbitrary, not monotone: dips and holes like a decomposition's.
        proptest::collection::vec(proptest::option::weighted(0.8, 1u32..40), max + 1).prop_map(
            |v| {
                v.into_iter()
                    .enumerate()
                    .map(|(r, s)| if r == 0 { None } else { s.map(f64::from) })
                    .collect()
            },
        )
    }

    fn problem_strategy() -> impl Strategy<Value = (PackingProblem, u32)> {
        (
            2u32..=10,
            2usize..=3,
            1u32..=4,
            any::<bool>(),
            any::<bool>(),
        )
            .prop_flat_map(|(cores, k, nodes, per_node, first_node)| {
                let max = (cores * nodes) as usize;
                let component = (
                    proptest::sample::subsequence(vec![1u32, 2, 3], 1..=2),
                    proptest::collection::vec(speeds_strategy(max), 2),
                );
                proptest::collection::vec(component, k).prop_map(move |comps| {
                    let components = comps
                        .into_iter()
                        .enumerate()
                        .map(|(i, (threads, tables))| PackedComponent {
                            name: format!("c{i}"),
                            options: threads
                                .into_iter()
                                .zip(tables)
                                .map(|(threads, sypd)| ThreadSpeeds { threads, sypd })
                                .collect(),
                        })
                        .collect();
                    let mut helpers = Vec::new();
                    if per_node {
                        helpers.push(helper("xios", Pinned::PerNode));
                    }
                    if first_node {
                        helpers.push(helper("rnfm", Pinned::FirstNode));
                    }
                    (
                        PackingProblem {
                            cores_per_node: cores,
                            components,
                            helpers,
                        },
                        nodes,
                    )
                })
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn the_search_matches_the_enumeration((problem, nodes) in problem_strategy()) {
            let fast = best_packing(&problem, nodes);
            let naive = naive_best(&problem, nodes);
            match (fast, naive) {
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (Ok(None), Ok(None)) => {}
                (Ok(Some(p)), Ok(Some((s, used)))) => {
                    prop_assert_eq!((p.sypd, p.used_cores(problem.cores_per_node)), (s, used));
                    // The packing is what it says: it fits and reaches its speed.
                    for g in &p.groups {
                        let cores: u32 = g.ranks.iter().zip(&p.threads).map(|(r, t)| r * t).sum::<u32>()
                            + g.helpers.iter().sum::<u32>();
                        prop_assert_eq!(cores + g.idle_cores, problem.cores_per_node);
                    }
                    let reached = problem.components.iter().zip(p.ranks.iter().zip(&p.threads))
                        .map(|(c, (&r, &t))| c.options.iter().find(|o| o.threads == t).unwrap().at(r).unwrap())
                        .fold(f64::INFINITY, f64::min);
                    prop_assert_eq!(reached, p.sypd);
                }
                (a, b) => prop_assert!(false, "search {a:?} but enumeration {b:?}"),
            }
        }
    }
}
