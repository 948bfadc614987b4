//! `autolb campaign ...`: the load-balance campaign (paper section 4.2, Algorithm 1).
//!
//! `init` creates a campaign directory from a campaign file, `run` drives it with its
//! executor, `status` shows the iteration table, `next` / `record` let an outside workflow
//! manager run the model, `cancel` stops every queued or running run.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::{Args, Subcommand};
use color_eyre::eyre::{self, Result};
use indicatif::{ProgressBar, ProgressStyle};

use autolb::campaign::{self, CampaignError, DriveEvent, DriveOptions, DriveOutcome, RunState};

use crate::shared::error::user;

#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Run the prediction and create a campaign directory with the first iteration's tests.
    Init(InitArgs),
    /// Drive the campaign to the end with its executor (Ctrl-C stops; run again to resume).
    Run(RunArgs),
    /// The iteration table and the best configuration so far.
    Status(StatusArgs),
    /// The runs waiting to be run, for an outside workflow manager.
    Next(NextArgs),
    /// Record one finished run from its timing output (or as failed).
    Record(RecordArgs),
    /// Cancel every queued or running run; the campaign runs nothing more.
    Cancel(DirArg),
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The campaign directory to create (must be empty or new).
    pub dir: PathBuf,
    /// The campaign file (TOML); see assets/campaign-example.toml.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "demo",
        conflicts_with = "demo"
    )]
    pub config: Option<PathBuf>,
    /// Create the demo campaign instead: EC-Earth3 SR on the built-in curves, run by the
    /// stand-in model in seconds (its inputs are written to DIR/inputs).
    #[arg(long)]
    pub demo: bool,
    /// Replace a campaign already in DIR (removes its state and run directories, nothing else).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    pub dir: PathBuf,
    /// Most runs at a time [default: `jobs` in [executor], else 1].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    pub dir: PathBuf,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct NextArgs {
    pub dir: PathBuf,
    /// Print a JSON list of runs.
    #[arg(long, conflicts_with = "bash")]
    pub json: bool,
    /// Print `NAME_nprocs=( ... )` lines a runscript can source.
    #[arg(long)]
    pub bash: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    pub dir: PathBuf,
    /// The run's id, as `next` lists it (e.g. i00-t02-r1).
    #[arg(long, value_name = "ID")]
    pub run: String,
    /// The run's timing output: a directory of lucia.* files, lucia.log, table.csv ...
    /// [default: the run's directory].
    #[arg(long, value_name = "PATH")]
    pub timing: Option<PathBuf>,
    /// Record the run as failed (crashed, timed out); it is never averaged in.
    #[arg(long, conflicts_with = "timing")]
    pub failed: bool,
}

#[derive(Debug, Args)]
pub struct DirArg {
    pub dir: PathBuf,
}

pub fn run(cmd: CampaignCommand) -> Result<()> {
    match cmd {
        CampaignCommand::Init(a) => init(&a),
        CampaignCommand::Run(a) => drive(&a),
        CampaignCommand::Status(a) => status(&a),
        CampaignCommand::Next(a) => next(&a),
        CampaignCommand::Record(a) => record(&a),
        CampaignCommand::Cancel(a) => cancel(&a.dir),
    }
}

/// Bad input and refusals are user errors (exit 2); I/O failures are not.
fn report(e: CampaignError) -> eyre::Report {
    match e {
        CampaignError::Io { .. } => eyre::Report::new(e),
        other => user(other),
    }
}

fn init(a: &InitArgs) -> Result<()> {
    if a.demo {
        // The inputs live beside the campaign's own files, so the directory must be free first.
        let inputs = a.dir.join("inputs");
        if dir_has_entries(&a.dir) && !a.force {
            return Err(report(CampaignError::NotEmpty(a.dir.clone())));
        }
        let file = campaign::demo::write_demo_inputs(&inputs).map_err(report)?;
        campaign::demo::init_demo_at(&a.dir, &file, None, true).map_err(report)?;
    } else if let Some(config) = &a.config {
        campaign::init_file(&a.dir, config, a.force).map_err(report)?;
    }
    let status = campaign::status(&a.dir).map_err(report)?;
    let tests = status
        .iterations
        .first()
        .map(|i| i.tests.len())
        .unwrap_or(0);
    println!(
        "created campaign {} with {tests} tests x {} repetitions ({} executor)",
        a.dir.display(),
        status.repetitions,
        status.executor
    );
    print!("{}", status.table());
    println!(
        "next: autolb campaign {} {}",
        if status.executor == "external" {
            "next"
        } else {
            "run"
        },
        a.dir.display()
    );
    Ok(())
}

fn dir_has_entries(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false)
}

fn drive(a: &RunArgs) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second Ctrl-C while stopping exits at once.
        signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&stop))?;
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    // A closed terminal or tmux session (SIGHUP) stops like SIGTERM: runs cancelled, state
    // saved. No "second signal exits at once" here: a hangup may come twice.
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&stop))?;
    let progress = Progress::new(std::io::stderr().is_terminal());
    let observer = {
        let progress = Arc::clone(&progress);
        Arc::new(move |e: &DriveEvent| Progress::event(&progress, e))
    };
    let opts = DriveOptions {
        jobs: a.jobs,
        observer: Some(observer),
        poll_interval: None,
    };
    let outcome = campaign::drive(&a.dir, &opts, &stop).map_err(report);
    Progress::finish(&progress);
    match outcome? {
        DriveOutcome::Done { .. } => {
            let status = campaign::status(&a.dir).map_err(report)?;
            print!("{}", status.table());
        }
        DriveOutcome::Stopped => {
            let _ = writeln!(
                std::io::stderr(),
                "stopped; resume with: autolb campaign run {}",
                a.dir.display()
            );
        }
        DriveOutcome::Cancelled => {
            let _ = writeln!(std::io::stderr(), "the campaign was cancelled");
        }
    }
    Ok(())
}

/// Progress: a bar per iteration on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    terminal: bool,
}

impl Progress {
    fn new(terminal: bool) -> Arc<Mutex<Progress>> {
        Arc::new(Mutex::new(Progress {
            bar: None,
            terminal,
        }))
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            // Not `println!`: after a hangup the terminal is gone and a write error must not
            // panic the driver half-way through its clean stop.
            None => {
                let _ = writeln!(std::io::stdout(), "{text}");
            }
        }
    }

    fn event(this: &Mutex<Progress>, e: &DriveEvent) {
        let Ok(mut p) = this.lock() else {
            return;
        };
        match e {
            DriveEvent::Iteration {
                iteration,
                runs,
                ended,
            } => {
                if p.terminal {
                    if let Some(bar) = p.bar.take() {
                        bar.finish_and_clear();
                    }
                    let bar = ProgressBar::new(*runs as u64);
                    bar.set_style(
                        ProgressStyle::with_template("{prefix} [{bar:24}] {pos}/{len} runs {elapsed} {wide_msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar())
                            .progress_chars("=> "),
                    );
                    bar.set_prefix(format!("iteration {iteration}"));
                    bar.set_position(*ended as u64);
                    bar.enable_steady_tick(Duration::from_millis(200));
                    p.bar = Some(bar);
                } else {
                    p.line(format!("iteration {iteration}: {runs} runs ({ended} ended)"));
                }
            }
            DriveEvent::Resumed {
                recovered,
                restarted,
            } => p.line(format!(
                "resumed: {recovered} runs found where the last driver left them, {restarted} to run again"
            )),
            DriveEvent::RunStarted {
                run,
                nproc,
                attempt,
                ..
            } => {
                let pes: Vec<String> = nproc.iter().map(|(n, p)| format!("{n} {p}")).collect();
                let text = format!(
                    "start {run}: {}{}",
                    pes.join(" / "),
                    if *attempt > 1 { format!(" (attempt {attempt})") } else { String::new() }
                );
                match &p.bar {
                    Some(bar) => bar.set_message(text),
                    None => p.line(text),
                }
            }
            DriveEvent::RunEnded {
                run,
                state,
                sypd,
                failure,
            } => {
                let text = match (state, sypd, failure) {
                    (RunState::Done, Some(s), _) => format!("done  {run}: {s:.2} SYPD"),
                    (_, _, Some(f)) => format!("FAILED {run}: {f}"),
                    _ => format!("ended {run}"),
                };
                if let Some(bar) = &p.bar {
                    bar.inc(1);
                    if *state == RunState::Failed {
                        bar.println(text);
                    } else {
                        bar.set_message(text);
                    }
                } else {
                    p.line(text);
                }
            }
            DriveEvent::RunRetried { run, reason } => p.line(format!("again {run}: {reason}")),
            DriveEvent::TestDecided {
                iteration,
                test,
                summary,
            } => p.line(format!("iteration {iteration}, test {test}: {summary}")),
            DriveEvent::Warning { message } => p.line(format!("warning: {message}")),
            DriveEvent::Stopped => p.line("stopping: running runs cancelled, state saved".into()),
            DriveEvent::Cancelled => p.line("cancelled".into()),
            DriveEvent::Done { .. } => {}
        }
    }

    fn finish(this: &Mutex<Progress>) {
        if let Ok(mut p) = this.lock() {
            if let Some(bar) = p.bar.take() {
                bar.finish_and_clear();
            }
        }
    }
}

fn status(a: &StatusArgs) -> Result<()> {
    let status = campaign::status(&a.dir).map_err(report)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&status)?);
    } else {
        print!("{}", status.table());
    }
    Ok(())
}

fn next(a: &NextArgs) -> Result<()> {
    let runs = campaign::next(&a.dir).map_err(report)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
    } else if a.bash {
        let status = campaign::status(&a.dir).map_err(report)?;
        print!("{}", campaign::next_as_bash(&runs, &status.components));
    } else if runs.is_empty() {
        let status = campaign::status(&a.dir).map_err(report)?;
        println!(
            "nothing to run: the campaign is {}",
            match status.state {
                campaign::Phase::Running => "waiting for running runs",
                campaign::Phase::Done => "done",
                campaign::Phase::Cancelled => "cancelled",
            }
        );
    } else {
        for r in &runs {
            let pes: Vec<String> = r.nproc.0.iter().map(|(n, p)| format!("{n}={p}")).collect();
            println!("{}  {}  {}", r.run, pes.join(" "), r.run_dir.display());
        }
    }
    Ok(())
}

fn record(a: &RecordArgs) -> Result<()> {
    let r = campaign::record(&a.dir, &a.run, a.timing.as_deref(), a.failed).map_err(report)?;
    match &r.metrics {
        Some(m) => println!(
            "recorded {}: {:.2} SYPD, {:.0} CHSY, coupling cost {:.1}%",
            r.run,
            m.sypd,
            m.chsy,
            m.coupling_cost * 100.0
        ),
        None => println!("recorded {} as failed", r.run),
    }
    if let Some(i) = r.advance.new_iteration {
        println!(
            "iteration {i} is ready: autolb campaign next {}",
            a.dir.display()
        );
    } else if r.done {
        println!(
            "the campaign is done: autolb campaign status {}",
            a.dir.display()
        );
    }
    Ok(())
}

fn cancel(dir: &Path) -> Result<()> {
    match campaign::cancel(dir, Duration::from_secs(30)).map_err(report)? {
        campaign::Cancelled::Done { runs, warnings } => {
            for w in &warnings {
                eprintln!("warning: {w}");
            }
            println!("cancelled {} unfinished runs", runs.len());
        }
        campaign::Cancelled::ByDriver => println!("the running driver cancelled the campaign"),
        campaign::Cancelled::Requested { holder } => {
            println!("asked the running driver ({holder}) to cancel; it will at its next poll")
        }
    }
    Ok(())
}
