//! Node packings: how to split every node of a job between the components, for a given number
//! of nodes.
//!
//! EC-Earth4 does not give each component nodes of its own: its `job.groups` packs several
//! components on every node (say 25 OpenIFS ranks of 4 threads, 10 NEMO ranks and one XIOS
//! server on each 112-core node of MareNostrum 5), and a few helpers take exactly one rank on the
//! first node (the runoff mapper, the AMIP forcing reader). The question a user asks there is not
//! "how many PEs for each component within a budget" but "how do I fill each of N nodes". The
//! centre bills whole nodes, so for a fixed N the cost per simulated year falls exactly as the
//! speed rises: the best packing for N nodes is the fastest one, and the time/cost trade-off is
//! between node counts ([`rank_packings`]).
//!
//! The family searched is the one EC-Earth4 writes: the first node may hold any mix (it also
//! carries the first-node helpers), and the other N - 1 nodes are packed alike. Within it the
//! search is exact: for every thread count of every component and every packing of a regular
//! node, the first node's best mix is found by bisection on the coupled speed, with each
//! component's fewest ranks that reach a speed read from a running maximum (speeds need not rise
//! with ranks: NEMO's fall past its best decomposition). A property test holds it to a plain
//! enumeration of both nodes' mixes.
//!
//! Threads: a component's rank runs `threads` OpenMP threads, all on one node, so a rank takes
//! `threads` cores of its node. Pinned helpers run one thread per rank.
//!
//! Speeds come from the caller as tables indexed by the component's total rank count
//! ([`ThreadSpeeds`]), so that the curves, their interpolation, allowed lists and limits are
//! applied once, outside the search.

use serde::{Deserialize, Serialize};

use crate::interp::{Interpolant, Method};
use crate::metrics::{self, Bounds};
use crate::predict::emit_ecearth4::OrderedMap;
use crate::predict::ComponentInput;

/// Where a pinned helper's ranks go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pinned {
    /// The same ranks on every node (XIOS servers, one per node).
    PerNode,
    /// Ranks on the first node only (the runoff mapper, the AMIP forcing reader).
    FirstNode,
}

impl Pinned {
    /// The word the campaign file uses: `per-node` or `first-node`.
    pub fn label(self) -> &'static str {
        match self {
            Pinned::PerNode => "per-node",
            Pinned::FirstNode => "first-node",
        }
    }
}

/// A component that uses cores but is never balanced (one thread per rank).
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedHelper {
    /// Its name, as the experiment configuration names it (`xios`, `rnfm`).
    pub name: String,
    /// Its ranks on each node it is pinned to.
    pub ranks: u32,
    /// Which nodes it is pinned to.
    pub pinned: Pinned,
}

/// A component's coupled speed at one thread count, by total rank count.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSpeeds {
    /// OpenMP threads per rank (cores per rank).
    pub threads: u32,
    /// `sypd[r]` is the component's speed (SYPD) on `r` ranks in all, or `None` where it cannot
    /// run (outside its curve or limits, not in its allowed list, or `r = 0`). Rank counts past
    /// the end of the table cannot run either.
    pub sypd: Vec<Option<f64>>,
}

impl ThreadSpeeds {
    fn at(&self, ranks: u32) -> Option<f64> {
        self.sypd.get(ranks as usize).copied().flatten()
    }
}

/// A balanced component of a packing problem.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedComponent {
    /// The component's name.
    pub name: String,
    /// Its speeds at each thread count it may run with (at least one).
    pub options: Vec<ThreadSpeeds>,
}

/// What to pack: the node size, the balanced components and the pinned helpers.
#[derive(Debug, Clone, PartialEq)]
pub struct PackingProblem {
    /// Cores of one node.
    pub cores_per_node: u32,
    /// The components the search balances.
    pub components: Vec<PackedComponent>,
    /// The helpers that take fixed ranks on every node or on the first.
    pub helpers: Vec<PinnedHelper>,
}

/// Why a packing problem cannot be searched.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PackingError {
    /// The pinned helpers leave no core for the balanced components.
    #[error("the pinned helpers take {helpers} of the {cores} cores of {which}, leaving none for the components; raise cores_per_node or pin fewer ranks")]
    HelpersFillNode {
        /// Cores the helpers take on the node.
        helpers: u32,
        /// `"every node"` or `"the first node"`: which node they fill.
        which: &'static str,
        /// Cores per node.
        cores: u32,
    },
    /// A component has no thread count to choose from.
    #[error("component {0} has no thread count; give it at least one (threads = [1])")]
    NoThreads(String),
    /// No component to balance.
    #[error("nothing to pack: give at least one component that is not pinned")]
    NoComponents,
    /// Zero nodes asked for.
    #[error("a packing needs at least one node")]
    NoNodes,
    /// A component known only from measured runs: the packing search reads speeds off curves.
    #[error("component {0} has no curve; node packings need each balanced component's curve (curve = \"PATH\" in its [[component]] table)")]
    NoCurve(String),
}

/// One group of nodes packed alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeGroup {
    /// Nodes in the group.
    pub nodes: u32,
    /// Ranks of each balanced component on each node of the group (the problem's order).
    pub ranks: Vec<u32>,
    /// Ranks of each pinned helper on each node of the group (the problem's order).
    pub helpers: Vec<u32>,
    /// Cores left idle on each node of the group.
    pub idle_cores: u32,
}

/// The best packing found for a number of nodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Packing {
    /// Nodes of the job.
    pub nodes: u32,
    /// Threads per rank of each balanced component.
    pub threads: Vec<u32>,
    /// Total ranks of each balanced component.
    pub ranks: Vec<u32>,
    /// The node groups: the first node, then the others (one group when all nodes are alike).
    pub groups: Vec<NodeGroup>,
    /// Predicted coupled speed: the slowest component's.
    pub sypd: f64,
}

impl Packing {
    /// Cores the components and helpers use, in all.
    pub fn used_cores(&self, cores_per_node: u32) -> u32 {
        self.nodes * cores_per_node - self.idle_cores()
    }

    /// Idle cores in all.
    pub fn idle_cores(&self) -> u32 {
        self.groups.iter().map(|g| g.nodes * g.idle_cores).sum()
    }

    /// What the job is billed per simulated year, in core-hours: whole nodes,
    /// `24 * nodes * cores_per_node / SYPD`.
    pub fn nhsy(&self, cores_per_node: u32) -> f64 {
        metrics::chsy(f64::from(self.nodes * cores_per_node), self.sypd)
    }
}

/// A packing as EC-Earth4's experiment configuration takes it with
/// `job.launch.method: slurm-wrapper-taskset`: the node groups with each component's ranks per
/// node (lower-case keys, as EC-Earth4 names its components), the threads of each hybrid
/// component, and OASIS's load-balance analysis switched on, so the runs it makes write the
/// timing `autolb` reads. Serialise it with any serde format (`predict --emit ecearth4` writes
/// YAML).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Fragment {
    /// The `job` section.
    pub job: Ecearth4Job,
    /// The `model_config` section: `oasis.load_balancing: 1`.
    pub model_config: Ecearth4ModelConfig,
}

/// `job`: the launch method, the threads of each hybrid component and the node groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Job {
    /// `launch.method`.
    pub launch: Ecearth4Launch,
    /// `COMPONENT: {omp_num_threads: T}` for each component with more than one thread per rank.
    #[serde(flatten)]
    pub threads: std::collections::BTreeMap<String, Ecearth4Threads>,
    /// One map per node group: `nodes`, then each component's and helper's ranks per node.
    pub groups: Vec<OrderedMap<u32>>,
}

/// `job.launch`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Launch {
    /// Always `slurm-wrapper-taskset`, the launcher that reads `job.groups`.
    pub method: &'static str,
}

/// A hybrid component's `omp_num_threads`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Threads {
    /// OpenMP threads per MPI rank.
    pub omp_num_threads: u32,
}

/// `model_config`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4ModelConfig {
    /// `oasis`.
    pub oasis: Ecearth4Oasis,
}

/// `model_config.oasis`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ecearth4Oasis {
    /// 1: OASIS writes `load_balancing_info.txt`, the timing a balancing run is read from.
    pub load_balancing: u32,
}

impl PackingProblem {
    /// `packing` as an EC-Earth4 experiment-configuration fragment (see [`Ecearth4Fragment`]);
    /// keys are the component and helper names in lower case, and a helper or component with no
    /// rank on a group's nodes is left out of that group.
    pub fn ecearth4_fragment(&self, packing: &Packing) -> Ecearth4Fragment {
        let key = |name: &str| name.to_ascii_lowercase();
        let groups = packing
            .groups
            .iter()
            .map(|g| {
                let mut entries = vec![("nodes".to_string(), g.nodes)];
                for (c, r) in self.components.iter().zip(&g.ranks) {
                    if *r > 0 {
                        entries.push((key(&c.name), *r));
                    }
                }
                for (h, r) in self.helpers.iter().zip(&g.helpers) {
                    if *r > 0 {
                        entries.push((key(&h.name), *r));
                    }
                }
                OrderedMap(entries)
            })
            .collect();
        let threads = self
            .components
            .iter()
            .zip(&packing.threads)
            .filter(|(_, t)| **t > 1)
            .map(|(c, t)| {
                (
                    key(&c.name),
                    Ecearth4Threads {
                        omp_num_threads: *t,
                    },
                )
            })
            .collect();
        Ecearth4Fragment {
            job: Ecearth4Job {
                launch: Ecearth4Launch {
                    method: "slurm-wrapper-taskset",
                },
                threads,
                groups,
            },
            model_config: Ecearth4ModelConfig {
                oasis: Ecearth4Oasis { load_balancing: 1 },
            },
        }
    }
}

/// A packing scored against the others of a node range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredPacking {
    /// The packing.
    pub packing: Packing,
    /// Billed core-hours per simulated year, whole nodes (NHSY, as `cost = "node-hours"` counts it).
    pub nhsy: f64,
    /// Fittingness among the best packings of the node range, at the ranking's TTS_w.
    pub fittingness: f64,
}

impl PackingProblem {
    /// The problem for the prediction's components and pinned helpers: each component's speed
    /// at every thread count its curves measure, at every rank count up to `max_nodes` full
    /// nodes, read off the curve of that thread count with `interp` inside its measured range,
    /// the component's limits and allowed list (which count ranks).
    pub fn from_inputs(
        inputs: &[ComponentInput],
        helpers: Vec<PinnedHelper>,
        cores_per_node: u32,
        interp: Method,
        max_nodes: u32,
    ) -> Result<PackingProblem, PackingError> {
        let max_ranks = max_nodes.saturating_mul(cores_per_node);
        let components = inputs
            .iter()
            .map(|input| {
                let options: Vec<ThreadSpeeds> = input
                    .series()
                    .map(|curve| {
                        let f = Interpolant::new(interp, &curve.xs(), &curve.ys());
                        let lo = curve.first_nproc().max(input.min_nproc.unwrap_or(0));
                        let hi = curve.last_nproc().min(input.max_nproc.unwrap_or(u32::MAX));
                        let sypd = (0..=max_ranks)
                            .map(|r| {
                                let allowed = input.allowed.as_ref().is_none_or(|a| a.contains(&r));
                                (r > 0 && (lo..=hi).contains(&r) && allowed)
                                    .then(|| f.eval(f64::from(r)))
                            })
                            .collect();
                        ThreadSpeeds {
                            threads: curve.threads(),
                            sypd,
                        }
                    })
                    .collect();
                if options.is_empty() {
                    return Err(PackingError::NoCurve(input.name.clone()));
                }
                Ok(PackedComponent {
                    name: input.name.clone(),
                    options,
                })
            })
            .collect::<Result<Vec<_>, PackingError>>()?;
        Ok(PackingProblem {
            cores_per_node,
            components,
            helpers,
        })
    }

    fn helper_cores(&self, pinned: Pinned) -> u32 {
        self.helpers
            .iter()
            .filter(|h| h.pinned == pinned)
            .map(|h| h.ranks)
            .sum()
    }

    /// Cores of a regular node and of the first node left for the balanced components.
    fn capacities(&self) -> Result<(u32, u32), PackingError> {
        if self.components.is_empty() {
            return Err(PackingError::NoComponents);
        }
        if let Some(c) = self.components.iter().find(|c| c.options.is_empty()) {
            return Err(PackingError::NoThreads(c.name.clone()));
        }
        let every = self.helper_cores(Pinned::PerNode);
        let first = every + self.helper_cores(Pinned::FirstNode);
        let cores = self.cores_per_node;
        if first >= cores {
            return Err(PackingError::HelpersFillNode {
                helpers: first,
                which: if every >= cores {
                    "every node"
                } else {
                    "the first node"
                },
                cores,
            });
        }
        Ok((cores - every, cores - first))
    }

    fn helper_ranks(&self, first_node: bool) -> Vec<u32> {
        self.helpers
            .iter()
            .map(|h| match h.pinned {
                Pinned::PerNode => h.ranks,
                Pinned::FirstNode if first_node => h.ranks,
                Pinned::FirstNode => 0,
            })
            .collect()
    }

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
        let (reg_cap, first_cap) = self.capacities().expect("checked before the search");
        let threads: Vec<u32> = options.iter().map(|o| o.threads).collect();
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

/// The best packing of every node count in `nodes`, ranked by fittingness at `tts_w` (speed
/// against billed core-hours, both normalised over these packings), best first, at most `top`.
pub fn rank_packings(
    problem: &PackingProblem,
    nodes: std::ops::RangeInclusive<u32>,
    tts_w: f64,
    top: usize,
) -> Result<Vec<ScoredPacking>, PackingError> {
    let cpn = problem.cores_per_node;
    let mut found = Vec::new();
    for n in nodes {
        if let Some(p) = best_packing(problem, n)? {
            found.push(p);
        }
    }
    let sypd = Bounds::of(found.iter().map(|p| p.sypd));
    let cost = Bounds::of(found.iter().map(|p| p.nhsy(cpn)));
    let mut scored: Vec<ScoredPacking> = found
        .into_iter()
        .map(|packing| {
            let nhsy = packing.nhsy(cpn);
            let fittingness = match (&sypd, &cost) {
                (Some(s), Some(c)) => metrics::fittingness_in(tts_w, packing.sypd, nhsy, s, c),
                _ => 0.0,
            };
            ScoredPacking {
                packing,
                nhsy,
                fittingness,
            }
        })
        .collect();
    scored.sort_by(|a, b| {
        b.fittingness
            .total_cmp(&a.fittingness)
            .then(a.packing.nodes.cmp(&b.packing.nodes))
    });
    scored.truncate(top);
    Ok(scored)
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
    use proptest::prelude::*;

    fn helper(name: &str, pinned: Pinned) -> PinnedHelper {
        PinnedHelper {
            name: name.into(),
            ranks: 1,
            pinned,
        }
    }

    /// Speeds that rise with ranks to a ceiling: `a * r / (1 + r / knee)`.
    fn saturating(threads: u32, a: f64, knee: f64, max: u32) -> ThreadSpeeds {
        ThreadSpeeds {
            threads,
            sypd: (0..=max)
                .map(|r| (r > 0).then(|| a * f64::from(r) / (1.0 + f64::from(r) / knee)))
                .collect(),
        }
    }

    /// 112-core nodes: an atmosphere (named `atmosphere`) at 4 threads per rank and NEMO, XIOS
    /// on every node and the runoff mapper on the first.
    fn ecearth4_like(atmosphere: &str) -> PackingProblem {
        PackingProblem {
            cores_per_node: 112,
            components: vec![
                PackedComponent {
                    name: atmosphere.into(),
                    options: vec![saturating(4, 0.05, 400.0, 2000)],
                },
                PackedComponent {
                    name: "nemo".into(),
                    options: vec![saturating(1, 0.12, 800.0, 2000)],
                },
            ],
            helpers: vec![
                helper("xios", Pinned::PerNode),
                helper("rnfm", Pinned::FirstNode),
            ],
        }
    }

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
    fn the_ecearth4_fragment_reproduces_the_packing() {
        let problem = ecearth4_like("OIFS");
        let p = best_packing(&problem, 6).unwrap().unwrap();
        let yaml = serde_norway::to_string(&problem.ecearth4_fragment(&p)).unwrap();
        let back: serde_norway::Value = serde_norway::from_str(&yaml).unwrap();
        assert_eq!(back["job"]["launch"]["method"], "slurm-wrapper-taskset");
        assert_eq!(back["job"]["oifs"]["omp_num_threads"], 4);
        assert_eq!(back["model_config"]["oasis"]["load_balancing"], 1);
        let groups = back["job"]["groups"].as_sequence().unwrap();
        assert_eq!(groups.len(), p.groups.len());
        let count = |g: &serde_norway::Value, k: &str| g[k].as_u64().unwrap_or(0) as u32;
        let nodes: u32 = groups.iter().map(|g| count(g, "nodes")).sum();
        assert_eq!(nodes, 6);
        // The ranks in all, threads x ranks per node within every node, the helpers placed.
        for (c, key) in ["oifs", "nemo"].iter().enumerate() {
            let total: u32 = groups
                .iter()
                .map(|g| count(g, "nodes") * count(g, key))
                .sum();
            assert_eq!(total, p.ranks[c], "{key}\n{yaml}");
        }
        for g in groups {
            let cores =
                4 * count(g, "oifs") + count(g, "nemo") + count(g, "xios") + count(g, "rnfm");
            assert!(cores <= 112, "{yaml}");
        }
        assert_eq!(count(&groups[0], "rnfm"), 1);
        assert!(groups[1..]
            .iter()
            .all(|g| count(g, "rnfm") == 0 && count(g, "xios") == 1));
        // `nodes` comes first in every group, as EC-Earth4's own files write it.
        assert!(yaml.contains("- nodes: 1\n"), "{yaml}");
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

    #[test]
    fn the_front_trades_nodes_for_speed() {
        let problem = PackingProblem {
            cores_per_node: 16,
            components: vec![
                PackedComponent {
                    name: "a".into(),
                    options: vec![saturating(2, 0.3, 40.0, 400), saturating(1, 0.2, 60.0, 400)],
                },
                PackedComponent {
                    name: "b".into(),
                    options: vec![saturating(1, 0.5, 50.0, 400)],
                },
            ],
            helpers: vec![helper("xios", Pinned::PerNode)],
        };
        let speed = rank_packings(&problem, 1..=12, 1.0, 12).unwrap();
        let cost = rank_packings(&problem, 1..=12, 0.0, 12).unwrap();
        // All speed: the most nodes first (speeds rise with ranks); all cost: the fewest.
        assert_eq!(speed[0].packing.nodes, 12);
        assert_eq!(cost[0].packing.nodes, 1);
        assert!(speed.iter().all(|s| (0.0..=1.0).contains(&s.fittingness)));
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
