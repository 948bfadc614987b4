//! Campaigns run by the `command` executor (here: `autolb simulate` as the user's model):
//! to the end, with failing and timed-out runs, killed and resumed, and cancelled.

use crate::common;
use crate::common::{autolb, autolb_path, spawn_campaign_run, CampaignToml};

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use autolb::campaign::{Phase, RunState, State, TestState};

/// A small campaign whose model is `autolb simulate` run through the command executor.
fn setup(tmp: &Path, extra_args: &str, executor_extra: &str) -> PathBuf {
    let executor = format!(
        r#"
[executor]
kind = "command"
jobs = 2
command = ["{bin}", "simulate", "--out", ".", "--comp", "ATMIFS={{nproc.IFS}}", "--comp", "oceanx={{nproc.NEMO}}", "--seed", "{{repetition}}"{extra_args}]
{executor_extra}
"#,
        bin = autolb_path().display()
    );
    common::init_demo_campaign(tmp, "camp", &CampaignToml::default().table(&executor))
}

fn run_to_end(dir: &Path) -> String {
    autolb().args(["campaign", "run"]).arg(dir).stdout_ok()
}

fn wait(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(start.elapsed() < limit, "the driver did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Processes (other than ours) whose environment says they run in `dir`.
fn processes_in(dir: &Path) -> Vec<i32> {
    let needle = format!("AUTOLB_RUN_DIR={}", dir.display()).into_bytes();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            if env.windows(needle.len()).any(|w| w == needle.as_slice()) {
                out.push(pid);
            }
        }
    }
    out
}

#[test]
fn runs_to_the_end_with_stdout_stderr_and_exit_status_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = setup(tmp.path(), "", "");
    let table = run_to_end(&dir);
    assert!(table.contains("best so far: IFS "), "{table}");
    assert!(table.contains("done 2/2"), "{table}");
    // Cancelling a finished campaign changes nothing: it stays done.
    let out = autolb()
        .args(["campaign", "cancel"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("already done"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(autolb::campaign::status(&dir).unwrap().state, Phase::Done);
    let state = State::load(&dir).unwrap();
    assert!(state.is_done());
    assert!(state.iterations.len() >= 2);
    let it = &state.iterations[0];
    let run_dir = state.request(&dir, 0, 0, 0).run_dir;
    assert!(run_dir.ends_with("iter-00/test-00/rep-1"));
    for f in ["stdout", "stderr", "exit_status", "lucia.01.000000"] {
        assert!(
            run_dir.join(f).exists(),
            "{f} missing in {}",
            run_dir.display()
        );
    }
    assert!(it.tests[0].runs.iter().all(|r| r.state == RunState::Done));
    // Repetitions ran with different seeds: different measurements.
    let m: Vec<f64> = it.tests[0]
        .runs
        .iter()
        .map(|r| r.metrics.as_ref().unwrap().sypd)
        .collect();
    assert_ne!(m[0], m[1]);
}

#[test]
fn failing_and_timed_out_runs_are_failed_never_averaged() {
    let tmp = tempfile::tempdir().unwrap();
    // Every run stops after 3 steps with exit status 1: every test fails in iteration 0.
    let dir = setup(tmp.path(), r#", "--fail", "3""#, "");
    let table = run_to_end(&dir);
    let status = autolb::campaign::status(&dir).unwrap();
    assert_eq!(status.state, Phase::Done);
    assert_eq!(status.state_label(), "done: no successful run");
    assert!(
        table.contains("campaign done: no successful run:"),
        "{table}"
    );
    // Every row says its runs failed, with the reason right below it.
    assert!(table.contains("failed 0/2 ✗2"), "{table}");
    assert!(table.contains("rep 2 failed: exit status 1"), "{table}");
    assert_eq!(status.iterations.len(), 1);
    assert!(status.best.is_none());
    for t in &status.iterations[0].tests {
        assert_eq!(t.state, TestState::Failed);
        for r in &t.runs {
            assert_eq!(r.state, RunState::Failed);
            let why = r.failure.as_deref().unwrap();
            assert!(why.starts_with("exit status 1"), "{why}");
        }
    }

    let tmp = tempfile::tempdir().unwrap();
    // A slow model and a 0.3 s limit, one retry: every run times out twice.
    let dir = setup(
        tmp.path(),
        r#", "--compress", "1""#,
        "timeout_s = 0.3\nretries = 1",
    );
    run_to_end(&dir);
    let state = State::load(&dir).unwrap();
    for t in &state.iterations[0].tests {
        for r in &t.runs {
            assert_eq!(r.state, RunState::Failed);
            assert_eq!(r.attempts, 2);
            assert!(r.failure.as_deref().unwrap().contains("timed out"), "{r:?}");
        }
    }
    // The first attempt's files were kept aside.
    assert!(dir.join("iter-00/test-00/rep-1.old-1/stderr").exists());
}

#[test]
fn killed_driver_leaves_no_process_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = setup(tmp.path(), r#", "--compress", "0.05""#, "");
    let mut child = spawn_campaign_run(&dir);
    // Wait until runs are going, then kill -9.
    let start = Instant::now();
    while processes_in(&dir).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(30), "no run started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let start = Instant::now();
    while !processes_in(&dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "runs outlived the driver: {:?}",
            processes_in(&dir)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    run_to_end(&dir);
    assert!(State::load(&dir).unwrap().is_done());
}

#[test]
fn cancel_stops_a_running_campaign() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = setup(tmp.path(), r#", "--compress", "1""#, "");
    let mut child = spawn_campaign_run(&dir);
    let start = Instant::now();
    while processes_in(&dir).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(30), "no run started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = autolb()
        .args(["campaign", "cancel"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("cancelled"));
    assert!(wait(&mut child, Duration::from_secs(30)).success());
    assert!(processes_in(&dir).is_empty());
    let status = autolb::campaign::status(&dir).unwrap();
    assert_eq!(status.state, Phase::Cancelled);
    assert_eq!(status.counts.pending + status.counts.running, 0);
    assert!(status.counts.failed > 0);
    // A cancelled campaign runs nothing more.
    let out = autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("cancelled"));
    // Without a driver, cancel works directly too.
    let dir2 = setup(&tmp.path().join("second"), "", "");
    let out = autolb()
        .args(["campaign", "cancel"])
        .arg(&dir2)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("cancelled 4 unfinished runs: 0 stopped, 4 never started"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Runs that never started are cancelled, not failed, in every count.
    let status = autolb::campaign::status(&dir2).unwrap();
    assert_eq!((status.counts.cancelled, status.counts.failed), (4, 0));
    assert!(status.counts.text().contains("4 cancelled"));
    assert!(
        status.table().contains(", 4 cancelled"),
        "{}",
        status.table()
    );
}

#[test]
fn exit_zero_without_timing_output_is_a_failed_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = setup(tmp.path(), "", "");
    // Swap the model for one that succeeds but writes no timing output.
    let mut state = State::load(&dir).unwrap();
    state.executor.as_mut().unwrap().command =
        Some(vec!["sh".into(), "-c".into(), "echo ran".into()]);
    state.save(&dir).unwrap();
    run_to_end(&dir);
    let state = State::load(&dir).unwrap();
    for t in &state.iterations[0].tests {
        for r in &t.runs {
            assert_eq!(r.state, RunState::Failed);
            let why = r.failure.as_deref().unwrap();
            assert!(why.starts_with("unreadable timing output"), "{why}");
        }
    }
    let stdout = std::fs::read_to_string(dir.join("iter-00/test-00/rep-1/stdout")).unwrap();
    assert_eq!(stdout, "ran\n");
}
