//! Command-line interface. Each subcommand lives in its own module; this one parses the
//! arguments, dispatches, and turns errors into messages and exit codes.
//!
//! Exit codes: 0 success, 1 an unexpected failure, 2 bad input (a `UserError`: a missing or
//! malformed file, an invalid flag value; see [`crate::shared::error`]), and the campaign
//! codes of [`crate::shared::error::exit`] (busy, not waiting, done, not ready). Bad input
//! prints one line that says what to fix; so does every coded outcome.

pub mod campaign;
pub mod campaign_outside;
pub mod predict;
pub mod report;
pub mod simulate;
pub mod timing;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use color_eyre::eyre::Result;

use std::io::IsTerminal;

use crate::shared::error::{Coded, UserError};
use crate::tui::args::TuiArgs;

/// Automatic load balancing of coupled Earth system models.
///
/// Without a command, opens the terminal app on the built-in EC-Earth3 example.
#[derive(Debug, Parser)]
#[command(name = "autolb", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Rank every configuration within a budget by fittingness and propose the top N.
    Predict(predict::PredictArgs),
    /// Read a run's timing output (LUCIA and others) and print the CPMIP metrics.
    Timing(timing::TimingArgs),
    /// Load-balance campaigns: init, run, status, next, record.
    #[command(subcommand)]
    Campaign(campaign::CampaignCommand),
    /// Write a shareable report (one HTML page, or Markdown + SVG) of a campaign or a prediction.
    Report(report::ReportArgs),
    /// Run the built-in stand-in coupled model and write raw LUCIA files.
    Simulate(simulate::SimulateArgs),
    /// Open the terminal app on your own curves, campaign file or campaign directory.
    Tui(TuiArgs),
}

/// Parses, runs, and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    if color_eyre::install().is_err() {
        eprintln!("autolb: warning: could not install the error reporter");
    }
    init_tracing();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(report) => {
            if let Some(user_error) = report.downcast_ref::<UserError>() {
                eprintln!("autolb: error: {user_error}");
                ExitCode::from(2)
            } else if let Some(coded) = report.downcast_ref::<Coded>() {
                eprintln!("autolb: {coded}");
                ExitCode::from(coded.code)
            } else if std::io::stderr().is_terminal() {
                eprintln!("autolb: error: {report:?}");
                ExitCode::from(1)
            } else {
                // Job logs and pipes: the cause chain on one line, no colour, no backtrace.
                eprintln!("autolb: error: {report:#}");
                ExitCode::from(1)
            }
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        None => crate::tui::run(&TuiArgs::default()),
        Some(Command::Predict(args)) => predict::run(&args),
        Some(Command::Timing(args)) => timing::run(&args),
        Some(Command::Campaign(cmd)) => campaign::run(cmd),
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::Simulate(args)) => simulate::run(&args),
        Some(Command::Tui(args)) => crate::tui::run(&args),
    }
}

/// Logs go to stderr, off unless `AUTOLB_LOG` asks (e.g. `AUTOLB_LOG=debug`), so the terminal
/// app and `--json` output stay clean.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AUTOLB_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
