//! `campaign init`: turns a campaign file into a campaign directory.
//!
//! Everything here runs before a campaign exists: the campaign file's keys are checked and
//! frozen into the state (settings, components with their limits and allowed lists, the
//! executor), the prediction picks the first iteration's tests, and the directory is prepared
//! (refused when it holds something else, cleared with `--force`, or cleared of what an
//! interrupted `init` left). `campaign.json` is written last, so its presence is what makes a
//! directory a campaign.

mod cold_start;
mod directory;
mod distinct;
mod freeze;
mod tree;

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
use directory::{differences, only_campaign_files, prepare_dir};
use distinct::{distinct_tests, TWIN_CANDIDATES};
use freeze::{
    check_fits, frozen_components, frozen_settings, original_nproc, selected_start,
    with_queue_submission,
};

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
    let tree = tree::checked_tree(file, origin)?;
    if file.is_cold_start() {
        return cold_start::planned_cold_start_state(file, base_dir, origin);
    }
    if file.scaling.is_some() {
        return planned_scaling_state(file, base_dir, origin);
    }
    let settings = frozen_settings(file, origin)?;
    let inputs = file.component_inputs(base_dir)?;
    if tree.is_some() {
        tree::check_inputs(&inputs, origin)?;
    }
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
    if tree.is_none() {
        fix_threads(
            &mut inputs,
            &prediction_settings,
            &file.cost_model(),
            origin,
        )?;
    }
    // More candidates than tests, so that near twins can be passed over (see `distinct_tests`).
    let wanted = prediction_settings.top;
    prediction_settings.top = wanted
        .saturating_mul(TWIN_CANDIDATES)
        .min(crate::limits::MAX_TOP);
    // The prediction runs before the components are frozen, so that its errors come first.
    let predicted: Vec<Vec<u32>> = match &tree {
        Some(_) => Vec::new(),
        None => predict::predict_billed(&inputs, &prediction_settings, &file.cost_model())?
            .top
            .into_iter()
            .map(|c| c.nproc)
            .collect(),
    };
    let components = frozen_components(file, &inputs, origin)?;
    let ranked: Vec<Vec<u32>> = match &tree {
        Some(tree) => tree::candidates(tree, &inputs, &components, &prediction_settings, origin)?,
        None => predicted,
    };

    // On a tree the budget holds the PEs the layout spans, not the sum of the tasks: the
    // counts are checked against their limits here and the span below.
    let budgets = match &tree {
        Some(_) => super::strategy::algorithm1::Budgets::single(u32::MAX),
        None => settings.budgets(),
    };
    let mut initial: Vec<(Vec<u32>, String)> = match &file.start {
        Some(start) => selected_start(file, start, &components, &budgets, origin)?,
        None => distinct_tests(
            ranked.iter().map(Vec::as_slice),
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
        check_fits("[original]", &components, &nproc, &budgets).map_err(|message| {
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

    if let Some(tree) = &tree {
        tree::check_spans(tree, &components, &initial, settings.max_nproc, origin)?;
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
            super::tree::tree_of(state.settings.layout.as_deref()),
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
