//! Campaigns driven from outside (Autosubmit, ecFlow, a job chain): autolb decides, the
//! workflow manager runs the model.
//!
//! * [`next`] lists the runs waiting; [`next_run`] looks up one run by iteration, test and
//!   repetition and says why it is not waiting when it is not.
//! * [`record`] records a finished run, waiting for the campaign lock (many jobs record at
//!   once); recording a run again with the same outcome is a no-op, not an error.
//! * [`barrier`] says whether an iteration is fully recorded (`campaign wait`).
//!
//! Readers never take the lock: the state file is replaced atomically (a rename), so every
//! read sees one whole state, old or new.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::claim::Recovery;
use super::state::{Lock, RunState, State};
use super::status::NameMap;
use super::{absolute_dir, advance_in, Advance, CampaignError, RunMetrics};
use crate::executor::env::{check_distinct, shell_identifier, shell_quote};
use crate::executor::{read_exit_status, RunRequest, RunStatus};

mod record;
use record::record_locked;
#[cfg(test)]
pub(super) use record::SLICE_RECORDS;
pub use record::{record, record_claimed, Recorded};

/// How long `record` waits for the campaign lock by default: longer than any record or
/// decision takes, short enough that a stuck driver is noticed.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(600);

/// A run waiting to be run by an outside workflow manager (`campaign next --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NextRun {
    /// The run's id (`i00-t03-r1`).
    pub run: String,
    /// Its iteration's index (0-based).
    pub iteration: u32,
    /// Its test's index within the iteration (0-based).
    pub test: u32,
    /// Its repetition (1-based, up to the campaign's `repetitions`).
    pub repetition: u32,
    /// PEs per balanced component, in component order.
    pub nproc: NameMap<u32>,
    /// OpenMP threads per rank of each component, when one runs more than one (left out
    /// otherwise): its `nproc` then counts cores, ranks x threads.
    #[serde(skip_serializing_if = "NameMap::is_empty")]
    pub threads: NameMap<u32>,
    /// Every PE of the run: the balanced components plus `extra_pes`.
    pub total_nproc: u32,
    /// Absolute.
    pub run_dir: PathBuf,
    /// The component a standalone run measures (a scaling campaign).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// The campaign's layout tree, when it has one: `total_nproc` then counts the PEs the
    /// layout spans, and a run's command gets each component's first PE.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
}

impl NextRun {
    /// The run as an executor would be asked to start it (for placeholders).
    pub fn request(&self) -> RunRequest {
        let balanced: u32 = match super::tree::tree_of(self.layout.as_deref()) {
            Some(tree) => {
                let names: Vec<String> = self.nproc.0.iter().map(|(n, _)| n.clone()).collect();
                let tasks: Vec<u32> = self.nproc.values().copied().collect();
                super::tree::width(&tree, &names, &tasks)
            }
            None => self.nproc.values().fold(0, |s, p| s.saturating_add(*p)),
        };
        RunRequest {
            component: self.component.clone(),
            id: self.run.clone(),
            iteration: self.iteration,
            test: self.test,
            repetition: self.repetition,
            nproc: self.nproc.0.clone(),
            threads: self.threads.values().copied().collect(),
            extra_pes: self.total_nproc.saturating_sub(balanced),
            run_dir: self.run_dir.clone(),
        }
    }
}

/// The runs of the current iteration not yet recorded: pending ones, and running ones whose
/// driver is gone. None while a `campaign run` drives the campaign ([`driver_of`]): it runs
/// them itself.
pub fn next(dir: &Path) -> Result<Vec<NextRun>, CampaignError> {
    let dir = absolute_dir(dir)?;
    let state = State::load(&dir)?;
    let mut out = Vec::new();
    if state.cancelled || driver_of(&state, &dir).is_some() {
        return Ok(out);
    }
    let Some(last) = state.iterations.len().checked_sub(1) else {
        return Ok(out);
    };
    for (t, test) in state.iterations[last].tests.iter().enumerate() {
        for (r, run) in test.runs.iter().enumerate() {
            // A run an `exec` has claimed is being run: listing it would invite a second run.
            if !run.state.is_terminal() && super::claim::live_claim(&dir, &run.id).is_none() {
                out.push(next_run_at(&state, &dir, (last, t, r)));
            }
        }
    }
    Ok(out)
}

/// The `campaign run` that drives a campaign with an `[executor]`, when one is alive (its
/// heartbeat is fresh, [`super::heartbeat`]), in words (`running (driver pid 1234, seen 2 s
/// ago)`): it starts every waiting run itself, so [`next`] lists none of them (an outside
/// workflow manager running them too would run each twice). A lost driver hides nothing. A
/// campaign without an executor has no driver, only short-lived lock holders (`record`).
pub fn driver_of(state: &State, dir: &Path) -> Option<String> {
    state.executor.as_ref()?;
    let driver = super::driver_state_of(state, dir, std::time::SystemTime::now());
    driver.alive().then(|| driver.text(dir))
}

/// [`driver_of`] for the campaign in `dir`.
pub fn driven_by(dir: &Path) -> Result<Option<String>, CampaignError> {
    let dir = absolute_dir(dir)?;
    Ok(driver_of(&State::load(&dir)?, &dir))
}

fn next_run_at(state: &State, dir: &Path, (i, t, r): super::state::RunPos) -> NextRun {
    let req = state.request(dir, i, t, r);
    let tree = super::tree::tree_of(state.settings.layout.as_deref());
    NextRun {
        run: req.id.clone(),
        iteration: req.iteration,
        test: req.test,
        repetition: req.repetition,
        total_nproc: tree.as_ref().map_or_else(
            || req.total_nproc(),
            |tree| crate::executor::layout_vars::total_pes(tree, &req),
        ),
        layout: state.settings.layout.clone(),
        threads: NameMap(
            req.nproc
                .iter()
                .map(|(name, _)| name.clone())
                .zip(req.threads.iter().copied())
                .collect(),
        ),
        nproc: NameMap(req.nproc),
        run_dir: req.run_dir,
        component: req.component,
    }
}

/// Where one run (iteration, test, repetition) stands, for a job that runs it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunLookup {
    /// Waiting to be run and recorded.
    Waiting(NextRun),
    /// Nothing to do for this run: it is recorded already, or its test finished before this
    /// iteration. The reason says which.
    NotWaiting {
        /// Why: already recorded (and how), or its test finished earlier.
        reason: String,
    },
    /// The campaign is done (or cancelled): nothing more will run.
    Done {
        /// Whether the campaign ended by a cancel rather than by finishing.
        cancelled: bool,
    },
    /// The iteration has not started: an earlier one still has runs to record.
    NotReady {
        /// Which earlier iteration still has runs to record.
        reason: String,
    },
    /// Waiting, but claimed by a live `campaign exec` that is running it ([`super::claim`]).
    Claimed {
        /// The run's id.
        run: String,
        /// Who holds the claim: the exec's pid, host and age.
        holder: String,
    },
}

/// Looks up run `(iteration, test, repetition)`. A test or repetition the campaign cannot have
/// is an error ([`CampaignError::NoSuchRun`]).
pub fn next_run(
    dir: &Path,
    iteration: u32,
    test: u32,
    repetition: u32,
) -> Result<RunLookup, CampaignError> {
    let dir = absolute_dir(dir)?;
    let state = State::load(&dir)?;
    let lookup = lookup_run(&state, &dir, iteration, test, repetition)?;
    if let RunLookup::Waiting(run) = &lookup {
        if let Some(holder) = super::claim::live_claim(&dir, &run.run) {
            return Ok(RunLookup::Claimed {
                run: run.run.clone(),
                holder: holder.describe(),
            });
        }
    }
    Ok(lookup)
}

/// What [`claim_run`] found.
#[derive(Debug)]
pub enum ClaimResult {
    /// The run was waiting; this process now holds its claim and must run it, then record it
    /// with [`record_claimed`]. `recovered` tells of a dead holder's claim that was removed.
    Claimed {
        /// The run to run.
        run: NextRun,
        /// The claim; dropping it releases it.
        claim: super::claim::Claim,
        /// A note on a dead holder's claim that was removed (and what it left running ended), if
        /// any.
        recovered: Option<String>,
    },
    /// An earlier attempt whose `exec` died finished on its own with complete output (its
    /// supervisor wrote exit status 0 and the output measures): it was recorded now rather
    /// than run again.
    Adopted {
        /// What was recorded.
        recorded: Recorded,
        /// A note on the dead holder's claim that was removed, if any.
        recovered: Option<String>,
    },
    /// Not waiting (never [`RunLookup::Waiting`] or [`RunLookup::Claimed`]).
    Not(RunLookup),
}

/// How long [`claim_run`] waits for what a dead holder started to end before it refuses as
/// busy: the grace `exec` gives a command between its signal and SIGKILL, and a margin.
pub const ENDING_WAIT: Duration = Duration::from_secs(super::claim::STOP_GRACE.as_secs() + 5);

/// Claims run `(iteration, test, repetition)` to run it (`campaign exec`): under the campaign
/// lock (waiting up to `wait` for a short holder such as `record`), checks that it is waiting
/// and that no live process claimed it, recovers a dead holder's claim, and takes it. A live
/// claim is [`CampaignError::Claimed`]; a `campaign run` driving the campaign (it holds the
/// lock and starts the runs itself) is [`CampaignError::Driven`].
///
/// A dead holder's command that is still ending is waited for (up to [`ENDING_WAIT`], without
/// the lock), then [`CampaignError::Ending`]; one that finished with complete output is
/// recorded ([`ClaimResult::Adopted`]), never started again.
pub fn claim_run(
    dir: &Path,
    iteration: u32,
    test: u32,
    repetition: u32,
    wait: Duration,
) -> Result<ClaimResult, CampaignError> {
    let dir = absolute_dir(dir)?;
    let deadline = Instant::now() + ENDING_WAIT;
    loop {
        match claim_once(&dir, iteration, test, repetition, wait)? {
            Ok(result) => return Ok(result),
            Err((run, what)) if Instant::now() >= deadline => {
                return Err(CampaignError::Ending { run, what })
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// One try of [`claim_run`]; `Err((run, what))` when a dead holder's command is still ending.
fn claim_once(
    dir: &Path,
    iteration: u32,
    test: u32,
    repetition: u32,
    wait: Duration,
) -> Result<Result<ClaimResult, (String, String)>, CampaignError> {
    let _lock = match Lock::acquire(dir) {
        Ok(lock) => lock,
        Err(CampaignError::Locked { holder, .. }) => {
            // Held past the linger by a campaign with an executor: its driver. Record and
            // exec hold the lock for milliseconds only.
            if State::load(dir)?.executor.is_some() {
                return Err(CampaignError::Driven {
                    dir: dir.to_path_buf(),
                    holder,
                });
            }
            lock_waiting(dir, wait)?
        }
        Err(e) => return Err(e),
    };
    let state = State::load(dir)?;
    let run = match lookup_run(&state, dir, iteration, test, repetition)? {
        RunLookup::Waiting(run) => run,
        other => return Ok(Ok(ClaimResult::Not(other))),
    };
    let recovered = match super::claim::recover_claim(dir, &run.run, &run.run_dir)? {
        Recovery::Free { note } => note,
        Recovery::Live(holder) => {
            return Err(CampaignError::Claimed {
                run: run.run,
                holder: holder.describe(),
            })
        }
        Recovery::Ending(what) => return Ok(Err((run.run, what))),
    };
    if let Some(recorded) = adopt_finished(dir, state, &run)? {
        return Ok(Ok(ClaimResult::Adopted {
            recorded,
            recovered,
        }));
    }
    let claim = super::claim::create_claim(dir, &run.run)?;
    Ok(Ok(ClaimResult::Claimed {
        run,
        claim,
        recovered,
    }))
}

/// For a caller holding the lock, on a waiting run nobody holds: records it when an earlier
/// attempt finished on its own (exit status 0 in its directory, written by its supervisor
/// the moment the command ended) and its output measures. `None`: it must be run.
fn adopt_finished(
    dir: &Path,
    state: State,
    run: &NextRun,
) -> Result<Option<Recorded>, CampaignError> {
    if read_exit_status(&run.run_dir) != Some(RunStatus::Finished { exit_code: 0 }) {
        return Ok(None);
    }
    let Some(pos) = state.find_run(&run.run) else {
        return Ok(None);
    };
    let Ok(metrics) = state.measure_run(pos.0, pos.1, &run.run_dir) else {
        return Ok(None);
    };
    record_locked(dir, state, pos, &run.run, Some(metrics), None, None).map(Some)
}

/// [`next_run`] on a loaded state, claims not looked at.
fn lookup_run(
    state: &State,
    dir: &Path,
    iteration: u32,
    test: u32,
    repetition: u32,
) -> Result<RunLookup, CampaignError> {
    check_run_exists(state, test, repetition)?;
    let id = super::state::run_id(iteration, test, repetition);
    if let Some(pos) = state.find_run(&id) {
        if !state.run(pos).state.is_terminal() && !state.cancelled {
            return Ok(RunLookup::Waiting(next_run_at(state, dir, pos)));
        }
    }
    if state.is_done() {
        return Ok(RunLookup::Done {
            cancelled: state.cancelled,
        });
    }
    if let Some(pos) = state.find_run(&id) {
        return Ok(RunLookup::NotWaiting {
            reason: format!(
                "run {id} is already recorded ({})",
                state.run(pos).state.as_str()
            ),
        });
    }
    let current = state.iterations.last().map(|it| it.index).unwrap_or(0);
    if iteration <= current {
        let last = state
            .iterations
            .iter()
            .filter(|it| it.tests.iter().any(|t| t.test == test))
            .map(|it| it.index)
            .max();
        return Ok(RunLookup::NotWaiting {
            reason: match last {
                Some(last) => format!(
                    "test {test} finished in iteration {last}; it has no run in iteration {iteration}"
                ),
                None => format!("test {test} has no run in iteration {iteration}"),
            },
        });
    }
    Ok(RunLookup::NotReady {
        reason: format!(
            "iteration {iteration} has not started: iteration {current} still has runs to record ({})",
            missing_runs(state, current).join(", ")
        ),
    })
}

/// Refuses a test or repetition number outside the campaign.
fn check_run_exists(state: &State, test: u32, repetition: u32) -> Result<(), CampaignError> {
    let tests = state.tests.len() as u32;
    if test >= tests {
        return Err(CampaignError::NoSuchRun(format!(
            "--test {test}: this campaign has tests 0 to {}",
            tests.saturating_sub(1)
        )));
    }
    let reps = state.settings.repetitions;
    if repetition == 0 || repetition > reps {
        return Err(CampaignError::NoSuchRun(format!(
            "--repetition {repetition}: this campaign has repetitions 1 to {reps}"
        )));
    }
    Ok(())
}

/// The ids of the runs of `iteration` not recorded yet.
fn missing_runs(state: &State, iteration: u32) -> Vec<String> {
    state
        .iterations
        .iter()
        .filter(|it| it.index == iteration)
        .flat_map(|it| it.tests.iter().flat_map(|t| &t.runs))
        .filter(|r| !r.state.is_terminal())
        .map(|r| r.id.clone())
        .collect()
}

/// `NAME_nprocs=( ... )` lines (one per component, one entry per run, in the order of
/// [`next`]), plus `autolb_runs`, `autolb_run_dirs`, `autolb_iterations`, `autolb_tests`,
/// `autolb_repetitions` and `autolb_total_nprocs`, for a runscript to source. Component names
/// become bash names as [`shell_identifier`] says (`IFS-atm` -> `IFS_atm_nprocs`). A hybrid
/// component's `NAME_nprocs` are its MPI ranks, as `AUTOLB_NPROC_<NAME>` are, and a
/// `NAME_threads` array follows it (only in a campaign with a hybrid component).
pub fn next_as_bash(runs: &[NextRun], components: &[String]) -> Result<String, CampaignError> {
    check_distinct(components.iter().map(String::as_str)).map_err(CampaignError::NoSuchRun)?;
    let mut out = String::new();
    let array = |out: &mut String, name: &str, values: Vec<String>| {
        out.push_str(&format!("{name}=( {} )\n", values.join(" ")));
    };
    let hybrid = runs.iter().any(|r| r.threads.values().any(|&t| t > 1));
    let threads_of = |r: &NextRun, name: &str| r.threads.get(name).copied().unwrap_or(1).max(1);
    for name in components {
        let values = runs
            .iter()
            .map(|r| {
                r.nproc
                    .get(name)
                    .map(|p| (p / threads_of(r, name)).to_string())
                    .unwrap_or_default()
            })
            .collect();
        array(
            &mut out,
            &format!("{}_nprocs", shell_identifier(name)),
            values,
        );
        if hybrid {
            let threads = runs
                .iter()
                .map(|r| threads_of(r, name).to_string())
                .collect();
            array(
                &mut out,
                &format!("{}_threads", shell_identifier(name)),
                threads,
            );
        }
    }
    let each = |f: &dyn Fn(&NextRun) -> String| runs.iter().map(f).collect::<Vec<_>>();
    array(&mut out, "autolb_runs", each(&|r| shell_quote(&r.run)));
    array(
        &mut out,
        "autolb_run_dirs",
        each(&|r| shell_quote(&r.run_dir.display().to_string())),
    );
    array(
        &mut out,
        "autolb_iterations",
        each(&|r| r.iteration.to_string()),
    );
    array(&mut out, "autolb_tests", each(&|r| r.test.to_string()));
    array(
        &mut out,
        "autolb_repetitions",
        each(&|r| r.repetition.to_string()),
    );
    array(
        &mut out,
        "autolb_total_nprocs",
        each(&|r| r.total_nproc.to_string()),
    );
    Ok(out)
}

/// The environment of one run as `(name, value)` pairs, as every executor sets it
/// ([`crate::executor::env::run_env`]).
pub fn run_env(run: &NextRun) -> Result<Vec<(String, String)>, CampaignError> {
    check_distinct(run.nproc.0.iter().map(|(n, _)| n.as_str()))
        .map_err(CampaignError::NoSuchRun)?;
    let request = run.request();
    let mut vars = crate::executor::env::run_env(&request);
    if let Some(tree) = super::tree::tree_of(run.layout.as_deref()) {
        // The layout's count of every PE replaces the sum of the tasks.
        vars.retain(|(k, _)| k != "AUTOLB_TOTAL_NPROC");
        vars.extend(crate::executor::layout_vars::env_vars(&tree, &request));
    }
    Ok(vars)
}

/// [`run_env`] as `export NAME='value'` lines, safe to `eval` (every value single-quoted).
pub fn next_as_env(run: &NextRun) -> Result<String, CampaignError> {
    Ok(crate::executor::env::export_lines(&run_env(run)?))
}

/// Takes the campaign lock, waiting up to `wait` while another process holds it (zero: one
/// try). The one place a waiting acquire lives, so a better lock changes only this body.
pub fn lock_waiting(dir: &Path, wait: Duration) -> Result<Lock, CampaignError> {
    // At least the linger of `Lock::acquire`: a viewer probing the lock holds it for an instant.
    Lock::acquire_wait(dir, wait.max(super::state::LOCK_LINGER))
}

/// Where an iteration stands for `campaign wait`.
#[derive(Debug, Clone, PartialEq)]
pub enum Barrier {
    /// Every run of the iteration is recorded (and the decisions taken).
    Recorded,
    /// The campaign is done (or cancelled): nothing more will be recorded.
    Done,
    /// Runs of the iteration (or of an earlier one, when it has not started) not recorded yet.
    Missing {
        /// The iteration whose runs are missing: the current one (also when a later one was asked
        /// for).
        iteration: u32,
        /// Ids of its runs not recorded yet.
        runs: Vec<String>,
    },
}

/// Whether iteration `iteration` is fully recorded ([`Barrier`]).
pub fn barrier(dir: &Path, iteration: u32) -> Result<Barrier, CampaignError> {
    let state = State::load(dir)?;
    if state.is_done() {
        return Ok(Barrier::Done);
    }
    let current = state.iterations.last().map(|it| it.index).unwrap_or(0);
    if iteration < current {
        return Ok(Barrier::Recorded);
    }
    // The current iteration is not fully decided (else the campaign would be done or a later
    // iteration would exist): its unrecorded runs are what is missing, also for a later one.
    let runs = missing_runs(&state, current);
    if runs.is_empty() {
        return Ok(Barrier::Recorded);
    }
    Ok(Barrier::Missing {
        iteration: current,
        runs,
    })
}

/// [`barrier`] until it is no longer `Missing` or `timeout` has passed (checking every
/// `interval`); returns the last answer.
pub fn wait_for_iteration(
    dir: &Path,
    iteration: u32,
    timeout: Duration,
    interval: Duration,
) -> Result<Barrier, CampaignError> {
    let deadline = Instant::now() + timeout;
    loop {
        let b = barrier(dir, iteration)?;
        if !matches!(b, Barrier::Missing { .. }) || Instant::now() >= deadline {
            return Ok(b);
        }
        std::thread::sleep(interval.min(deadline.saturating_duration_since(Instant::now())));
    }
}

/// The stand-in model's run for run `run_id` of a campaign (`simulate --campaign DIR --run
/// ID`), built exactly as the `sim` executor builds it: the PEs and timing names from the
/// campaign, the campaign's `[executor.sim]` settings when it has them, whatever its executor
/// (then `adjust`, for command-line overrides), the truth curves they name or else the
/// campaign's own, and the seed from the run id, so repetitions differ and a run driven from
/// outside measures what `campaign run` would. Returns the run and its (absolute) directory.
pub fn stand_in_run(
    dir: &Path,
    run_id: &str,
    adjust: impl FnOnce(&mut crate::sim::SimSettings),
) -> Result<(crate::sim::SimRun, PathBuf), CampaignError> {
    use crate::executor::{sim::SimExecutor, ExecutorConfig, ExecutorKind};
    let dir = absolute_dir(dir)?;
    let state = State::load(&dir)?;
    if state.settings.layout.is_some() {
        return Err(CampaignError::Executor(crate::executor::ExecutorError::Config(
            "`autolb simulate --campaign` runs the stand-in model of components side by side; a campaign on a layout tree runs it with [executor] kind = \"sim\"".into(),
        )));
    }
    let (i, t, r) = state
        .find_run(run_id)
        .ok_or_else(|| CampaignError::UnknownRun {
            id: run_id.to_string(),
        })?;
    // The `[executor.sim]` table counts whatever the campaign's executor: a command or Slurm
    // executor that calls `simulate --campaign` is how a workflow runs the stand-in model.
    let mut cfg = ExecutorConfig {
        kind: ExecutorKind::Sim,
        command: None,
        timeout_s: None,
        jobs: None,
        retries: None,
        sim: state.executor.as_ref().and_then(|cfg| cfg.sim.clone()),
        slurm: None,
    };
    adjust(cfg.sim.get_or_insert_with(Default::default));
    let ctx = super::executor_context(&state, &dir)?;
    let exec = SimExecutor::from_config(&cfg, &ctx)?;
    let req = state.request(&dir, i, t, r);
    Ok((exec.sim_run(&req)?, req.run_dir))
}
