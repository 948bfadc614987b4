//! The terminal app (ratatui): curves, fittingness matrix with a TTS_w slider, iteration table.

use color_eyre::eyre::{bail, Result};

use crate::cli::tui::TuiArgs;

/// Opens the app.
pub fn run(_args: &TuiArgs) -> Result<()> {
    bail!("the terminal app is not built yet")
}
