//! `autolb tui` arguments (the app itself is in `crate::tui`).

use std::path::PathBuf;

use clap::Args;

use autolb::interp::Method;
use autolb::watch::WatchMode;

use super::parse_key_value;

/// With no data given (`autolb` alone, or `autolb tui`), the app opens on the built-in
/// EC-Earth3 example with a live demo campaign.
#[derive(Debug, Default, Args)]
pub struct TuiArgs {
    /// Campaign file (TOML) with the curves and prediction settings.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A campaign directory (or any directory of runs' timing output) to watch; the campaign
    /// may be run by another process, another terminal or Slurm.
    #[arg(long, value_name = "DIR")]
    pub campaign: Option<PathBuf>,
    /// A component's scalability curve, `NAME=PATH`; repeat for each component.
    #[arg(long = "curve", value_name = "NAME=PATH", value_parser = parse_key_value)]
    pub curves: Vec<(String, String)>,
    /// Budget: the most PEs the balanced components may use together.
    #[arg(long, value_name = "N")]
    pub max_nproc: Option<u32>,
    /// Distance between candidate PE counts.
    #[arg(long, value_name = "S")]
    pub step: Option<u32>,
    /// Initial TTS_w, 0..1 [default: 0.5].
    #[arg(long, value_name = "W")]
    pub tts_w: Option<f64>,
    /// How many configurations to propose [default: 5].
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,
    /// Interpolation: linear, quadratic or pchip.
    #[arg(long, value_name = "METHOD")]
    pub interp: Option<Method>,
    /// PEs that count in CHSY but are not balanced.
    #[arg(long, value_name = "E")]
    pub extra_pes: Option<u32>,
    /// Coupling period in seconds, to read raw LUCIA files of a directory without campaign
    /// state [default: the campaign file's period_s; 2700 for the built-in example].
    #[arg(long, value_name = "SECONDS")]
    pub period: Option<f64>,
    /// How to watch: auto (poll on NFS/Lustre/GPFS/..., native notifications elsewhere),
    /// native or poll.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = parse_watch)]
    pub watch: WatchMode,
    /// Seconds between polls while runs are being written (idle polls back off to 4x).
    #[arg(long, value_name = "SECONDS")]
    pub poll_interval: Option<f64>,
    /// Draw without colours (also when NO_COLOR is set).
    #[arg(long)]
    pub no_color: bool,
    /// Directory where `w` writes selections [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Key bindings file [default: keys.toml in the autolb configuration directory].
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,
    /// Demo only: do not run the live demo campaign.
    #[arg(long)]
    pub no_demo_campaign: bool,
    /// Demo only: real seconds per modelled second of the stand-in model [default: 0.2].
    #[arg(long, value_name = "FACTOR")]
    pub demo_compression: Option<f64>,
}

fn parse_watch(s: &str) -> Result<WatchMode, String> {
    s.parse()
}
