//! Node groups as EC-Earth4 writes them: a packing as `job.groups` YAML ([`groups_fragment`]),
//! and any one configuration laid out on whole nodes ([`lay_out`]).
//!
//! `autolb predict` and the terminal app both answer "which configuration" for one campaign
//! file. With node groups that answer is a node packing, ranked by one computation
//! ([`crate::predict::packing::rank_node_packings`]) and written by one writer, so they cannot
//! recommend or write different packings for one file.
//!
//! The app also writes configurations that are no packing's best: the one under its matrix
//! cursor or a campaign's measured row. [`lay_out`] puts such a configuration (ranks and
//! threads per component) on nodes in the form EC-Earth4's `job.groups` takes and the packing
//! search uses: the first node, which also holds the first-node helpers, then nodes packed
//! alike, each with the per-node helpers. It keeps the fewest nodes that hold it, and among
//! those the split closest to even, so a regular node carries about its share of each
//! component.

use super::emit_ecearth4;
use super::packing::{
    PackedComponent, Packing, PackingProblem, PinnedHelper, RankedPackings, ScoredPacking,
};
use crate::model::ModelKind;

/// A ranked packing's SYPD as `predict` and the app write it: `10.76 SYPD`, with the calibrated
/// model's band (`10.12 SYPD (band 9.71-10.55)`).
pub fn sypd_text(ranked: &RankedPackings, s: &ScoredPacking) -> String {
    match ranked.model {
        ModelKind::Standalone => format!("{:.2} SYPD", s.packing.sypd),
        ModelKind::Calibrated => format!(
            "{:.2} SYPD (band {:.2}-{:.2})",
            s.packing.sypd, s.sypd_low, s.sypd_high
        ),
    }
}

/// The problem a fragment is written from when no packing was searched (a component known
/// only from measured runs has no curve to search with): the components' names, the helpers
/// and the node size, with no speeds. Only for [`PackingProblem::ecearth4_fragment`], which
/// reads names.
pub fn naming_problem(
    names: &[String],
    helpers: Vec<PinnedHelper>,
    cores_per_node: u32,
) -> PackingProblem {
    PackingProblem {
        cores_per_node,
        components: names
            .iter()
            .map(|name| PackedComponent {
                name: name.clone(),
                options: Vec::new(),
            })
            .collect(),
        helpers,
    }
}

/// A node packing as EC-Earth4's `job.groups` fragment (`slurm-wrapper-taskset`: the node
/// groups with the pinned helpers, each hybrid component's `omp_num_threads`, OASIS's
/// load-balance analysis on), after comments: `first_line` (what it is, its nodes and speed),
/// `notes` (what ranked it), then how to use it. `predict --emit ecearth4` with `placement =
/// "groups"` and the app's `y` on such a file write this text. Component and helper names that
/// would be one key are refused.
pub fn groups_fragment(
    problem: &PackingProblem,
    packing: &Packing,
    first_line: &str,
    notes: &[String],
) -> Result<String, String> {
    let names: Vec<&str> = problem
        .components
        .iter()
        .map(|c| c.name.as_str())
        .chain(problem.helpers.iter().map(|h| h.name.as_str()))
        .collect();
    emit_ecearth4::check_names(names.iter().copied())?;
    let keys: Vec<String> = names.iter().map(|n| emit_ecearth4::key_of(n)).collect();
    let yaml = emit_ecearth4::to_yaml(&problem.ecearth4_fragment(packing), &keys)?;
    let notes: String = notes.iter().map(|n| format!("# {n}\n")).collect();
    Ok(format!(
        "# {first_line}\n{notes}\
         # paste under your experiment configuration; job.groups lists ranks per node, the first group\n\
         # holds the first-node helpers; load_balancing: 1 makes OASIS write load_balancing_info.txt\n{yaml}"
    ))
}

/// Beyond the fewest nodes the cores need, how many more node counts [`lay_out`] tries before
/// it gives up: a split that fits comes within a node or two unless ranks are as wide as
/// nodes.
const EXTRA_NODES_TRIED: u32 = 64;

/// `ranks[c]` MPI ranks of `threads[c]` cores each, per component of `problem`, laid out on its
/// nodes with its helpers as a first node and nodes packed alike (see the module doc), at the
/// speed `sypd` given; an error in one line when no such layout of a few nodes holds them (a
/// rank wider than a node, or helpers that fill one). Only the problem's node size and helpers
/// are used, so a [`naming_problem`] will do.
pub fn lay_out(
    problem: &PackingProblem,
    ranks: &[u32],
    threads: &[u32],
    sypd: f64,
) -> Result<Packing, String> {
    let cores_per_node = problem.cores_per_node;
    let (regular_cap, first_cap) = problem.node_capacities().map_err(|e| e.to_string())?;
    let threads: Vec<u32> = (0..ranks.len())
        .map(|c| threads.get(c).copied().unwrap_or(1).max(1))
        .collect();
    if let Some(c) = (0..ranks.len()).find(|&c| ranks[c] > 0 && threads[c] > regular_cap) {
        return Err(format!(
            "a rank of {} takes {} threads, more than the {regular_cap} cores a node has beside its helpers",
            problem.components.get(c).map_or("a component", |p| p.name.as_str()),
            threads[c]
        ));
    }
    let cores: u32 = ranks.iter().zip(&threads).map(|(r, t)| r * t).sum();
    let first_only = regular_cap - first_cap;
    let fewest = (cores + first_only).div_ceil(regular_cap).max(1);
    for nodes in fewest..=fewest + EXTRA_NODES_TRIED {
        let Some(regular) = regular_split(ranks, &threads, nodes, regular_cap, first_cap) else {
            continue;
        };
        let first: Vec<u32> = ranks
            .iter()
            .zip(&regular)
            .map(|(r, g)| r - (nodes - 1) * g)
            .collect();
        return Ok(problem.groups_of(nodes, threads, &regular, &first, sypd));
    }
    Err(format!(
        "no layout of {fewest} to {} nodes of {cores_per_node} cores holds these ranks as a first node and nodes packed alike; write job.groups by hand",
        fewest + EXTRA_NODES_TRIED
    ))
}

/// Ranks per regular node of each component for a job of `nodes` nodes, the first node taking
/// the rest, or `None` when no split fits both nodes' cores. Among the splits that fit, the one
/// closest to `ranks / nodes` per node (the sum of the distances, in ranks).
fn regular_split(
    ranks: &[u32],
    threads: &[u32],
    nodes: u32,
    regular_cap: u32,
    first_cap: u32,
) -> Option<Vec<u32>> {
    let cores: u32 = ranks.iter().zip(threads).map(|(r, t)| r * t).sum();
    if nodes == 1 {
        return (cores <= first_cap).then(|| vec![0; ranks.len()]);
    }
    let others = nodes - 1;
    // The regular node uses `s` cores; the first node then holds `cores - others * s`.
    let least = cores.saturating_sub(first_cap).div_ceil(others);
    if least > regular_cap {
        return None;
    }
    let cap = regular_cap as usize;
    // cost[s]: the least distance from even of a split of the components so far using `s`
    // cores of a regular node; choice[c][s]: the ranks component c takes on it then.
    let mut cost = vec![f64::INFINITY; cap + 1];
    cost[0] = 0.0;
    let mut choice: Vec<Vec<u32>> = Vec::with_capacity(ranks.len());
    for (&r, &t) in ranks.iter().zip(threads) {
        let even = f64::from(r) / f64::from(nodes);
        let most = (r / others).min(regular_cap / t);
        let mut next = vec![f64::INFINITY; cap + 1];
        let mut picked = vec![0u32; cap + 1];
        for (s, &c) in cost.iter().enumerate() {
            if !c.is_finite() {
                continue;
            }
            for g in 0..=most {
                let to = s + (g * t) as usize;
                if to > cap {
                    break;
                }
                let d = c + (f64::from(g) - even).abs();
                if d < next[to] {
                    next[to] = d;
                    picked[to] = g;
                }
            }
        }
        cost = next;
        choice.push(picked);
    }
    let s = (least as usize..=cap)
        .filter(|&s| cost[s].is_finite())
        .min_by(|&a, &b| cost[a].total_cmp(&cost[b]).then(b.cmp(&a)))?;
    let mut split = vec![0; ranks.len()];
    let mut at = s;
    for c in (0..ranks.len()).rev() {
        let g = choice[c][at];
        split[c] = g;
        at -= (g * threads[c]) as usize;
    }
    Some(split)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::predict::packing::Pinned;

    /// Components `a`, `b`, ... on nodes of `cpn` cores with `helpers`.
    fn nodes(cpn: u32, helpers: &[PinnedHelper], components: usize) -> PackingProblem {
        let names: Vec<String> = (0..components).map(|c| format!("c{c}")).collect();
        naming_problem(&names, helpers.to_vec(), cpn)
    }

    fn helper(name: &str, pinned: Pinned) -> PinnedHelper {
        PinnedHelper {
            name: name.into(),
            ranks: 1,
            pinned,
        }
    }

    /// Every rank placed, no node over its cores, the helpers where they are pinned.
    fn check(p: &Packing, cpn: u32, helpers: &[PinnedHelper], ranks: &[u32], threads: &[u32]) {
        assert_eq!(p.ranks, ranks);
        assert_eq!(p.threads, threads);
        assert_eq!(p.groups.iter().map(|g| g.nodes).sum::<u32>(), p.nodes);
        for (c, &r) in ranks.iter().enumerate() {
            let placed: u32 = p.groups.iter().map(|g| g.nodes * g.ranks[c]).sum();
            assert_eq!(placed, r, "component {c} in {p:?}");
        }
        for (i, g) in p.groups.iter().enumerate() {
            let used: u32 = g.ranks.iter().zip(threads).map(|(r, t)| r * t).sum::<u32>()
                + g.helpers.iter().sum::<u32>();
            assert_eq!(used + g.idle_cores, cpn, "group {i} of {p:?}");
            for (h, &n) in helpers.iter().zip(&g.helpers) {
                let want = match h.pinned {
                    Pinned::PerNode => 1,
                    Pinned::FirstNode => u32::from(i == 0),
                };
                assert_eq!(n, want, "{} in group {i}", h.name);
            }
        }
    }

    #[test]
    fn a_hybrid_configuration_takes_the_fewest_nodes_with_its_helpers() {
        let helpers = [
            helper("xios", Pinned::PerNode),
            helper("rnfm", Pinned::FirstNode),
        ];
        // 368 ranks of 2 threads and 259 NEMO ranks: 995 cores, 9 nodes of 112 with the
        // helpers (1,007 of 1,008 cores).
        let p = lay_out(&nodes(112, &helpers, 2), &[368, 259], &[2, 1], 10.0).unwrap();
        assert_eq!(p.nodes, 9);
        check(&p, 112, &helpers, &[368, 259], &[2, 1]);
        assert_eq!(p.groups.len(), 2);
        // The regular nodes carry about their share.
        let regular = &p.groups[1].ranks;
        assert!((40..=42).contains(&regular[0]), "{p:?}");
        assert!((27..=31).contains(&regular[1]), "{p:?}");
    }

    #[test]
    fn one_node_or_alike_nodes_make_one_group() {
        let p = lay_out(&nodes(128, &[], 2), &[64, 32], &[1, 2], 1.0).unwrap();
        assert_eq!((p.nodes, p.groups.len()), (1, 1));
        check(&p, 128, &[], &[64, 32], &[1, 2]);
        let p = lay_out(&nodes(100, &[], 2), &[300, 100], &[1, 1], 1.0).unwrap();
        assert_eq!((p.nodes, p.groups.len()), (4, 1));
        assert_eq!(p.groups[0].ranks, [75, 25]);
    }

    #[test]
    fn wide_ranks_may_need_a_node_more_than_the_cores_say() {
        // Three ranks of 64 threads: 192 cores would fit two nodes of 112, but a rank cannot
        // straddle two nodes.
        let helpers = [helper("xios", Pinned::PerNode)];
        let p = lay_out(&nodes(112, &helpers, 1), &[3], &[64], 1.0).unwrap();
        assert_eq!(p.nodes, 3);
        check(&p, 112, &helpers, &[3], &[64]);
        let e = lay_out(&nodes(112, &helpers, 1), &[1], &[112], 1.0).unwrap_err();
        assert!(e.contains("112 threads"), "{e}");
        let two = [
            helper("xios", Pinned::PerNode),
            helper("rnfm", Pinned::FirstNode),
        ];
        let e = lay_out(&nodes(2, &two, 1), &[1], &[1], 1.0).unwrap_err();
        assert!(e.contains("pinned helpers take 2 of the 2 cores"), "{e}");
    }
}
