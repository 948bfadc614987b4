//! The `command` executor: runs a user command template locally, one supervised process tree
//! per run.
//!
//! The template ([`template`]) is a list (program and arguments) with number placeholders; it
//! is executed without a shell (a template that wants one says so: `["bash", "-c", "..."]`),
//! in the run directory, with stdout and stderr going to `stdout` and `stderr` there, and the
//! run's values in the environment ([`crate::executor::env`]; text such as the run directory
//! only there). A relative program path containing `/` is relative to the campaign file.
//!
//! Each run starts through a [`supervisor`] that writes `exit_status` the moment the command
//! exits, so no driver crash can lose a finished run or run it twice, and that ends the
//! command's process group when the driver dies. Escaped descendants (`setsid`, double forks)
//! are ended through the run's cgroup or its environment marker ([`reap`]) on timeout, cancel,
//! driver stop, and at the next driver start after a crash.

pub mod reap;
pub mod supervisor;
pub mod template;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::ExecutorConfig;
use super::{
    read_exit_status, recover_ended, status_on_disk, write_exit_status, Executor, ExecutorContext,
    ExecutorError, RunRequest, RunStatus, Ticket,
};
pub use template::{expand, expand_argv, placeholder_values};

/// The campaign file key of the template, as errors name it.
const COMMAND_KEY: &str = "[executor] command";

/// How long a run may take to end after SIGTERM (timeout, cancel, driver stop) before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// How long the driver waits for a supervisor beyond [`GRACE`] before it kills it.
const SUPERVISOR_SLACK: Duration = Duration::from_secs(5);

/// Runs each run as a local process.
pub struct CommandExecutor {
    template: Vec<String>,
    base_dir: PathBuf,
    timeout: Option<Duration>,
    /// Marks every process of this campaign's runs ([`reap::CAMPAIGN_VAR`]).
    campaign_key: String,
    runs: Arc<Mutex<HashMap<String, Slot>>>,
    monitors: HashMap<String, JoinHandle<()>>,
    /// The campaign's layout tree: `{rootpe.NAME}`, `{ntasks.NAME}`, `{nthrds.NAME}` and their
    /// variables ([`super::layout_vars`]).
    layout: Option<crate::layout::Layout>,
}

#[derive(Debug, Clone)]
struct Slot {
    status: RunStatus,
    cancel: bool,
}

impl std::fmt::Debug for CommandExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandExecutor")
            .field("template", &self.template)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl CommandExecutor {
    /// Builds the executor, checking the template's placeholders against the components.
    pub fn from_config(
        cfg: &ExecutorConfig,
        campaign_dir: &Path,
        ctx: &ExecutorContext,
    ) -> Result<CommandExecutor, ExecutorError> {
        let template = cfg.command.clone().unwrap_or_default();
        if template.is_empty() || template[0].is_empty() {
            return Err(ExecutorError::Config(
                "[executor] command is empty; give the program and its arguments, e.g. command = [\"./run.sh\", \"{nproc.IFS}\"]".into(),
            ));
        }
        for sample in sample_requests(ctx) {
            expand_argv(
                &template,
                &values_with_layout(ctx.layout.as_ref(), &sample),
                COMMAND_KEY,
            )
            .map_err(ExecutorError::Config)?;
        }
        super::env::check_distinct(ctx.components.iter().map(|c| c.name.as_str()))
            .map_err(ExecutorError::Config)?;
        let timeout = cfg.timeout_s.map(timeout_from_seconds).transpose()?;
        Ok(CommandExecutor {
            template,
            base_dir: ctx.base_dir.clone(),
            timeout,
            campaign_key: reap::campaign_key(campaign_dir),
            runs: Arc::new(Mutex::new(HashMap::new())),
            monitors: HashMap::new(),
            layout: ctx.layout.clone(),
        })
    }

    /// The program and arguments of one run, placeholders filled in.
    pub fn command_line(&self, run: &RunRequest) -> Result<Vec<String>, ExecutorError> {
        let values = values_with_layout(self.layout.as_ref(), run);
        let mut argv =
            expand_argv(&self.template, &values, COMMAND_KEY).map_err(ExecutorError::Config)?;
        if argv[0].contains('/') && Path::new(&argv[0]).is_relative() {
            argv[0] = self.base_dir.join(&argv[0]).display().to_string();
        }
        Ok(argv)
    }

    fn slot(&self, id: &str) -> Option<Slot> {
        self.runs.lock().ok()?.get(id).cloned()
    }
}

/// The placeholders of a run, with its layout's when the campaign has a tree.
fn values_with_layout(
    layout: Option<&crate::layout::Layout>,
    run: &RunRequest,
) -> HashMap<String, u64> {
    let mut values = placeholder_values(run);
    if let Some(tree) = layout {
        values.extend(super::layout_vars::placeholder_values(tree, run));
    }
    values
}

/// `[executor] timeout_s` as a duration: a positive number of seconds that fits one.
fn timeout_from_seconds(seconds: f64) -> Result<Duration, ExecutorError> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|_| seconds > 0.0)
        .ok_or_else(|| {
            ExecutorError::Config(format!(
                "[executor] timeout_s {seconds} is not a positive number of seconds"
            ))
        })
}

/// The runs the campaign can make, for checking the template's placeholders: one of every
/// component, or a standalone run of each (a scaling campaign).
pub(crate) fn sample_requests(ctx: &ExecutorContext) -> Vec<RunRequest> {
    let run = |component: Option<String>, nproc: Vec<(String, u32)>| RunRequest {
        component,
        id: "i00-t00-r1".into(),
        iteration: 0,
        test: 0,
        repetition: 1,
        threads: Vec::new(),
        nproc,
        extra_pes: 0,
        run_dir: PathBuf::from("/run"),
    };
    let threads = |cs: &[&super::ComponentContext]| {
        let t: Vec<u32> = cs.iter().map(|c| c.threads).collect();
        if t.iter().all(|&t| t <= 1) {
            Vec::new()
        } else {
            t
        }
    };
    if ctx.standalone {
        ctx.components
            .iter()
            .map(|c| RunRequest {
                threads: threads(&[c]),
                ..run(
                    Some(c.name.clone()),
                    vec![(c.name.clone(), c.threads.max(1))],
                )
            })
            .collect()
    } else {
        let all: Vec<&super::ComponentContext> = ctx.components.iter().collect();
        vec![RunRequest {
            threads: threads(&all),
            ..run(
                None,
                ctx.components
                    .iter()
                    .map(|c| (c.name.clone(), c.threads.max(1)))
                    .collect(),
            )
        }]
    }
}

/// A token unique to one start of one run, put in the process environment as
/// [`reap::TOKEN_VAR`].
fn token(run: &RunRequest) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{}-{nanos}", run.id, std::process::id())
}

fn ticket_token(ticket: &Ticket) -> Option<&str> {
    ticket.0.split_once('/').map(|(_, t)| t)
}

impl Executor for CommandExecutor {
    fn kind(&self) -> &'static str {
        "command"
    }

    fn start(&mut self, run: &RunRequest) -> Result<Ticket, ExecutorError> {
        let argv = self.command_line(run)?;
        let io = |what: String| move |source| ExecutorError::Io { what, source };
        std::fs::create_dir_all(&run.run_dir)
            .map_err(io(format!("cannot create {}", run.run_dir.display())))?;
        let stdout = File::create(run.run_dir.join("stdout")).map_err(io(format!(
            "cannot create {}/stdout",
            run.run_dir.display()
        )))?;
        let stderr = File::create(run.run_dir.join("stderr")).map_err(io(format!(
            "cannot create {}/stderr",
            run.run_dir.display()
        )))?;
        // A status left by an earlier start in this directory is not this start's.
        let _ = std::fs::remove_file(run.run_dir.join(super::EXIT_STATUS_FILE));
        // The start stamp: with `exit_status`, the run's wall time (`timing = "wall"`).
        File::create(run.run_dir.join(super::STARTED_FILE)).map_err(io(format!(
            "cannot create {}/{}",
            run.run_dir.display(),
            super::STARTED_FILE
        )))?;
        let token = token(run);
        let cgroup = reap::RunCgroup::create(&self.campaign_key, &token);
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .current_dir(&run.run_dir)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .envs(super::env::run_env(run))
            .envs(
                self.layout
                    .as_ref()
                    .map(|tree| super::layout_vars::env_vars(tree, run))
                    .unwrap_or_default(),
            )
            .env(reap::TOKEN_VAR, &token)
            .env(reap::CAMPAIGN_VAR, &self.campaign_key);
        supervisor::install(&mut command, supervisor::Plan::new(GRACE, cgroup.as_ref()))
            .map_err(io(format!("cannot prepare run {}", run.id)))?;
        let child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                // The supervisor recorded the failed exec as an exit; the run never started.
                let _ = std::fs::remove_file(run.run_dir.join(super::EXIT_STATUS_FILE));
                return Err(ExecutorError::Io {
                    what: format!("cannot start {:?} for run {}", argv[0], run.id),
                    source: e,
                });
            }
        };
        let pid = child.id() as i32;
        if let Ok(mut runs) = self.runs.lock() {
            runs.insert(
                run.id.clone(),
                Slot {
                    status: RunStatus::Running,
                    cancel: false,
                },
            );
        }
        let monitor = spawn_monitor(
            Monitored {
                child,
                id: run.id.clone(),
                run_dir: run.run_dir.clone(),
                token: token.clone(),
                cgroup,
            },
            self.timeout,
            Arc::clone(&self.runs),
        );
        self.monitors.insert(run.id.clone(), monitor);
        Ok(Ticket(format!("{pid}/{token}")))
    }

    fn poll(&mut self, runs: &[(&RunRequest, &Ticket)]) -> Result<Vec<RunStatus>, ExecutorError> {
        Ok(runs
            .iter()
            .map(|(run, _)| match self.slot(&run.id) {
                Some(slot) => slot.status,
                None => status_on_disk(&run.run_dir),
            })
            .collect())
    }

    fn cancel(&mut self, run: &RunRequest, ticket: &Ticket) -> Result<(), ExecutorError> {
        let running = self.runs.lock().ok().and_then(|mut runs| {
            let slot = runs.get_mut(&run.id)?;
            slot.cancel = true;
            Some(slot.status == RunStatus::Running)
        });
        if running == Some(true) {
            // The monitor stops it; wait until it has ended, so nothing writes into the run
            // directory afterwards.
            if let Some(handle) = self.monitors.remove(&run.id) {
                let _ = handle.join();
            }
        } else if let Some(t) = ticket_token(ticket) {
            reap::kill_by_env(reap::TOKEN_VAR, t);
        }
        Ok(())
    }

    fn recover(
        &mut self,
        run: &RunRequest,
        ticket: Option<&Ticket>,
    ) -> Result<Option<Ticket>, ExecutorError> {
        // The previous driver's supervisor ends its command within the grace time after the
        // driver died, writing `exit_status` if the command had finished: wait for it before
        // reading the directory.
        supervisor::wait_for_supervisor(&run.run_dir, GRACE + SUPERVISOR_SLACK);
        if let Some(t) = ticket.and_then(ticket_token) {
            reap::kill_by_env(reap::TOKEN_VAR, t);
        }
        Ok(recover_ended(run, ticket))
    }

    /// Ends every process still marked with this campaign's key and every cgroup left for
    /// it: what earlier drivers' runs left behind (the driver calls it after recovering, and
    /// `cancel` after cancelling).
    fn cancel_untracked(&mut self) -> Result<Vec<String>, ExecutorError> {
        let mut ended: Vec<String> = reap::kill_by_env(reap::CAMPAIGN_VAR, &self.campaign_key)
            .into_iter()
            .map(|pid| format!("process {pid}"))
            .collect();
        ended.extend(
            reap::end_campaign_cgroups(&self.campaign_key)
                .into_iter()
                .map(|cg| format!("cgroup {cg}")),
        );
        Ok(ended)
    }

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(100)
    }

    fn runs_outlive_driver(&self) -> bool {
        false
    }
}

/// A started run as its monitor thread sees it.
struct Monitored {
    /// The run's supervisor.
    child: Child,
    id: String,
    run_dir: PathBuf,
    token: String,
    cgroup: Option<reap::RunCgroup>,
}

/// Waits for the supervisor, asking it to stop the run on timeout or cancel, then takes the
/// run's status from `exit_status` (written by the supervisor when the command ended on its
/// own), records why it stopped the run otherwise, ends whatever of the run is left, and
/// publishes the status.
fn spawn_monitor(
    run: Monitored,
    timeout: Option<Duration>,
    runs: Arc<Mutex<HashMap<String, Slot>>>,
) -> JoinHandle<()> {
    let Monitored {
        mut child,
        id,
        run_dir,
        token,
        cgroup,
    } = run;
    std::thread::spawn(move || {
        let started = Instant::now();
        let pid = child.id() as i32;
        let mut stopping: Option<(Instant, String)> = None;
        let cancel_requested = || {
            runs.lock()
                .ok()
                .and_then(|r| r.get(&id).map(|s| s.cancel))
                .unwrap_or(false)
        };
        let ended = loop {
            match child.try_wait() {
                Ok(Some(exit)) => break Ok(exit),
                Ok(None) => {}
                Err(e) => break Err(e),
            }
            match &stopping {
                None if cancel_requested() => {
                    signal(pid, libc::SIGTERM);
                    stopping = Some((Instant::now(), "cancelled".into()));
                }
                None if timeout.is_some_and(|t| started.elapsed() >= t) => {
                    signal(pid, libc::SIGTERM);
                    let t = timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0);
                    stopping = Some((Instant::now(), format!("timed out after {t} s")));
                }
                Some((since, _)) if since.elapsed() >= GRACE + SUPERVISOR_SLACK => {
                    // The supervisor does not end: kill it (its command dies with it).
                    signal(pid, libc::SIGKILL);
                }
                _ => {}
            }
            std::thread::sleep(Duration::from_millis(25));
        };
        // Escaped descendants go too.
        reap::kill_by_env(reap::TOKEN_VAR, &token);
        drop(cgroup);
        // `cancel` sets the flag, then waits: read it also after the end, so a run it stopped
        // is never taken for a crash.
        if stopping.is_none() && cancel_requested() {
            stopping = Some((Instant::now(), "cancelled".into()));
        }
        let status = match (read_exit_status(&run_dir), stopping, ended) {
            (Some(status), _, _) => status,
            (None, Some((_, why)), _) => RunStatus::Failed { reason: why },
            (None, None, Ok(exit)) => RunStatus::Failed {
                reason: format!(
                    "the run's supervisor ended ({exit}) without the run's exit status"
                ),
            },
            (None, None, Err(e)) => RunStatus::Failed {
                reason: format!("cannot wait for the process: {e}"),
            },
        };
        if read_exit_status(&run_dir).is_none() {
            let _ = write_exit_status(&run_dir, &status);
        }
        if let Ok(mut r) = runs.lock() {
            if let Some(slot) = r.get_mut(&id) {
                slot.status = status;
            }
        }
    })
}

fn signal(pid: i32, signal: i32) {
    if pid > 1 {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::{Curve, Point};
    use crate::executor::ExecutorKind;
    use crate::executor::{read_exit_status, ComponentContext};

    fn ctx(base: &Path) -> ExecutorContext {
        let points = [
            Point {
                nproc: 1,
                sypd: 1.0,
            },
            Point {
                nproc: 2,
                sypd: 2.0,
            },
        ];
        ExecutorContext {
            base_dir: base.to_path_buf(),
            components: ["IFS", "NEMO"]
                .iter()
                .map(|n| ComponentContext {
                    name: n.to_string(),
                    timing_name: n.to_string(),
                    curve: Some(Curve::from_points(*n, "t", &points).unwrap()),
                    threads: 1,
                })
                .collect(),
            period_s: None,
            standalone: false,
            layout: None,
        }
    }

    fn cfg(command: &[&str], timeout_s: Option<f64>) -> ExecutorConfig {
        ExecutorConfig {
            kind: ExecutorKind::Command,
            command: Some(command.iter().map(|s| s.to_string()).collect()),
            timeout_s,
            jobs: None,
            retries: None,
            sim: None,
            slurm: None,
        }
    }

    fn request(dir: &Path) -> RunRequest {
        RunRequest {
            component: None,
            id: "i01-t02-r1".into(),
            iteration: 1,
            test: 2,
            repetition: 1,
            nproc: vec![("IFS".into(), 408), ("NEMO".into(), 240)],
            threads: Vec::new(),
            extra_pes: 96,
            run_dir: dir.join("rep-1"),
        }
    }

    fn wait(exec: &mut CommandExecutor, run: &RunRequest, ticket: &Ticket) -> RunStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = exec.poll(&[(run, ticket)]).unwrap().remove(0);
            if !matches!(s, RunStatus::Running) || Instant::now() > deadline {
                return s;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn placeholders_expand_and_unknown_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let exec = CommandExecutor::from_config(
            &cfg(
                &[
                    "./run.sh",
                    "--ifs={nproc.IFS}",
                    "{total_nproc}",
                    "{iteration}/{test}/{repetition}",
                    "{{x}}",
                ],
                None,
            ),
            dir.path(),
            &ctx(dir.path()),
        )
        .unwrap();
        let run = request(dir.path());
        let argv = exec.command_line(&run).unwrap();
        assert_eq!(argv[0], dir.path().join("./run.sh").display().to_string());
        assert_eq!(&argv[1..], ["--ifs=408", "744", "1/2/1", "{x}"]);
        let refused = |command: &[&str]| {
            CommandExecutor::from_config(&cfg(command, None), dir.path(), &ctx(dir.path()))
                .unwrap_err()
                .to_string()
        };
        let e = refused(&["run", "{nproc.FESOM}"]);
        assert!(
            e.contains("[executor] command[1]")
                && e.contains("{nproc.FESOM}")
                && e.contains("{nproc.IFS}"),
            "{e}"
        );
        assert!(refused(&["run", "{nproc.IFS"]).contains("unclosed"));
        let e = refused(&["bash", "-c", "cd {run_dir} && ./run"]);
        assert_eq!(
            e,
            "[executor] command[2]: {run_dir} is not written into commands or scripts; write \"$AUTOLB_RUN_DIR\" (an environment variable the script expands)"
        );
    }

    #[test]
    fn a_layout_tree_gives_first_pes_tasks_and_threads_in_argv_and_environment() {
        let dir = tempfile::tempdir().unwrap();
        let mut tree_ctx = ctx(dir.path());
        tree_ctx.layout = Some(crate::layout::Layout::parse("NEMO | IFS").unwrap());
        let template = [
            "sh",
            "-c",
            "echo {rootpe.IFS} {ntasks.IFS} {nthrds.NEMO} {rootpe.cpl} $AUTOLB_ROOTPE_IFS $AUTOLB_NTASKS_WAV > out",
        ];
        let mut exec =
            CommandExecutor::from_config(&cfg(&template, None), dir.path(), &tree_ctx).unwrap();
        let run = request(dir.path());
        let ticket = exec.start(&run).unwrap();
        assert_eq!(
            wait(&mut exec, &run, &ticket),
            RunStatus::Finished { exit_code: 0 }
        );
        // NEMO first, IFS after it; the coupler and the other ride-along classes go with IFS,
        // the part that holds no atmosphere named `atm`: the whole layout.
        assert_eq!(
            std::fs::read_to_string(run.run_dir.join("out")).unwrap(),
            "240 408 1 0 240 648\n"
        );
        // Without a layout the placeholders do not exist.
        let e = CommandExecutor::from_config(&cfg(&template, None), dir.path(), &ctx(dir.path()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown placeholder {rootpe.IFS}"), "{e}");
    }

    #[test]
    fn runs_in_the_run_directory_with_text_in_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let mut exec = CommandExecutor::from_config(
            &cfg(
                &[
                    "sh",
                    "-c",
                    "printf '%s|%s|%s|%s' \"$(pwd)\" \"$AUTOLB_RUN_DIR\" \"$AUTOLB_RUN\" $(( {nproc.IFS} / 2 ))",
                ],
                None,
            ),
            dir.path(),
            &ctx(dir.path()),
        )
        .unwrap();
        let run = request(dir.path());
        let ticket = exec.start(&run).unwrap();
        assert_eq!(
            wait(&mut exec, &run, &ticket),
            RunStatus::Finished { exit_code: 0 }
        );
        let d = run.run_dir.canonicalize().unwrap();
        assert_eq!(
            std::fs::read_to_string(run.run_dir.join("stdout")).unwrap(),
            format!("{}|{}|i01-t02-r1|204", d.display(), run.run_dir.display())
        );
    }

    #[test]
    fn runs_without_a_shell_and_keeps_output_and_exit_status() {
        let dir = tempfile::tempdir().unwrap();
        // `$HOME` stays literal: no shell expands it.
        let mut exec = CommandExecutor::from_config(
            &cfg(
                &[
                    "sh",
                    "-c",
                    "echo \"$0 $1\"; echo oops >&2; exit 3",
                    "{nproc.NEMO}",
                    "$HOME",
                ],
                None,
            ),
            dir.path(),
            &ctx(dir.path()),
        )
        .unwrap();
        let run = request(dir.path());
        let ticket = exec.start(&run).unwrap();
        assert_eq!(
            wait(&mut exec, &run, &ticket),
            RunStatus::Finished { exit_code: 3 }
        );
        assert_eq!(
            std::fs::read_to_string(run.run_dir.join("stdout")).unwrap(),
            "240 $HOME\n"
        );
        assert_eq!(
            std::fs::read_to_string(run.run_dir.join("stderr")).unwrap(),
            "oops\n"
        );
        assert_eq!(
            read_exit_status(&run.run_dir),
            Some(RunStatus::Finished { exit_code: 3 })
        );
        // A fresh executor (a restarted driver) finds the result on disk.
        let mut fresh =
            CommandExecutor::from_config(&cfg(&["true"], None), dir.path(), &ctx(dir.path()))
                .unwrap();
        assert!(fresh.recover(&run, Some(&ticket)).unwrap().is_some());
        assert_eq!(
            fresh.poll(&[(&run, &ticket)]).unwrap()[0],
            RunStatus::Finished { exit_code: 3 }
        );
    }

    #[test]
    fn timeout_and_cancel_fail_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut exec = CommandExecutor::from_config(
            &cfg(&["sleep", "30"], Some(0.3)),
            dir.path(),
            &ctx(dir.path()),
        )
        .unwrap();
        let run = request(dir.path());
        let ticket = exec.start(&run).unwrap();
        match wait(&mut exec, &run, &ticket) {
            RunStatus::Failed { reason } => assert!(reason.contains("timed out"), "{reason}"),
            other => panic!("{other:?}"),
        }
        let mut exec = CommandExecutor::from_config(
            &cfg(&["sleep", "30"], None),
            dir.path(),
            &ctx(dir.path()),
        )
        .unwrap();
        let ticket = exec.start(&run).unwrap();
        let started = Instant::now();
        exec.cancel(&run, &ticket).unwrap();
        assert!(started.elapsed() < Duration::from_secs(4));
        assert_eq!(
            exec.poll(&[(&run, &ticket)]).unwrap()[0],
            RunStatus::Failed {
                reason: "cancelled".into()
            }
        );
    }

    #[test]
    fn timeouts_that_are_no_duration_are_refused_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e30] {
            let e = CommandExecutor::from_config(
                &cfg(&["true"], Some(bad)),
                dir.path(),
                &ctx(dir.path()),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("timeout_s"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_missing_program_is_an_error_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let mut exec = CommandExecutor::from_config(
            &cfg(&["./no-such-program"], None),
            dir.path(),
            &ctx(dir.path()),
        )
        .unwrap();
        let e = exec.start(&request(dir.path())).unwrap_err().to_string();
        assert!(e.contains("no-such-program"), "{e}");
    }
}
