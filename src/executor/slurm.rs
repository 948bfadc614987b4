//! The Slurm executor: each run is a batch job.

use serde::{Deserialize, Serialize};

/// `[executor.slurm]` settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmSettings {}
