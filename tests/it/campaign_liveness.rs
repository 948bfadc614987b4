//! Whether a driver is alive comes from the OS lock it holds, not from its pid or a clock: a
//! driver stopped with SIGSTOP, or running in a PID namespace of its own, is alive, so `next`
//! leaves its runs alone and nobody is told to resume it. (The attacks on claims are in
//! `campaign_claims`.)

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::campaign_driver_state::signal;
use crate::common::processes::{eventually, wait_with_timeout};
use crate::common::status_json;
use crate::common::{autolb, autolb_path, spawn_campaign_run_stderr_piped};

fn status_driver(dir: &Path) -> Value {
    status_json(dir)["driver"].clone()
}

/// What every view says of a live driver: running, its runs not offered, no advice to
/// resume it.
fn assert_seen_alive(dir: &Path, why: &str) {
    let driver = status_driver(dir);
    assert_eq!(driver["state"], "running", "{why}: {driver}");
    assert_eq!(driver["alive"], true, "{why}: {driver}");
    let next = autolb()
        .args(["campaign", "next"])
        .arg(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&next.stdout);
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(
        stdout.starts_with(
            "nothing to run here: `autolb campaign run` runs this campaign's runs itself"
        ),
        "{why}: {stdout}{stderr}"
    );
    let text = autolb()
        .args(["campaign", "status"])
        .arg(dir)
        .env("COLUMNS", "200")
        .stdout_ok();
    assert!(!text.contains("resume with"), "{why}: {text}");
    assert!(!text.contains("driver lost"), "{why}: {text}");
}

#[test]
fn a_driver_stopped_with_sigstop_longer_than_a_beat_timeout_is_alive() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = crate::common::slow_command_campaign(tmp.path());
    let mut driver = spawn_campaign_run_stderr_piped(&dir);
    assert!(eventually(Duration::from_secs(20), &mut || {
        status_driver(&dir)["state"] == "running"
    }));
    signal(&driver, libc::SIGSTOP);
    // Past the 10 s of silence after which a driver seen from another host counts as lost: on
    // its own host its lock, still held, decides.
    std::thread::sleep(Duration::from_secs(12));
    assert_seen_alive(&dir, "stopped");
    let text = autolb()
        .args(["campaign", "status"])
        .arg(&dir)
        .env("COLUMNS", "200")
        .stdout_ok();
    assert!(
        text.contains("holds its lock, but has not beaten for"),
        "{text}"
    );
    signal(&driver, libc::SIGCONT);
    signal(&driver, libc::SIGTERM);
    assert_eq!(
        wait_with_timeout(&mut driver, Duration::from_secs(60)).code(),
        Some(143)
    );
    assert_eq!(status_driver(&dir)["state"], "none");
}

#[test]
fn a_driver_in_its_own_pid_namespace_is_alive() {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("skipped: a PID namespace needs root (`unshare --pid --fork`)");
        return;
    }
    let probe = std::process::Command::new("unshare")
        .args(["--pid", "--fork", "--kill-child", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: `unshare --pid --fork --kill-child` is not available here");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = crate::common::slow_command_campaign(tmp.path());
    // Inside, a shell (pid 1 there) uses up pids until the driver gets one that no process
    // of this host has: its pid asked here would say it is gone.
    let target = (1000..30_000)
        .find(|p| (0..20).all(|k| !Path::new(&format!("/proc/{}", p + k)).exists()))
        .unwrap();
    let script = format!(
        r#"i=2; while [ $i -lt {target} ]; do /bin/true; i=$((i + 1)); done; "$0" campaign run "$1""#
    );
    // `--kill-child`: the namespace (its pid 1, then everything in it) dies with `unshare`.
    let mut unshare = std::process::Command::new("unshare")
        .args(["--pid", "--fork", "--kill-child", "sh", "-c", &script])
        .arg(autolb_path())
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        eventually(Duration::from_secs(60), &mut || {
            status_driver(&dir)["state"] == "running"
        }),
        "{}",
        status_driver(&dir)
    );
    let pid = status_driver(&dir)["pid"].as_u64().unwrap();
    assert!(pid >= target as u64, "pid {pid} in the namespace");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "pid {pid} is taken on this host too: the test cannot tell a pid check from the lock"
    );
    std::thread::sleep(Duration::from_secs(3));
    assert_seen_alive(&dir, "in its own PID namespace");
    unshare.kill().unwrap();
    unshare.wait().unwrap();
    assert!(
        eventually(Duration::from_secs(10), &mut || {
            status_driver(&dir)["state"] == "lost"
        }),
        "{}",
        status_driver(&dir)
    );
}
