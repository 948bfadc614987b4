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
//!
//! The module holds the problem and its answer (here), the exact search
//! ([`search`]: [`best_packing`]), the ranking of node counts with a model and its band
//! ([`rank`]: [`rank_node_packings`], what every view calls) and the EC-Earth4 form of a
//! packing ([`ecearth4`]).

pub mod ecearth4;
pub mod rank;
pub mod search;

use serde::{Deserialize, Serialize};

use crate::interp::{Interpolant, Method};
use crate::metrics;
use crate::model::Model;
use crate::predict::ComponentInput;

pub use ecearth4::Ecearth4Fragment;
pub use rank::{
    model_components, rank_node_packings, rank_packings, RankedPackings, ScoredPacking,
};
pub use search::{best_packing, naive_best};

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
    /// The budget holds no whole node.
    #[error("the budget max_nproc = {max_nproc} is less than one node of {cores} cores; with placement = \"groups\" the budget counts the cores of whole nodes")]
    BudgetBelowOneNode {
        /// The budget, in cores.
        max_nproc: u32,
        /// Cores per node.
        cores: u32,
    },
    /// No node count of the budget lets every component run.
    #[error("no packing of 1 to {0} nodes lets every component run inside its curve and allowed list; raise max_nproc or check the components' ranges")]
    NothingRuns(u32),
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
    /// Predicted coupled speed. From the search, the slowest component's at the problem's
    /// speeds; in a ranking ([`ScoredPacking`]), the model's coupled SYPD, which with a
    /// calibrated model also holds the slowdown of nearly balanced components.
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
        PackingProblem::with_model(
            inputs,
            helpers,
            cores_per_node,
            interp,
            max_nodes,
            &Model::Standalone,
        )
    }

    /// [`PackingProblem::from_inputs`] with each speed the one `model` predicts for the
    /// component at its cores (ranks x threads) from the curve's speed there
    /// ([`Model::adjust`]): the curve's own with the standalone model, the coupled-mode speed
    /// with a calibrated one. The model's speeds are its balance-free ones, so the coupled speed
    /// of a packing stays the slowest component's and the search stays exact for them; the
    /// balance slowdown and the band come with the ranking ([`rank_node_packings`]).
    pub fn with_model(
        inputs: &[ComponentInput],
        helpers: Vec<PinnedHelper>,
        cores_per_node: u32,
        interp: Method,
        max_nodes: u32,
        model: &Model,
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
                        let threads = curve.threads();
                        let sypd = (0..=max_ranks)
                            .map(|r| {
                                let allowed = input.allowed.as_ref().is_none_or(|a| a.contains(&r));
                                (r > 0 && (lo..=hi).contains(&r) && allowed).then(|| {
                                    let cores = r.saturating_mul(threads);
                                    model.adjust(&input.name, cores, f.eval(f64::from(r)))
                                })
                            })
                            .collect();
                        ThreadSpeeds { threads, sypd }
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
        self.node_capacities()
    }

    /// Cores of a regular node and of the first node the helpers leave, or the error when they
    /// leave none.
    pub(crate) fn node_capacities(&self) -> Result<(u32, u32), PackingError> {
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
}

/// Packing problems the tests of every part share.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    pub(crate) fn helper(name: &str, pinned: Pinned) -> PinnedHelper {
        PinnedHelper {
            name: name.into(),
            ranks: 1,
            pinned,
        }
    }

    /// Speeds that rise with ranks to a ceiling: `a * r / (1 + r / knee)`.
    pub(crate) fn saturating(threads: u32, a: f64, knee: f64, max: u32) -> ThreadSpeeds {
        ThreadSpeeds {
            threads,
            sypd: (0..=max)
                .map(|r| (r > 0).then(|| a * f64::from(r) / (1.0 + f64::from(r) / knee)))
                .collect(),
        }
    }

    /// 112-core nodes: an atmosphere (named `atmosphere`) at 4 threads per rank and NEMO, XIOS
    /// on every node and the runoff mapper on the first.
    pub(crate) fn ecearth4_like(atmosphere: &str) -> PackingProblem {
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
}
