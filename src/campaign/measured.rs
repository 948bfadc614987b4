//! Measured runs for the performance model ([`crate::model`]) from any `--measured PATH`: a
//! campaign directory (every run that succeeded, read again from its timing output so the
//! model sees each component's speed, not only the coupled one), one run directory, or a
//! directory of run directories.

use std::collections::BTreeMap;
use std::path::Path;

use super::state::{run_dir_relative, RunState, State, STATE_FILE};
use crate::model::measured::{load_run, load_runs_dir, Naming};
use crate::model::MeasuredRun;

/// The measured runs of a campaign directory with one note per run left out.
pub fn campaign_runs(dir: &Path) -> Result<(Vec<MeasuredRun>, Vec<String>), String> {
    let state = State::load(dir).map_err(|e| e.to_string())?;
    Ok(campaign_runs_of(&state, dir))
}

/// [`campaign_runs`] of a state already loaded.
pub fn campaign_runs_of(state: &State, dir: &Path) -> (Vec<MeasuredRun>, Vec<String>) {
    let names: Vec<Naming> = state
        .components
        .iter()
        .map(|c| Naming::new(&c.name, &c.timing_name))
        .collect();
    let (mut runs, mut notes) = (Vec::new(), Vec::new());
    for it in &state.iterations {
        for test in &it.tests {
            for run in &test.runs {
                if run.state != RunState::Done || run.metrics.is_none() {
                    continue;
                }
                let path = dir.join(run_dir_relative(it.index, test.test, run.repetition));
                let nproc: BTreeMap<String, u32> = names
                    .iter()
                    .zip(&test.nproc)
                    .map(|(c, &p)| (c.name.clone(), p))
                    .collect();
                // The timing output counts MPI processes: a hybrid component's ranks.
                let processes: BTreeMap<String, u32> = state
                    .components
                    .iter()
                    .zip(&test.nproc)
                    .map(|(c, &p)| (c.name.clone(), c.ranks(p)))
                    .collect();
                match load_run(&path, &names, &processes, state.settings.period_s) {
                    Ok(mut m) => {
                        // The campaign ran these PEs (cores), whatever a file claims.
                        for c in &mut m.components {
                            if let Some(&p) = nproc.get(&c.name) {
                                c.nproc = p;
                            }
                        }
                        runs.push(m);
                    }
                    Err(why) => notes.push(format!("{}: skipped: {why}", path.display())),
                }
            }
        }
    }
    (runs, notes)
}

/// Measured runs from `path`: a campaign directory, a single run (when `nproc` is given or its
/// files carry PE counts and it holds timing output itself) or a directory of run directories.
pub fn load_measured(
    path: &Path,
    components: &[Naming],
    nproc: &BTreeMap<String, u32>,
    period_s: Option<f64>,
) -> Result<(Vec<MeasuredRun>, Vec<String>), String> {
    if !path.exists() {
        return Err(format!(
            "--measured {}: no such file or directory",
            path.display()
        ));
    }
    if path.join(STATE_FILE).is_file() {
        return campaign_runs(path);
    }
    let single = !nproc.is_empty() || !path.is_dir() || holds_timing_output(path);
    if single {
        return match load_run(path, components, nproc, period_s) {
            Ok(run) => Ok((vec![run], Vec::new())),
            Err(why) => Ok((
                Vec::new(),
                vec![format!("{}: skipped: {why}", path.display())],
            )),
        };
    }
    load_runs_dir(path, components, period_s)
}

/// Does the directory hold timing output itself (not in sub-directories, but for the
/// `log/NNN/` legs of an EC-Earth4 run directory)?
fn holds_timing_output(dir: &Path) -> bool {
    crate::timing::ecearth4::is_run_dir(dir)
        || [
            "table.csv",
            "summary",
            "lucia.log",
            "load_balancing_info.txt",
        ]
        .iter()
        .any(|f| dir.join(f).is_file())
        || std::fs::read_dir(dir).is_ok_and(|rd| {
            rd.filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().starts_with("lucia."))
        })
}

/// The model a campaign's prediction should use now: fitted on every measured run of the
/// campaign against its frozen curves (the standalone model while none is usable). Call it
/// whenever a run is recorded; it reads each run's timing output again, so it costs a few
/// milliseconds per run.
pub fn campaign_model(
    state: &State,
    dir: &Path,
) -> Result<(crate::model::Model, Vec<String>), String> {
    let (runs, mut notes) = campaign_runs_of(state, dir);
    let curves = state
        .components
        .iter()
        .map(|c| {
            crate::curve::Curve::load(c.name.clone(), &dir.join(&c.curve))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let interp = state.settings.interp.unwrap_or_default();
    let (model, fit_notes) = crate::model::Model::fit(&curves, interp, &runs);
    notes.extend(fit_notes);
    Ok((model, notes))
}
