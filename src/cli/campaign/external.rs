//! `autolb campaign next | record | wait | exec | plan`: the commands an external workflow
//! manager (Autosubmit, ecFlow, a job chain) calls. Their exit codes are the table in the
//! guide's *Exit codes* page ([`crate::shared::error::exit`]).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use color_eyre::eyre::{eyre, Result};

use autolb::campaign::{self, Barrier, CampaignError, ClaimResult, NextRun, RunLookup};
use autolb::executor::command::{expand_argv, placeholder_values, reap, supervisor};
use autolb::executor::env::shell_quote;
use autolb::executor::RunStatus;

use super::report;
use crate::shared::error::{coded, exit, user};
use crate::shared::output::{errln, outln, shown, write_data};

#[derive(Debug, Args)]
pub struct NextArgs {
    pub dir: PathBuf,
    /// Print JSON: a list of runs, or with --iteration/--test/--repetition the one run.
    #[arg(long, conflicts_with_all = ["bash", "env"])]
    pub json: bool,
    /// Print `NAME_nprocs=( ... )` and `autolb_*` array lines a runscript can source.
    #[arg(long, conflicts_with = "env")]
    pub bash: bool,
    /// Print `export AUTOLB_...='...'` lines of one run, safe to `eval` (needs --iteration,
    /// --test and --repetition).
    #[arg(long, requires = "iteration")]
    pub env: bool,
    /// Only this run: its lb-iteration (0-based) ...
    #[arg(long, value_name = "I", requires_all = ["test", "repetition"])]
    pub iteration: Option<u32>,
    /// ... its test (0-based; `t03` is test 3, as an Autosubmit member name) ...
    #[arg(long, value_name = "T", requires_all = ["iteration", "repetition"], value_parser = parse_test)]
    pub test: Option<u32>,
    /// ... and its repetition (1-based). Exit 4 when it is not waiting, 5 when the campaign
    /// is done, 6 when its iteration has not started.
    #[arg(long, value_name = "R", requires_all = ["iteration", "test"])]
    pub repetition: Option<u32>,
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
    /// Seconds to wait for the campaign lock while another process holds it (0: do not
    /// wait); exit code 3 when it is still held.
    #[arg(long, value_name = "SECONDS", default_value_t = campaign::DEFAULT_LOCK_WAIT.as_secs())]
    pub wait: u64,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    pub dir: PathBuf,
    /// The lb-iteration that must be fully recorded.
    #[arg(long, value_name = "I")]
    pub iteration: u32,
    /// Give up after this many seconds (exit code 6, listing the runs not recorded);
    /// 0 checks once [default: wait as long as it takes].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    pub dir: PathBuf,
    #[arg(long, value_name = "I")]
    pub iteration: u32,
    /// The test (0-based; `t03` is test 3, as an Autosubmit member name).
    #[arg(long, value_name = "T", value_parser = parse_test)]
    pub test: u32,
    #[arg(long, value_name = "R")]
    pub repetition: u32,
    /// Seconds to wait for the campaign lock when recording (0: do not wait).
    #[arg(long, value_name = "SECONDS", default_value_t = campaign::DEFAULT_LOCK_WAIT.as_secs())]
    pub wait: u64,
    /// The command and its arguments, after `--`, with the `command` executor's number
    /// placeholders ({nproc.NAME}, {total_nproc}, {iteration}, {test}, {repetition}); it runs
    /// in the run directory with AUTOLB_RUN_DIR, AUTOLB_RUN and the rest in its environment.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The campaign file (TOML) that `campaign init` would be given.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Print one JSON object instead of the text.
    #[arg(long, conflicts_with = "env")]
    pub json: bool,
    /// Print `export AUTOLB_PLAN_...='...'` lines, safe to `eval`, for a script that
    /// generates the workflow.
    #[arg(long)]
    pub env: bool,
}

/// A test number, also as an Autosubmit member name: `3`, `03`, `t03`.
fn parse_test(text: &str) -> Result<u32, String> {
    text.strip_prefix(['t', 'T'])
        .unwrap_or(text)
        .parse()
        .map_err(|_| format!("{text:?} is not a test number (e.g. 3 or t03)"))
}

pub fn next(a: &NextArgs) -> Result<()> {
    if let (Some(i), Some(t), Some(r)) = (a.iteration, a.test, a.repetition) {
        let run = waiting_run(&a.dir, i, t, r)?;
        if a.json {
            outln!("{}", serde_json::to_string_pretty(&run)?)?;
        } else if a.env {
            write_data(&campaign::next_as_env(&run).map_err(report)?)?;
        } else if a.bash {
            let components: Vec<String> = run.nproc.0.iter().map(|(n, _)| n.clone()).collect();
            let text = campaign::next_as_bash(std::slice::from_ref(&run), &components);
            write_data(&text.map_err(report)?)?;
        } else {
            print_runs(std::slice::from_ref(&run))?;
        }
        return Ok(());
    }
    let runs = campaign::next(&a.dir).map_err(report)?;
    note_lost_driver(&a.dir);
    if a.json || a.bash {
        // The listing stays parseable on stdout; why it is empty goes to stderr.
        if runs.is_empty() {
            errln!("note: {}", why_nothing_to_run(&a.dir)?);
        }
        if a.json {
            outln!("{}", serde_json::to_string_pretty(&runs)?)?;
        } else {
            let status = campaign::status(&a.dir).map_err(report)?;
            let text = campaign::next_as_bash(&runs, &status.components).map_err(report)?;
            write_data(&text)?;
        }
    } else if runs.is_empty() {
        outln!("{}", why_nothing_to_run(&a.dir)?)?;
    } else {
        print_runs(&runs)?;
    }
    Ok(())
}

/// Why `next` lists no run: a driver runs them itself, or the campaign's state.
fn why_nothing_to_run(dir: &Path) -> Result<String> {
    if let Some(holder) = campaign::driven_by(dir).map_err(report)? {
        return Ok(format!(
            "nothing to run here: `autolb campaign run` runs this campaign's runs itself; {holder}"
        ));
    }
    let status = campaign::status(dir).map_err(report)?;
    Ok(format!(
        "nothing to run: the campaign is {}",
        match status.state {
            campaign::Phase::Running => "waiting for running runs".to_string(),
            _ => status.state_label(),
        }
    ))
}

/// A driver that died without a word is said on stderr (the listing on stdout stays
/// parseable): its runs are listed, but `campaign run` would resume them.
fn note_lost_driver(dir: &Path) {
    if let Ok((status, driver @ campaign::DriverState::Lost { .. })) =
        campaign::status_with_driver(dir)
    {
        errln!(
            "note: {}",
            driver.text_for(Path::new(&shown(dir)), &status.executor)
        );
    }
}

fn print_runs(runs: &[NextRun]) -> Result<()> {
    for r in runs {
        let pes: Vec<String> = r.nproc.0.iter().map(|(n, p)| format!("{n}={p}")).collect();
        outln!("{}  {}  {}", r.run, pes.join(" "), shown(&r.run_dir))?;
    }
    Ok(())
}

/// The run (iteration, test, repetition) if it is waiting; else the coded outcome that says
/// why not (exit 4, 5 or 6).
fn waiting_run(dir: &Path, iteration: u32, test: u32, repetition: u32) -> Result<NextRun> {
    waiting_or_why(campaign::next_run(dir, iteration, test, repetition).map_err(report)?)
}

/// The run of a lookup if it is waiting; else the coded outcome that says why not.
fn waiting_or_why(lookup: RunLookup) -> Result<NextRun> {
    match lookup {
        RunLookup::Waiting(run) => Ok(run),
        RunLookup::Claimed { run, holder } => Err(report(CampaignError::Claimed { run, holder })),
        RunLookup::NotWaiting { reason } => {
            Err(coded(exit::NOT_WAITING, format!("not waiting: {reason}")))
        }
        RunLookup::Done { cancelled } => Err(coded(
            exit::DONE,
            format!(
                "the campaign is {}: nothing more to run",
                if cancelled { "cancelled" } else { "done" }
            ),
        )),
        RunLookup::NotReady { reason } => {
            Err(coded(exit::NOT_READY, format!("not ready: {reason}")))
        }
    }
}

pub fn record(a: &RecordArgs) -> Result<()> {
    let failed = a.failed.then_some("recorded as failed");
    let wait = Duration::from_secs(a.wait);
    let r = campaign::record(&a.dir, &a.run, a.timing.as_deref(), failed, wait).map_err(report)?;
    print_recorded(&r, &a.dir)
}

fn print_recorded(r: &campaign::Recorded, dir: &Path) -> Result<()> {
    let outcome = match &r.metrics {
        Some(m) => format!(
            "{:.2} SYPD, {:.0} CHSY, coupling cost {:.1}%",
            m.sypd,
            m.chsy,
            m.coupling_cost * 100.0
        ),
        None => "failed".into(),
    };
    if r.again {
        outln!(
            "{} was already recorded with this outcome ({outcome}); nothing changed",
            r.run
        )?;
        return Ok(());
    }
    match &r.metrics {
        Some(_) => outln!("recorded {}: {outcome}", r.run)?,
        None => outln!("recorded {} as failed", r.run)?,
    }
    if let Some(i) = r.advance.new_iteration {
        outln!(
            "iteration {i} is ready: autolb campaign next {}",
            shown(dir)
        )?;
    } else if r.done {
        outln!(
            "the campaign is done: autolb campaign status {}",
            shown(dir)
        )?;
    }
    Ok(())
}

pub fn wait(a: &WaitArgs) -> Result<()> {
    let timeout = a
        .timeout
        .map(Duration::from_secs)
        .unwrap_or(Duration::MAX / 4);
    let interval = Duration::from_secs(1);
    match campaign::wait_for_iteration(&a.dir, a.iteration, timeout, interval).map_err(report)? {
        Barrier::Recorded => outln!("iteration {} is recorded", a.iteration)?,
        Barrier::Done => outln!("the campaign is done")?,
        Barrier::Missing { iteration, runs } => {
            let which = if iteration == a.iteration {
                format!("iteration {iteration} is not fully recorded")
            } else {
                format!(
                    "iteration {} has not started: iteration {iteration} is not fully recorded",
                    a.iteration
                )
            };
            return Err(coded(
                exit::NOT_READY,
                format!("{which}; missing: {}", runs.join(", ")),
            ));
        }
    }
    Ok(())
}

pub fn exec(a: &ExecArgs) -> Result<()> {
    let wait = Duration::from_secs(a.wait);
    // The claim is taken under the campaign lock before anything starts: of many `exec` of one
    // run (a retried or duplicated job), one runs it and the others exit busy.
    let claimed = campaign::claim_run(&a.dir, a.iteration, a.test, a.repetition, wait);
    let (run, claim) = match claimed.map_err(report)? {
        ClaimResult::Claimed {
            run,
            claim,
            recovered,
        } => {
            if let Some(note) = recovered {
                errln!("autolb: {note}");
            }
            (run, claim)
        }
        ClaimResult::Adopted {
            recorded,
            recovered,
        } => {
            if let Some(note) = recovered {
                errln!("autolb: {note}");
            }
            errln!(
                "autolb: run {} was finished by an earlier attempt whose exec died; recorded its output instead of running it again",
                recorded.run
            );
            return print_recorded(&recorded, &a.dir);
        }
        ClaimResult::Not(lookup) => {
            let e = match waiting_or_why(lookup) {
                Ok(run) => return Err(eyre!("run {} is waiting but was not claimed", run.run)),
                Err(e) => e,
            };
            match e.downcast_ref::<crate::shared::error::Coded>() {
                Some(c) if c.code == exit::NOT_WAITING || c.code == exit::DONE => {
                    outln!("nothing to do: {}", c.message)?;
                    return Ok(());
                }
                _ => return Err(e),
            }
        }
    };
    let argv = command_line(&a.command, &run)?;
    autolb::campaign::driver::prepare_run_dir(&run.run_dir).map_err(report)?;
    let env = campaign::run_env(&run).map_err(report)?;
    errln!(
        "autolb: run {} in {}: {}",
        run.run,
        shown(&run.run_dir),
        argv.join(" ")
    );
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(&run.run_dir)
        .stdin(Stdio::null())
        .envs(env)
        .env(campaign::claim::CLAIM_VAR, claim.token());
    let ended = match run_supervised(command, &a.dir, &claim) {
        Ok(ended) => ended,
        Err(e) => {
            // The supervisor recorded the failed exec as an exit; the command never started.
            let _ = std::fs::remove_file(run.run_dir.join(autolb::executor::EXIT_STATUS_FILE));
            return Err(user(format!(
                "cannot start {:?} for run {}: {e}",
                argv[0], run.run
            )));
        }
    };
    if !ended.tree_gone {
        let left = reap::processes_by_env(campaign::claim::CLAIM_VAR, claim.token());
        claim.keep();
        return Err(user(format!(
            "the command of run {} left processes that do not end ({left:?}); its claim stays, so a retry waits until they are gone",
            run.run
        )));
    }
    // Written by the supervisor the moment the command ended on its own (or, stopped,
    // exited 0 all the same: its output is complete).
    let status = autolb::executor::read_exit_status(&run.run_dir);
    if let Some(signal) = ended.stopped_by {
        if status == Some(RunStatus::Finished { exit_code: 0 }) {
            if let Ok(recorded) = campaign::record_claimed(&a.dir, &claim, None, None, wait) {
                errln!("autolb: stopped by signal {signal}, but the command had finished");
                return print_recorded(&recorded, &a.dir);
            }
        }
        // Stopped from outside (job cancelled): record nothing, a retry runs it again.
        return Err(coded(
            128 + signal as u8,
            format!(
                "stopped by signal {signal}; the command and everything it started have ended; run {} stays waiting",
                run.run
            ),
        ));
    }
    let failure = match status {
        Some(RunStatus::Finished { exit_code: 0 }) => None,
        Some(RunStatus::Finished { exit_code }) => Some(format!("exit status {exit_code}")),
        Some(RunStatus::Failed { reason }) => Some(reason),
        Some(other) => Some(format!("unexpected status {other:?}")),
        None => {
            let reason = format!(
                "the run's supervisor ended ({}) without the run's exit status",
                ended.supervisor
            );
            let _ = autolb::executor::write_exit_status(
                &run.run_dir,
                &RunStatus::Failed {
                    reason: reason.clone(),
                },
            );
            Some(reason)
        }
    };
    // The record may wait for the lock: the claim must not look abandoned meanwhile.
    claim.heartbeat();
    let recorded = match failure {
        None => match campaign::record_claimed(&a.dir, &claim, None, None, wait) {
            Err(CampaignError::Unmeasurable(why)) => {
                let reason = format!("exit status 0, but {why}");
                errln!("autolb: {reason}");
                campaign::record_claimed(&a.dir, &claim, None, Some(&reason), wait)
            }
            other => other,
        },
        Some(reason) => {
            errln!("autolb: the command failed ({reason}); recording the run as failed");
            campaign::record_claimed(&a.dir, &claim, None, Some(&reason), wait)
        }
    };
    print_recorded(&recorded.map_err(report)?, &a.dir)
}

/// The command with its number placeholders filled in (the `command` executor's code; a text
/// placeholder is refused, naming the argument), a relative program path with a `/` made
/// absolute from where autolb was started (it runs in the run directory).
fn command_line(template: &[String], run: &NextRun) -> Result<Vec<String>> {
    let request = run.request();
    let mut values = placeholder_values(&request);
    if let Some(tree) = autolb::campaign::tree::tree_of(run.layout.as_deref()) {
        values.extend(autolb::executor::layout_vars::placeholder_values(
            &tree, &request,
        ));
    }
    let mut argv = expand_argv(template, &values, "CMD").map_err(user)?;
    if argv[0].contains('/') && Path::new(&argv[0]).is_relative() {
        argv[0] = std::path::absolute(&argv[0])?.display().to_string();
    }
    Ok(argv)
}

/// How [`run_supervised`] ended.
struct Ended {
    /// The supervisor's exit status.
    supervisor: ExitStatus,
    /// The signal (SIGINT, SIGTERM or SIGHUP) that stopped the run from outside, if one did.
    stopped_by: Option<i32>,
    /// No process of the command is left (its group, its cgroup, anything marked with the
    /// claim's token): only then may the claim be released.
    tree_gone: bool,
}

/// Runs the command through the `command` executor's supervisor, which puts it in a process
/// group (and cgroup, where one can be made) of its own, writes its exit status the moment it
/// ends, and, told to stop, passes the signal to the whole group, then SIGKILL after
/// [`campaign::claim::STOP_GRACE`]. SIGINT/SIGTERM/SIGHUP to `exec` are passed to it; if
/// `exec` dies, the supervisor stops the command by itself (it gets SIGTERM when its parent
/// dies). Returns once the command and everything it started have ended, or it is sure they
/// cannot be.
fn run_supervised(
    mut command: Command,
    dir: &Path,
    claim: &campaign::claim::Claim,
) -> std::io::Result<Ended> {
    let campaign_dir = std::path::absolute(dir)?;
    let cgroup = reap::RunCgroup::create(&reap::campaign_key(&campaign_dir), claim.token());
    supervisor::install(
        &mut command,
        supervisor::Plan::new(campaign::claim::STOP_GRACE, cgroup.as_ref()),
    )?;
    let stop = Arc::new(AtomicUsize::new(0));
    let mut ids = Vec::new();
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let stop = Arc::clone(&stop);
        ids.push(signal_hook::flag::register_usize(
            signal,
            stop,
            signal as usize,
        )?);
    }
    let spawned = command.spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            for id in ids {
                signal_hook::low_level::unregister(id);
            }
            return Err(e);
        }
    };
    let pid = child.id() as libc::pid_t;
    let mut beat = Instant::now();
    let mut stopping: Option<(Instant, i32)> = None;
    let supervisor = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                // Cannot wait for it: end it, so nothing runs unwatched.
                // SAFETY: kill(2) on our child's pid, which is ours until it is reaped.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                break child.wait().map_err(|_| e)?;
            }
        }
        let signal = stop.load(Ordering::SeqCst) as i32;
        match stopping {
            None if signal != 0 => {
                // The supervisor passes it to the command's whole group.
                // SAFETY: kill(2) on our child's pid, which is ours until it is reaped.
                unsafe { libc::kill(pid, signal) };
                stopping = Some((Instant::now(), signal));
            }
            Some((since, _))
                if since.elapsed() >= campaign::claim::STOP_GRACE + SUPERVISOR_SLACK =>
            {
                // The supervisor does not end: kill it (its command gets SIGKILL with it).
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            _ => {}
        }
        if beat.elapsed() >= campaign::claim::CLAIM_HEARTBEAT {
            claim.heartbeat();
            beat = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What escaped the group (setsid, a double fork) goes too: by the claim's marker, and the
    // cgroup, which nothing leaves.
    reap::kill_by_env(campaign::claim::CLAIM_VAR, claim.token());
    drop(cgroup);
    let tree_gone =
        campaign::claim::gone(campaign::claim::CLAIM_VAR, claim.token(), SUPERVISOR_SLACK);
    for id in ids {
        signal_hook::low_level::unregister(id);
    }
    Ok(Ended {
        supervisor,
        stopped_by: stopping.map(|(_, s)| s),
        tree_gone,
    })
}

/// Time the supervisor may need beyond its grace to kill and reap the command's group.
const SUPERVISOR_SLACK: Duration = Duration::from_secs(2);

pub fn plan(a: &PlanArgs) -> Result<()> {
    let plan = campaign::plan::plan_file(&a.config).map_err(report)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&plan)?)?;
        return Ok(());
    }
    if a.env {
        let ids: Vec<String> = plan.tests.iter().map(|t| t.test.to_string()).collect();
        for (k, v) in [
            ("TESTS", plan.tests.len().to_string()),
            ("TEST_IDS", ids.join(" ")),
            ("REPETITIONS", plan.repetitions.to_string()),
            ("MAX_ITERATIONS", plan.max_iterations.to_string()),
            ("JOB_NPROC", plan.job_nproc.to_string()),
        ] {
            outln!("export AUTOLB_PLAN_{k}={}", shell_quote(&v))?;
        }
        return Ok(());
    }
    let runs = if plan.first_repetitions == plan.repetitions {
        format!("{} repetitions", plan.repetitions)
    } else {
        format!(
            "{} run{} in the first iteration (later: up to {} runs of a test)",
            plan.first_repetitions,
            if plan.first_repetitions == 1 { "" } else { "s" },
            plan.repetitions
        )
    };
    outln!(
        "{} tests x {runs}, components {}",
        plan.tests.len(),
        plan.components.join(", ")
    )?;
    for t in &plan.tests {
        outln!(
            "  test {:>2}  {}  ({} PEs with extras)  {}",
            t.test,
            plan.configuration_text(t),
            t.total_nproc,
            t.origin
        )?;
    }
    for note in &plan.notes {
        outln!("note: {note}")?;
    }
    outln!(
        "lb-iterations: at most {}{}\n  {}",
        plan.max_iterations,
        match (plan.bound_proven, plan.components.len() > 2) {
            (true, _) => "",
            (false, true) => " (an estimate with more than two components)",
            // The bound follows Algorithm 1's moves; nothing proves a guided campaign keeps to it.
            (false, false) => " (an estimate for the guided strategy)",
        },
        plan.bound_by
    )?;
    outln!(
        "PEs per run: at most {} ({} balanced + {} extra)",
        plan.job_nproc,
        plan.job_nproc - plan.extra_pes,
        plan.extra_pes
    )?;
    let members: Vec<String> = plan
        .tests
        .iter()
        .map(|t| format!("t{:02}", t.test))
        .collect();
    outln!(
        "Autosubmit: MEMBERS: \"{}\"  NUMCHUNKS: {}  SPLITS: {}  PROCESSORS: {}",
        members.join(" "),
        plan.max_iterations,
        plan.repetitions,
        plan.job_nproc
    )?;
    Ok(())
}
