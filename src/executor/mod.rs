//! Executors: what actually runs one configuration of the coupled model.
//!
//! The campaign engine talks to every executor through [`Executor`], so the algorithm never
//! knows whether a run is a local process, the built-in stand-in model or a Slurm job. An
//! executor starts runs without blocking, reports their status when polled, and hands back a
//! [`Ticket`] that the campaign stores in its state, so that a restarted driver can find runs
//! started before a crash ([`Executor::recover`]).

pub mod command;
pub mod env;
pub mod layout_vars;
pub mod sim;
pub mod slurm;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::curve::Curve;

/// Which executor runs the campaign's runs, and its settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecutorConfig {
    /// Which executor (`kind = "sim" | "command" | "slurm"`).
    pub kind: ExecutorKind,
    /// Program and arguments (for `command`), with placeholders.
    pub command: Option<Vec<String>>,
    /// Per-run time limit in seconds.
    pub timeout_s: Option<f64>,
    /// Runs at a time.
    pub jobs: Option<usize>,
    /// How many times a failed run is tried again before it counts as failed.
    pub retries: Option<u32>,
    /// Settings of the built-in stand-in model.
    pub sim: Option<crate::sim::SimSettings>,
    /// Settings of the Slurm executor.
    pub slurm: Option<slurm::SlurmSettings>,
}

/// The executors autolb has, as `[executor] kind` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorKind {
    /// The built-in stand-in coupled model, in-process ([`sim`]).
    Sim,
    /// A user command run locally, one supervised process per run ([`command`]).
    Command,
    /// A Slurm batch job per run ([`slurm`]).
    Slurm,
}

/// Everything an executor needs to start one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// Stable id of the run within its campaign (also used in job names).
    pub id: String,
    /// The lb-iteration the run belongs to, 0-based.
    pub iteration: u32,
    /// The test's stable id, 0-based, in the order the campaign created its tests.
    pub test: u32,
    /// Which repetition of the test in this iteration, 1-based.
    pub repetition: u32,
    /// `(component name, PEs)` in component order. A hybrid component's PEs are cores: its
    /// MPI ranks x its `threads`.
    pub nproc: Vec<(String, u32)>,
    /// OpenMP threads per MPI rank of each component in `nproc`, in the same order; empty when
    /// every component runs one thread per rank (pure MPI).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<u32>,
    /// Unbalanced extra PEs (XIOS, runoff mapper) the run also takes.
    pub extra_pes: u32,
    /// Where the run writes its timing output, stdout/stderr and exit status.
    pub run_dir: PathBuf,
    /// The one component a standalone run measures (a scaling campaign); `nproc` then holds
    /// only it. `None` for a coupled run of every component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
}

impl RunRequest {
    /// OpenMP threads per rank of the `k`-th component in `nproc` (1 without threads).
    pub fn threads_of(&self, k: usize) -> u32 {
        self.threads.get(k).copied().unwrap_or(1).max(1)
    }

    /// MPI ranks of the `k`-th component in `nproc`: its cores over its threads.
    pub fn ranks_of(&self, k: usize) -> u32 {
        self.nproc.get(k).map_or(0, |(_, p)| p / self.threads_of(k))
    }

    /// Whether some component runs more than one thread per rank.
    pub fn is_hybrid(&self) -> bool {
        self.threads.iter().any(|&t| t > 1)
    }

    /// All PEs of the run, extras included (saturating: absurd counts in a campaign file must
    /// not overflow).
    pub fn total_nproc(&self) -> u32 {
        self.nproc
            .iter()
            .fold(self.extra_pes, |sum, (_, p)| sum.saturating_add(*p))
    }
}

/// An executor's handle on a started run (a process id, a Slurm job id), persisted in the
/// campaign state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticket(pub String);

/// What an executor knows about a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunStatus {
    /// Waiting for resources (e.g. a pending Slurm job).
    Queued,
    /// Started and not ended yet.
    Running,
    /// Ended with this exit code; the campaign reads the timing output from the run directory
    /// (exit code 0) or records a failure (anything else).
    Finished {
        /// The command's (or job's) exit code.
        exit_code: i32,
    },
    /// Ended without a usable result (timeout, cancelled, node failure, out of memory).
    Failed {
        /// Why, as the executor or scheduler tells it (kept in the run's record).
        reason: String,
    },
    /// The executor no longer knows the run (e.g. a local process from a driver that died);
    /// the campaign starts it again.
    Lost,
}

/// Why an executor could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    /// The `[executor]` settings cannot work (a bad command template, timeout, truth curve or
    /// Slurm option), or a run's values cannot be put into the command template. The message
    /// names the key and the value.
    #[error("{0}")]
    Config(String),
    /// A file or process operation failed (creating a run directory, starting a process,
    /// writing a job script).
    #[error("{what}: {source}")]
    Io {
        /// What autolb was doing, naming the file or program.
        what: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The batch scheduler refused or failed (an `sbatch` that printed no job id, a Slurm
    /// command missing from `PATH` or ending with an error, with its own message).
    #[error("{0}")]
    Scheduler(String),
}

/// Runs configurations of the coupled model.
pub trait Executor: Send {
    /// Short name for messages and the state file (`sim`, `command`, `slurm`).
    fn kind(&self) -> &'static str;

    /// Starts (or submits) a run without waiting for it.
    fn start(&mut self, run: &RunRequest) -> Result<Ticket, ExecutorError>;

    /// The status of each run, in the order given. Implementations should ask their backend
    /// once for all runs (one `squeue` call, not one per job).
    fn poll(&mut self, runs: &[(&RunRequest, &Ticket)]) -> Result<Vec<RunStatus>, ExecutorError>;

    /// Stops a run (kills the process, `scancel`s the job).
    fn cancel(&mut self, run: &RunRequest, ticket: &Ticket) -> Result<(), ExecutorError>;

    /// After a driver restart: finds a run started before the crash, by its ticket if the state
    /// has one, else by other means (e.g. the Slurm job name). `None` means it must be started.
    fn recover(
        &mut self,
        run: &RunRequest,
        ticket: Option<&Ticket>,
    ) -> Result<Option<Ticket>, ExecutorError> {
        let _ = (run, ticket);
        Ok(None)
    }

    /// Cancels whatever this executor still runs for the campaign that the state has no ticket
    /// for (a Slurm job submitted just before the driver crashed, found by its job name), and
    /// says what it cancelled. Executors whose runs die with the driver end here whatever an
    /// earlier driver's runs left running (the driver calls it after recovering, before it
    /// starts anything).
    fn cancel_untracked(&mut self) -> Result<Vec<String>, ExecutorError> {
        Ok(Vec::new())
    }

    /// How long the driver waits between polls.
    fn poll_interval(&self) -> Duration {
        Duration::from_millis(200)
    }

    /// Whether runs go on when the driver process ends (Slurm jobs do; local processes and
    /// simulator threads do not). When they do not, a driver that is stopped cancels its
    /// running runs and a restarted one runs them again.
    fn runs_outlive_driver(&self) -> bool {
        true
    }
}

/// What an executor may need to know about the campaign besides its `[executor]` table.
#[derive(Debug, Clone)]
pub struct ExecutorContext {
    /// Directory of the campaign file: relative paths in `[executor]` are relative to it.
    pub base_dir: PathBuf,
    /// The balanced components in order.
    pub components: Vec<ComponentContext>,
    /// Coupling period in seconds, if the campaign file gives it.
    pub period_s: Option<f64>,
    /// Whether runs are standalone runs of one component each (a scaling campaign): the
    /// command template is checked with `{component}` and `{nproc}` for every component.
    pub standalone: bool,
    /// The layout tree the components run in, when the campaign gives one: it places each
    /// component's tasks (its first PE), for the stand-in model and the `{rootpe.NAME}`
    /// placeholders.
    pub layout: Option<crate::layout::Layout>,
}

/// One balanced component, as an executor sees it.
#[derive(Debug, Clone)]
pub struct ComponentContext {
    /// Its name in the campaign file (the key of [`RunRequest::nproc`]).
    pub name: String,
    /// Its name in the timing output (what the stand-in model writes).
    pub timing_name: String,
    /// The campaign's curve (the stand-in model's default truth), in the campaign's PEs
    /// (cores); `None` in a scaling campaign, which measures it.
    pub curve: Option<Curve>,
    /// OpenMP threads per MPI rank the campaign runs it at (1: pure MPI).
    pub threads: u32,
}

/// Builds the executor of a campaign's `[executor]` table.
pub fn from_config(
    cfg: &ExecutorConfig,
    campaign_dir: &Path,
    ctx: &ExecutorContext,
) -> Result<Box<dyn Executor>, ExecutorError> {
    Ok(match cfg.kind {
        ExecutorKind::Command => Box::new(command::CommandExecutor::from_config(
            cfg,
            campaign_dir,
            ctx,
        )?),
        ExecutorKind::Sim => Box::new(sim::SimExecutor::from_config(cfg, ctx)?),
        ExecutorKind::Slurm => {
            Box::new(slurm::SlurmExecutor::from_context(cfg, campaign_dir, ctx)?)
        }
    })
}

/// Name of the file in a run directory holding how the run ended: its exit code (`0`), or
/// `failed: <reason>` (timeout, cancelled, the stand-in model's error). Written atomically by
/// the local executors once the run has ended, so a restarted driver can tell a finished run
/// (whose result it reads) from one that died with the previous driver (which it runs again).
pub const EXIT_STATUS_FILE: &str = "exit_status";

/// Name of the file in a run directory holding the run's wall seconds, start-up and shutdown
/// included: written by the stand-in model, or by a job script or workflow manager that times
/// the run itself. A scaling campaign with `timing = "wall"` reads it first.
pub const WALL_FILE: &str = "wall_s";

/// Name of the empty file the `command` executor writes into a run directory just before it
/// starts the command: its modification time is the run's start, and `exit_status`'s (written
/// the moment the command ends) its end, both stamped by the same file system's clock.
pub const STARTED_FILE: &str = "autolb.started";

/// The wall seconds of an ended run: `path/wall_s` when there (or `path` itself when it is
/// such a file), else from the start stamp to `exit_status` (see [`STARTED_FILE`]). `Err`
/// says what is missing.
pub fn wall_seconds(path: &Path) -> Result<f64, String> {
    let file = if path.is_dir() {
        path.join(WALL_FILE)
    } else {
        path.to_path_buf()
    };
    if file.is_file() {
        let text = crate::fsutil::read_small_text(&file).map_err(|e| e.to_string())?;
        return match text.trim().parse::<f64>() {
            Ok(w) if w.is_finite() && w > 0.0 => Ok(w),
            _ => Err(format!(
                "{}: {:?} is not a positive number of seconds",
                file.display(),
                text.trim()
            )),
        };
    }
    let modified = |name: &str| {
        std::fs::metadata(path.join(name))
            .and_then(|m| m.modified())
            .map_err(|e| format!("{}: {e}", path.join(name).display()))
    };
    let (start, end) = (modified(STARTED_FILE), modified(EXIT_STATUS_FILE));
    match (start, end) {
        (Ok(start), Ok(end)) => end
            .duration_since(start)
            .ok()
            .map(|d| d.as_secs_f64())
            .filter(|&w| w > 0.0)
            .ok_or_else(|| format!("{}: the run ended before it started", path.display())),
        _ => Err(format!(
            "{}: no {WALL_FILE} file and no start and end stamps ({STARTED_FILE}, {EXIT_STATUS_FILE}); write the run's wall seconds into {WALL_FILE}",
            path.display()
        )),
    }
}

/// Writes `run_dir/exit_status` for `status` (a `Finished` or `Failed` status).
pub fn write_exit_status(run_dir: &Path, status: &RunStatus) -> std::io::Result<()> {
    let text = match status {
        RunStatus::Finished { exit_code } => format!("{exit_code}\n"),
        RunStatus::Failed { reason } => format!("failed: {}\n", reason.replace('\n', " ")),
        other => format!("failed: unexpected status {other:?}\n"),
    };
    crate::fsutil::write_atomically(&run_dir.join(EXIT_STATUS_FILE), text.as_bytes())
}

/// Reads `run_dir/exit_status`, if the run has ended.
pub fn read_exit_status(run_dir: &Path) -> Option<RunStatus> {
    let text = std::fs::read_to_string(run_dir.join(EXIT_STATUS_FILE)).ok()?;
    let line = text.trim();
    if let Some(reason) = line.strip_prefix("failed:") {
        return Some(RunStatus::Failed {
            reason: reason.trim().to_string(),
        });
    }
    match line.parse::<i32>() {
        Ok(exit_code) => Some(RunStatus::Finished { exit_code }),
        Err(_) => Some(RunStatus::Failed {
            reason: format!("unreadable {EXIT_STATUS_FILE} {line:?}"),
        }),
    }
}

/// What a run directory says about a run its executor no longer tracks: how it ended
/// (`exit_status`), else [`RunStatus::Lost`] (it died unfinished and must run again).
pub fn status_on_disk(run_dir: &Path) -> RunStatus {
    read_exit_status(run_dir).unwrap_or(RunStatus::Lost)
}

/// For [`Executor::recover`] of a local executor: a run that wrote its exit status ended
/// before the previous driver could record it, and `poll` reads the file; it keeps its ticket
/// (or gets `ended`). `None` when it has not ended.
pub fn recover_ended(run: &RunRequest, ticket: Option<&Ticket>) -> Option<Ticket> {
    read_exit_status(&run.run_dir)?;
    Some(ticket.cloned().unwrap_or_else(|| Ticket("ended".into())))
}

/// 64-bit FNV-1a of `bytes`: a hash that stays the same across Rust versions and platforms
/// (unlike `DefaultHasher`), for names and seeds that must not change.
pub(crate) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_status_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_exit_status(dir.path()), None);
        for s in [
            RunStatus::Finished { exit_code: 0 },
            RunStatus::Finished { exit_code: 3 },
            RunStatus::Failed {
                reason: "timed out after 5 s".into(),
            },
        ] {
            write_exit_status(dir.path(), &s).unwrap();
            assert_eq!(read_exit_status(dir.path()), Some(s));
        }
    }
}
