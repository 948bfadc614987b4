//! `predict` on a machine with `placement = "groups"`: the best packing of each node count,
//! ranked by fittingness, as a table (one row per node count, then its node groups) or one JSON
//! object.

use color_eyre::eyre::Result;
use serde::Serialize;

use autolb::model::{Model, ModelKind};
use autolb::predict::node_groups;
use autolb::predict::packing::{
    self, NodeGroup, PackingProblem, PinnedHelper, RankedPackings, ScoredPacking,
};

use crate::shared::error::user;
use crate::shared::output::errln;
use crate::shared::packing_model::packing_model;
use crate::shared::prediction_flags::{ModelFlags, PredictionSetup};

/// `predict --json` with node groups: the names of the columns, which model ranked, then the
/// ranked packings (each with its SYPD band).
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
    /// `standalone` (the curves alone) or `calibrated` (fitted on measured runs).
    model: ModelKind,
    /// Measured runs the calibrated model learned from (0 for the curves alone).
    runs: usize,
    /// What ranked the packings, as the table says it.
    basis: String,
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

/// Ranks the best packing of every node count the budget allows, with the standalone curves or,
/// given measured runs or a model file, the calibrated model, and prints them.
pub fn run(setup: &PredictionSetup, flags: &ModelFlags, output: Output) -> Result<String> {
    let machine = setup
        .cost_model
        .machine
        .expect("groups placement comes from a [machine]");
    let helpers: Vec<PinnedHelper> = setup
        .file
        .as_ref()
        .map(|(f, _)| f.pinned_helpers())
        .unwrap_or_default();
    let settings = &setup.settings;
    if settings.extra_pes > 0 {
        errln!(
            "autolb: note: extra_pes = {} is not counted with placement = \"groups\"; give each helper its own [[component]] with pinned and nproc",
            settings.extra_pes
        );
    }
    let model = if flags.wants_model() {
        let (model, notes) = packing_model(setup, flags)?;
        for n in &notes {
            errln!("autolb: note: {n}");
        }
        model
    } else {
        Model::Standalone
    };
    let ranked = packing::rank_node_packings(
        &setup.inputs,
        helpers,
        settings,
        machine.cores_per_node,
        &model,
    )
    .map_err(user)?;
    Ok(match output {
        Output::Json => json(&ranked, settings.tts_w)?,
        Output::Ecearth4 => ecearth4(&ranked, settings.tts_w)?,
        Output::Table => table(&ranked),
    })
}

/// The ranked packings as one JSON object.
fn json(ranked: &RankedPackings, tts_w: f64) -> Result<String> {
    let problem = &ranked.problem;
    let out = PackingsJson {
        cores_per_node: problem.cores_per_node,
        components: problem.components.iter().map(|c| c.name.as_str()).collect(),
        helpers: problem.helpers.iter().map(|h| h.name.as_str()).collect(),
        tts_w,
        max_nodes: ranked.max_nodes,
        model: ranked.model,
        runs: ranked.runs,
        basis: ranked.basis().join(" "),
        top: &ranked.top,
    };
    Ok(serde_json::to_string_pretty(&out).map_err(user)? + "\n")
}

/// The best packing as EC-Earth4's experiment-configuration fragment (YAML), with comments
/// saying what it is and what ranked it.
fn ecearth4(ranked: &RankedPackings, tts_w: f64) -> Result<String> {
    let best = &ranked.top[0];
    let p = &best.packing;
    let first = format!(
        "autolb predict: the best node packing at TTS_w {tts_w:.2}: {} nodes of {} cores, {}, NHSY {:.0}",
        p.nodes,
        ranked.problem.cores_per_node,
        node_groups::sypd_text(ranked, best),
        best.nhsy,
    );
    node_groups::groups_fragment(&ranked.problem, p, &first, &ranked.basis()).map_err(user)
}

/// One row per packing (its node count, each component's total ranks (`RxT` with T threads per
/// rank), speed, with the calibrated model its band, billed cost, idle cores, FN), then one
/// line per node group; under the table, what the columns mean and what ranked them.
fn table(ranked: &RankedPackings) -> String {
    let problem = &ranked.problem;
    let cpn = problem.cores_per_node;
    let banded = ranked.model == ModelKind::Calibrated;
    let mut out = format!("{:>4} {:>5}", "rank", "nodes");
    for c in &problem.components {
        out.push_str(&format!(" {:>10}", c.name));
    }
    out.push_str(&format!(" {:>8}", "SYPD"));
    if banded {
        out.push_str(&format!(" {:>13}", "band"));
    }
    out.push_str(&format!(" {:>9} {:>5} {:>7}\n", "NHSY", "idle", "FN"));
    for (i, s) in ranked.top.iter().enumerate() {
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
        out.push_str(&format!(" {:>8.2}", p.sypd));
        if banded {
            let band = format!("{:.2}-{:.2}", s.sypd_low, s.sypd_high);
            out.push_str(&format!(" {band:>13}"));
        }
        out.push_str(&format!(
            " {:>9.0} {:>5} {:>7.4}\n",
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
    for line in ranked.basis() {
        out.push_str(&format!("{line}\n"));
    }
    if !banded {
        out.push_str(
            "--measured DIR (a campaign's directory) ranks them with the calibrated model\n",
        );
    }
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
