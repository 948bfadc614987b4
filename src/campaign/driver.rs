//! The drive loop: start runs up to the jobs cap, poll them, read what they measured, take the
//! decisions when an iteration ends, until no test is open.
//!
//! Crash safety: the state is saved atomically after every change that matters (a run started
//! with its ticket, a run ended with its metrics, an iteration decided). A run is "finished"
//! once its executor wrote `exit_status` into the run directory; a restarted driver reads the
//! result of such a run instead of running it again, recovers runs its executor still knows
//! (Slurm jobs), and runs again only runs that died unfinished, after removing what their
//! interrupted attempt left, so no finished run is lost or run twice. (Failed attempts that
//! are retried keep their directory as `rep-R.old-K`.)

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::heartbeat::Beating;
use super::state::{Lock, RunPos, RunState, State, CANCEL_REQUEST_FILE};
use super::status::{BestView, Status};
use super::{build_executor, cancel_all, CampaignError};
use crate::executor::{read_exit_status, Executor, RunRequest, RunStatus, Ticket};

/// How many times the driver asks the strategy to plan when a file it reads is unreadable (a
/// parallel file system can refuse a read for a moment) before it fails the campaign.
pub const PLAN_ATTEMPTS: u32 = 4;

/// The wait before the n-th new attempt to plan is n times this (0.25, 0.5, 0.75 s).
pub const PLAN_RETRY_WAIT: Duration = Duration::from_millis(250);

/// Receives progress events (called on the driving thread; keep it quick).
pub type Observer = Arc<dyn Fn(&DriveEvent) + Send + Sync>;

/// How to drive.
#[derive(Clone, Default)]
pub struct DriveOptions {
    /// Most runs at a time; default: `[executor] jobs`, else 1.
    pub jobs: Option<usize>,
    /// Called with every [`DriveEvent`] (the CLI prints them, the app shows them); `None`: silent.
    pub observer: Option<Observer>,
    /// Time between polls; default: the executor's.
    pub poll_interval: Option<Duration>,
}

impl fmt::Debug for DriveOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriveOptions")
            .field("jobs", &self.jobs)
            .field("observer", &self.observer.is_some())
            .field("poll_interval", &self.poll_interval)
            .finish()
    }
}

/// Something the driver did.
#[derive(Debug, Clone, PartialEq)]
pub enum DriveEvent {
    /// At start: runs found running (recovered) and runs to run again.
    Resumed {
        /// Runs a previous driver left running whose executor still knows them.
        recovered: usize,
        /// Runs a previous driver left running that are to be run again.
        restarted: usize,
    },
    /// An iteration is being run: how many runs it has and how many have ended.
    Iteration {
        /// The iteration's index (0-based).
        iteration: u32,
        /// Runs in the iteration (tests x repetitions).
        runs: usize,
        /// Of those, runs that have ended (done or failed).
        ended: usize,
    },
    /// A run was handed to the executor.
    RunStarted {
        /// The run's id (`i00-t03-r1`).
        run: String,
        /// PEs per component, by name, in component order.
        nproc: Vec<(String, u32)>,
        /// OpenMP threads per rank of each component in `nproc`; empty when every one runs
        /// pure MPI.
        threads: Vec<u32>,
        /// Which attempt this is (1 for the first).
        attempt: u32,
        /// The executor's handle of the run (a process id, a Slurm job id).
        ticket: String,
    },
    /// A run ended for good (no retry left, or done).
    RunEnded {
        /// The run's id.
        run: String,
        /// How it ended: done or failed.
        state: RunState,
        /// Its measured coupled SYPD, when done.
        sypd: Option<f64>,
        /// Why it failed, when it did.
        failure: Option<String>,
    },
    /// A run is to be run again (it failed with retries left, or died with a previous driver).
    RunRetried {
        /// The run's id.
        run: String,
        /// Why it is run again.
        reason: String,
    },
    /// Algorithm 1 (or the guided strategy) decided a test once all its runs ended.
    TestDecided {
        /// The iteration's index (0-based).
        iteration: u32,
        /// The test's index within the iteration (0-based).
        test: u32,
        /// One line: the PE move and the next configuration, or why the test finished or failed.
        summary: String,
    },
    /// Something went wrong that the driver rides out (e.g. a poll that failed once).
    Warning {
        /// What happened, in one line.
        message: String,
    },
    /// `stop` was set: the driver stopped, leaving the campaign resumable.
    Stopped,
    /// The campaign was cancelled (a cancel request found while driving).
    Cancelled,
    /// No test is open: the campaign is over.
    Done {
        /// The best configuration measured, if any run succeeded.
        best: Option<BestView>,
    },
}

/// How [`drive`] ended.
#[derive(Debug, Clone, PartialEq)]
pub enum DriveOutcome {
    /// No test is open: the campaign is over.
    Done {
        /// The best configuration measured, if any run succeeded.
        best: Option<BestView>,
    },
    /// `stop` was set; run again to resume.
    Stopped,
    /// The campaign was cancelled (now or before).
    Cancelled,
}

/// Runs the campaign in `dir` to the end, or until `stop` is set. Holds the campaign lock
/// throughout and beats its heartbeat ([`super::heartbeat`]); resumable at any point.
pub fn drive(
    dir: &Path,
    opts: &DriveOptions,
    stop: &AtomicBool,
) -> Result<DriveOutcome, CampaignError> {
    let dir = &super::absolute_dir(dir)?;
    let _lock = Lock::acquire(dir)?;
    // Declared after the lock, so it is marked ended before the lock lets another driver in.
    let beating = Beating::start(dir)?;
    let outcome = drive_locked(dir, opts, stop);
    beating.end(match &outcome {
        Ok(DriveOutcome::Done { .. }) => "done",
        Ok(DriveOutcome::Stopped) => "stopped",
        Ok(DriveOutcome::Cancelled) => "cancelled",
        Err(_) => "failed",
    });
    outcome
}

/// [`drive`] once the lock is held and the heartbeat beats.
fn drive_locked(
    dir: &Path,
    opts: &DriveOptions,
    stop: &AtomicBool,
) -> Result<DriveOutcome, CampaignError> {
    let state = State::load(dir)?;
    // A driver killed between saving the state and writing a scaling campaign's curves left
    // them a run behind: bring them up to the state first.
    super::strategy::scaling::output::write_curves(&state, dir)?;
    if state.cancelled {
        return Ok(DriveOutcome::Cancelled);
    }
    // A run `campaign exec` is running must not be started a second time.
    let recovered = super::claim::check_before_driving(dir, &state)?;
    let exec = build_executor(&state, dir)?.ok_or(CampaignError::NoExecutor)?;
    let interval = opts.poll_interval.unwrap_or_else(|| exec.poll_interval());
    let configured_jobs = state.executor.as_ref().and_then(|cfg| cfg.jobs);
    let mut driver = Driver {
        dir: dir.to_path_buf(),
        state,
        exec,
        jobs: opts.jobs.or(configured_jobs).unwrap_or(1).max(1),
        observer: opts.observer.clone(),
    };
    for message in recovered {
        driver.emit(DriveEvent::Warning { message });
    }
    driver.resume()?;
    let mut poll_errors = 0;
    loop {
        if dir.join(CANCEL_REQUEST_FILE).exists() {
            driver.cancel()?;
            return Ok(DriveOutcome::Cancelled);
        }
        if stop.load(Ordering::SeqCst) {
            driver.stop()?;
            return Ok(DriveOutcome::Stopped);
        }
        match driver.poll() {
            Ok(()) => poll_errors = 0,
            // A scheduler that does not answer for a while (a busy Slurm controller) is not a
            // reason to give up; many failures in a row are.
            Err(CampaignError::Executor(e)) if poll_errors < MAX_POLL_ERRORS => {
                poll_errors += 1;
                driver.emit(DriveEvent::Warning {
                    message: format!("cannot ask the {} executor about its runs ({poll_errors}/{MAX_POLL_ERRORS}): {e}", driver.exec.kind()),
                });
            }
            Err(e) => return Err(e),
        }
        driver.advance()?;
        if driver.state.is_done() {
            // The answer as `campaign status` will show it: from the state on disk, whose
            // numbers went through JSON (parsing may differ from memory in the last bit).
            let best = Status::from_state(&State::load(dir)?, dir).best;
            driver.emit(DriveEvent::Done { best: best.clone() });
            return Ok(DriveOutcome::Done { best });
        }
        driver.start_pending()?;
        sleep_unless_stopped(interval, stop);
    }
}

fn sleep_unless_stopped(total: Duration, stop: &AtomicBool) {
    let slice = Duration::from_millis(20);
    let mut slept = Duration::ZERO;
    while slept < total && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(slice.min(total - slept));
        slept += slice;
    }
}

/// Consecutive failed polls before the driver gives up.
const MAX_POLL_ERRORS: u32 = 10;

struct Driver {
    dir: PathBuf,
    state: State,
    exec: Box<dyn Executor>,
    jobs: usize,
    observer: Option<Observer>,
}

impl Driver {
    fn emit(&self, event: DriveEvent) {
        if let Some(o) = &self.observer {
            o(&event);
        }
    }

    /// Saves the state, then a scaling campaign's curves from it (the state first: a kill in
    /// between leaves curves one run behind a state that rewrites them at the next save).
    fn save(&mut self) -> Result<(), CampaignError> {
        self.state.commit(&self.dir)?;
        super::strategy::scaling::output::write_curves(&self.state, &self.dir)
    }

    fn request(&self, (i, t, r): RunPos) -> RunRequest {
        self.state.request(&self.dir, i, t, r)
    }

    /// Positions of the runs in `wanted` state, in order.
    fn runs_in(&self, wanted: RunState) -> Vec<RunPos> {
        self.state
            .run_positions()
            .filter(|&pos| self.state.run(pos).state == wanted)
            .collect()
    }

    /// After a (re)start: asks the executor about every run a previous driver may have
    /// started, keeps those it knows, and queues the others to run again.
    fn resume(&mut self) -> Result<(), CampaignError> {
        let (mut recovered, mut restarted) = (0, 0);
        let mut candidates = self.runs_in(RunState::Running);
        // A pending run with a directory may have been started just before a crash.
        candidates.extend(
            self.runs_in(RunState::Pending)
                .into_iter()
                .filter(|&p| self.request(p).run_dir.exists()),
        );
        for pos in candidates {
            let req = self.request(pos);
            let ticket = self.state.run(pos).ticket.clone();
            let was_running = self.state.run(pos).state == RunState::Running;
            match self.exec.recover(&req, ticket.as_ref())? {
                Some(t) => {
                    let run = self.state.run_mut(pos);
                    run.state = RunState::Running;
                    run.ticket = Some(t);
                    recovered += 1;
                }
                None if was_running => {
                    let run = self.state.run_mut(pos);
                    run.state = RunState::Pending;
                    restarted += 1;
                    self.emit(DriveEvent::RunRetried {
                        run: req.id,
                        reason: "it was running when the previous driver stopped".into(),
                    });
                }
                None => {}
            }
        }
        if !self.exec.runs_outlive_driver() {
            // Whatever an earlier driver's runs left running (escaped descendants, a run
            // started just before a crash) ends now, before anything new starts.
            let ended = self.exec.cancel_untracked()?;
            if !ended.is_empty() {
                self.emit(DriveEvent::Warning {
                    message: format!(
                        "ended what an earlier driver's runs left running: {}",
                        ended.join(", ")
                    ),
                });
            }
        }
        self.save()?;
        if recovered + restarted > 0 {
            self.emit(DriveEvent::Resumed {
                recovered,
                restarted,
            });
        }
        self.announce_iteration();
        Ok(())
    }

    fn announce_iteration(&self) {
        if let Some(it) = self.state.iterations.last() {
            let runs = it.tests.iter().map(|t| t.runs.len()).sum();
            let ended = it
                .tests
                .iter()
                .flat_map(|t| &t.runs)
                .filter(|r| r.state.is_terminal())
                .count();
            if !self.state.is_done() {
                self.emit(DriveEvent::Iteration {
                    iteration: it.index,
                    runs,
                    ended,
                });
            }
        }
    }

    /// Asks the executor about every running run and records those that ended.
    fn poll(&mut self) -> Result<(), CampaignError> {
        let running = self.runs_in(RunState::Running);
        if running.is_empty() {
            return Ok(());
        }
        let requests: Vec<RunRequest> = running.iter().map(|&p| self.request(p)).collect();
        let tickets: Vec<Ticket> = running
            .iter()
            .map(|&p| {
                self.state
                    .run(p)
                    .ticket
                    .clone()
                    .unwrap_or_else(|| Ticket(String::new()))
            })
            .collect();
        let pairs: Vec<(&RunRequest, &Ticket)> = requests.iter().zip(&tickets).collect();
        let statuses = self.exec.poll(&pairs)?;
        let mut changed = false;
        for ((pos, req), status) in running.into_iter().zip(&requests).zip(statuses) {
            match status {
                RunStatus::Queued | RunStatus::Running => {}
                RunStatus::Finished { exit_code: 0 } => {
                    let (i, t, _) = pos;
                    match self.state.measure_run(i, t, &req.run_dir) {
                        Ok(m) => {
                            let sypd = m.sypd;
                            let run = self.state.run_mut(pos);
                            run.state = RunState::Done;
                            run.metrics = Some(m);
                            run.failure = None;
                            run.ended_at = Some(super::state::unix_now());
                            self.emit(DriveEvent::RunEnded {
                                run: req.id.clone(),
                                state: RunState::Done,
                                sypd: Some(sypd),
                                failure: None,
                            });
                        }
                        Err(reason) => self.fail(pos, req, reason.to_string()),
                    }
                    changed = true;
                }
                RunStatus::Finished { exit_code } => {
                    self.fail(pos, req, exit_reason(exit_code, &req.run_dir));
                    changed = true;
                }
                RunStatus::Failed { reason } => {
                    self.fail(pos, req, reason);
                    changed = true;
                }
                RunStatus::Lost => {
                    self.state.run_mut(pos).state = RunState::Pending;
                    self.emit(DriveEvent::RunRetried {
                        run: req.id.clone(),
                        reason: "the executor lost it".into(),
                    });
                    changed = true;
                }
            }
        }
        if changed {
            self.save()?;
        }
        Ok(())
    }

    /// A run ended without a measurement: run it again if retries are left, else it failed.
    fn fail(&mut self, pos: RunPos, req: &RunRequest, reason: String) {
        let retries = self.state.settings.retries;
        let run = self.state.run_mut(pos);
        run.failure = Some(reason.clone());
        if run.attempts <= retries {
            run.state = RunState::Pending;
            let attempt = run.attempts;
            // Keep the failed attempt's files for the record, out of the way of the next.
            let _ = move_aside(&req.run_dir);
            self.emit(DriveEvent::RunRetried {
                run: req.id.clone(),
                reason: format!("attempt {attempt} failed: {reason}"),
            });
        } else {
            run.state = RunState::Failed;
            run.ended_at = Some(super::state::unix_now());
            self.emit(DriveEvent::RunEnded {
                run: req.id.clone(),
                state: RunState::Failed,
                sypd: None,
                failure: Some(reason),
            });
        }
    }

    /// Takes the decisions of a finished iteration and creates the next one. A strategy that
    /// cannot read a file is asked again [`PLAN_ATTEMPTS`] times in all, waiting a little
    /// longer each time; then the drive fails with the reason, the campaign left undecided
    /// (never marked finished), so running it again resumes here.
    fn advance(&mut self) -> Result<(), CampaignError> {
        let mut attempts = 1;
        let a = loop {
            match super::advance_in(&mut self.state, &self.dir) {
                Ok(a) => break a,
                Err(e) if e.is_transient() && attempts < PLAN_ATTEMPTS => {
                    let wait = PLAN_RETRY_WAIT * attempts;
                    self.emit(DriveEvent::Warning {
                        message: format!(
                            "planning the next iteration failed ({e}); trying again in {} ms \
                             (attempt {attempts} of {PLAN_ATTEMPTS})",
                            wait.as_millis()
                        ),
                    });
                    std::thread::sleep(wait);
                    attempts += 1;
                }
                Err(source) => {
                    return Err(CampaignError::Plan {
                        dir: self.dir.clone(),
                        attempts,
                        source,
                    })
                }
            }
        };
        if a.decided.is_empty() {
            return Ok(());
        }
        self.save()?;
        let names = self.state.component_names();
        for (iteration, test, d) in &a.decided {
            let summary = match (&d.next, d.donor, d.recipient) {
                (Some(next), Some(donor), Some(recipient)) => format!(
                    "{} -> {}, step {}: next {}",
                    names[donor],
                    names[recipient],
                    d.step,
                    self.state
                        .components
                        .iter()
                        .zip(next)
                        .map(|(c, &p)| format!("{} {}", c.name, c.pes_text(p)))
                        .collect::<Vec<_>>()
                        .join(" / ")
                ),
                _ => match &d.outcome {
                    super::state::Outcome::Finished { reason } => format!("finished: {reason}"),
                    super::state::Outcome::Failed { reason } => format!("failed: {reason}"),
                    super::state::Outcome::Continue => "continues".into(),
                },
            };
            self.emit(DriveEvent::TestDecided {
                iteration: *iteration,
                test: *test,
                summary,
            });
        }
        if a.new_iteration.is_some() {
            self.announce_iteration();
        }
        Ok(())
    }

    /// Starts pending runs of the current iteration up to the jobs cap.
    fn start_pending(&mut self) -> Result<(), CampaignError> {
        let free = self
            .jobs
            .saturating_sub(self.runs_in(RunState::Running).len());
        for pos in self.runs_in(RunState::Pending).into_iter().take(free) {
            let req = self.request(pos);
            let attempt = self.state.run(pos).attempts + 1;
            prepare_run_dir(&req.run_dir)?;
            append_log(
                &req.run_dir,
                &format!("start attempt {attempt} by pid {}", std::process::id()),
            );
            let ticket = self.exec.start(&req)?;
            let run = self.state.run_mut(pos);
            run.state = RunState::Running;
            run.ticket = Some(ticket.clone());
            run.attempts = attempt;
            run.started_at = Some(super::state::unix_now());
            run.ended_at = None;
            self.save()?;
            self.emit(DriveEvent::RunStarted {
                run: req.id.clone(),
                nproc: req.nproc.clone(),
                threads: req.threads.clone(),
                attempt,
                ticket: ticket.0,
            });
        }
        Ok(())
    }

    /// Ctrl-C: runs that die with the driver are cancelled and queued to run again (their
    /// directories moved aside); others (Slurm jobs) keep running and are recovered later.
    fn stop(&mut self) -> Result<(), CampaignError> {
        if !self.exec.runs_outlive_driver() {
            for pos in self.runs_in(RunState::Running) {
                let req = self.request(pos);
                if let Some(ticket) = self.state.run(pos).ticket.clone() {
                    self.exec.cancel(&req, &ticket)?;
                }
                // It may have finished meanwhile: keep a real result.
                if read_exit_status(&req.run_dir) == Some(RunStatus::Finished { exit_code: 0 }) {
                    continue;
                }
                // An interrupted attempt has nothing worth keeping.
                remove_run_dir(&req.run_dir)?;
                let run = self.state.run_mut(pos);
                run.state = RunState::Pending;
                run.ticket = None;
            }
            self.poll()?;
        }
        self.save()?;
        self.emit(DriveEvent::Stopped);
        Ok(())
    }

    fn cancel(&mut self) -> Result<(), CampaignError> {
        let dir = self.dir.clone();
        let (_, _warnings) = cancel_all(&mut self.state, &dir, Some(self.exec.as_mut()));
        self.save()?;
        let _ = std::fs::remove_file(dir.join(CANCEL_REQUEST_FILE));
        self.emit(DriveEvent::Cancelled);
        Ok(())
    }
}

/// `exit status N`, with the last line the run wrote to stderr when there is one.
fn exit_reason(exit_code: i32, run_dir: &Path) -> String {
    let last = std::fs::read(run_dir.join("stderr"))
        .map(|b| String::from_utf8_lossy(&b).to_string())
        .unwrap_or_default();
    match last.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
        Some(line) => {
            let line: String = line.chars().take(200).collect();
            format!("exit status {exit_code}: {line}")
        }
        None => format!("exit status {exit_code}"),
    }
}

/// A run directory about to be (re)used (by the driver, or `campaign exec`), so that it only ever holds one attempt: a previous
/// attempt that ended (it has an `exit_status`, e.g. a failure kept for the record) is moved
/// aside to `rep-R.old-K`; one that was interrupted (its driver stopped or died) is removed,
/// so kills and restarts do not pile up directories.
pub fn prepare_run_dir(run_dir: &Path) -> Result<(), CampaignError> {
    let used = std::fs::read_dir(run_dir)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if used {
        if read_exit_status(run_dir).is_some() {
            move_aside(run_dir)?;
        } else {
            remove_run_dir(run_dir)?;
        }
    }
    std::fs::create_dir_all(run_dir)
        .map_err(|e| CampaignError::io(format!("cannot create {}", run_dir.display()), e))
}

fn remove_run_dir(run_dir: &Path) -> Result<(), CampaignError> {
    match std::fs::remove_dir_all(run_dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(CampaignError::io(
            format!(
                "cannot remove the interrupted attempt {}",
                run_dir.display()
            ),
            e,
        )),
    }
}

fn move_aside(run_dir: &Path) -> Result<(), CampaignError> {
    if !run_dir.exists() {
        return Ok(());
    }
    let name = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let target = (1..)
        .map(|k| run_dir.with_file_name(format!("{name}.old-{k}")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| run_dir.with_file_name(format!("{name}.old")));
    std::fs::rename(run_dir, &target)
        .map_err(|e| CampaignError::io(format!("cannot move {} aside", run_dir.display()), e))
}

/// One line in `run_dir/autolb.log` (what the driver did with this directory).
fn append_log(run_dir: &Path, line: &str) {
    use std::io::Write;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(run_dir.join("autolb.log"))
    {
        let _ = writeln!(f, "{now:.3} {line}");
        let _ = f.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Drives the demo campaign until its first iteration is decided (then stops). Once every
    /// run of that iteration has ended, the first curve copy is taken away, as a parallel file
    /// system may refuse a read for a moment; with `restore_after` warnings it comes back.
    /// Returns how the drive ended, the warnings and the campaign directory.
    fn drive_with_a_vanishing_curve(
        dir: &Path,
        restore_after: Option<usize>,
    ) -> (Result<DriveOutcome, CampaignError>, Vec<String>, PathBuf) {
        let campaign = crate::campaign::demo::init_demo(dir, Some(0.0)).unwrap();
        let state = State::load(&campaign).unwrap();
        let runs: usize = state.iterations[0].tests.iter().map(|t| t.runs.len()).sum();
        let curve = campaign.join(&state.components[0].curve);
        let text = std::fs::read(&curve).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let ended = Arc::new(Mutex::new(0usize));
        let (seen, halt) = (warnings.clone(), stop.clone());
        let observer: Observer = Arc::new(move |event: &DriveEvent| match event {
            DriveEvent::RunEnded { .. } => {
                let mut n = ended.lock().unwrap();
                *n += 1;
                if *n == runs {
                    std::fs::remove_file(&curve).unwrap();
                }
            }
            DriveEvent::Warning { message } => {
                let mut w = seen.lock().unwrap();
                w.push(message.clone());
                if Some(w.len()) == restore_after {
                    std::fs::write(&curve, &text).unwrap();
                }
            }
            DriveEvent::TestDecided { .. } => halt.store(true, Ordering::SeqCst),
            _ => {}
        });
        let opts = DriveOptions {
            observer: Some(observer),
            ..DriveOptions::default()
        };
        let outcome = drive(&campaign, &opts, &stop);
        let warnings = warnings.lock().unwrap().clone();
        (outcome, warnings, campaign)
    }

    #[test]
    fn an_unreadable_curve_is_tried_again_then_fails_the_drive_and_finishes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (outcome, warnings, campaign) = drive_with_a_vanishing_curve(dir.path(), None);
        let e = outcome.unwrap_err();
        assert!(
            matches!(e, CampaignError::Plan { attempts, .. } if attempts == PLAN_ATTEMPTS),
            "{e}"
        );
        let message = e.to_string();
        assert!(
            message.contains("cannot plan the next iteration (4 attempts)")
                && message.contains("cannot read the campaign's curves"),
            "{message}"
        );
        assert_eq!(warnings.len() as u32, PLAN_ATTEMPTS - 1, "{warnings:?}");
        let state = State::load(&campaign).unwrap();
        assert!(
            !state.is_done(),
            "an unreadable curve must not end the campaign"
        );
        assert_eq!(state.iterations.len(), 1);
        assert!(state.iterations[0]
            .tests
            .iter()
            .all(|t| t.decision.is_none()));
    }

    #[test]
    fn a_curve_readable_again_within_the_attempts_lets_the_campaign_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let (outcome, warnings, campaign) = drive_with_a_vanishing_curve(dir.path(), Some(2));
        assert_eq!(outcome.unwrap(), DriveOutcome::Stopped);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("attempt 1 of 4"), "{}", warnings[0]);
        let state = State::load(&campaign).unwrap();
        assert!(state.iterations[0]
            .tests
            .iter()
            .all(|t| t.decision.is_some()));
    }
}
