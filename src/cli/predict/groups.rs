//! `predict` on a machine with `placement = "groups"`: the best packing of each node count,
//! ranked by fittingness, as a table (one row per node count, then its node groups) or one JSON
//! object.

use color_eyre::eyre::Result;
use serde::Serialize;

use autolb::predict::node_groups::{self, NodePackings};
use autolb::predict::packing::{self, NodeGroup, PackingProblem, PinnedHelper, ScoredPacking};

use crate::shared::error::user;
use crate::shared::output::errln;
use crate::shared::prediction_flags::PredictionSetup;

/// `predict --json` with node groups: the names of the columns, then the ranked packings.
#[derive(Serialize)]
struct PackingsJson<'a> {
    cores_per_node: u32,
    /// The balanced components, in the order of every `ranks` and `threads` list.
    components: Vec<&'a str>,
    /// The pinned helpers, in the order of every group's `helpers` list.
    helpers: Vec<&'a str>,
    tts_w: f64,
    /// Node counts searched: 1 to this (the budget's whole nodes).
    max_nodes: u32,
    top: &'a [ScoredPacking],
}

/// What `predict` prints with node groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// One row per packing, then its node groups.
    Table,
    /// One JSON object.
    Json,
    /// `--emit ecearth4`: the best packing as EC-Earth4's `job.groups` YAML.
    Ecearth4,
}

/// Ranks the best packing of every node count the budget allows, as `predict` prints them.
pub fn run(setup: &PredictionSetup, output: Output) -> Result<String> {
    let machine = setup
        .cost_model
        .machine
        .expect("groups placement comes from a [machine]");
    let cpn = machine.cores_per_node;
    let helpers: Vec<PinnedHelper> = setup
        .file
        .as_ref()
        .map(|(f, _)| f.pinned_helpers())
        .unwrap_or_default();
    let settings = &setup.settings;
    let NodePackings {
        problem,
        max_nodes,
        top: ranked,
        ..
    } = node_groups::rank_node_packings(&setup.inputs, helpers, cpn, settings).map_err(user)?;
    if settings.extra_pes > 0 {
        errln!(
            "autolb: note: extra_pes = {} is not counted with placement = \"groups\"; give each helper its own [[component]] with pinned and nproc",
            settings.extra_pes
        );
    }
    Ok(match output {
        Output::Json => json(&problem, &ranked, settings.tts_w, max_nodes)?,
        Output::Ecearth4 => ecearth4(&problem, &ranked[0], settings.tts_w)?,
        Output::Table => table(&problem, &ranked),
    })
}

/// The ranked packings as one JSON object.
fn json(
    problem: &PackingProblem,
    ranked: &[ScoredPacking],
    tts_w: f64,
    max_nodes: u32,
) -> Result<String> {
    let out = PackingsJson {
        cores_per_node: problem.cores_per_node,
        components: problem.components.iter().map(|c| c.name.as_str()).collect(),
        helpers: problem.helpers.iter().map(|h| h.name.as_str()).collect(),
        tts_w,
        max_nodes,
        top: ranked,
    };
    Ok(serde_json::to_string_pretty(&out).map_err(user)? + "\n")
}

/// The best packing as EC-Earth4's experiment-configuration fragment (YAML), with a comment
/// saying what it is.
fn ecearth4(problem: &PackingProblem, best: &ScoredPacking, tts_w: f64) -> Result<String> {
    node_groups::groups_fragment(
        problem,
        &best.packing,
        &format!("autolb predict: the best node packing at TTS_w {tts_w:.2}"),
    )
    .map_err(user)
}

/// One row per packing (its node count, each component's total ranks (`RxT` with T threads per
/// rank), speed, billed cost, idle cores, FN), then one line per node group.
fn table(problem: &PackingProblem, ranked: &[ScoredPacking]) -> String {
    let cpn = problem.cores_per_node;
    let mut out = format!("{:>4} {:>5}", "rank", "nodes");
    for c in &problem.components {
        out.push_str(&format!(" {:>10}", c.name));
    }
    out.push_str(&format!(
        " {:>8} {:>9} {:>5} {:>7}\n",
        "SYPD", "NHSY", "idle", "FN"
    ));
    for (i, s) in ranked.iter().enumerate() {
        let p = &s.packing;
        out.push_str(&format!("{:>4} {:>5}", i + 1, p.nodes));
        for (r, t) in p.ranks.iter().zip(&p.threads) {
            let cell = if *t == 1 {
                r.to_string()
            } else {
                format!("{r}x{t}")
            };
            out.push_str(&format!(" {cell:>10}"));
        }
        out.push_str(&format!(
            " {:>8.2} {:>9.0} {:>5} {:>7.4}\n",
            p.sypd,
            s.nhsy,
            p.idle_cores(),
            s.fittingness
        ));
        let mut first = 1;
        for g in &p.groups {
            let nodes = if g.nodes == 1 {
                format!("node {first}")
            } else {
                format!("nodes {first}-{}", first + g.nodes - 1)
            };
            first += g.nodes;
            out.push_str(&format!("{:>11}: {}\n", nodes, group_text(problem, p, g)));
        }
    }
    out.push_str(&format!(
        "NHSY: core-hours billed per simulated year, whole nodes of {cpn} cores; idle: cores no rank uses\n"
    ));
    out
}

/// A node group's mix: `oifs 25x4, nemo 10, xios 1 (1 idle)`.
fn group_text(problem: &PackingProblem, p: &packing::Packing, g: &NodeGroup) -> String {
    let mut parts: Vec<String> = problem
        .components
        .iter()
        .zip(g.ranks.iter().zip(&p.threads))
        .map(|(c, (r, t))| {
            if *t == 1 {
                format!("{} {r}", c.name)
            } else {
                format!("{} {r}x{t}", c.name)
            }
        })
        .collect();
    parts.extend(
        problem
            .helpers
            .iter()
            .zip(&g.helpers)
            .filter(|(_, r)| **r > 0)
            .map(|(h, r)| format!("{} {r}", h.name)),
    );
    format!("{} ({} idle)", parts.join(", "), g.idle_cores)
}
