//! The calibrated model's prediction with hybrid MPI/OpenMP components (`predict --measured`
//! or `--model` without node packings): each component is predicted at the one thread count per
//! rank its measured runs ran, in cores, as [`autolb::predict::at_threads`] sets it up.
//!
//! The model learns a component's coupled-mode speed at the thread count its runs used; at
//! another thread count nothing was measured (the thread efficiency is part of what the runs
//! measured), so a prediction restricted to other thread counts is refused rather than
//! extrapolated, and other thread counts a curve offers are left out with a note.

use color_eyre::eyre::Result;

use autolb::predict::{at_threads, ComponentInput};

use super::error::user;
use super::packing_model::{file_threads, measured_threads};
use super::prediction_flags::{ModelFlags, PredictionSetup};

/// The components as the calibrated model predicts them, when some runs at more than 1 thread
/// per rank.
pub struct AtThreads {
    /// Each component's thread count per rank, in input order.
    pub threads: Vec<u32>,
    /// The components in cores ([`at_threads::in_cores`]).
    pub inputs: Vec<ComponentInput>,
    /// What the user should know (thread counts left out).
    pub notes: Vec<String>,
}

/// `None` when every component runs 1 thread per rank (the prediction is as before); else the
/// components at their runs' thread counts. Errors in one line when a component's runs ran a
/// thread count the prediction does not allow.
pub fn at_measured_threads(
    setup: &PredictionSetup,
    flags: &ModelFlags,
) -> Result<Option<AtThreads>> {
    let file = setup.file.as_ref();
    let hybrid = setup.inputs.iter().any(|c| {
        c.is_threaded()
            || (c.curve.is_none()
                && file_threads(file, &c.name).is_some_and(|l| l.iter().any(|&t| t > 1)))
    });
    if !hybrid {
        return Ok(None);
    }
    if !flags.steps.is_empty() {
        return Err(user(
            "--steps is not used with components at more than 1 thread per rank (its series count MPI ranks, the model counts cores); drop --steps",
        ));
    }
    let threads = measured_threads(&setup.inputs, flags, file)?;
    let mut notes = Vec::new();
    for (input, &t) in setup.inputs.iter().zip(&threads) {
        let allowed: Vec<u32> = match input.curve {
            Some(_) => input.series().map(|c| c.threads()).collect(),
            None => file_threads(file, &input.name).unwrap_or_else(|| vec![1]),
        };
        let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        if !allowed.contains(&t) {
            return Err(user(format!(
                "{name}: the measured runs ran it at {t} thread(s) per rank and the prediction allows {} only; the calibrated model knows its speed at {t} threads: allow {t} (threads = [{t}] or --threads {name}={t}), or drop --measured/--model to predict other thread counts from its curve",
                list(&allowed),
                name = input.name,
            )));
        }
        if allowed.len() > 1 {
            let others: Vec<u32> = allowed.iter().copied().filter(|&a| a != t).collect();
            notes.push(format!(
                "{}: predicted at {t} thread(s) per rank, the thread count its measured runs ran; its curve's {} thread(s) are left out (the calibrated model measured nothing there; drop --measured to compare them)",
                input.name,
                list(&others)
            ));
        }
    }
    let inputs =
        at_threads::in_cores(&setup.inputs, &threads, setup.settings.step).map_err(user)?;
    Ok(Some(AtThreads {
        threads,
        inputs,
        notes,
    }))
}
