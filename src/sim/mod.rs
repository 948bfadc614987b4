//! The built-in stand-in coupled model (`autolb simulate`, used by the `sim` executor): writes
//! raw LUCIA files for a run of any configuration.

use serde::{Deserialize, Serialize};

/// `[executor.sim]` settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSettings {}
