//! `campaign best --emit toml`: a campaign file that runs a campaign's answer again, alone: the
//! answer as its one initial test (`start`), every other setting as the campaign froze it.
//! Running the best again is how a user checks it on another day, another partition or after a
//! system update before a production run; a file they can read and edit serves that better
//! than a copy of the state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Answer;
use crate::campaign::State;
use crate::config::{AllowedEntry, CampaignFile, ComponentEntry};

/// The campaign file's text: a comment saying what it is, then the file. Curves are the
/// campaign's own copies, by absolute path (the file may be written anywhere).
pub fn rerun_file(state: &State, dir: &Path, answer: &Answer) -> Result<String, String> {
    let s = &state.settings;
    let cores = answer.cores();
    let mut start = BTreeMap::new();
    let mut components = Vec::new();
    for (k, c) in state.components.iter().enumerate() {
        // The campaign holds cores; a file counts a hybrid component's ranks.
        let t = c.threads.max(1);
        start.insert(c.name.clone(), cores.get(k).copied().unwrap_or(0) / t);
        // Every whole rank in the limits is what `init` makes of no list: leave it out.
        let every_rank = (t > 1)
            .then(|| (c.low..=c.high).step_by(t as usize).collect::<Vec<u32>>())
            .filter(|all| c.allowed.as_ref() == Some(all));
        components.push(ComponentEntry {
            name: c.name.clone(),
            curve: Some(match t {
                1 => dir.join(&c.curve),
                t => ranks_curve(dir, &c.name, &c.curve, t)?,
            }),
            allowed: c
                .allowed
                .as_ref()
                .filter(|_| every_rank.is_none())
                .map(|v| AllowedEntry::List(v.iter().map(|p| p / t).collect())),
            min_nproc: Some(c.low / t),
            max_nproc: Some(c.high / t),
            timing_name: Some(c.timing_name.clone()),
            resource: None,
            pinned: None,
            nproc: None,
            threads: (t > 1).then(|| vec![t]),
        });
    }
    let cost_model = s.cost_model.as_ref();
    let file = CampaignFile {
        max_nproc: Some(s.max_nproc),
        step: s.step,
        tts_w: Some(s.tts_w),
        top: s.top,
        interp: s.interp,
        extra_pes: Some(s.extra_pes),
        initial_step: Some(s.initial_step),
        minimum_step: Some(s.minimum_step),
        repetitions: Some(s.repetitions),
        max_iterations: s.max_iterations,
        period_s: s.period_s,
        strategy: Some(s.strategy),
        layout: s.layout.clone(),
        components,
        start: Some(vec![start]),
        original: None,
        executor: state
            .executor
            .clone()
            .map(|e| sim_paths_from(e, &state.base_dir)),
        machine: cost_model.and_then(|m| m.machine),
        cost: cost_model.map(|m| m.cost),
        queues: cost_model.map(|m| m.queues.clone()).unwrap_or_default(),
        use_queue: cost_model.and_then(|m| m.queue.clone()),
        resources: Vec::new(),
        helpers: Vec::new(),
        scaling: None,
    };
    let text =
        toml::to_string(&file).map_err(|e| format!("cannot write the campaign file: {e}"))?;
    Ok(format!(
        "# autolb campaign best --emit toml: the best configuration measured in {}, run again\n\
         # ({}, {:.2} SYPD, {:.0} CHSY: {}); every other setting as that campaign froze it.\n\
         # autolb campaign init --config THIS_FILE NEW_DIR && autolb campaign run NEW_DIR\n{text}",
        dir.display(),
        answer.config,
        answer.sypd,
        answer.chsy,
        answer.where_measured
    ))
}

/// The executor with the stand-in model's curve files by absolute path: the campaign read them
/// relative to its campaign file's directory (`base`), and the new file may be written anywhere.
fn sim_paths_from(
    mut executor: crate::executor::ExecutorConfig,
    base: &Path,
) -> crate::executor::ExecutorConfig {
    if let Some(sim) = executor.sim.as_mut() {
        for paths in [sim.curves.as_mut(), sim.standalone_curves.as_mut()]
            .into_iter()
            .flatten()
        {
            paths.values_mut().for_each(|p| *p = base.join(&*p));
        }
    }
    executor
}

/// A hybrid component's curve as a campaign file takes it: MPI ranks with a `threads` column.
/// The campaign's own copy counts cores at its one thread count, so this writes
/// `curves/NAME.ranks.csv` beside it (atomically; the same content every time) and returns its
/// path.
fn ranks_curve(dir: &Path, name: &str, copy: &Path, threads: u32) -> Result<PathBuf, String> {
    let curve =
        crate::curve::Curve::load(name.to_string(), &dir.join(copy)).map_err(|e| e.to_string())?;
    let mut text = format!(
        "# {name} at {threads} OpenMP threads per rank: the campaign's curve {} in MPI ranks\nnproc,threads,SYPD\n",
        copy.display()
    );
    for p in curve.points().iter().filter(|p| p.nproc % threads == 0) {
        text.push_str(&format!("{},{threads},{}\n", p.nproc / threads, p.sypd));
    }
    let path = dir.join("curves").join(format!("{name}.ranks.csv"));
    crate::fsutil::write_atomically(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}
