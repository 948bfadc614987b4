//! `autolb campaign ...`: the load-balance campaign (paper section 4.2, Algorithm 1).
//!
//! `init` creates a campaign directory from a campaign file, `run` drives it with its
//! executor, `status` shows the iteration table, `cancel` stops every queued or running run.
//! `next`, `record`, `wait`, `exec` and `plan`, for an external workflow manager, live in
//! [`external`].

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::{Args, Subcommand};
use color_eyre::eyre::{self, Result};
use indicatif::{ProgressBar, ProgressStyle};

use autolb::campaign::{self, CampaignError, DriveEvent, DriveOptions, DriveOutcome, RunState};
use autolb::predict::ConfigurationText;

pub mod external;

use crate::shared::error::{coded, exit, user};
use crate::shared::output::{errln, out, outln, shown, write_terminal_control};
use external::{ExecArgs, NextArgs, PlanArgs, RecordArgs, WaitArgs};

#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Run the prediction and create a campaign directory with the first iteration's tests.
    Init(InitArgs),
    /// Drive the campaign to the end with its executor (Ctrl-C stops; run again to resume).
    Run(RunArgs),
    /// Where the campaign stands: a summary line, its driver, the iteration table and the best
    /// so far, fitted to the terminal's width (`--watch` redraws it).
    Status(StatusArgs),
    /// The runs waiting to be run, for an external workflow manager (or one run's settings).
    Next(NextArgs),
    /// Record one finished run from its timing output (or as failed).
    Record(RecordArgs),
    /// Wait until an lb-iteration is fully recorded (a barrier between iterations).
    Wait(WaitArgs),
    /// Run one run's command in its directory and record the outcome (a one-line job body).
    Exec(ExecArgs),
    /// What `init` would create from a campaign file: tests, iteration bound, PEs per run.
    Plan(PlanArgs),
    /// Cancel every queued or running run; the campaign runs nothing more.
    Cancel(DirArg),
    /// The campaign's answer: the best measured configuration with the means of every run
    /// that measured it (as EC-Earth4 YAML or a campaign file that runs it again, with --emit).
    Best(BestArgs),
}

#[derive(Debug, Args)]
pub struct BestArgs {
    /// The campaign directory (made by `autolb campaign init`).
    pub dir: PathBuf,
    /// Print one JSON object: nproc (cores), ranks, threads, sypd, chsy, fittingness, runs and
    /// where it was measured.
    #[arg(long, conflicts_with = "emit")]
    pub json: bool,
    /// Print it as `ecearth4` (EC-Earth4's experiment-config YAML, with omp_num_threads),
    /// `toml` (a campaign file with it as the one initial test, other settings kept) or `cime`
    /// (a campaign on a layout tree: the `./xmlchange` lines that set it in a CIME case).
    #[arg(long, value_name = "FORMAT")]
    pub emit: Option<BestFormat>,
}

/// What `campaign best --emit` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BestFormat {
    /// EC-Earth4's experiment configuration (YAML), the het-job form.
    Ecearth4,
    /// A campaign file that runs the answer again.
    Toml,
    /// A campaign on a layout tree: the `./xmlchange` lines (NTASKS, ROOTPE, NTHRDS of every
    /// class) that set the answer in a CIME case, then `./case.setup --reset`.
    Cime,
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
    #[arg(long, conflicts_with = "if_absent")]
    pub force: bool,
    /// Succeed without doing anything when DIR already holds this campaign (same settings),
    /// as a retried init job needs; a campaign with other settings is refused.
    #[arg(long, conflicts_with = "demo")]
    pub if_absent: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The campaign directory (made by `autolb campaign init`).
    pub dir: PathBuf,
    /// Most runs at a time [default: `jobs` in [executor], else 1].
    #[arg(long, value_name = "N", value_parser = crate::shared::parse::parse_jobs)]
    pub jobs: Option<usize>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The campaign directory (made by `autolb campaign init`).
    #[arg(required_unless_present = "watch")]
    pub dir: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Redraw every SECONDS [default: 2] until the campaign is done or Ctrl-C.
    #[arg(
        long,
        value_name = "SECONDS",
        num_args = 0..=1,
        default_missing_value = "2",
        conflicts_with = "json"
    )]
    pub watch: Option<String>,
}

impl StatusArgs {
    /// The directory and, with `--watch`, the redraw period. `--watch DIR` (DIR right after
    /// the flag, taken for its value) watches DIR every 2 s, as it reads.
    fn resolve(&self) -> Result<(PathBuf, Option<Duration>)> {
        let Some(watch) = &self.watch else {
            return Ok((self.dir.clone().unwrap_or_default(), None));
        };
        match (parse_watch_seconds(watch), &self.dir) {
            (Ok(s), Some(dir)) => Ok((dir.clone(), Some(Duration::from_secs_f64(s)))),
            (Ok(_), None) => Err(user(
                "campaign status --watch: no campaign directory; give one, e.g. `autolb campaign status DIR --watch 5`",
            )),
            (Err(_), None) => Ok((PathBuf::from(watch), Some(Duration::from_secs(2)))),
            (Err(e), Some(_)) => Err(user(format!("--watch {e}"))),
        }
    }
}

/// A redraw period: a positive number of seconds, at most a day.
fn parse_watch_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err(format!(
            "{text:?} is not a number of seconds between redraws (e.g. 2, or 0.5; at most 86400)"
        )),
    }
}

#[derive(Debug, Args)]
pub struct DirArg {
    /// The campaign directory (made by `autolb campaign init`).
    pub dir: PathBuf,
}

pub fn run(cmd: CampaignCommand) -> Result<()> {
    match cmd {
        CampaignCommand::Init(a) => init(&a),
        CampaignCommand::Run(a) => drive(&a),
        CampaignCommand::Status(a) => status(&a),
        CampaignCommand::Best(a) => best(&a),
        CampaignCommand::Next(a) => external::next(&a),
        CampaignCommand::Record(a) => external::record(&a),
        CampaignCommand::Wait(a) => external::wait(&a),
        CampaignCommand::Exec(a) => external::exec(&a),
        CampaignCommand::Plan(a) => external::plan(&a),
        CampaignCommand::Cancel(a) => cancel(&a.dir),
    }
}

/// Bad input, refusals and what the system refused (a missing or read-only directory, a full
/// disk, a name too long; the message names the cause) are the user's to fix: one line, exit 2.
/// A campaign held by another process is busy (exit 3). A bug shows as another error type.
pub(crate) fn report(e: CampaignError) -> eyre::Report {
    match e {
        CampaignError::Locked { .. }
        | CampaignError::Claimed { .. }
        | CampaignError::Ending { .. }
        | CampaignError::Driven { .. } => coded(exit::BUSY, format!("busy: {e}")),
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
        let mode = match (a.force, a.if_absent) {
            (true, _) => campaign::InitMode::Force,
            (_, true) => campaign::InitMode::IfAbsent,
            _ => campaign::InitMode::New,
        };
        if campaign::init_file(&a.dir, config, mode).map_err(report)?
            == campaign::Initialised::AlreadyThere
        {
            outln!(
                "campaign {} already exists with these settings; nothing to do",
                shown(&a.dir)
            )?;
            return Ok(());
        }
    }
    let status = campaign::status(&a.dir).map_err(report)?;
    let first = status.iterations.first();
    let tests = first.map_or(0, |i| i.tests.len());
    // The runs the first iteration makes of each test: `repetitions` in Algorithm 1, one in a
    // guided campaign and in a cold start's first phase (`[scaling] repetitions`).
    let runs = first
        .and_then(|i| i.tests.iter().map(|t| t.runs.len()).max())
        .unwrap_or(status.repetitions as usize);
    outln!(
        "created campaign {} with {tests} tests x {runs} repetitions ({} executor)",
        shown(&a.dir),
        status.executor
    )?;
    out!("{}", status.table())?;
    outln!(
        "next: autolb campaign {} {}",
        if status.executor == campaign::heartbeat::EXTERNAL_EXECUTOR {
            "next"
        } else {
            "run"
        },
        shown(&a.dir)
    )?;
    Ok(())
}

fn dir_has_entries(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false)
}

fn drive(a: &RunArgs) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    // Which signal stopped the drive: the exit code says it (128 + its number), so a wrapper
    // script tells an interrupted campaign from a finished one.
    let signalled = Arc::new(AtomicUsize::new(0));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second Ctrl-C while stopping exits at once.
        signal_hook::flag::register_conditional_shutdown(
            signal,
            signal_exit_code(signal),
            Arc::clone(&stop),
        )?;
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
        signal_hook::flag::register_usize(signal, Arc::clone(&signalled), signal as usize)?;
    }
    // A closed terminal or tmux session (SIGHUP) stops like SIGTERM: runs cancelled, state
    // saved. No "second signal exits at once" here: a hangup may come twice.
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&stop))?;
    signal_hook::flag::register_usize(
        signal_hook::consts::SIGHUP,
        Arc::clone(&signalled),
        signal_hook::consts::SIGHUP as usize,
    )?;
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
    campaign::require_campaign(&a.dir).map_err(report)?;
    let outcome = campaign::drive(&a.dir, &opts, &stop).map_err(report);
    Progress::finish(&progress);
    match outcome? {
        DriveOutcome::Done { .. } => {
            let status = campaign::status(&a.dir).map_err(report)?;
            out!("{}", status.table())?;
        }
        DriveOutcome::Stopped => {
            let signal = signalled.load(Ordering::SeqCst) as i32;
            return Err(coded(
                signal_exit_code(signal) as u8,
                format!(
                    "interrupted ({}): running runs cancelled, state saved; resume with: autolb campaign run {}",
                    signal_name(signal),
                    a.dir.display()
                ),
            ));
        }
        DriveOutcome::Cancelled => {
            let _ = writeln!(std::io::stderr(), "the campaign was cancelled");
        }
    }
    Ok(())
}

/// The exit code of a drive stopped by `signal`: 128 + its number, as a shell shows a program
/// the signal ended (130 Ctrl-C, 143 SIGTERM, 129 hangup); 130 when none is known.
fn signal_exit_code(signal: i32) -> i32 {
    if signal > 0 {
        128 + signal
    } else {
        130
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "Ctrl-C",
    }
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
                threads,
                attempt,
                ..
            } => {
                // A hybrid component as ranks x threads, as the plan and status write it.
                let configuration = if threads.is_empty() {
                    ConfigurationText::pairs(nproc).slashed().to_string()
                } else {
                    nproc
                        .iter()
                        .zip(threads)
                        .map(|((name, p), &t)| match t {
                            0 | 1 => format!("{name} {p}"),
                            t => format!("{name} {}x{t}", p / t),
                        })
                        .collect::<Vec<_>>()
                        .join(" / ")
                };
                let text = format!(
                    "start {run}: {configuration}{}",
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
                    (_, _, Some(f)) if f == campaign::CANCELLED_BEFORE_START => {
                        format!("cancelled {run} before it started")
                    }
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
    let (dir, watch) = a.resolve()?;
    if let Some(period) = watch {
        return watch_status(&dir, period);
    }
    let (answer, driver) = campaign::answer(&dir).map_err(report)?;
    if a.json {
        crate::shared::output::write_json(&answer)?;
    } else {
        out!(
            "{}",
            answer.render(&driver, Path::new(&shown(&dir)), output_width())
        )?;
    }
    Ok(())
}

/// `campaign best`: the answer as text, JSON, EC-Earth4 YAML or a campaign file; one line and
/// a non-zero exit when no run succeeded.
fn best(a: &BestArgs) -> Result<()> {
    let (found, _) = campaign::answer(&a.dir).map_err(report)?;
    let dir = a.dir.display();
    let Some(answer) = &found.answer else {
        return Err(user(if found.status.scaling.is_some() {
            format!("{dir}: a scaling campaign measures curves, not configurations: it has no best; its curves are in {dir}/curves (`autolb predict` ranks on them)")
        } else if found.status.done {
            format!("{dir}: no successful run: the campaign has no best; `autolb campaign status {dir}` shows why each run failed")
        } else {
            format!("{dir}: no successful run yet: nothing to answer; `autolb campaign status {dir}` shows where the campaign stands")
        }));
    };
    let text = match (a.json, a.emit) {
        (true, _) => serde_json::to_string_pretty(answer)? + "\n",
        (false, Some(BestFormat::Ecearth4)) => answer.ecearth4(&found.status).map_err(user)?,
        (false, Some(BestFormat::Toml)) => {
            let dir = campaign::absolute_dir(&a.dir).map_err(report)?;
            let state = campaign::State::load(&dir).map_err(report)?;
            campaign::answer::rerun_file(&state, &dir, answer).map_err(user)?
        }
        (false, Some(BestFormat::Cime)) => {
            let dir = campaign::absolute_dir(&a.dir).map_err(report)?;
            let state = campaign::State::load(&dir).map_err(report)?;
            best_cime(&state, answer)?
        }
        (false, None) => found.best_text(),
    };
    out!("{text}")?;
    Ok(())
}

/// `campaign best --emit cime`: the answer placed on the campaign's layout tree, written as
/// `predict --config ... --emit cime` writes a placement.
fn best_cime(state: &campaign::State, answer: &campaign::Answer) -> Result<String> {
    let Some(tree) = campaign::tree::tree_of(state.settings.layout.as_deref()) else {
        return Err(user(
            "--emit cime writes a CIME case's layout: this campaign has no `layout`; use --emit toml, or --json",
        ));
    };
    let names: Vec<String> = answer.ranks.0.iter().map(|(n, _)| n.clone()).collect();
    let tasks: Vec<u32> = answer.ranks.0.iter().map(|(_, r)| *r).collect();
    let placed = campaign::tree::placed(&tree, &names, &tasks);
    let best = autolb::layout::search::Best {
        run_s: autolb::metrics::SECONDS_PER_DAY / answer.sypd,
        width: placed.width,
        // A campaign on a tree runs one thread per task: its cores are the PEs it spans.
        cores: u64::from(placed.width),
        placements: placed.placements,
    };
    // The lines are `predict --emit cime`'s; the comment above them says where they come from.
    let lines = crate::cli::predict::layout::cime_lines(&tree, &best);
    Ok(lines.replacen(
        "# autolb: a placement of",
        "# autolb campaign best: the best measured placement of",
        1,
    ))
}

/// `campaign status --watch`: a frame every `period` until the campaign is done (that frame
/// is the last) or Ctrl-C (exit 0: stopping a watch is how it ends). On a terminal each
/// frame replaces the last; in a file or a pipe frames follow each other under a separator.
fn watch_status(dir: &Path, period: Duration) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    let terminal = std::io::stdout().is_terminal();
    let mut first = true;
    loop {
        let width = output_width();
        let (answer, driver) = campaign::answer(dir).map_err(report)?;
        let frame = answer.render(&driver, Path::new(&shown(dir)), width);
        let status = &answer.status;
        if terminal {
            // Home and clear, then the frame: no flicker of an empty screen in between.
            write_terminal_control("\x1b[H\x1b[2J")?;
            out!("{frame}")?;
        } else {
            if !first {
                outln!("{}", "-".repeat(width.min(40)))?;
            }
            out!("{frame}")?;
        }
        first = false;
        if status.done {
            return Ok(());
        }
        let deadline = std::time::Instant::now() + period;
        while std::time::Instant::now() < deadline {
            if stop.load(Ordering::SeqCst) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50).min(period));
        }
        if stop.load(Ordering::SeqCst) {
            return Ok(());
        }
    }
}

/// The width `campaign status` fits: `COLUMNS` when set to a number, else the terminal's,
/// else (a file, a pipe, a batch job's log) 80.
fn output_width() -> usize {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return columns;
    }
    if std::io::stdout().is_terminal() {
        if let Ok((w, _)) = crossterm::terminal::size() {
            if w > 0 {
                return usize::from(w);
            }
        }
    }
    80
}

fn cancel(dir: &Path) -> Result<()> {
    match campaign::cancel(dir, Duration::from_secs(30)).map_err(report)? {
        campaign::Cancelled::Done {
            runs,
            never_started,
            warnings,
        } => {
            for w in &warnings {
                errln!("warning: {w}");
            }
            outln!(
                "cancelled {} unfinished runs: {} stopped, {never_started} never started",
                runs.len(),
                runs.len() - never_started
            )?;
        }
        campaign::Cancelled::AlreadyDone => {
            outln!("the campaign is already done; nothing to cancel")?
        }
        campaign::Cancelled::ByDriver => outln!("the running driver cancelled the campaign")?,
        campaign::Cancelled::Requested { holder } => {
            outln!("asked the running driver ({holder}) to cancel; it will at its next poll")?
        }
    }
    Ok(())
}
