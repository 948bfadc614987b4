//! `campaign init` of a cold start (`strategy = "guided"` and no component with a curve): the
//! first iteration is the `[original]` configuration, known to run, and the coupled scaling
//! design's first series ([`coupled_first_series`]), every test coupled; the state keeps the
//! guided strategy and the `[scaling]` settings of the first phase.

use std::path::Path;

use super::{
    check_first_runs, check_fits, checked_executor, frozen_components, frozen_settings, new_state,
    original_nproc,
};
use crate::campaign::state::{ColdStartPhase, FrozenComponent, Iteration, TestRecord};
use crate::campaign::strategy::scaling::{configuration_words, coupled_first_series, ORIGIN};
use crate::campaign::{absolute_dir, new_test_iteration, CampaignError, State};
use crate::config::CampaignFile;
use crate::predict;

/// The cold start `init` would create (see the module doc).
pub(super) fn planned_cold_start_state(
    file: &CampaignFile,
    base_dir: &Path,
    origin: &str,
) -> Result<(State, Vec<predict::ComponentInput>), CampaignError> {
    let invalid = |message: String| CampaignError::Invalid {
        file: origin.to_string(),
        message,
    };
    let scaling = file.cold_start_scaling().map_err(invalid)?;
    let Some(original) = &file.original else {
        return Err(invalid(
            "a cold start (strategy = \"guided\", no component with a curve) needs [original], a configuration known to run, e.g. [original] with IFS = 288 and NEMO = 192: it is run first beside the coupled first series".into(),
        ));
    };
    if file.start.is_some() {
        return Err(invalid(
            "`start` cannot go with a cold start: its first runs are the coupled first series and [original]; drop start".into(),
        ));
    }
    let inputs = file.component_inputs(base_dir)?;
    let components = frozen_components(file, &inputs, origin)?;
    let mut settings = frozen_settings(file, origin)?;
    settings.scaling = Some(scaling.clone());
    if file.max_iterations.is_none() {
        settings.max_iterations = Some(crate::campaign::defaults::COLD_START_MAX_ITERATIONS);
    }
    let step = settings.step.unwrap_or(1);
    if file.initial_step.is_none() {
        settings.initial_step = cold_start_initial_step(&components, step);
        if file.minimum_step.is_none() {
            settings.minimum_step =
                (settings.initial_step / crate::campaign::defaults::MINIMUM_STEP_DIVISOR).max(1);
        }
        settings.minimum_step = settings.minimum_step.min(settings.initial_step);
    }
    let budgets = settings.budgets();
    // A hybrid component's `[original]` count is ranks, as in any campaign file; the campaign
    // holds cores.
    let nproc: Vec<u32> = original_nproc(file, original, origin)?
        .into_iter()
        .zip(&components)
        .map(|(ranks, c)| ranks.saturating_mul(c.threads))
        .collect();
    check_fits("[original]", &components, &nproc, &budgets).map_err(invalid)?;
    let cores_per_node = file.machine.map(|m| m.cores_per_node);
    let series = coupled_first_series(&components, &scaling, step, cores_per_node, &|n| {
        budgets.fits(n)
    });
    let ranks = series.len();
    let mut tests: Vec<(Vec<u32>, String, String)> = vec![(
        nproc.clone(),
        "original".to_string(),
        format!(
            "scaling: the original configuration, known to run ({})",
            configuration_words(&components, &nproc)
        ),
    )];
    for (k, config) in series.into_iter().enumerate() {
        if config == nproc {
            continue;
        }
        let why = format!(
            "scaling: coupled first series, rank {} of {ranks} ({})",
            k + 1,
            configuration_words(&components, &config)
        );
        tests.push((config, ORIGIN.to_string(), why));
    }
    check_first_runs(
        &scaling,
        tests.len(),
        "the cold start's first runs",
        "configurations",
    )
    .map_err(invalid)?;
    let executor = checked_executor(file, origin)?;
    let base_dir = absolute_dir(base_dir)?;
    let mut state = new_state(settings, components, executor, base_dir);
    let mut first = Iteration {
        index: 0,
        tests: Vec::new(),
        phase: Some(ColdStartPhase::Scaling),
        normalisation: None,
    };
    for (id, (nproc, test_origin, why)) in tests.into_iter().enumerate() {
        let id = id as u32;
        state.tests.push(TestRecord {
            id,
            origin: test_origin,
        });
        let mut test = new_test_iteration(0, id, nproc, 0, 1..=scaling.repetitions);
        test.reason = Some(why);
        first.tests.push(test);
    }
    state.iterations.push(first);
    Ok((state, inputs))
}

/// A cold start's `initial_step` when the file gives none: a sixteenth of the narrowest
/// component's range, on the `step` grid, at least the usual `2 x step`. It follows the ranges,
/// not `step` alone: a cold start's first runs are spread over the whole ranges, and a file with
/// `step = 1` would otherwise move 2 PEs at a time between them. It is no coarser, because the
/// guided strategy's last look around its best (its neighbour check) is `initial_step / 2` away:
/// the answer is only as fine as that. The gaps between the spread runs are bridged instead by
/// the run at the model's best before balancing (see `strategy::cold_start`).
pub(super) fn cold_start_initial_step(components: &[FrozenComponent], step: u32) -> u32 {
    let narrowest = components
        .iter()
        .map(|c| c.high.saturating_sub(c.low))
        .min()
        .unwrap_or(0);
    let step = step.max(1);
    (narrowest / 16 / step * step).max(2 * step)
}
