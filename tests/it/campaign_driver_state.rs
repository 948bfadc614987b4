//! Who drives a campaign, as `campaign status`, `--json` and `next` say it: a running driver is
//! seen beating, a SIGKILLed one is reported lost (on this host at once, by its lock; from
//! another host once this host has seen its heartbeat unchanged for 10 s), and a clean stop
//! says so and exits with 128 + the signal. `campaign status` fits 80 columns and `--watch` redraws until done.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::processes::wait_with_timeout;
use crate::common::{self, autolb, spawn_campaign_run_stderr_piped, status_json};

fn slow_campaign(tmp: &Path) -> PathBuf {
    common::slow_command_campaign(tmp)
}

/// Polls `campaign status --json` until the driver's state is `want`; how long it took.
fn wait_for_driver(dir: &Path, want: &str, limit: Duration) -> (Duration, Value) {
    let start = Instant::now();
    loop {
        let driver = status_json(dir)["driver"].clone();
        if driver["state"] == want {
            return (start.elapsed(), driver);
        }
        assert!(
            start.elapsed() < limit,
            "the driver is not {want} after {limit:?}: {driver}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn signal(child: &Child, sig: i32) {
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
}

#[test]
fn a_sigkilled_driver_is_reported_lost_within_ten_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = slow_campaign(tmp.path());
    let mut child = spawn_campaign_run_stderr_piped(&dir);
    let (_, driver) = wait_for_driver(&dir, "running", Duration::from_secs(20));
    assert_eq!(driver["pid"], child.id());
    assert_eq!(driver["alive"], true);
    assert!(driver["last_seen_s"].as_u64().unwrap() <= 3, "{driver}");
    // It keeps beating while its runs sleep.
    std::thread::sleep(Duration::from_secs(3));
    let driver = status_json(&dir)["driver"].clone();
    assert_eq!(driver["state"], "running", "{driver}");
    assert!(driver["last_seen_s"].as_u64().unwrap() <= 3, "{driver}");

    // `next` leaves the runs to the live driver and says who it is.
    let next = autolb().args(["campaign", "next"]).arg(&dir).stdout_ok();
    assert!(
        next.contains(&format!("running (driver pid {}, seen", child.id())),
        "{next}"
    );
    // `--json` too: an empty list on stdout, and why on stderr.
    let next = autolb()
        .args(["campaign", "next", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(next.status.success());
    let listed: Value = serde_json::from_slice(&next.stdout).unwrap();
    assert_eq!(listed, Value::Array(Vec::new()));
    let why = String::from_utf8_lossy(&next.stderr);
    assert!(
        why.contains("nothing to run here") && why.contains(&format!("driver pid {}", child.id())),
        "{why}"
    );

    child.kill().unwrap(); // SIGKILL: no chance to say goodbye
    let killed = Instant::now();
    child.wait().unwrap();
    // On its host its lock says so at once.
    let (_, driver) = wait_for_driver(&dir, "lost", Duration::from_secs(10));
    assert!(
        killed.elapsed() <= Duration::from_secs(3),
        "{:?}",
        killed.elapsed()
    );
    assert_eq!(driver["pid"], child.id());
    assert_eq!(driver["alive"], false);

    // Every view says the same: the summary line, the advice, and `next`'s note.
    let text = autolb()
        .args(["campaign", "status"])
        .arg(&dir)
        .env("COLUMNS", "80")
        .stdout_ok();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("campaign: driver lost (pid {} gone", child.id())),
        "{text}"
    );
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("runs may still be queued; resume with autolb campaign run"),
        "{text}"
    );
    let next = autolb()
        .args(["campaign", "next"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(
        stderr.contains(&format!("note: driver lost (pid {}", child.id())),
        "{stderr}"
    );

    // Seen from another host sharing the file system (whose lock this host may not see), only
    // the heartbeat's changes tell: the same heartbeat, named for another host, is lost once
    // this host has seen it unchanged for 10 s, whatever the date written in it.
    let path = dir.join("driver.json");
    let mut beat: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    beat["host"] = "another-login-node".into();
    std::fs::write(&path, serde_json::to_string(&beat).unwrap()).unwrap();
    let rewritten = Instant::now();
    let driver = status_json(&dir)["driver"].clone();
    assert_eq!(driver["state"], "running", "a change just seen: {driver}");
    let (_, driver) = wait_for_driver(&dir, "lost", Duration::from_secs(12));
    // Whole seconds of this host's clock: 10 s seen may be a little over 9 s elapsed.
    assert!(
        rewritten.elapsed() >= Duration::from_secs(9),
        "lost {:?} after it changed",
        rewritten.elapsed()
    );
    assert_eq!(driver["host"], "another-login-node");
    assert!(driver["last_seen_s"].as_u64().unwrap() >= 10, "{driver}");
}

/// The demo campaign (the `sim` executor: its runs are threads of the driver) slowed so that
/// a run takes many seconds.
fn slow_sim_campaign(tmp: &Path) -> PathBuf {
    let file = autolb::campaign::demo::write_demo_inputs(tmp).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("compression = 0.01"));
    std::fs::write(
        &file,
        text.replace("compression = 0.01", "compression = 1.0"),
    )
    .unwrap();
    let dir = tmp.join("camp");
    common::init(&dir, &file);
    dir
}

#[test]
fn a_sigkilled_sim_driver_took_its_running_runs_along_and_a_resume_runs_them_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = slow_sim_campaign(tmp.path());
    let mut child = spawn_campaign_run_stderr_piped(&dir);
    wait_for_driver(&dir, "running", Duration::from_secs(20));
    let start = Instant::now();
    while status_json(&dir)["counts"]["running"] == 0 {
        assert!(start.elapsed() < Duration::from_secs(20), "no run started");
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (_, _) = wait_for_driver(&dir, "lost", Duration::from_secs(10));
    let running_in_state = running_in_state_file(&dir);
    assert!(running_in_state > 0);

    // `--json`: the state file's word under "state", the view's beside it, and the counts.
    let json = status_json(&dir);
    assert_eq!(json["counts"]["running"], 0, "{}", json["counts"]);
    assert_eq!(json["counts"]["stopped_with_driver"], running_in_state);
    let runs: Vec<&Value> = json["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|it| it["tests"].as_array().unwrap())
        .flat_map(|t| t["runs"].as_array().unwrap())
        .collect();
    for run in &runs {
        let running = run["state"] == "running";
        assert_eq!(run["stopped_with_driver"] == true, running, "{run}");
    }

    // The text, wide and at 80 columns: no run says running, the advice says why.
    for columns in ["200", "80"] {
        let text = autolb()
            .args(["campaign", "status"])
            .arg(&dir)
            .env("COLUMNS", columns)
            .stdout_ok();
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(
                "runs of the sim executor ended with it; resume with autolb campaign run"
            ),
            "{text}"
        );
        assert!(!words.contains("may still be queued"), "{text}");
        assert!(
            words.contains("runs 0 done, 0 running, ") || words.contains("runs 0/0/"),
            "{text}"
        );
        assert!(
            text.lines()
                .skip(1)
                .any(|l| l.ends_with("  stopped with the driver") || l.ends_with("  stopped")),
            "{text}"
        );
        assert!(
            !text.lines().skip(1).any(|l| l.contains("running")),
            "{columns}: {text}"
        );
    }
    // Read-only: the state file still has them running.
    let still = running_in_state_file(&dir);
    assert_eq!(still, running_in_state);

    // A resume runs them again: as many as status said stopped.
    let mut resumed = autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines =
        std::io::BufRead::lines(std::io::BufReader::new(resumed.stdout.take().unwrap()));
    let line = lines
        .find_map(|l| l.ok().filter(|l| l.starts_with("resumed: ")))
        .expect("a resumed line");
    assert_eq!(
        line,
        format!(
            "resumed: 0 runs found where the last driver left them, {running_in_state} to run again"
        )
    );
    // Its runs are threads of its own: nothing outlives it.
    resumed.kill().unwrap();
    resumed.wait().unwrap();
}

#[test]
fn ctrl_c_exits_130_and_sigterm_143_and_the_driver_is_then_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = slow_campaign(tmp.path());
    for (sig, code, said) in [
        (libc::SIGINT, 130, "Ctrl-C"),
        (libc::SIGTERM, 143, "SIGTERM"),
    ] {
        let mut child = spawn_campaign_run_stderr_piped(&dir);
        wait_for_driver(&dir, "running", Duration::from_secs(20));
        signal(&child, sig);
        let status = wait_with_timeout(&mut child, Duration::from_secs(30));
        assert_eq!(status.code(), Some(code), "{said}: {status:?}");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(
            stderr.contains(&format!("interrupted ({said})"))
                && stderr.contains("resume with: autolb campaign run"),
            "{stderr}"
        );
        // A clean stop is no driver at once, not a lost one.
        let driver = status_json(&dir)["driver"].clone();
        assert_eq!(driver["state"], "none", "{driver}");
        assert_eq!(driver["alive"], false);
    }
}

#[test]
fn status_fits_80_columns_and_watch_on_a_finished_campaign_prints_one_frame() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    autolb()
        .args(["campaign", "init", "--demo"])
        .arg(&dir)
        .stdout_ok();
    autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .timeout(Duration::from_secs(120))
        .stdout_ok();
    let wide = autolb()
        .args(["campaign", "status"])
        .arg(&dir)
        .env("COLUMNS", "200")
        .stdout_ok();
    assert!(wide.contains("partial% IFS/NEMO"), "{wide}");
    // COLUMNS=80, and no COLUMNS in a pipe: both 80.
    let at_80 = autolb()
        .args(["campaign", "status"])
        .arg(&dir)
        .env("COLUMNS", "80")
        .stdout_ok();
    let piped = autolb()
        .args(["campaign", "status"])
        .arg(&dir)
        .env_remove("COLUMNS")
        .stdout_ok();
    assert_eq!(at_80, piped);
    for line in at_80.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line:?}",
            line.chars().count()
        );
    }
    // The runs the state holds, every one measured: the status line counts the same.
    let runs: usize = autolb::campaign::State::load(&dir).unwrap().run_count();
    assert!(
        runs > 4,
        "the demo campaign goes past its first iteration: {runs}"
    );
    let first = at_80.lines().next().unwrap();
    assert!(
        first.starts_with("campaign done · iteration ")
            && first.contains(&format!(" runs {runs} done")),
        "{first}"
    );
    assert!(at_80.contains("best so far: IFS"), "{at_80}");
    assert!(!at_80.contains("partial%"), "{at_80}");

    let out = autolb()
        .args(["campaign", "status", "--watch"])
        .arg(&dir)
        .env("COLUMNS", "80")
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let frames = String::from_utf8(out.stdout).unwrap();
    assert_eq!(frames, at_80, "one frame, no clearing in a pipe");
}

#[test]
fn watch_redraws_a_running_campaign_until_ctrl_c() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = slow_campaign(tmp.path());
    let mut driver = spawn_campaign_run_stderr_piped(&dir);
    wait_for_driver(&dir, "running", Duration::from_secs(20));
    let mut watch = autolb()
        .args(["campaign", "status", "--watch", "0.2"])
        .arg(&dir)
        .env("COLUMNS", "80")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    signal(&watch, libc::SIGINT);
    let status = wait_with_timeout(&mut watch, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "Ctrl-C ends a watch: {status:?}");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut watch.stdout.take().unwrap(), &mut out).unwrap();
    let frames = out
        .lines()
        .filter(|l| l.starts_with("campaign: running (pid "))
        .count();
    assert!(frames >= 3, "{frames} frames:\n{out}");
    assert!(out.lines().any(|l| l == "-".repeat(40)), "{out}");
    assert!(!out.contains('\u{1b}'), "no escape sequences in a pipe");
    signal(&driver, libc::SIGINT);
    wait_with_timeout(&mut driver, Duration::from_secs(30));
}

/// How many runs the state file has as running (what the driver wrote last, whatever the
/// views make of it).
fn running_in_state_file(dir: &std::path::Path) -> usize {
    autolb::campaign::State::load(dir)
        .unwrap()
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .flat_map(|t| &t.runs)
        .filter(|r| r.state == autolb::campaign::RunState::Running)
        .count()
}
