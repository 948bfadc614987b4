//! `campaign init`: turns a campaign file into a campaign directory.
//!
//! Everything here runs before a campaign exists: the campaign file's keys are checked and
//! frozen into the state (settings, components with their limits and allowed lists, the
//! executor), the prediction picks the first iteration's tests, and the directory is prepared
//! (refused when it holds something else, cleared with `--force`, or cleared of what an
//! interrupted `init` left). `campaign.json` is written last, so its presence is what makes a
//! directory a campaign.

mod cold_start;
mod distinct;

use std::path::{Path, PathBuf};

use super::state::{
    self, FrozenComponent, FrozenSettings, Iteration, Lock, TestRecord, CANCEL_REQUEST_FILE,
    LOCK_FILE, STATE_FILE, STATE_FORMAT,
};
use super::{absolute_dir, context_of, defaults, new_test_iteration, CampaignError, State};
use crate::config::{AllowedEntry, CampaignFile};
use crate::executor;
use crate::executor::{ExecutorConfig, ExecutorError, ExecutorKind};
use crate::machine::CostModel;
use crate::predict;
use distinct::{distinct_tests, TWIN_CANDIDATES};

/// What to do when the campaign directory is not empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitMode {
    /// Refuse a non-empty directory.
    #[default]
    New,
    /// Replace a previous campaign (removes its state and run directories, nothing else).
    Force,
    /// Keep a campaign already initialised there with the same settings (a retried init job);
    /// refuse one with other settings. A directory holding only what an interrupted init left
    /// (lock file, curves, no state) is initialised again.
    IfAbsent,
}

/// What [`init_file`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initialised {
    /// A new campaign was created.
    Created,
    /// `InitMode::IfAbsent` found the same campaign there already.
    AlreadyThere,
}

/// Creates a campaign in `dir` from a campaign file whose relative paths are relative to
/// `base_dir`: runs the prediction and writes the first iteration's tests (the top N predicted
/// configurations, plus `[original]` when given and not already among them).
///
/// Refuses a non-empty `dir` unless `force`; with `force`, removes what a previous campaign
/// left there (state, curves, run directories) and nothing else.
pub fn init(
    dir: &Path,
    file: &CampaignFile,
    base_dir: &Path,
    force: bool,
) -> Result<(), CampaignError> {
    let mode = if force {
        InitMode::Force
    } else {
        InitMode::New
    };
    init_named(dir, file, base_dir, mode, "the campaign file").map(|_| ())
}

/// [`init`] from a campaign file on disk (errors name the file).
pub fn init_file(dir: &Path, path: &Path, mode: InitMode) -> Result<Initialised, CampaignError> {
    let file = CampaignFile::load(path)?;
    init_named(
        dir,
        &file,
        file_base_dir(path),
        mode,
        &path.display().to_string(),
    )
}

/// The directory a campaign file's relative paths are relative to.
pub(super) fn file_base_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The campaign `init` would create, computed without writing anything: the state with its
/// first iteration, and the component inputs (for the curve copies).
pub(super) fn planned_state(
    file: &CampaignFile,
    base_dir: &Path,
    origin: &str,
) -> Result<(State, Vec<predict::ComponentInput>), CampaignError> {
    if file
        .machine
        .is_some_and(|m| m.placement == crate::machine::Placement::Groups)
    {
        return Err(CampaignError::Invalid {
            file: origin.to_string(),
            message: "placement = \"groups\" is for `autolb predict` (the best node packing of each node count); a campaign moves PEs between components and bills them as placement = \"packed\" does: set that, and count the pinned helpers' cores in extra_pes".into(),
        });
    }
    if file.is_cold_start() {
        return cold_start::planned_cold_start_state(file, base_dir, origin);
    }
    if file.scaling.is_some() {
        return planned_scaling_state(file, base_dir, origin);
    }
    let settings = frozen_settings(file, origin)?;
    let inputs = file.component_inputs(base_dir)?;
    if let Some(bare) = file.components.iter().find(|c| c.curve.is_none()) {
        return Err(CampaignError::Invalid {
            file: origin.to_string(),
            message: format!(
                "component {} has no curve; a campaign starts from the prediction, which needs \
                 every component's scalability curve: add curve = \"PATH\" to its [[component]] \
                 table (a file of nproc,SYPD rows), or give no component a curve and set \
                 strategy = \"guided\" for a cold start",
                bare.name
            ),
        });
    }
    let mut prediction_settings = file.settings();
    prediction_settings.max_nproc = settings.max_nproc;
    // A hybrid component runs at one thread count for the whole campaign: the one its curve
    // measures, or, with curves at several, the one the prediction's best configuration gives it.
    let mut inputs = inputs;
    fix_threads(
        &mut inputs,
        &prediction_settings,
        &file.cost_model(),
        origin,
    )?;
    // More candidates than tests, so that near twins can be passed over (see `distinct_tests`).
    let wanted = prediction_settings.top;
    prediction_settings.top = wanted
        .saturating_mul(TWIN_CANDIDATES)
        .min(crate::limits::MAX_TOP);
    let prediction = predict::predict_billed(&inputs, &prediction_settings, &file.cost_model())?;

    let components = frozen_components(file, &inputs, origin)?;

    let mut initial: Vec<(Vec<u32>, String)> = match &file.start {
        Some(start) => selected_start(file, start, &components, &settings.budgets(), origin)?,
        None => distinct_tests(
            prediction.top.iter().map(|c| c.nproc.as_slice()),
            wanted,
            settings.minimum_step,
        ),
    };
    if let Some(original) = &file.original {
        let nproc: Vec<u32> = original_nproc(file, original, origin)?
            .into_iter()
            .zip(&components)
            .map(|(ranks, c)| ranks.saturating_mul(c.threads))
            .collect();
        check_fits("[original]", &components, &nproc, &settings.budgets()).map_err(|message| {
            CampaignError::Invalid {
                file: origin.to_string(),
                message,
            }
        })?;
        match initial.iter_mut().find(|(n, _)| *n == nproc) {
            Some((_, o)) => o.push_str(", also the original"),
            None => initial.push((nproc, "original".into())),
        }
    }

    let executor = checked_executor(file, origin)?;
    let base_dir = absolute_dir(base_dir)?;
    // Algorithm 1 runs every test `repetitions` times; the guided strategy runs each
    // configuration once and repeats only those whose FN comes close to the best.
    let first_runs = match settings.strategy {
        crate::config::Strategy::Algorithm1 => settings.repetitions,
        crate::config::Strategy::Guided => 1,
    };
    let initial_step = settings.initial_step;
    let mut state = new_state(settings, components, executor, base_dir);
    let mut first = Iteration {
        index: 0,
        tests: Vec::new(),
        phase: None,
        normalisation: None,
    };
    for (id, (nproc, origin)) in initial.into_iter().enumerate() {
        let id = id as u32;
        state.tests.push(TestRecord { id, origin });
        first.tests.push(new_test_iteration(
            0,
            id,
            nproc,
            initial_step,
            1..=first_runs,
        ));
    }
    state.iterations.push(first);
    Ok((state, inputs))
}

/// Leaves each hybrid component one thread count per rank: the one its curve measures, or,
/// with curves at several, the one the prediction's best configuration gives it.
fn fix_threads(
    inputs: &mut [predict::ComponentInput],
    settings: &predict::Settings,
    cost_model: &crate::machine::CostModel,
    origin: &str,
) -> Result<(), CampaignError> {
    if inputs.iter().all(|c| c.thread_curves.is_empty()) {
        return Ok(());
    }
    let prediction = predict::predict_billed(inputs, settings, cost_model)?;
    let Some(best) = prediction.top.first() else {
        return Ok(());
    };
    for (input, &t) in inputs.iter_mut().zip(&best.threads) {
        if !input.thread_curves.is_empty() {
            input
                .restrict_threads(&[t])
                .map_err(|message| CampaignError::Invalid {
                    file: origin.to_string(),
                    message,
                })?;
        }
    }
    Ok(())
}

/// Refuses a `[scaling] max_runs` that cannot hold the first iteration: `tests` (`unit`,
/// e.g. counts) of `what` (e.g. the first series), each run `repetitions` times.
fn check_first_runs(
    scaling: &crate::config::ScalingSettings,
    tests: usize,
    what: &str,
    unit: &str,
) -> Result<(), String> {
    let runs = tests as u64 * u64::from(scaling.repetitions);
    match scaling.max_runs.filter(|&m| u64::from(m) < runs) {
        Some(max) => Err(format!(
            "[scaling] max_runs = {max} cannot hold {what} ({tests} {unit} x {} runs = {runs} runs); raise max_runs, or lower counts or repetitions",
            scaling.repetitions
        )),
        None => Ok(()),
    }
}

/// A campaign's state before its first iteration: no test, no iteration, not cancelled.
fn new_state(
    settings: FrozenSettings,
    components: Vec<FrozenComponent>,
    executor: Option<ExecutorConfig>,
    base_dir: PathBuf,
) -> State {
    State {
        format: STATE_FORMAT,
        settings,
        components,
        executor,
        base_dir,
        tests: Vec::new(),
        iterations: Vec::new(),
        cancelled: false,
        journal: Default::default(),
    }
}

/// The `[executor]` with the chosen queue's submission settings; `command` must have one.
fn checked_executor(
    file: &CampaignFile,
    origin: &str,
) -> Result<Option<ExecutorConfig>, CampaignError> {
    let executor = file
        .executor
        .clone()
        .map(|e| with_queue_submission(e, &file.cost_model()));
    if let Some(cfg) = &executor {
        if cfg.kind == ExecutorKind::Command && cfg.command.as_ref().is_none_or(|c| c.is_empty()) {
            return Err(CampaignError::Invalid {
                file: origin.to_string(),
                message: "[executor] kind = \"command\" needs `command`, a list of program and arguments, e.g. command = [\"./run.sh\", \"{nproc.IFS}\"]".into(),
            });
        }
    }
    Ok(executor)
}

/// [`planned_state`] of a scaling campaign (`[scaling]`): no prediction; the first iteration
/// is the first series of every component ([`first_series`]), each count one test run
/// `repetitions` times. Refused when `max_runs` cannot hold that series.
fn planned_scaling_state(
    file: &CampaignFile,
    base_dir: &Path,
    origin: &str,
) -> Result<(State, Vec<predict::ComponentInput>), CampaignError> {
    use super::strategy::scaling::{
        configuration_words, coupled_first_series, first_series, nproc_vector, ORIGIN,
    };
    let invalid = |message: String| CampaignError::Invalid {
        file: origin.to_string(),
        message,
    };
    // `repetitions` is what runs at each count: the top-level key when `[scaling]` leaves it
    // out, so one `repetitions = 2` means two runs everywhere.
    let scaling = file
        .scaling
        .as_ref()
        .map(|t| {
            let mut t = t.clone();
            t.repetitions = t.repetitions.or(file.repetitions);
            t.resolve()
        })
        .transpose()
        .map_err(invalid)?
        .ok_or_else(|| invalid("no [scaling] table".into()))?;
    let inputs = file.component_inputs(base_dir)?;
    let components = frozen_components(file, &inputs, origin)?;
    let coupled = scaling.design == crate::config::ScalingDesign::Coupled;
    // A standalone run holds one component: the budget of balanced PEs means nothing there
    // unless given. A coupled run holds them all: by default, up to every component's top.
    let widest = components.iter().map(|c| c.high).max().unwrap_or(1);
    let all_tops = components
        .iter()
        .map(|c| c.high)
        .fold(0u32, u32::saturating_add);
    let mut budgeted = file.clone();
    budgeted.max_nproc = Some(
        file.max_nproc
            .unwrap_or(if coupled { all_tops } else { widest }),
    );
    let mut settings = frozen_settings(&budgeted, origin)?;
    settings.scaling = Some(scaling.clone());
    // Its run budget bounds a scaling campaign; `max_iterations` only when given.
    settings.max_iterations = file.max_iterations;
    // The runs per count, where a balancing campaign keeps its runs per test.
    settings.repetitions = scaling.repetitions;
    let step = settings.step.unwrap_or(1);
    let cores_per_node = file.machine.map(|m| m.cores_per_node);
    let tests: Vec<(Option<usize>, Vec<u32>, String)> = if coupled {
        let budgets = settings.budgets();
        let configs = coupled_first_series(&components, &scaling, step, cores_per_node, &|n| {
            budgets.fits(n)
        });
        if configs.is_empty() {
            return Err(invalid(format!(
                "[scaling] design = \"coupled\": no configuration of the first series fits max_nproc = {}; raise max_nproc or lower the components' min_nproc",
                settings.max_nproc
            )));
        }
        let m = configs.len();
        configs
            .into_iter()
            .enumerate()
            .map(|(k, nproc)| {
                let why = format!(
                    "scaling: coupled first series, rank {} of {m} ({})",
                    k + 1,
                    configuration_words(&components, &nproc)
                );
                (None, nproc, why)
            })
            .collect()
    } else {
        first_series(&components, &scaling, step, cores_per_node)
            .into_iter()
            .map(|(c, p)| {
                let why = format!(
                    "scaling: first series of {}, {} counts log-spaced over {}..{}",
                    components[c].name, scaling.counts, components[c].low, components[c].high
                );
                (Some(c), nproc_vector(components.len(), c, p), why)
            })
            .collect()
    };
    let series = tests;
    check_first_runs(&scaling, series.len(), "the first series", "counts").map_err(invalid)?;
    let executor = checked_executor(file, origin)?;
    let base_dir = absolute_dir(base_dir)?;
    let mut state = new_state(settings, components, executor, base_dir);
    let mut first = Iteration {
        index: 0,
        tests: Vec::new(),
        phase: None,
        normalisation: None,
    };
    for (id, (c, nproc, why)) in series.into_iter().enumerate() {
        let id = id as u32;
        state.tests.push(TestRecord {
            id,
            origin: ORIGIN.to_string(),
        });
        let mut test = new_test_iteration(0, id, nproc, 0, 1..=scaling.repetitions);
        test.component = c;
        test.reason = Some(why);
        first.tests.push(test);
    }
    state.iterations.push(first);
    Ok((state, inputs))
}

/// Builds the campaign's executor once, before anything is written, so that a bad template
/// or setting (a text placeholder, an unknown one, a bad Slurm option) is reported at `init`
/// and `plan`, not at `run`. `dir` is the campaign directory (its base directory for `plan`);
/// a setting that cannot work is reported naming the campaign file `origin`.
pub(super) fn check_executor(
    state: &State,
    inputs: &[predict::ComponentInput],
    dir: &Path,
    origin: &str,
) -> Result<(), CampaignError> {
    if let Some(cfg) = &state.executor {
        // Every component of a balancing campaign has a curve ([`planned_state`] refuses one
        // without); a scaling campaign's have none.
        let curves = inputs.iter().map(|input| input.curve.clone());
        let ctx = context_of(
            &state.base_dir,
            &state.components,
            curves,
            state.settings.period_s,
            state.is_standalone_scaling(),
        );
        executor::from_config(cfg, dir, &ctx).map_err(|e| match e {
            ExecutorError::Config(message) => CampaignError::Invalid {
                file: origin.to_string(),
                message,
            },
            other => other.into(),
        })?;
    }
    Ok(())
}

/// [`init`], with `origin` naming the campaign file in error messages.
fn init_named(
    dir: &Path,
    file: &CampaignFile,
    base_dir: &Path,
    mode: InitMode,
    origin: &str,
) -> Result<Initialised, CampaignError> {
    let dir = &absolute_dir(dir)?;
    let (mut state, inputs) = planned_state(file, base_dir, origin)?;
    check_executor(&state, &inputs, dir, origin)?;
    let force = match mode {
        InitMode::New => false,
        InitMode::Force => true,
        InitMode::IfAbsent => {
            if dir.join(STATE_FILE).exists() {
                let existing = State::load(dir)?;
                return match differences(&existing, &state) {
                    None => Ok(Initialised::AlreadyThere),
                    Some(what) => Err(CampaignError::Different {
                        dir: dir.to_path_buf(),
                        what,
                    }),
                };
            }
            // What an interrupted init left (no state yet) may be cleared; anything else
            // in the directory is refused as without --if-absent.
            only_campaign_files(dir)
        }
    };
    prepare_dir(dir, force)?;
    let _lock = Lock::acquire(dir)?;
    let curves_dir = dir.join("curves");
    std::fs::create_dir_all(&curves_dir)
        .map_err(|e| CampaignError::io(format!("cannot create {}", curves_dir.display()), e))?;
    // A scaling campaign writes its curves as runs land (strategy::scaling::output).
    for (c, input) in state
        .components
        .iter()
        .zip(&inputs)
        .filter(|_| !state.measures_curves())
    {
        // In cores, as the campaign's counts are: a hybrid component's ranks x its threads.
        let mut text = String::from("nproc,SYPD\n");
        for p in input.curve.iter().flat_map(|curve| curve.points()) {
            text.push_str(&format!(
                "{},{}\n",
                p.nproc.saturating_mul(c.threads),
                p.sypd
            ));
        }
        state::write_atomically(&dir.join(&c.curve), text.as_bytes())?;
    }
    state.save(dir)?;
    Ok(Initialised::Created)
}

/// Where an existing campaign differs from the one a campaign file would create, in words;
/// `None` when it is the same campaign (settings, components, executor, base directory and
/// the first iteration's tests).
fn differences(existing: &State, planned: &State) -> Option<String> {
    let mut what = Vec::new();
    if existing.settings != planned.settings {
        what.push("settings");
    }
    if existing.components != planned.components {
        what.push("components");
    }
    if existing.executor != planned.executor {
        what.push("[executor]");
    }
    if existing.base_dir != planned.base_dir {
        what.push("campaign file directory");
    }
    let first = |s: &State| -> Vec<Vec<u32>> {
        s.iterations
            .first()
            .map(|it| it.tests.iter().map(|t| t.nproc.clone()).collect())
            .unwrap_or_default()
    };
    if first(existing) != first(planned) {
        what.push("first iteration's tests");
    }
    (!what.is_empty()).then(|| what.join(", "))
}

/// True when `dir` holds nothing but files autolb writes into a campaign directory.
fn only_campaign_files(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries.filter_map(|e| e.ok()).all(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                is_campaign_file(&name) || name == state::LOCK_FILE || name.starts_with(".tmp")
            })
        })
        .unwrap_or(true)
}

/// Files and directories of a campaign that `--force` may remove.
fn is_campaign_file(name: &str) -> bool {
    name == STATE_FILE
        || name == state::LOG_FILE
        || name == CANCEL_REQUEST_FILE
        // A new campaign's viewers must not see the last one's lost driver.
        || name == super::heartbeat::HEARTBEAT_FILE
        || name == "curves"
        || name.starts_with("iter-")
}

/// The balanced components with their limits and allowed lists, checked against each other.
fn frozen_components(
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
        let threads = input.curve.as_ref().map_or(1, |c| c.threads());
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

/// The `start` configurations in component order, each checked against the components'
/// limits, allowed lists and the budget; duplicates are run once.
fn selected_start(
    file: &CampaignFile,
    start: &[std::collections::BTreeMap<String, u32>],
    components: &[FrozenComponent],
    budgets: &super::strategy::algorithm1::Budgets,
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
fn check_fits(
    what: &str,
    components: &[FrozenComponent],
    nproc: &[u32],
    budgets: &super::strategy::algorithm1::Budgets,
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

fn frozen_settings(file: &CampaignFile, origin: &str) -> Result<FrozenSettings, CampaignError> {
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
    })
}

/// With a chosen `[[queue]]` that names a Slurm partition or QOS, the Slurm executor submits
/// there unless `[executor.slurm]` says otherwise (an explicit setting wins).
fn with_queue_submission(mut executor: ExecutorConfig, model: &CostModel) -> ExecutorConfig {
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
fn period_for_executor(file: &CampaignFile, origin: &str) -> Result<Option<f64>, CampaignError> {
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

fn original_nproc(
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

/// Creates `dir`, or checks that it is empty, or (with `force`) clears a previous campaign.
///
/// What an `init` that failed or was killed left (no `campaign.json`, only files `init`
/// writes: curves, the lock, temp files) does not count: it is cleared without `--force`, so a
/// failed `init` never blocks the next one. `campaign.json` is written last, so its presence
/// is what makes a directory a campaign.
fn prepare_dir(dir: &Path, force: bool) -> Result<(), CampaignError> {
    let io = |what: &str, e| CampaignError::io(format!("{what} {}", dir.display()), e);
    std::fs::create_dir_all(dir).map_err(|e| io("cannot create", e))?;
    let entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| io("cannot list", e))?
        .filter_map(|e| e.ok())
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = entries
        .iter()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    let unfinished_init = !names.iter().any(|n| n == STATE_FILE)
        && names
            .iter()
            .all(|n| n == "curves" || n == LOCK_FILE || n.starts_with(".tmp"));
    if !force && !unfinished_init {
        return Err(CampaignError::NotEmpty(dir.to_path_buf()));
    }
    let _lock = Lock::acquire(dir)?;
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        if !(is_campaign_file(&name) || name.starts_with(".tmp")) {
            continue;
        }
        let path = e.path();
        let result = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        result
            .map_err(|err| CampaignError::io(format!("cannot remove {}", path.display()), err))?;
    }
    Ok(())
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
