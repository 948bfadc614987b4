//! `predict` on a machine with `placement = "groups"`: the best packing of each node count,
//! ranked by fittingness, as a table (one row per node count, then its node groups) or one JSON
//! object.

use color_eyre::eyre::Result;
use serde::Serialize;

use autolb::predict::emit_ecearth4::{check_names, key_of, to_yaml};
use std::path::Path;

use autolb::campaign::state::STATE_FILE;
use autolb::campaign::State;
use autolb::model::{Model, ModelKind};
use autolb::predict::packing::{
    self, NodeGroup, PackingProblem, PinnedHelper, RankedPackings, ScoredPacking,
};
use autolb::predict::ComponentInput;

use crate::shared::error::user;
use crate::shared::output::{errln, write_out};
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
pub fn run(setup: &PredictionSetup, flags: &ModelFlags, output: Output) -> Result<()> {
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
        calibrated(setup, flags)?
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
    let text = match output {
        Output::Json => json(&ranked, settings.tts_w)?,
        Output::Ecearth4 => ecearth4(&ranked, settings.tts_w)?,
        Output::Table => table(&ranked),
    };
    write_out(&text)
}

/// The calibrated model of `--measured` (or `--model`), fitted as [`packing::rank_node_packings`]
/// takes it: each component in cores at the thread count its runs ran
/// ([`packing::model_components`]). The notes on runs left out go to stderr.
fn calibrated(setup: &PredictionSetup, flags: &ModelFlags) -> Result<Model> {
    if !flags.steps.is_empty() {
        return Err(user(
            "--steps is not used with placement = \"groups\" (node packings rank by the slowest component's speed); drop --steps, or use placement = \"packed\"",
        ));
    }
    let threads = measured_threads(&setup.inputs, flags)?;
    let inputs = packing::model_components(&setup.inputs, &threads).map_err(user)?;
    let request = flags.request(&inputs, setup.file.as_ref(), None)?;
    for n in &request.notes {
        errln!("autolb: note: {n}");
    }
    let resolved = request.load(&inputs, setup.settings.interp)?;
    for n in &resolved.notes {
        errln!("autolb: note: {n}");
    }
    if !resolved.model.is_calibrated() {
        errln!("autolb: note: no usable measured run; the packings are ranked by the standalone curves");
    }
    for (input, t) in setup.inputs.iter().zip(&threads) {
        if input.series().count() > 1 {
            errln!(
                "autolb: note: {}: the model learned its coupled-mode speed at {t} thread(s) per rank; packings at other thread counts take the same correction at their core count",
                input.name
            );
        }
    }
    Ok(resolved.model)
}

/// The thread count per rank each component's measured runs ran: a campaign directory records
/// it; otherwise a component's only thread count. A hybrid component's runs must come from a
/// campaign directory, whose PE counts are cores as the model takes them (a run directory's
/// files count MPI ranks).
fn measured_threads(inputs: &[ComponentInput], flags: &ModelFlags) -> Result<Vec<u32>> {
    let mut campaigns = Vec::new();
    let mut other = None;
    for path in &flags.measured {
        if path.join(STATE_FILE).is_file() {
            let state = State::load(path).map_err(user)?;
            campaigns.push((path, state));
        } else {
            other = Some(path);
        }
    }
    inputs
        .iter()
        .map(|input| {
            let mut found: Option<(u32, &Path)> = None;
            for (path, state) in &campaigns {
                let Some(c) = state.components.iter().find(|c| c.name == input.name) else {
                    continue;
                };
                let t = c.threads.max(1);
                match found {
                    Some((first, at)) if first != t => {
                        return Err(user(format!(
                            "{}: --measured {} ran it at {first} thread(s) per rank and --measured {} at {t}; give runs of one thread count",
                            input.name,
                            at.display(),
                            path.display()
                        )))
                    }
                    _ => found = Some((t, path.as_path())),
                }
            }
            let only: Vec<u32> = input.series().map(|c| c.threads()).collect();
            let t = match (found, only.as_slice()) {
                (Some((t, _)), _) => t,
                (None, [t]) => *t,
                (None, _) => {
                    return Err(user(format!(
                        "{}: its curve measures {} threads per rank and the measured runs do not say which they ran; pass --threads {}=T with the runs' thread count, or give a campaign directory",
                        input.name,
                        only.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
                        input.name
                    )))
                }
            };
            if let (true, Some(path)) = (t > 1, other) {
                return Err(user(format!(
                    "{}: with placement = \"groups\", runs of a hybrid component are read from a campaign directory (which records its threads and counts cores); --measured {} is not one",
                    input.name,
                    path.display()
                )));
            }
            Ok(t)
        })
        .collect()
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
/// saying what it is and what ranked it; component names that would be one key are refused,
/// keys a YAML reader would misread are quoted.
fn ecearth4(ranked: &RankedPackings, tts_w: f64) -> Result<String> {
    let problem = &ranked.problem;
    let names: Vec<&str> = problem
        .components
        .iter()
        .map(|c| c.name.as_str())
        .chain(problem.helpers.iter().map(|h| h.name.as_str()))
        .collect();
    check_names(names.iter().copied()).map_err(user)?;
    let keys: Vec<String> = names.iter().map(|n| key_of(n)).collect();
    let best = &ranked.top[0];
    let p = &best.packing;
    let yaml = to_yaml(&problem.ecearth4_fragment(p), &keys).map_err(user)?;
    let basis: String = ranked
        .basis()
        .iter()
        .map(|line| format!("# {line}\n"))
        .collect();
    Ok(format!(
        "# autolb predict: the best node packing at TTS_w {tts_w:.2}: {} nodes of {} cores, {}, NHSY {:.0}\n\
         {basis}\
         # paste under your experiment configuration; job.groups lists ranks per node, the first group\n\
         # holds the first-node helpers; load_balancing: 1 makes OASIS write load_balancing_info.txt\n{yaml}",
        p.nodes,
        problem.cores_per_node,
        sypd_text(ranked, best),
        best.nhsy,
    ))
}

/// A packing's SYPD as the text says it: `10.76 SYPD`, with the calibrated model's band
/// (`10.12 SYPD (band 9.71-10.55)`).
fn sypd_text(ranked: &RankedPackings, s: &ScoredPacking) -> String {
    match ranked.model {
        ModelKind::Standalone => format!("{:.2} SYPD", s.packing.sypd),
        ModelKind::Calibrated => format!(
            "{:.2} SYPD (band {:.2}-{:.2})",
            s.packing.sypd, s.sypd_low, s.sypd_high
        ),
    }
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
