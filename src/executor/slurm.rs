//! The Slurm executor: each run is a batch job.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ExecutorError;
use crate::config::ExecutorConfig;

/// `[executor.slurm]` settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmSettings {}

/// Runs each campaign run as a Slurm batch job.
#[derive(Debug)]
pub struct SlurmExecutor {}

impl SlurmExecutor {
    /// Builds the executor from the campaign's `[executor]` table.
    pub fn from_config(
        _cfg: &ExecutorConfig,
        _campaign_dir: &Path,
    ) -> Result<SlurmExecutor, ExecutorError> {
        Err(ExecutorError::Config(
            "the slurm executor is being built".into(),
        ))
    }
}
