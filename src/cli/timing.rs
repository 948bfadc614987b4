//! `autolb timing`.

use clap::Args;
use color_eyre::eyre::{bail, Result};

#[derive(Debug, Args)]
pub struct TimingArgs {}

pub fn run(_args: &TimingArgs) -> Result<()> {
    bail!("not built yet")
}
