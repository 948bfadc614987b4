//! The calibrated model for node packings (`placement = "groups"`), shared by `autolb predict`
//! and the app: fitted on the `--measured` runs (or read from `--model`) with each component
//! in cores at the thread count its runs ran, as
//! [`autolb::predict::packing::rank_node_packings`] takes it.

use std::path::{Path, PathBuf};

use color_eyre::eyre::Result;

use autolb::campaign::state::STATE_FILE;
use autolb::campaign::State;
use autolb::config::CampaignFile;
use autolb::model::Model;
use autolb::predict::packing;
use autolb::predict::ComponentInput;

use super::error::user;
use super::prediction_flags::{ModelFlags, PredictionSetup};

/// The model of `--measured` (or `--model`) for node packings, fitted as
/// [`packing::rank_node_packings`] takes it: each component in cores at the thread count its
/// runs ran ([`packing::model_components`]); shared by `predict` and the app. Returns the
/// notes for the user (runs left out, a thread count the model extrapolates to).
pub fn packing_model(setup: &PredictionSetup, flags: &ModelFlags) -> Result<(Model, Vec<String>)> {
    if !flags.steps.is_empty() {
        return Err(user(
            "--steps is not used with placement = \"groups\" (node packings rank by the slowest component's speed); drop --steps, or use placement = \"packed\"",
        ));
    }
    let threads = measured_threads(&setup.inputs, flags, setup.file.as_ref())?;
    let inputs = packing::model_components(&setup.inputs, &threads).map_err(user)?;
    let request = flags.request(&inputs, setup.file.as_ref(), None)?;
    let resolved = request.load(&inputs, setup.settings.interp)?;
    let mut notes = request.notes;
    notes.extend(resolved.notes);
    if !resolved.model.is_calibrated() {
        notes.push(
            "no usable measured run; the packings are ranked by the standalone curves".into(),
        );
    }
    for (input, t) in setup.inputs.iter().zip(&threads) {
        if input.series().count() > 1 {
            notes.push(format!(
                "{}: the model learned its coupled-mode speed at {t} thread(s) per rank; packings at other thread counts take the same correction at their core count",
                input.name
            ));
        }
    }
    Ok((resolved.model, notes))
}

/// The thread count per rank each component's measured runs ran: a campaign directory records
/// it; otherwise a component's only thread count (its curve's, or for a component without a
/// curve the campaign file's `threads = [T]`, else 1). A hybrid component's runs must come from
/// a campaign directory, whose PE counts are cores as the model takes them (a run directory's
/// files count MPI ranks).
pub fn measured_threads(
    inputs: &[ComponentInput],
    flags: &ModelFlags,
    file: Option<&(CampaignFile, PathBuf)>,
) -> Result<Vec<u32>> {
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
            let mut only: Vec<u32> = input.series().map(|c| c.threads()).collect();
            if only.is_empty() {
                only = file_threads(file, &input.name).unwrap_or_else(|| vec![1]);
            }
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
                    "{}: runs of a hybrid component are read from a campaign directory (which records its threads and counts cores); --measured {} is not one",
                    input.name,
                    path.display()
                )));
            }
            Ok(t)
        })
        .collect()
}

/// The campaign file's `threads` list of component `name`, when it gives one.
pub fn file_threads(file: Option<&(CampaignFile, PathBuf)>, name: &str) -> Option<Vec<u32>> {
    file.and_then(|(f, _)| f.components.iter().find(|c| c.name == name))
        .and_then(|c| c.threads.clone())
}
