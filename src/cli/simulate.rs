//! `autolb simulate`.

use clap::Args;
use color_eyre::eyre::{bail, Result};

#[derive(Debug, Args)]
pub struct SimulateArgs {}

pub fn run(_args: &SimulateArgs) -> Result<()> {
    bail!("not built yet")
}
