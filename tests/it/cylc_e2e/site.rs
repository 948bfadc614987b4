//! A private Cylc 8 site for one test: its own HOME (so `~/cylc-run`, `~/.cylc/flow/global.cylc`
//! and the schedulers' contact files are the test's alone), a PATH with `autolb` and `cylc` on
//! it, and the workflow as `autolb example --out` writes it. Dropping the site kills what its
//! schedulers and jobs left running.
//!
//! Cylc is found as `CYLC=/path/to/cylc` or `cylc` on PATH (`.ci/run` installs 8.5 into a
//! virtual environment). Without it (or without rsync, which `cylc install` runs) the tests skip
//! with a message; `AUTOLB_REQUIRE_CYLC=1` (set by CI) makes them fail instead.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{autolb, autolb_path, course, status_json};

/// The Cylc to use, or `None` after saying why the test skips (a panic instead when
/// `AUTOLB_REQUIRE_CYLC=1`).
pub fn cylc_or_skip() -> Option<PathBuf> {
    let candidate = std::env::var_os("CYLC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("cylc"));
    let version = Command::new(&candidate)
        .arg("version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let rsync = Command::new("rsync").arg("--version").output().is_ok();
    let missing = match version {
        None => Some("Cylc not found (set CYLC to its cylc, or put cylc on PATH)".to_string()),
        Some(v) if !v.starts_with("8.") => Some(format!("Cylc {v} found; these tests need Cylc 8")),
        Some(_) if !rsync => Some("rsync not found (cylc install needs it)".to_string()),
        Some(_) => None,
    };
    let Some(msg) = missing else {
        // `cylc` on PATH: the absolute path, for global.cylc's `cylc path`.
        return Some(absolute_program(&candidate));
    };
    if std::env::var("AUTOLB_REQUIRE_CYLC").as_deref() == Ok("1") {
        panic!("{msg}, and AUTOLB_REQUIRE_CYLC=1");
    }
    eprintln!("skipped: {msg}");
    None
}

fn absolute_program(program: &Path) -> PathBuf {
    if program.components().count() > 1 {
        return std::path::absolute(program).unwrap();
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| program.to_path_buf())
}

/// One test's Cylc site; see the module doc.
pub struct Site {
    _tmp: tempfile::TempDir,
    /// Where the test works (the example, campaigns, marks).
    pub root: PathBuf,
    /// The HOME of every Cylc command and job here.
    pub home: PathBuf,
    path: OsString,
    /// When the test gives up waiting.
    deadline: Instant,
}

impl Site {
    /// A site whose waits give up after `limit`. The workflow's site settings: a stall ends
    /// the scheduler at once, as does 3 minutes without activity (no test hangs), and jobs
    /// are polled every 5 s, so a job killed with its process group is seen within seconds.
    pub fn new(cylc: &Path, limit: Duration) -> Site {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let home = root.join("home");
        let conf = home.join(".cylc/flow");
        std::fs::create_dir_all(&conf).unwrap();
        let cylc_dir = cylc.parent().unwrap();
        std::fs::write(
            conf.join("global.cylc"),
            format!(
                "[scheduler]\n    [[events]]\n        stall timeout = PT0S\n        \
                 abort on stall timeout = True\n        inactivity timeout = PT3M\n        \
                 abort on inactivity timeout = True\n[platforms]\n    [[localhost]]\n        \
                 cylc path = {}\n        execution polling intervals = PT5S\n        \
                 submission polling intervals = PT5S\n",
                cylc_dir.display()
            ),
        )
        .unwrap();
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(autolb_path(), bin.join("autolb")).unwrap();
        let mut dirs = vec![bin, cylc_dir.to_path_buf()];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        Site {
            _tmp: tmp,
            root,
            home,
            path: std::env::join_paths(dirs).unwrap(),
            deadline: Instant::now() + limit,
        }
    }

    /// `program` with this site's HOME and PATH, in its root.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.current_dir(&self.root)
            .env("HOME", &self.home)
            .env("PATH", &self.path)
            .env_remove("CYLC_CONF_PATH")
            .env_remove("CYLC_SITE_CONF_PATH");
        c
    }

    /// Runs `cylc ARGS` to its end and returns its output; panics with it when it fails.
    pub fn cylc(&self, args: &[&str]) -> Output {
        let out = self.command("cylc").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "cylc {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Writes `autolb example --out DIR` under the root; returns DIR.
    pub fn example(&self) -> PathBuf {
        let dir = self.root.join("example");
        autolb()
            .args(["example", "--out"])
            .arg(&dir)
            .assert()
            .success();
        dir
    }

    /// The run directory of workflow `id` (its latest run).
    pub fn run_dir(&self, id: &str) -> PathBuf {
        self.home.join("cylc-run").join(id).join("runN")
    }

    /// The scheduler's pid from its contact file, while it has one.
    pub fn scheduler_pid(&self, id: &str) -> Option<i32> {
        let text = std::fs::read_to_string(self.run_dir(id).join(".service/contact")).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("CYLC_WORKFLOW_PID="))
            .and_then(|p| p.trim().parse().ok())
    }

    /// The scheduler's log of its latest start (empty before it has one).
    pub fn log(&self, id: &str) -> String {
        std::fs::read_to_string(self.run_dir(id).join("log/scheduler/log")).unwrap_or_default()
    }

    /// The end of the scheduler's log, for failure messages.
    pub fn log_tail(&self, id: &str) -> String {
        let log = self.log(id);
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    }

    /// Panics, with the scheduler's log, once the test's time is up.
    pub fn check_time(&self, id: &str, waiting_for: &str) {
        if Instant::now() > self.deadline {
            panic!(
                "gave up waiting for {waiting_for}; the scheduler's log ends:\n{}",
                self.log_tail(id)
            );
        }
    }

    /// Waits until the scheduler of workflow `id` has stopped (its contact file gone, or its
    /// process).
    pub fn wait_for_scheduler_end(&self, id: &str) {
        loop {
            match self.scheduler_pid(id) {
                Some(pid) if alive(pid) => {}
                _ => return,
            }
            self.check_time(id, "the scheduler to end");
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// The pid Cylc's background job runner gave job `job` (`CYCLE/TASK/NN`): the leader of
    /// the job's own process group.
    pub fn job_pid(&self, id: &str, job: &str) -> i32 {
        let status = self
            .run_dir(id)
            .join("log/job")
            .join(job)
            .join("job.status");
        let text = std::fs::read_to_string(&status).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("CYLC_JOB_ID="))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no CYLC_JOB_ID in {}:\n{text}", status.display()))
    }
}

impl Drop for Site {
    /// Kills what a failed test left running here: every scheduler, and every job without
    /// an exit in its status file (its process group).
    fn drop(&mut self) {
        let Ok(workflows) = std::fs::read_dir(self.home.join("cylc-run")) else {
            return;
        };
        for w in workflows.flatten() {
            let id = w.file_name().to_string_lossy().to_string();
            if let Some(pid) = self.scheduler_pid(&id) {
                kill(pid, libc::SIGKILL);
            }
            for status in files_named(&self.run_dir(&id).join("log/job"), "job.status") {
                let text = std::fs::read_to_string(&status).unwrap_or_default();
                if text.contains("CYLC_JOB_EXIT=") {
                    continue;
                }
                let pid = text
                    .lines()
                    .find_map(|l| l.strip_prefix("CYLC_JOB_ID="))
                    .and_then(|p| p.trim().parse::<i32>().ok());
                if let Some(pid) = pid.filter(|&p| p > 1) {
                    kill(-pid, libc::SIGKILL);
                }
            }
        }
    }
}

/// Sends `signal` to `pid` (a process group when negative).
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) takes plain integers; the ids are of processes this test started.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Whether process `pid` exists (and is not a zombie).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn files_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_named(&p, name));
            } else if p.file_name().is_some_and(|n| n == name) {
                out.push(p);
            }
        }
    }
    out
}

/// Every run id of a campaign's status.
pub fn run_ids(status: &Value) -> Vec<String> {
    status["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|it| it["tests"].as_array().unwrap())
        .flat_map(|t| t["runs"].as_array().unwrap())
        .map(|r| r["run"].as_str().unwrap().to_string())
        .collect()
}

/// The same campaign file run by `campaign run` with the `sim` executor (same settings, same
/// seeds: the run ids), in `DIR/reference`; its status.
pub fn reference_status(example: &Path) -> Value {
    let file = example.join("assets/cylc/reference.toml");
    let text = std::fs::read_to_string(example.join("assets/cylc/campaign.toml")).unwrap();
    std::fs::write(
        &file,
        format!("{text}\n[executor]\nkind = \"sim\"\njobs = 4\n"),
    )
    .unwrap();
    let dir = example.join("reference");
    crate::common::init(&dir, &file);
    autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let reference = status_json(&dir);
    assert_eq!(reference["state"], "done");
    reference
}

/// Checks that a campaign Cylc drove ended where `campaign run` ends on the same file: the
/// same course, the same best, nothing failed or left over.
pub fn assert_same_end(driven: &Value, reference: &Value) {
    assert_eq!(driven["state"], "done", "{driven}");
    assert_eq!(driven["counts"]["failed"], 0);
    assert_eq!(driven["counts"]["pending"], 0);
    assert_eq!(driven["counts"]["running"], 0);
    assert_eq!(course(driven), course(reference));
    assert_eq!(driven["best"]["nproc"], reference["best"]["nproc"]);
    assert_eq!(driven["best"]["sypd"], reference["best"]["sypd"]);
}
