//! Command-line interface. Each subcommand lives in its own module; this one parses the
//! arguments, dispatches, and turns errors into messages and exit codes.
//!
//! Exit codes: 0 success, 1 an unexpected failure, 2 bad input (a `UserError`: a missing or
//! malformed file, an invalid flag value; see [`crate::shared::error`]), and the campaign
//! codes of [`crate::shared::error::exit`] (busy, not waiting, done, not ready). Bad input
//! prints one line that says what to fix; so does every coded outcome. Output that cannot be
//! written ([`crate::shared::output`]) is handled here alone: a closed pipe ends quietly with
//! 141 (128 + SIGPIPE, as a shell reports a command killed by it), any other write error (a
//! full disk) is one line and exit code 2.

pub mod campaign;
pub mod completions;
pub mod example;
pub mod model;
pub mod predict;
pub mod report;
pub mod simulate;
pub mod timing;
mod timing_cime;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use color_eyre::eyre::Result;

use std::io::IsTerminal;

use crate::shared::error::{Coded, UserError};
use crate::shared::output::{self, errln, OutputError};
use crate::tui::args::TuiArgs;

/// Automatic load balancing of coupled Earth system models.
///
/// Without a command, opens the terminal app on the built-in EC-Earth3 example with a live demo
/// campaign (a run lands about every 10 s, for about 2 minutes; `autolb tui
/// --demo-compression 0.2` runs it five times faster).
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
    /// The performance model: check it on measured runs (leave-one-out) or fit it for
    /// `predict --model`.
    #[command(subcommand)]
    Model(model::ModelCommand),
    /// Run the built-in stand-in coupled model and write raw LUCIA files.
    Simulate(simulate::SimulateArgs),
    /// Open the terminal app on your own curves, campaign file or campaign directory.
    Tui(TuiArgs),
    /// Write the bundled curves and example campaign files into DIR/assets/, so the guide's
    /// examples run from DIR.
    Example(example::ExampleArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff), or write one page per command with --out.
    Man(completions::ManArgs),
}

/// Parses, runs, and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // A usage error is bad input like any other: one plain line, exit code 2.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr().lock(),
                "autolb: {}",
                tame(&one_line_usage_error(&e))
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version: the text is the command's output, so a help that could not
            // be written (a full disk) is a failure like any other output's.
            return match e.print().and_then(|()| finish_stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(io) => output_failure(&OutputError(io)),
            };
        }
    };
    // The full report is for bugs; it (and a panic's) is plain, without colours: its control
    // characters are shown escaped like every line autolb prints, so a colour code would show
    // as text, and a batch job's log wants none.
    let hook = color_eyre::config::HookBuilder::default().theme(color_eyre::config::Theme::new());
    if hook.install().is_err() {
        errln!("autolb: warning: could not install the error reporter");
    }
    init_tracing();
    match run(cli).and_then(|()| output::flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(report) => {
            use std::io::Write;
            // A closed stderr must not turn an error into a panic.
            let mut stderr = std::io::stderr().lock();
            if let Some(output_error) = report.chain().find_map(|e| e.downcast_ref::<OutputError>())
            {
                drop(stderr);
                output_failure(output_error)
            } else if let Some(user_error) = report.downcast_ref::<UserError>() {
                // One line, whatever the message holds: a name's newline shows as `\n`.
                let line = tame(&user_error.to_string());
                let _ = writeln!(stderr, "autolb: error: {line}");
                ExitCode::from(2)
            } else if let Some(coded) = report.downcast_ref::<Coded>() {
                let _ = writeln!(stderr, "autolb: {}", tame(&coded.to_string()));
                ExitCode::from(coded.code)
            } else if std::io::stderr().is_terminal() {
                let text = format!("{report:?}");
                let _ = writeln!(stderr, "autolb: error: {}", escape_layout(&text));
                ExitCode::from(1)
            } else {
                // Job logs and pipes: the cause chain on one line, no colour, no backtrace.
                let _ = writeln!(stderr, "autolb: error: {}", tame(&format!("{report:#}")));
                ExitCode::from(1)
            }
        }
    }
}

/// The exit code and message of output that could not be written: a closed pipe ends quietly
/// with 141, anything else (a full disk, a closed stdout) is one line and exit code 2.
fn output_failure(e: &OutputError) -> ExitCode {
    if e.is_broken_pipe() {
        // The reader has all it wanted (`| head`): nothing to say.
        return ExitCode::from(BROKEN_PIPE);
    }
    errln!("autolb: {e}");
    ExitCode::from(2)
}

/// Flushes stdout, so that text still buffered fails here rather than unseen at exit.
fn finish_stdout() -> std::io::Result<()> {
    use std::io::Write;
    std::io::stdout().lock().flush()
}

/// A multi-line report (an unexpected error's, for a terminal) with the control characters of
/// what it quotes escaped and its own line ends kept.
fn escape_layout(text: &str) -> String {
    output::escape_controls(text, output::Keep::LinesAndTabs).into_owned()
}

/// A message as one line: control characters (a newline included) shown escaped
/// (`\x1b`, `\n`), and every word longer than [`LONG_WORD`] characters (a 100,000-character
/// name or path) cut to its start, `...` and its length, so one line stays one readable line.
fn tame(line: &str) -> String {
    let line = output::escape_controls(line, output::Keep::Nothing);
    line.split(' ')
        .map(|word| {
            if word.chars().count() > LONG_WORD {
                autolb::limits::display_value(word)
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Longest word an error message shows whole.
const LONG_WORD: usize = 200;

/// The exit code of a command whose reader closed the pipe: 128 + SIGPIPE, what a shell shows
/// for a program the signal ended.
const BROKEN_PIPE: u8 = 141;

/// clap's message as one line: its first paragraph (the error and what it names) with the
/// lines joined, the command or flag it guesses was meant (clap puts that in a later
/// paragraph, which the one line would drop), and where to read more.
fn one_line_usage_error(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let text = e.render().to_string();
    let first: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let guesses: Vec<String> = e
        .context()
        .filter(|(kind, _)| {
            matches!(
                kind,
                ContextKind::SuggestedSubcommand
                    | ContextKind::SuggestedArg
                    | ContextKind::SuggestedValue
            )
        })
        .flat_map(|(_, value)| match value {
            ContextValue::String(s) => vec![s.clone()],
            // clap lists the likeliest last: name it first.
            ContextValue::Strings(v) => v.iter().rev().cloned().collect(),
            _ => Vec::new(),
        })
        .map(|s| format!("'{s}'"))
        .collect();
    let guess = match guesses.as_slice() {
        [] => String::new(),
        g => format!("; did you mean {}?", g.join(" or ")),
    };
    let sep = if guess.is_empty() { ";" } else { "" };
    format!("{}{guess}{sep} see --help", first.join(" "))
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        None => crate::tui::run(&TuiArgs::default()),
        Some(Command::Predict(args)) => predict::run(&args),
        Some(Command::Timing(args)) => timing::run(&args),
        Some(Command::Campaign(cmd)) => campaign::run(cmd),
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::Model(cmd)) => model::run(cmd),
        Some(Command::Simulate(args)) => simulate::run(&args),
        Some(Command::Tui(args)) => crate::tui::run(&args),
        Some(Command::Example(args)) => example::run(&args),
        Some(Command::Completions(args)) => completions::completions(&args),
        Some(Command::Man(args)) => completions::man(&args),
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
