//! The built-in stand-in coupled model (`sim` executor, `autolb simulate`).

use serde::{Deserialize, Serialize};

/// `[executor.sim]` settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSettings {}
