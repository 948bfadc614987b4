//! `autolb example --out DIR`: write the files the guide's examples use, so that an installed
//! binary, with no repository beside it, can run every one of them.

use std::path::PathBuf;

use clap::Args;
use color_eyre::eyre::Result;

use autolb::example::{self, WriteAssetsError};

use crate::shared::error::user;
use crate::shared::output::outln;

#[derive(Debug, Args)]
#[command(
    after_help = "The files land in DIR/assets/, laid out as in the repository, so every example \
                  in the guide that names `assets/...` works from DIR, e.g.\n  \
                  autolb example --out ex && cd ex && autolb predict --config assets/demo-campaign.toml"
)]
pub struct ExampleArgs {
    /// Directory to write into (created if needed); the files go to DIR/assets/...
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Overwrite files that are there already (without it, nothing is written if any is).
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: &ExampleArgs) -> Result<()> {
    let written = example::write_assets(&args.out, args.force).map_err(|e| match e {
        WriteAssetsError::Exists { path, count } => {
            let others = match count - 1 {
                0 => String::new(),
                1 => " (and 1 more file)".to_string(),
                n => format!(" (and {n} more files)"),
            };
            user(format!(
                "{} exists{others}; nothing written. Pass --force to overwrite, or choose \
                 another --out",
                path.display()
            ))
        }
        e @ WriteAssetsError::Io { .. } => user(e),
    })?;
    for path in &written {
        outln!("wrote {}", path.display())?;
    }
    outln!(
        "{} files under {}; from {}, try: autolb predict --config assets/demo-campaign.toml",
        written.len(),
        args.out.join(example::ASSETS_DIR).display(),
        args.out.display()
    )
}
