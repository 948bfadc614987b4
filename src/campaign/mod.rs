//! The load-balance campaign (paper section 4.2, Algorithm 1; the guide's
//! `method/algorithm1.md`).
//!
//! A campaign directory holds `campaign.json` (the state, written atomically) with
//! `campaign.records.jsonl` (what changed since, appended: see [`state`]), a lock file, copies
//! of the curves, and one directory per run, `iter-II/test-TT/rep-R/`, with the run's timing
//! output, stdout, stderr and exit status.
//!
//! * [`init`] runs the prediction and creates the first iteration's tests (module `init`).
//! * [`drive`] runs the campaign to the end with its executor (resumable after a crash).
//! * [`status()`] is the iteration table and the best configuration so far; [`answer()`] is
//!   the campaign's result every view renders (module `answer`).
//! * [`driver_state`] says whether a driver runs the campaign, from its heartbeat
//!   (`driver.json`, module `heartbeat`).
//! * [`next`] and [`record`] let an outside workflow manager run the model while autolb only
//!   decides.
//! * [`cancel`] stops every queued or running run.

pub mod answer;
pub mod bound;
pub mod claim;
pub mod demo;
pub mod driver;
pub mod external;
pub mod heartbeat;
mod init;
pub mod liveness;
pub mod lock;
pub mod measure;
pub mod measured;
pub mod plan;
pub mod state;
pub mod status;
pub mod strategy;
pub mod tree;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use answer::{answer, Against, Answer, CampaignAnswer, PredictedConfig, PredictedTop};
pub use driver::{drive, DriveEvent, DriveOptions, DriveOutcome};
pub use external::{
    barrier, claim_run, driven_by, lock_waiting, next, next_as_bash, next_as_env, next_run, record,
    record_claimed, run_env, stand_in_run, wait_for_iteration, Barrier, ClaimResult, NextRun,
    Recorded, RunLookup, DEFAULT_LOCK_WAIT,
};
pub use heartbeat::{driver_state, driver_state_of, DriverState, DriverView};
pub use init::{init, init_file, InitMode, Initialised};
pub use state::{ColdStartPhase, Outcome, RunMetrics, RunState, State};
pub use status::{BestView, ColdStartView, NameMap, Phase, RunView, Status, TestState, TestView};

use crate::config::ConfigError;
use crate::executor::{self, ExecutorError};
use crate::predict::PredictError;
use strategy::PlanError;
// `plan` previews what `init` would create.
use init::{file_base_dir, planned_state};
use state::{
    Decision, FrozenComponent, Iteration, Lock, Run, RunPos, TestIteration, TestRecord,
    CANCEL_REQUEST_FILE, STATE_FILE,
};

/// Why a campaign command could not do what was asked. Messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    /// The directory has no `campaign.json` (the directory).
    #[error("{0}: not a campaign directory (no campaign.json); create one with `autolb campaign init DIR --config FILE`")]
    NotACampaign(PathBuf),
    /// The directory does not exist (the path given).
    #[error("{0}: no such directory; check the path (`autolb campaign init DIR --config FILE` creates a campaign)")]
    NoSuchDirectory(PathBuf),
    /// `init` into a directory that already holds files, without `--force` (the directory).
    #[error(
        "{0} is not empty; choose a new directory or pass --force to replace the campaign in it"
    )]
    NotEmpty(PathBuf),
    /// Another autolb process holds the campaign's lock.
    #[error(
        "{dir}: another autolb process works on this campaign ({}); wait for it or stop it first",
        holder_text(holder)
    )]
    Locked {
        /// The campaign directory.
        dir: PathBuf,
        /// The holder's pid line from `campaign.lock` (empty when it has not written it yet).
        holder: String,
    },
    /// A run another process claimed and is running (`campaign exec`); busy like a lock.
    #[error("run {run} is being run by {holder}; it records the result itself: wait for it (a claim whose holder died is recovered by the next exec)")]
    Claimed {
        /// The run's id (`i00-t03-r1`).
        run: String,
        /// Who holds the claim: the exec's pid, host and age.
        holder: String,
    },
    /// A run whose claim's holder is gone but whose command has not ended yet; busy like a
    /// lock, for a few seconds.
    #[error("run {run} is not free yet: {what}; nothing was started: try again in a few seconds")]
    Ending {
        /// The run's id (`i00-t03-r1`).
        run: String,
        /// What still runs.
        what: String,
    },
    /// `exec` of a campaign whose runs a live `campaign run` starts itself.
    #[error("{}: `autolb campaign run` ({holder}) runs this campaign's runs itself; running one with `exec` as well would run it twice", dir.display())]
    Driven {
        /// The campaign directory.
        dir: PathBuf,
        /// The driver's pid line from the lock.
        holder: String,
    },
    /// `init --if-absent` found a campaign created from another campaign file.
    #[error("{dir} holds a campaign with other {what} than this campaign file; use a new directory, or --force to replace it")]
    Different {
        /// The campaign directory.
        dir: PathBuf,
        /// What differs (settings, components, `[executor]`, ...), comma-separated.
        what: String,
    },
    /// A run the campaign cannot have (a test or repetition number out of range: the message
    /// gives the valid range), or runs whose component names map to the same shell name.
    #[error("{0}")]
    NoSuchRun(String),
    /// A run recorded again with another outcome than the one it has; a campaign keeps the first.
    #[error("{0}")]
    Conflict(String),
    /// `campaign.json` cannot be read or parsed.
    #[error("{file}: the campaign state is unreadable: {reason}")]
    BadState {
        /// The state file.
        file: PathBuf,
        /// What was wrong with it.
        reason: String,
    },
    /// Reading or writing a campaign file failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being read or written, with its path.
        what: String,
        /// The filesystem's error.
        #[source]
        source: std::io::Error,
    },
    /// The campaign file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The prediction that creates the first iteration failed.
    #[error(transparent)]
    Predict(#[from] PredictError),
    /// A campaign-file value that cannot work; the message names the key.
    #[error("{file}: {message}")]
    Invalid {
        /// The campaign file.
        file: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// `record` of a run id the campaign does not have.
    #[error("no run {id:?} in this campaign; `autolb campaign next DIR` lists the runs waiting to be recorded")]
    UnknownRun {
        /// The run id given.
        id: String,
    },
    /// `record` of a run that already ended.
    #[error("run {id} is already {state}; only a pending or running run can be recorded")]
    AlreadyRecorded {
        /// The run's id.
        id: String,
        /// The state it already has.
        state: &'static str,
    },
    /// A run's timing output cannot be measured (yet): the reason, with the path.
    #[error("{0}; record it once the run has finished, or pass --failed to record a failed run")]
    Unmeasurable(String),
    /// The executor could not be built, or failed to submit or poll a run.
    #[error(transparent)]
    Executor(#[from] ExecutorError),
    /// `campaign run` on a campaign without an `[executor]`, which is driven from outside.
    #[error("this campaign has no [executor]: it is driven from outside; use `autolb campaign next` and `autolb campaign record`")]
    NoExecutor,
    /// The campaign was cancelled and starts no more runs.
    #[error("this campaign was cancelled; start a new one with `autolb campaign init`")]
    Cancelled,
    /// The strategy could not plan the next iteration (after `attempts` tries); nothing was
    /// decided, so the campaign resumes from the same point once the cause is fixed.
    #[error("{}: cannot plan the next iteration ({attempts} attempt{}): {source}; the campaign is unchanged, fix that and run it again", dir.display(), if *attempts == 1 { "" } else { "s" })]
    Plan {
        /// The campaign directory.
        dir: PathBuf,
        /// How many times planning was tried.
        attempts: u32,
        /// Why the strategy could not plan.
        #[source]
        source: PlanError,
    },
}

/// The lock holder for a message: its pid line, or a note when it has not written it yet (it
/// took the lock a moment ago).
fn holder_text(holder: &str) -> String {
    if holder.trim().is_empty() {
        "it took the lock just now and has not written its pid yet".into()
    } else {
        holder.trim().to_string()
    }
}

impl CampaignError {
    /// A directory without `campaign.json`: a mistyped path (no such directory) is told apart
    /// from a directory that holds no campaign.
    pub(crate) fn missing_state(dir: &Path) -> CampaignError {
        if dir.is_dir() {
            CampaignError::NotACampaign(dir.to_path_buf())
        } else {
            CampaignError::NoSuchDirectory(dir.to_path_buf())
        }
    }

    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> CampaignError {
        CampaignError::Io {
            what: what.into(),
            source,
        }
    }
}

/// Refuses a directory without campaign state before anything (the lock) is made in it, so a
/// mistyped path is "not a campaign directory", not a failure to open a lock file.
pub fn require_campaign(dir: &Path) -> Result<(), CampaignError> {
    if dir.join(STATE_FILE).is_file() {
        Ok(())
    } else {
        Err(CampaignError::missing_state(dir))
    }
}

/// Defaults of the campaign keys the file may leave out (documented in the guide's campaign-file reference).
pub mod defaults {
    /// `initial_step` = this many prediction steps (`step`).
    pub const INITIAL_STEP_IN_STEPS: u32 = 2;
    /// `minimum_step` = `initial_step` / this (so three halvings before a test finishes).
    pub const MINIMUM_STEP_DIVISOR: u32 = 8;
    /// lb-iterations an Algorithm 1 campaign takes at most when `max_iterations` is not given:
    /// published campaigns ended after 4 to 5, and a test still moving after 12 moves by
    /// steps too small to matter; the campaign then ends with the best measured.
    pub const MAX_ITERATIONS: u32 = 12;
    /// The same for the guided strategy, which runs one or two configurations an iteration.
    pub const GUIDED_MAX_ITERATIONS: u32 = 24;
    /// The same for a cold start, whose first iterations measure its curves (its tests took
    /// 11 to 33 iterations).
    pub const COLD_START_MAX_ITERATIONS: u32 = 48;
    /// Runs per test and lb-iteration when `repetitions` is not given.
    pub const REPETITIONS: u32 = 2;
    /// Extra attempts of a failed run when `retries` is not given.
    pub const RETRIES: u32 = 0;
}

/// A campaign directory as an absolute path, so that run directories, `{run_dir}`, `next`'s
/// output and job scripts never depend on the directory a command was started from.
pub fn absolute_dir(dir: &Path) -> Result<PathBuf, CampaignError> {
    std::path::absolute(dir)
        .map_err(|e| CampaignError::io(format!("cannot resolve {}", dir.display()), e))
}

/// A test's entry in a new iteration, with its runs pending.
fn new_test_iteration(
    iteration: u32,
    test: u32,
    nproc: Vec<u32>,
    step: u32,
    repetitions: std::ops::RangeInclusive<u32>,
) -> TestIteration {
    TestIteration {
        test,
        nproc,
        step,
        runs: repetitions
            .map(|r| Run {
                id: state::run_id(iteration, test, r),
                repetition: r,
                state: RunState::Pending,
                ticket: None,
                attempts: 0,
                metrics: None,
                failure: None,
                started_at: None,
                ended_at: None,
            })
            .collect(),
        decision: None,
        reason: None,
        component: None,
    }
}

/// What the executors need to know about the campaign.
pub fn executor_context(
    state: &State,
    dir: &Path,
) -> Result<executor::ExecutorContext, CampaignError> {
    // A scaling campaign measures the curves: its executors get none.
    let curves = if state.measures_curves() {
        vec![None; state.components.len()]
    } else {
        state
            .components
            .iter()
            .map(|c| crate::curve::Curve::load(c.name.clone(), &dir.join(&c.curve)).map(Some))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ConfigError::from)?
    };
    Ok(context_of(
        &state.base_dir,
        &state.components,
        curves,
        state.settings.period_s,
        state.is_standalone_scaling(),
        tree::tree_of(state.settings.layout.as_deref()),
    ))
}

/// The campaign's executor, `None` for a campaign driven from outside.
pub(crate) fn build_executor(
    state: &State,
    dir: &Path,
) -> Result<Option<Box<dyn executor::Executor>>, CampaignError> {
    let Some(cfg) = &state.executor else {
        return Ok(None);
    };
    Ok(Some(executor::from_config(
        cfg,
        dir,
        &executor_context(state, dir)?,
    )?))
}

/// The executor context of these components with their curves (in the same order);
/// `standalone` for a scaling campaign's runs of one component each.
fn context_of(
    base_dir: &Path,
    components: &[FrozenComponent],
    curves: impl IntoIterator<Item = Option<crate::curve::Curve>>,
    period_s: Option<f64>,
    standalone: bool,
    layout: Option<crate::layout::Layout>,
) -> executor::ExecutorContext {
    executor::ExecutorContext {
        base_dir: base_dir.to_path_buf(),
        components: components
            .iter()
            .zip(curves)
            .map(|(c, curve)| executor::ComponentContext {
                name: c.name.clone(),
                timing_name: c.timing_name.clone(),
                curve,
                threads: c.threads,
            })
            .collect(),
        period_s,
        standalone,
        layout,
    }
}

/// What [`advance`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Advance {
    /// `(iteration, test, decision)` of every test decided.
    pub decided: Vec<(u32, u32, Decision)>,
    /// The iteration created, if any.
    pub new_iteration: Option<u32>,
}

/// Once every run of the current iteration has ended: takes each test's decision (by the
/// campaign's strategy) and creates the next iteration from the tests it plans. Does nothing
/// otherwise. Without the campaign directory only Algorithm 1 can plan (a strategy that needs
/// the directory decides nothing here); use [`advance_in`].
pub fn advance(state: &mut State) -> Advance {
    advance_with(state, None).unwrap_or_default()
}

/// [`advance`] for a campaign in `dir` (the guided strategy reads the curves there). When the
/// strategy cannot plan, the state is left as it was and the error says why.
pub fn advance_in(state: &mut State, dir: &Path) -> Result<Advance, PlanError> {
    advance_with(state, Some(dir))
}

fn advance_with(state: &mut State, dir: Option<&Path>) -> Result<Advance, PlanError> {
    let mut out = Advance::default();
    let Some(current) = state.iterations.last() else {
        return Ok(out);
    };
    let complete = current
        .tests
        .iter()
        .all(|t| t.runs.iter().all(|r| r.state.is_terminal()));
    if !complete || current.tests.iter().all(|t| t.decision.is_some()) || state.cancelled {
        return Ok(out);
    }
    let mut plan = strategy::for_state(state).plan(state, dir)?;
    let last = state.iterations.len() - 1;
    let index = state.iterations[last].index;
    if let Some(cap) = state
        .settings
        .max_iterations
        .filter(|&cap| index + 1 >= cap)
    {
        end_at_max_iterations(&mut plan, cap);
    }
    for (t, decision) in plan.decisions.into_iter().enumerate() {
        let Some(test) = state.iterations[last].tests.get(t) else {
            break;
        };
        out.decided.push((index, test.test, decision.clone()));
        state.decide(last, t, decision);
    }
    let mut next_tests = Vec::new();
    for planned in plan.next {
        let id = match planned.test {
            Some(id) => id,
            None => {
                let id = state.tests.iter().map(|t| t.id + 1).max().unwrap_or(0);
                let origin = match plan.phase {
                    Some(state::ColdStartPhase::Scaling) => strategy::scaling::ORIGIN,
                    Some(state::ColdStartPhase::Balancing) => {
                        crate::config::Strategy::Guided.name()
                    }
                    None if state.is_scaling() => strategy::scaling::ORIGIN,
                    None => state.settings.strategy.name(),
                };
                state.tests.push(TestRecord {
                    id,
                    origin: origin.to_string(),
                });
                id
            }
        };
        // Repetitions go on from the runs this test already made of this configuration.
        let done_before = state
            .iterations
            .iter()
            .flat_map(|it| &it.tests)
            .filter(|t| t.test == id && t.nproc == planned.nproc)
            .map(|t| t.runs.len() as u32)
            .sum::<u32>();
        let mut test = new_test_iteration(
            index + 1,
            id,
            planned.nproc,
            planned.step,
            done_before + 1..=done_before + planned.runs.max(1),
        );
        test.reason = planned.reason;
        // A standalone scaling test measures the one component it gives PEs to.
        if state.is_standalone_scaling() {
            test.component = test.nproc.iter().position(|&p| p > 0);
        }
        next_tests.push(test);
    }
    if !next_tests.is_empty() {
        state.iterations.push(Iteration {
            index: index + 1,
            tests: next_tests,
            phase: plan.phase,
            normalisation: plan.normalisation,
        });
        out.new_iteration = Some(index + 1);
    }
    Ok(out)
}

/// At `max_iterations` no iteration follows: every test that would go on ends, and says why.
fn end_at_max_iterations(plan: &mut strategy::Plan, cap: u32) {
    plan.next.clear();
    for decision in &mut plan.decisions {
        if decision.outcome == state::Outcome::Continue {
            decision.outcome = state::Outcome::Finished {
                reason: format!(
                    "max_iterations = {cap} reached: the campaign ends with the best measured"
                ),
            };
        }
    }
}

/// The iteration table, the best configuration so far and who drives the campaign
/// (`campaign status`). Reads the state without taking the lock: the state file is replaced
/// atomically, so this is always a consistent snapshot, even while a driver runs.
pub fn status(dir: &Path) -> Result<Status, CampaignError> {
    Ok(status_with_driver(dir)?.0)
}

/// [`status()`] with the driver's state it shows.
pub fn status_with_driver(dir: &Path) -> Result<(Status, DriverState), CampaignError> {
    let dir = absolute_dir(dir)?;
    let state = State::load(&dir)?;
    Ok(status_of_state(&state, &dir))
}

/// The status of a loaded state in `dir` (absolute), now: its runs, those a workflow manager's
/// `campaign exec` holds shown as running, and its driver. The one derivation every view of a
/// campaign's status takes.
pub(crate) fn status_of_state(state: &State, dir: &Path) -> (Status, DriverState) {
    let driver = driver_state_of(state, dir, std::time::SystemTime::now());
    let mut status = Status::from_state(state, dir);
    status.set_claimed(dir);
    status.set_driver(&driver);
    (status, driver)
}

/// What [`cancel`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Cancelled {
    /// Cancelled here: these runs were stopped or will never start.
    Done {
        /// Ids of the runs that were stopped or will never start.
        runs: Vec<String>,
        /// How many of them had never started.
        never_started: usize,
        /// One line per problem met while cancelling (e.g. a run the executor could not cancel,
        /// with the reason).
        warnings: Vec<String>,
    },
    /// A driver holds the campaign: it was asked to cancel and did within the wait.
    ByDriver,
    /// A driver holds the campaign and has not cancelled yet (it will at its next poll).
    Requested {
        /// The driver's pid line from the lock.
        holder: String,
    },
    /// The campaign had already ended: nothing was cancelled and it stays done.
    AlreadyDone,
}

/// Cancels every queued or running run (through the executor's `cancel`) and marks every
/// unfinished run failed ("cancelled"); the campaign then runs nothing more. When a driver
/// holds the campaign, it is asked to do it (a request file it checks at every poll) and this
/// waits up to `wait` for it.
pub fn cancel(dir: &Path, wait: Duration) -> Result<Cancelled, CampaignError> {
    let dir = &absolute_dir(dir)?;
    require_campaign(dir)?;
    match Lock::acquire(dir) {
        Ok(_lock) => {
            let mut state = State::load(dir)?;
            // A finished campaign has nothing to stop: it stays "done".
            if state.is_done() && !state.cancelled {
                let _ = std::fs::remove_file(dir.join(CANCEL_REQUEST_FILE));
                return Ok(Cancelled::AlreadyDone);
            }
            let mut exec = build_executor(&state, dir)?;
            // Runs `campaign exec` is running are stopped too; each exec then records its run
            // as the failure the cancel already recorded.
            let ended = claim::end_claimed_commands(dir, &state);
            let (runs, mut warnings) = cancel_all(&mut state, dir, exec.as_deref_mut());
            warnings.extend(ended);
            state.commit(dir)?;
            let _ = std::fs::remove_file(dir.join(CANCEL_REQUEST_FILE));
            let never_started = runs
                .iter()
                .filter(|id| {
                    state.find_run(id).is_some_and(|pos| {
                        state.run(pos).failure.as_deref() == Some(CANCELLED_BEFORE_START)
                    })
                })
                .count();
            Ok(Cancelled::Done {
                runs,
                never_started,
                warnings,
            })
        }
        Err(CampaignError::Locked { holder, .. }) => {
            let state = State::load(dir)?;
            if state.is_done() && !state.cancelled {
                return Ok(Cancelled::AlreadyDone);
            }
            state::write_atomically(&dir.join(CANCEL_REQUEST_FILE), b"cancel\n")?;
            let deadline = Instant::now() + wait;
            while Instant::now() < deadline {
                if State::load(dir).map(|s| s.cancelled).unwrap_or(false) {
                    return Ok(Cancelled::ByDriver);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Ok(Cancelled::Requested { holder })
        }
        Err(e) => Err(e),
    }
}

/// Why a run the cancel stopped before it ever started ended: it counts as cancelled, not
/// failed ([`status::RunCounts::cancelled`]).
pub const CANCELLED_BEFORE_START: &str = "cancelled before it started";

/// Cancels every unfinished run of `state` (the caller holds the lock and saves).
pub(crate) fn cancel_all(
    state: &mut State,
    dir: &Path,
    mut exec: Option<&mut (dyn executor::Executor + '_)>,
) -> (Vec<String>, Vec<String>) {
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    let mut tracked: Vec<String> = Vec::new();
    let unfinished: Vec<RunPos> = state
        .run_positions()
        .filter(|&pos| !state.run(pos).state.is_terminal())
        .collect();
    for pos in unfinished {
        let run = state.run(pos);
        if let Some(ticket) = &run.ticket {
            tracked.push(ticket.0.clone());
        }
        if let (Some(ticket), Some(exec)) = (run.ticket.clone(), exec.as_deref_mut()) {
            if run.state == RunState::Running {
                let (i, t, r) = pos;
                let req = state.request(dir, i, t, r);
                if let Err(e) = exec.cancel(&req, &ticket) {
                    warnings.push(format!("{}: {e}", req.id));
                }
            }
        }
        let run = state.run_mut(pos);
        let started = run.state == RunState::Running || run.attempts > 0;
        run.state = RunState::Failed;
        run.failure = Some(
            if started {
                "cancelled"
            } else {
                CANCELLED_BEFORE_START
            }
            .into(),
        );
        runs.push(run.id.clone());
    }
    if let Some(exec) = exec {
        match exec.cancel_untracked() {
            Ok(jobs) => warnings.extend(
                jobs.into_iter()
                    .filter(|job| !tracked.contains(job))
                    .map(|job| format!("also cancelled job {job}, which the state did not track")),
            ),
            Err(e) => warnings.push(format!("cannot look for untracked runs: {e}")),
        }
    }
    state.cancelled = true;
    (runs, warnings)
}

#[cfg(test)]
mod cold_start_tests;
#[cfg(test)]
mod record_log_tests;
#[cfg(test)]
mod run_slice_tests;
#[cfg(test)]
mod scaling_coupled_tests;
#[cfg(test)]
mod scaling_tests;
