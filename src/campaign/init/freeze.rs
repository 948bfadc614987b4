//! The campaign file's components and settings, checked and frozen into what the state keeps:
//! limits, allowed lists and thread counts per component, the settings every strategy reads, the
//! queue a Slurm executor submits to, and the `[original]` configuration in PEs.

use super::*;

/// The balanced components with their limits and allowed lists, checked against each other.
pub(super) fn frozen_components(
    file: &CampaignFile,
    inputs: &[predict::ComponentInput],
    origin: &str,
) -> Result<Vec<FrozenComponent>, CampaignError> {
    let mut components = Vec::new();
    for (entry, input) in file.components.iter().zip(inputs) {
        // Without a curve the range defaults to the allowed list's.
        let listed = input
            .allowed
            .as_ref()
            .and_then(|v| Some((*v.iter().min()?, *v.iter().max()?)));
        let (first, last) = input
            .curve
            .as_ref()
            .map_or(listed.unwrap_or((1, u32::MAX)), |c| {
                (c.first_nproc(), c.last_nproc())
            });
        // A hybrid component's limits and allowed list count ranks, as its curve does; the
        // campaign holds cores (ranks x threads), so that budgets and costs count what runs.
        let threads = component_threads(entry, input);
        if let Some(node) = file.machine.map(|m| m.cores_per_node) {
            if threads > node {
                return Err(CampaignError::Invalid {
                    file: origin.to_string(),
                    message: format!(
                        "component {}: {threads} threads per rank is more than a node's {node} cores; a rank's threads share its node: lower threads",
                        entry.name
                    ),
                });
            }
        }
        let low = entry.min_nproc.unwrap_or(first).saturating_mul(threads);
        let high = entry.max_nproc.unwrap_or(last).saturating_mul(threads);
        if low > high {
            return Err(CampaignError::Invalid {
                file: origin.to_string(),
                message: format!(
                    "component {}: min_nproc {} is above max_nproc {}; widen the limits",
                    entry.name,
                    low / threads,
                    high / threads
                ),
            });
        }
        let allowed = match input.allowed.clone() {
            Some(mut v) => {
                v.iter_mut().for_each(|p| *p = p.saturating_mul(threads));
                v.sort_unstable();
                v.dedup();
                Some(v)
            }
            // Whole ranks only: the multiples of the thread count.
            None if threads > 1 => Some((low..=high).step_by(threads as usize).collect()),
            None => None,
        };
        if matches!(
            entry.allowed,
            Some(AllowedEntry::List(_)) | Some(AllowedEntry::File(_))
        ) && allowed
            .as_ref()
            .is_some_and(|v| !v.iter().any(|p| (low..=high).contains(p)))
        {
            return Err(CampaignError::Invalid {
                file: origin.to_string(),
                message: format!(
                    "component {}: no allowed PE count between {low} and {high}; check `allowed`, `min_nproc` and `max_nproc`",
                    entry.name
                ),
            });
        }
        if let Err(message) = crate::executor::env::check_distinct(
            file.components
                .iter()
                .take(components.len() + 1)
                .map(|c| c.name.as_str()),
        ) {
            return Err(CampaignError::Invalid {
                file: origin.to_string(),
                message,
            });
        }
        components.push(FrozenComponent {
            name: entry.name.clone(),
            timing_name: entry.timing_name().to_string(),
            curve: PathBuf::from("curves").join(format!("{}.csv", entry.name)),
            low,
            high,
            allowed,
            threads,
        });
    }
    Ok(components)
}

/// The one thread count per rank a component runs at in the campaign: its curve's, or, for a
/// component whose curve the campaign learns, the one `threads` keeps (the file allows one
/// only then: [`CampaignFile::parse`]).
pub(super) fn component_threads(
    entry: &crate::config::ComponentEntry,
    input: &predict::ComponentInput,
) -> u32 {
    match &input.curve {
        Some(curve) => curve.threads(),
        None => match entry.threads.as_deref() {
            Some(&[t]) => t.max(1),
            _ => 1,
        },
    }
}

/// The `start` configurations in component order, each checked against the components'
/// limits, allowed lists and the budget; duplicates are run once.
pub(super) fn selected_start(
    file: &CampaignFile,
    start: &[std::collections::BTreeMap<String, u32>],
    components: &[FrozenComponent],
    budgets: &crate::campaign::strategy::algorithm1::Budgets,
    origin: &str,
) -> Result<Vec<(Vec<u32>, String)>, CampaignError> {
    let invalid = |message: String| CampaignError::Invalid {
        file: origin.to_string(),
        message,
    };
    if start.is_empty() {
        return Err(invalid(
            "`start` is empty; list at least one configuration or leave it out to start from the prediction".into(),
        ));
    }
    let mut initial: Vec<(Vec<u32>, String)> = Vec::new();
    for (k, config) in start.iter().enumerate() {
        let what = format!("start entry {}", k + 1);
        // A hybrid component's count is ranks, as its curve's; the campaign holds cores.
        let nproc: Vec<u32> = file
            .components
            .iter()
            .zip(components)
            .map(|(c, frozen)| {
                config
                    .get(&c.name)
                    .copied()
                    .unwrap_or(0)
                    .saturating_mul(frozen.threads)
            })
            .collect();
        check_fits(&what, components, &nproc, budgets).map_err(invalid)?;
        if !initial.iter().any(|(n, _)| *n == nproc) {
            initial.push((nproc, format!("selected #{}", k + 1)));
        }
    }
    Ok(initial)
}

/// A configuration given in the campaign file (`start`, `[original]`) must be one the campaign
/// can run: each component within its limits and allowed list (the nearest allowed counts are
/// named), the total within the budget.
pub(super) fn check_fits(
    what: &str,
    components: &[FrozenComponent],
    nproc: &[u32],
    budgets: &crate::campaign::strategy::algorithm1::Budgets,
) -> Result<(), String> {
    for (c, &p) in components.iter().zip(nproc) {
        if p < c.low || p > c.high {
            return Err(format!(
                "{what}: {} = {} is outside its limits {}..{}; choose a count within them",
                c.name,
                c.pes_text(p),
                c.pes_text(c.low),
                c.pes_text(c.high)
            ));
        }
        if let Some(allowed) = &c.allowed {
            if let Err(at) = allowed.binary_search(&p) {
                let nearest: Vec<String> = [at.checked_sub(1), Some(at)]
                    .into_iter()
                    .flatten()
                    .filter_map(|i| allowed.get(i))
                    .map(u32::to_string)
                    .collect();
                return Err(format!(
                    "{what}: {} = {p} is not in its allowed list; the nearest allowed counts are {}",
                    c.name,
                    nearest.join(" and ")
                ));
            }
        }
    }
    match budgets.over(nproc) {
        Some(why) => Err(format!("{what} {why}; remove it or raise the budget")),
        None => Ok(()),
    }
}

pub(super) fn frozen_settings(
    file: &CampaignFile,
    origin: &str,
) -> Result<FrozenSettings, CampaignError> {
    let invalid = |message: String| CampaignError::Invalid {
        file: origin.to_string(),
        message,
    };
    let max_nproc = file
        .max_nproc
        .filter(|&m| m > 0)
        .ok_or_else(|| invalid("`max_nproc` is missing or 0; set the budget of the balanced components, e.g. max_nproc = 672".into()))?;
    let step = file.step.unwrap_or(1).max(1);
    let initial_step = file
        .initial_step
        .unwrap_or(step.saturating_mul(defaults::INITIAL_STEP_IN_STEPS));
    if initial_step == 0 {
        return Err(invalid("`initial_step` is 0; PEs moved in the first iteration must be positive, e.g. initial_step = 48".into()));
    }
    let minimum_step = file
        .minimum_step
        .unwrap_or((initial_step / defaults::MINIMUM_STEP_DIVISOR).max(1));
    if minimum_step == 0 || minimum_step > initial_step {
        return Err(invalid(format!(
            "`minimum_step` {minimum_step} must be between 1 and initial_step ({initial_step})"
        )));
    }
    let repetitions = file.repetitions.unwrap_or(defaults::REPETITIONS);
    if repetitions == 0 {
        return Err(invalid(
            "`repetitions` is 0; run each test at least once".into(),
        ));
    }
    if repetitions > crate::limits::MAX_REPETITIONS {
        return Err(invalid(format!(
            "`repetitions` {repetitions} is more than the limit of {}; a few repetitions measure \
             the noise",
            crate::limits::MAX_REPETITIONS
        )));
    }
    if let Some(p) = file.period_s {
        if !(p.is_finite() && p > 0.0 && p <= crate::limits::MAX_PERIOD_S) {
            return Err(invalid(format!(
                "`period_s` {} is not a positive number of seconds up to {} (a day); e.g. \
                 period_s = 2700 for EC-Earth3 SR",
                crate::limits::display_number(p),
                crate::limits::MAX_PERIOD_S
            )));
        }
    }
    if let Some(executor) = &file.executor {
        super::state::check_executor_limits(executor).map_err(invalid)?;
    }
    if let Some(sim) = file.executor.as_ref().and_then(|e| e.sim.as_ref()) {
        sim.validate().map_err(|e| invalid(e.to_string()))?;
    }
    let tts_w = file.tts_w.unwrap_or(0.5);
    let max_iterations = file.max_iterations.unwrap_or(match file.strategy {
        Some(crate::config::Strategy::Guided) => defaults::GUIDED_MAX_ITERATIONS,
        _ => defaults::MAX_ITERATIONS,
    });
    if !(1..=crate::limits::MAX_ITERATIONS).contains(&max_iterations) {
        return Err(invalid(format!(
            "`max_iterations` {max_iterations} is outside 1 to {}; campaigns end after about 5, e.g. max_iterations = 12",
            crate::limits::MAX_ITERATIONS
        )));
    }
    Ok(FrozenSettings {
        max_nproc,
        extra_pes: file.extra_pes.unwrap_or(0),
        tts_w,
        initial_step,
        minimum_step,
        repetitions,
        period_s: period_for_executor(file, origin)?,
        retries: file
            .executor
            .as_ref()
            .and_then(|e| e.retries)
            .unwrap_or(defaults::RETRIES),
        step: Some(step),
        interp: Some(file.interp.unwrap_or_default()),
        top: Some(file.top.unwrap_or(crate::predict::Settings::default().top)),
        cost_model: Some(file.cost_model()).filter(|m| !m.is_plain()),
        strategy: file.strategy.unwrap_or_default(),
        scaling: None,
        max_iterations: Some(max_iterations),
        layout: file.layout.clone(),
    })
}

/// With a chosen `[[queue]]` that names a Slurm partition or QOS, the Slurm executor submits
/// there unless `[executor.slurm]` says otherwise (an explicit setting wins).
pub(super) fn with_queue_submission(
    mut executor: ExecutorConfig,
    model: &CostModel,
) -> ExecutorConfig {
    let Some(queue) = model.chosen_queue() else {
        return executor;
    };
    if executor.kind != ExecutorKind::Slurm || (queue.partition.is_none() && queue.qos.is_none()) {
        return executor;
    }
    let slurm = executor.slurm.get_or_insert_with(Default::default);
    if slurm.partition.is_none() {
        slurm.partition = queue.partition.clone();
    }
    if slurm.qos.is_none() {
        slurm.qos = queue.qos.clone();
    }
    executor
}

/// The coupling period the timing reader uses. With the stand-in model it must be the model's:
/// taken from `[executor.sim] period_s` when only that is given, its default when neither is.
pub(super) fn period_for_executor(
    file: &CampaignFile,
    origin: &str,
) -> Result<Option<f64>, CampaignError> {
    let Some(cfg) = file
        .executor
        .as_ref()
        .filter(|e| e.kind == ExecutorKind::Sim)
    else {
        return Ok(file.period_s);
    };
    let sim = cfg.sim.as_ref().and_then(|s| s.period_s);
    match (file.period_s, sim) {
        (Some(a), Some(b)) if a != b => Err(CampaignError::Invalid {
            file: origin.to_string(),
            message: format!(
                "`period_s` {a} and [executor.sim] `period_s` {b} differ; the stand-in model must couple at the campaign's period: drop one"
            ),
        }),
        (Some(a), _) => Ok(Some(a)),
        (None, Some(b)) => Ok(Some(b)),
        (None, None) => Ok(Some(crate::sim::defaults::PERIOD_S)),
    }
}

pub(super) fn original_nproc(
    file: &CampaignFile,
    original: &std::collections::BTreeMap<String, u32>,
    origin: &str,
) -> Result<Vec<u32>, CampaignError> {
    file.components
        .iter()
        .map(|c| {
            original
                .get(&c.name)
                .copied()
                .filter(|&p| p > 0)
                .ok_or_else(|| CampaignError::Invalid {
                    file: origin.to_string(),
                    message: format!(
                        "[original] gives no PE count for {}; list every component, e.g. {} = 240",
                        c.name, c.name
                    ),
                })
        })
        .collect()
}

#[cfg(test)]
mod queue_submission_tests {
    use super::*;
    use crate::executor::slurm::SlurmSettings;
    use crate::machine::Queue;

    fn slurm(settings: Option<SlurmSettings>) -> ExecutorConfig {
        ExecutorConfig {
            kind: ExecutorKind::Slurm,
            command: None,
            timeout_s: None,
            jobs: None,
            retries: None,
            sim: None,
            slurm: settings,
        }
    }

    fn model(chosen: Option<&str>) -> CostModel {
        CostModel {
            queues: vec![Queue {
                name: "debug".into(),
                max_nproc: Some(768),
                max_nodes: None,
                max_walltime_h: None,
                chunk_years: None,
                partition: Some("debug".into()),
                qos: Some("debug_qos".into()),
            }],
            queue: chosen.map(String::from),
            ..CostModel::default()
        }
    }

    #[test]
    fn the_chosen_queue_names_partition_and_qos_unless_slurm_settings_do() {
        let e = with_queue_submission(slurm(None), &model(Some("debug")));
        let s = e.slurm.unwrap();
        assert_eq!(s.partition.as_deref(), Some("debug"));
        assert_eq!(s.qos.as_deref(), Some("debug_qos"));

        let own = SlurmSettings {
            partition: Some("main".into()),
            ..SlurmSettings::default()
        };
        let e = with_queue_submission(slurm(Some(own)), &model(Some("debug")));
        let s = e.slurm.unwrap();
        assert_eq!(s.partition.as_deref(), Some("main"));
        assert_eq!(s.qos.as_deref(), Some("debug_qos"));

        // No chosen queue: nothing is added.
        let e = with_queue_submission(slurm(None), &model(None));
        assert!(e.slurm.is_none());
    }
}
