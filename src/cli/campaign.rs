//! `autolb campaign ...`.

use clap::Subcommand;
use color_eyre::eyre::{bail, Result};

#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Create a campaign directory from a campaign file.
    Init,
}

pub fn run(_cmd: CampaignCommand) -> Result<()> {
    bail!("not built yet")
}
