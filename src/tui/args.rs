//! `autolb tui` arguments.

use std::path::PathBuf;

use clap::Args;

use autolb::watch::WatchMode;

use crate::shared::parse::{parse_compression, parse_period, parse_poll_interval};
use crate::shared::prediction_flags::{ModelFlags, PredictionFlags};

/// With no data given (`autolb` alone, or `autolb tui`), the app opens on the built-in
/// EC-Earth3 example with a live demo campaign.
#[derive(Debug, Default, Args)]
pub struct TuiArgs {
    /// Curves and prediction settings, as for `autolb predict` (`--tts-w` sets the slider's
    /// starting point).
    #[command(flatten)]
    pub prediction: PredictionFlags,
    /// A calibrated model for the matrix and the top N (`M` switches back and forth).
    #[command(flatten)]
    pub model: ModelFlags,
    /// A campaign directory (or any directory of runs' timing output) to watch; the campaign
    /// may be run by another process, another terminal or Slurm.
    #[arg(long, value_name = "DIR")]
    pub campaign: Option<PathBuf>,
    /// Coupling period in seconds, to read raw LUCIA files of a directory without campaign
    /// state [default: the campaign file's period_s; 2700 for the built-in example].
    #[arg(long, value_name = "SECONDS", value_parser = parse_period)]
    pub period: Option<f64>,
    /// How to watch: auto (poll on NFS/Lustre/GPFS/..., native notifications elsewhere),
    /// native or poll.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = parse_watch)]
    pub watch: WatchMode,
    /// Seconds between polls while runs are being written (idle polls back off to 4x).
    #[arg(long, value_name = "SECONDS", value_parser = parse_poll_interval)]
    pub poll_interval: Option<f64>,
    /// Draw without colours (also when NO_COLOR is set).
    #[arg(long)]
    pub no_color: bool,
    /// Directory where `w`, `R` and `y` write their files [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Key bindings file [default: keys.toml in the autolb configuration directory].
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,
    /// Demo only: do not run the live demo campaign.
    #[arg(long)]
    pub no_demo_campaign: bool,
    /// Demo only: real seconds per modelled second of the stand-in model [default: 1, a run
    /// lands about every 10 s and the demo lasts about 2 minutes; 0.2 is five times faster].
    #[arg(long, value_name = "FACTOR", value_parser = parse_compression)]
    pub demo_compression: Option<f64>,
}

fn parse_watch(s: &str) -> Result<WatchMode, String> {
    s.parse()
}
