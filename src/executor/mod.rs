//! Executors: what actually runs one configuration of the coupled model.
//!
//! The campaign engine talks to every executor through [`Executor`], so the algorithm never
//! knows whether a run is a local process, the built-in stand-in model or a Slurm job. An
//! executor starts runs without blocking, reports their status when polled, and hands back a
//! [`Ticket`] that the campaign stores in its state, so that a restarted driver can find runs
//! started before a crash ([`Executor::recover`]).

pub mod slurm;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Everything an executor needs to start one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// Stable id of the run within its campaign (also used in job names).
    pub id: String,
    pub iteration: u32,
    pub test: u32,
    pub repetition: u32,
    /// `(component name, PEs)` in component order.
    pub nproc: Vec<(String, u32)>,
    /// Unbalanced extra PEs (XIOS, runoff mapper) the run also takes.
    pub extra_pes: u32,
    /// Where the run writes its timing output, stdout/stderr and exit status.
    pub run_dir: PathBuf,
}

impl RunRequest {
    /// All PEs of the run, extras included.
    pub fn total_nproc(&self) -> u32 {
        self.nproc.iter().map(|(_, p)| p).sum::<u32>() + self.extra_pes
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
    Running,
    /// Ended with this exit code; the campaign reads the timing output from the run directory
    /// (exit code 0) or records a failure (anything else).
    Finished {
        exit_code: i32,
    },
    /// Ended without a usable result (timeout, cancelled, node failure, out of memory).
    Failed {
        reason: String,
    },
    /// The executor no longer knows the run (e.g. a local process from a driver that died);
    /// the campaign starts it again.
    Lost,
}

/// Why an executor could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    #[error("{0}")]
    Config(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
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

    /// How long the driver waits between polls.
    fn poll_interval(&self) -> Duration {
        Duration::from_millis(200)
    }
}
