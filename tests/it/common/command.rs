//! The one way the tests run the autolb binary: [`autolb`] gives a [`TestCommand`] to add
//! arguments, environment and a working directory to, then run it and check its status and
//! output (with assert_cmd's [`Assert`]) or spawn it (for tests that kill or watch it).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use assert_cmd::assert::Assert;

/// Path of the autolb binary under test: `AUTOLB_TEST_BIN` when set (a copy, so that long runs
/// are not disturbed by rebuilds), else the one cargo built. Also for scripts and command
/// templates that call it.
pub fn autolb_path() -> PathBuf {
    std::env::var_os("AUTOLB_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_autolb")))
}

/// A command running the autolb binary under test.
pub fn autolb() -> TestCommand {
    TestCommand {
        cmd: Command::new(autolb_path()),
        timeout: None,
        streams_set: false,
    }
}

/// `autolb campaign run DIR` in the background with its output dropped: a driver for tests
/// that watch, kill or race it.
pub fn spawn_campaign_run(dir: &Path) -> Child {
    spawn_campaign_run_to(dir, Stdio::null())
}

/// [`spawn_campaign_run`] with its stderr piped, for tests that read what the driver said
/// when it stopped.
pub fn spawn_campaign_run_stderr_piped(dir: &Path) -> Child {
    spawn_campaign_run_to(dir, Stdio::piped())
}

fn spawn_campaign_run_to(dir: &Path, stderr: Stdio) -> Child {
    autolb()
        .args(["campaign", "run"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// A command to run the binary: std's [`Command`] for what it is given, plus how long it may
/// take.
pub struct TestCommand {
    cmd: Command,
    timeout: Option<Duration>,
    /// Whether stdin, stdout or stderr were redirected (then [`TestCommand::output`] keeps them).
    streams_set: bool,
}

impl TestCommand {
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.env(key, value);
        self
    }

    /// Runs without `key` in the environment, whatever the test's own holds.
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.env_remove(key);
        self
    }

    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cmd.current_dir(dir);
        self
    }

    /// Where the command's stdin comes from (else [`TestCommand::output`] gives an empty one).
    pub fn stdin(&mut self, from: impl Into<Stdio>) -> &mut Self {
        self.cmd.stdin(from);
        self.streams_set = true;
        self
    }

    /// Where the command's stdout goes (else [`TestCommand::output`] captures it).
    pub fn stdout(&mut self, to: impl Into<Stdio>) -> &mut Self {
        self.cmd.stdout(to);
        self.streams_set = true;
        self
    }

    /// Where the command's stderr goes (else [`TestCommand::output`] captures it).
    pub fn stderr(&mut self, to: impl Into<Stdio>) -> &mut Self {
        self.cmd.stderr(to);
        self.streams_set = true;
        self
    }

    /// Kills the command, and fails its run, when it takes longer than `limit`.
    pub fn timeout(&mut self, limit: Duration) -> &mut Self {
        self.timeout = Some(limit);
        self
    }

    /// The command as assert_cmd runs it: the same program, arguments, environment and
    /// directory, with the timeout, reading an empty stdin.
    fn runner(&self) -> assert_cmd::Command {
        let mut std = Command::new(self.cmd.get_program());
        std.args(self.cmd.get_args());
        for (key, value) in self.cmd.get_envs() {
            match value {
                Some(value) => std.env(key, value),
                None => std.env_remove(key),
            };
        }
        if let Some(dir) = self.cmd.get_current_dir() {
            std.current_dir(dir);
        }
        let mut runner = assert_cmd::Command::from_std(std);
        if let Some(limit) = self.timeout {
            runner.timeout(limit);
        }
        runner
    }

    /// Runs the command to its end, capturing stdout and stderr unless they were redirected
    /// (e.g. stdout to `/dev/full`), as std's `Command::output` does.
    pub fn output(&mut self) -> std::io::Result<Output> {
        if self.streams_set {
            assert!(
                self.timeout.is_none(),
                "a timeout needs the streams captured (assert_cmd runs it)"
            );
            return self.cmd.output();
        }
        self.runner().output()
    }

    /// Runs the command to its end, for checks on its status and output.
    pub fn assert(&mut self) -> Assert {
        self.runner().assert()
    }

    /// Runs the command, panicking with its stderr unless it succeeds; returns its stdout.
    pub fn stdout_ok(&mut self) -> String {
        let out = self.output().unwrap();
        assert!(
            out.status.success(),
            "autolb {:?}: {}",
            self.cmd.get_args().collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs the command to its end with its stdin, stdout and stderr as set (else the test's
    /// own); its exit status.
    pub fn status(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.cmd.status()
    }

    /// Starts the command without waiting for it (its stdin, stdout and stderr as set, else
    /// the test's own).
    pub fn spawn(&mut self) -> std::io::Result<Child> {
        self.cmd.spawn()
    }
}
