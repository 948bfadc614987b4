//! The `command` executor: runs a user command template locally, one process (group) per run.
//!
//! The template is a list (program and arguments) with placeholders `{run_dir}`,
//! `{nproc.NAME}` for each component, `{total_nproc}`, `{iteration}`, `{test}`,
//! `{repetition}` and `{run}` (the run id); `{{` and `}}` are literal braces. It is executed
//! without a shell (a template that wants one says so: `["bash", "-c", "..."]`), in the run
//! directory, with stdout and stderr going to `stdout` and `stderr` there and the way it ended
//! to `exit_status`. A relative program path containing `/` is relative to the campaign file.
//!
//! Each run is its own process group, and its first process dies with the driver
//! (`PR_SET_PDEATHSIG`), so a killed driver leaves nothing behind that could write into a run
//! directory it will reuse; a restarted driver also kills any process still carrying the
//! run's `AUTOLB_RUN` token.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::ExecutorConfig;
use super::{
    recover_ended, status_on_disk, write_exit_status, Executor, ExecutorContext, ExecutorError,
    RunRequest, RunStatus, Ticket,
};

/// How long a run may take to end after SIGTERM (timeout, cancel) before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// Runs each run as a local process.
pub struct CommandExecutor {
    template: Vec<String>,
    base_dir: PathBuf,
    timeout: Option<Duration>,
    runs: Arc<Mutex<HashMap<String, Slot>>>,
    monitors: HashMap<String, JoinHandle<()>>,
}

#[derive(Debug, Clone)]
struct Slot {
    status: RunStatus,
    pgid: i32,
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
        _campaign_dir: &Path,
        ctx: &ExecutorContext,
    ) -> Result<CommandExecutor, ExecutorError> {
        let template = cfg.command.clone().unwrap_or_default();
        if template.is_empty() || template[0].is_empty() {
            return Err(ExecutorError::Config(
                "[executor] command is empty; give the program and its arguments, e.g. command = [\"./run.sh\", \"{run_dir}\"]".into(),
            ));
        }
        let sample = placeholder_values(&sample_request(ctx));
        for arg in &template {
            expand(arg, &sample).map_err(|e| {
                ExecutorError::Config(format!("[executor] command argument {arg:?}: {e}"))
            })?;
        }
        let timeout = cfg.timeout_s.map(timeout_from_seconds).transpose()?;
        Ok(CommandExecutor {
            template,
            base_dir: ctx.base_dir.clone(),
            timeout,
            runs: Arc::new(Mutex::new(HashMap::new())),
            monitors: HashMap::new(),
        })
    }

    /// The program and arguments of one run, placeholders filled in.
    pub fn command_line(&self, run: &RunRequest) -> Result<Vec<String>, ExecutorError> {
        let values = placeholder_values(run);
        let mut argv = self
            .template
            .iter()
            .map(|a| expand(a, &values).map_err(ExecutorError::Config))
            .collect::<Result<Vec<_>, _>>()?;
        if argv[0].contains('/') && Path::new(&argv[0]).is_relative() {
            argv[0] = self.base_dir.join(&argv[0]).display().to_string();
        }
        Ok(argv)
    }

    fn slot(&self, id: &str) -> Option<Slot> {
        self.runs.lock().ok()?.get(id).cloned()
    }
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

/// A run of the campaign's components, for checking the template's placeholders.
fn sample_request(ctx: &ExecutorContext) -> RunRequest {
    RunRequest {
        id: "i00-t00-r1".into(),
        iteration: 0,
        test: 0,
        repetition: 1,
        nproc: ctx.components.iter().map(|c| (c.name.clone(), 1)).collect(),
        extra_pes: 0,
        run_dir: PathBuf::from("/run"),
    }
}

/// The value of every placeholder for one run (also used by `campaign exec`).
pub fn placeholder_values(run: &RunRequest) -> HashMap<String, String> {
    let mut v = HashMap::new();
    v.insert("run_dir".to_string(), run.run_dir.display().to_string());
    v.insert("total_nproc".to_string(), run.total_nproc().to_string());
    v.insert("iteration".to_string(), run.iteration.to_string());
    v.insert("test".to_string(), run.test.to_string());
    v.insert("repetition".to_string(), run.repetition.to_string());
    v.insert("run".to_string(), run.id.clone());
    for (name, p) in &run.nproc {
        v.insert(format!("nproc.{name}"), p.to_string());
    }
    v
}

/// Fills `{name}` placeholders; `{{` / `}}` are literal braces. Unknown names are errors.
pub fn expand(template: &str, values: &HashMap<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => {
                            return Err(format!(
                                "unclosed placeholder {{{name}; write {{{{ for a literal brace"
                            ))
                        }
                    }
                }
                match values.get(&name) {
                    Some(v) => out.push_str(v),
                    None => {
                        let mut known: Vec<&str> = values.keys().map(|k| k.as_str()).collect();
                        known.sort_unstable();
                        return Err(format!(
                            "unknown placeholder {{{name}}}; known: {}",
                            known
                                .iter()
                                .map(|k| format!("{{{k}}}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                }
            }
            '}' => return Err("a lone } ; write }} for a literal brace".into()),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A token unique to one start of one run, put in the process environment as `AUTOLB_RUN`.
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
        let token = token(run);
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .current_dir(&run.run_dir)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .env("AUTOLB_RUN", &token)
            .env("AUTOLB_RUN_DIR", &run.run_dir);
        die_with_parent(&mut command);
        let child = command.spawn().map_err(|e| ExecutorError::Io {
            what: format!("cannot start {:?} for run {}", argv[0], run.id),
            source: e,
        })?;
        let pid = child.id() as i32;
        if let Ok(mut runs) = self.runs.lock() {
            runs.insert(
                run.id.clone(),
                Slot {
                    status: RunStatus::Running,
                    pgid: pid,
                    cancel: false,
                },
            );
        }
        let monitor = spawn_monitor(
            child,
            run.id.clone(),
            run.run_dir.clone(),
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
        // The process group of the run if it is still running.
        let running = self.runs.lock().ok().and_then(|mut runs| {
            let slot = runs.get_mut(&run.id)?;
            slot.cancel = true;
            (slot.status == RunStatus::Running).then_some(slot.pgid)
        });
        if let Some(pgid) = running {
            signal_group(pgid, libc::SIGTERM);
            // Wait until it has ended, so nothing writes into the run directory afterwards.
            if let Some(handle) = self.monitors.remove(&run.id) {
                let _ = handle.join();
            }
        } else if let Some(t) = ticket_token(ticket) {
            kill_by_token(t);
        }
        Ok(())
    }

    fn recover(
        &mut self,
        run: &RunRequest,
        ticket: Option<&Ticket>,
    ) -> Result<Option<Ticket>, ExecutorError> {
        if let Some(ended) = recover_ended(run, ticket) {
            return Ok(Some(ended));
        }
        if let Some(t) = ticket.and_then(ticket_token) {
            kill_by_token(t);
        }
        Ok(None)
    }

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(100)
    }

    fn runs_outlive_driver(&self) -> bool {
        false
    }
}

/// Waits for the child, enforcing the timeout and cancel requests, then writes the exit status
/// file and publishes the status.
fn spawn_monitor(
    mut child: Child,
    id: String,
    run_dir: PathBuf,
    timeout: Option<Duration>,
    runs: Arc<Mutex<HashMap<String, Slot>>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let started = Instant::now();
        let pgid = child.id() as i32;
        let mut stopping: Option<(Instant, String)> = None;
        let status = loop {
            let cancel_requested = || {
                runs.lock()
                    .ok()
                    .and_then(|r| r.get(&id).map(|s| s.cancel))
                    .unwrap_or(false)
            };
            match child.try_wait() {
                Ok(Some(exit)) => {
                    // Whatever the first process leaves behind in its group goes too.
                    signal_group(pgid, libc::SIGKILL);
                    // `cancel` sets the flag, then signals the group itself: read the flag only
                    // now, after the exit, so a run it killed is never taken for a crash.
                    if stopping.is_none() && cancel_requested() {
                        stopping = Some((Instant::now(), "cancelled".into()));
                    }
                    break match (&stopping, exit.code()) {
                        (Some((_, why)), _) => RunStatus::Failed {
                            reason: why.clone(),
                        },
                        (None, Some(code)) => RunStatus::Finished { exit_code: code },
                        (None, None) => RunStatus::Failed {
                            reason: signal_reason(&exit),
                        },
                    };
                }
                Ok(None) => {}
                Err(e) => {
                    break RunStatus::Failed {
                        reason: format!("cannot wait for the process: {e}"),
                    }
                }
            }
            let cancel = cancel_requested();
            match &stopping {
                None if cancel => {
                    signal_group(pgid, libc::SIGTERM);
                    stopping = Some((Instant::now(), "cancelled".into()));
                }
                None if timeout.is_some_and(|t| started.elapsed() >= t) => {
                    signal_group(pgid, libc::SIGTERM);
                    let t = timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0);
                    stopping = Some((Instant::now(), format!("timed out after {t} s")));
                }
                Some((since, _)) if since.elapsed() >= GRACE => {
                    signal_group(pgid, libc::SIGKILL);
                }
                _ => {}
            }
            std::thread::sleep(Duration::from_millis(25));
        };
        let _ = write_exit_status(&run_dir, &status);
        if let Ok(mut r) = runs.lock() {
            if let Some(slot) = r.get_mut(&id) {
                slot.status = status;
            }
        }
    })
}

#[cfg(unix)]
fn signal_reason(exit: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match exit.signal() {
        Some(s) => format!("killed by signal {s}"),
        None => format!("ended without an exit code ({exit})"),
    }
}

#[cfg(not(unix))]
fn signal_reason(exit: &std::process::ExitStatus) -> String {
    format!("ended without an exit code ({exit})")
}

/// Puts the run in its own process group and, on Linux, kills its first process when the
/// thread that started it (the driver's) dies.
#[cfg(unix)]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls (prctl, getppid, _exit) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The driver may have died between fork and prctl.
                if libc::getppid() != parent {
                    libc::_exit(137);
                }
                Ok(())
            });
        }
    }
}

#[cfg(not(unix))]
fn die_with_parent(_command: &mut Command) {}

#[cfg(unix)]
fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

#[cfg(not(unix))]
fn signal_group(_pgid: i32, _signal: i32) {}

/// Kills every process whose environment carries `AUTOLB_RUN=<token>` (Linux `/proc`).
fn kill_by_token(token: &str) {
    let needle = format!("AUTOLB_RUN={token}\0").into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.windows(needle.len()).any(|w| w == needle.as_slice()) {
            #[cfg(unix)]
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
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
                    curve: Curve::from_points(*n, "t", &points).unwrap(),
                })
                .collect(),
            period_s: None,
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
            id: "i01-t02-r1".into(),
            iteration: 1,
            test: 2,
            repetition: 1,
            nproc: vec![("IFS".into(), 408), ("NEMO".into(), 240)],
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
                    "{run_dir}",
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
        assert_eq!(argv[1], run.run_dir.display().to_string());
        assert_eq!(&argv[2..], ["--ifs=408", "744", "1/2/1", "{x}"]);
        let e = CommandExecutor::from_config(
            &cfg(&["run", "{nproc.FESOM}"], None),
            dir.path(),
            &ctx(dir.path()),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("{nproc.FESOM}") && e.contains("{nproc.IFS}"),
            "{e}"
        );
        let e = CommandExecutor::from_config(
            &cfg(&["run", "{run_dir"], None),
            dir.path(),
            &ctx(dir.path()),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unclosed"), "{e}");
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
