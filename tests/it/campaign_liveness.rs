//! Whether a driver or an `exec` is alive comes from the OS lock it holds, not from its claim
//! or heartbeat file, its pid or a clock: a claim file cut or deleted under a running `exec`
//! keeps every other `exec` out; a claim or heartbeat dated a year ahead blocks nothing; a
//! driver stopped with SIGSTOP, or running in a PID namespace of its own, is alive, so `next`
//! leaves its runs alone and nobody is told to resume it.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::common::processes::{eventually, wait_with_timeout};
use crate::common::{autolb, autolb_path, campaign_file, init, spawn_campaign_run_stderr_piped};
use autolb::campaign::claim::claim_path;
use autolb::campaign::{RunState, State};

const RUN: [&str; 6] = ["--iteration", "0", "--test", "0", "--repetition", "1"];

/// `exec` of the first run with `sh -c SCRIPT sh COUNTER BIN DIR`.
fn spawn_exec(dir: &Path, counter: &Path, script: &str) -> Child {
    autolb()
        .args(["campaign", "exec"])
        .arg(dir)
        .args(RUN)
        .args(["--", "sh", "-c", script, "sh"])
        .arg(counter)
        .arg(autolb_path())
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Counts its start, waits for the file `go` beside the counter, then writes the stand-in
/// model's timing output.
const GATED_RUN: &str = r#"echo "$$" >> "$1"; while [ ! -e "$1.go" ]; do sleep 0.05; done; exec "$2" simulate --campaign "$3" --run "$AUTOLB_RUN""#;

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn first_run_state(dir: &Path) -> RunState {
    let state = State::load(dir).unwrap();
    let first = state.run_positions().next().unwrap();
    state.run(first).state
}

fn one_run_campaign(tmp: &Path) -> PathBuf {
    let file = campaign_file(tmp, "IFS", "NEMO", 1, 1);
    let dir = tmp.join("camp");
    init(&dir, &file);
    dir
}

#[test]
fn a_claim_cut_or_deleted_under_a_running_exec_lets_no_second_exec_start_the_run() {
    for attack in ["cut", "deleted"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = one_run_campaign(tmp.path());
        let counter = tmp.path().join("counter");
        let first = spawn_exec(&dir, &counter, GATED_RUN);
        assert!(eventually(Duration::from_secs(30), &mut || lines(&counter) == 1));
        let claim = claim_path(&dir, "i00-t00-r1");
        match attack {
            "cut" => std::fs::write(&claim, "{\"run\": \"i00-t0").unwrap(),
            _ => std::fs::remove_file(&claim).unwrap(),
        }
        let out = spawn_exec(&dir, &counter, GATED_RUN)
            .wait_with_output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{attack}: {stderr}");
        assert!(
            stderr.contains("busy: run i00-t00-r1 is being run by `autolb campaign exec` (it holds the claim's lock"),
            "{attack}: {stderr}"
        );
        let next = autolb()
            .args(["campaign", "next", "--json"])
            .arg(&dir)
            .stdout_ok();
        assert_eq!(
            next.trim(),
            "[]",
            "{attack}: the claimed run is not offered"
        );
        // The first exec finishes and records its result.
        std::fs::write(tmp.path().join("counter.go"), "").unwrap();
        let out = first.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{attack}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(lines(&counter), 1, "{attack}: started once");
        assert_eq!(first_run_state(&dir), RunState::Done, "{attack}");
    }
}

/// Sets the modification time of `path` a year ahead.
fn date_a_year_ahead(path: &Path) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(365 * 86_400))
        .unwrap();
}

#[test]
fn a_claim_and_a_heartbeat_dated_a_year_ahead_block_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_run_campaign(tmp.path());
    let year = 365.0 * 86_400.0;
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    // A claim of a gone holder on this host, dated (inside and on disk) a year ahead.
    std::fs::create_dir_all(dir.join("claims")).unwrap();
    let claim = claim_path(&dir, "i00-t00-r1");
    let record = serde_json::json!({
        "run": "i00-t00-r1", "token": "from-the-future", "pid": std::process::id(),
        "host": autolb::campaign::claim::hostname(), "started": now + year,
    });
    std::fs::write(&claim, record.to_string()).unwrap();
    date_a_year_ahead(&claim);
    // A heartbeat of a driver on this host that holds no lock, dated a year ahead.
    let beat = serde_json::json!({
        "pid": std::process::id(), "host": autolb::campaign::heartbeat::host_name(),
        "started": now as u64 + year as u64, "beat": now as u64 + year as u64,
    });
    std::fs::write(dir.join("driver.json"), beat.to_string()).unwrap();
    date_a_year_ahead(&dir.join("driver.json"));
    let status: Value = serde_json::from_str(
        &autolb()
            .args(["campaign", "status", "--json"])
            .arg(&dir)
            .stdout_ok(),
    )
    .unwrap();
    assert_eq!(status["driver"]["alive"], false, "{}", status["driver"]);
    let next = autolb()
        .args(["campaign", "next", "--json"])
        .arg(&dir)
        .stdout_ok();
    assert!(next.contains("i00-t00-r1"), "offered: {next}");
    let counter = tmp.path().join("counter");
    std::fs::write(tmp.path().join("counter.go"), "").unwrap();
    let out = spawn_exec(&dir, &counter, GATED_RUN)
        .wait_with_output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("recovered the claim on run i00-t00-r1"),
        "{stderr}"
    );
    assert_eq!(first_run_state(&dir), RunState::Done);
}

fn status_driver(dir: &Path) -> Value {
    let out = autolb()
        .args(["campaign", "status", "--json"])
        .arg(dir)
        .timeout(Duration::from_secs(30))
        .stdout_ok();
    serde_json::from_str::<Value>(&out).unwrap()["driver"].clone()
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: a signal to a process this test started.
    unsafe {
        libc::kill(pid as i32, sig);
    }
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
    signal(driver.id(), libc::SIGSTOP);
    // Past the 10 s after which a silent driver used to count as lost.
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
    signal(driver.id(), libc::SIGCONT);
    signal(driver.id(), libc::SIGTERM);
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
    // `--kill-child`: the driver (pid 1 of the namespace) dies with `unshare`.
    let mut unshare = std::process::Command::new("unshare")
        .args(["--pid", "--fork", "--kill-child"])
        .arg(autolb_path())
        .args(["campaign", "run"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        eventually(Duration::from_secs(20), &mut || {
            status_driver(&dir)["state"] == "running"
        }),
        "{}",
        status_driver(&dir)
    );
    // Its pid as it knows it means nothing here.
    let driver = status_driver(&dir);
    assert_ne!(driver["pid"], unshare.id(), "{driver}");
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
