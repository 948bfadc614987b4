//! `autolb tui` arguments (the app itself is in `crate::tui`).

use clap::Args;

#[derive(Debug, Default, Args)]
pub struct TuiArgs {}
