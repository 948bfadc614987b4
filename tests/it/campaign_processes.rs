//! The processes of `command` runs: never an orphan, never a run executed twice.
//!
//! The model here is a shell script that starts an ordinary background child and a `setsid`
//! one (both `sleep 300`), waits, writes its timing output with `autolb simulate`, and appends
//! `start RUN` / `done RUN` to the campaign's `marks/events` (append-only, so its order is the
//! order things happened in). Drivers are killed with SIGKILL at random moments; after every
//! restart no process of any earlier driver's runs may be alive, and at the end no run may
//! have completed twice or been started again after it completed.

use crate::common;
use crate::common::{autolb, autolb_path, spawn_campaign_run, CampaignToml};

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::processes::{
    eventually, run_processes_of_driver, run_processes_of_drivers, run_processes_under,
    wait_with_timeout,
};
use autolb::campaign::{RunState, State};
use rand::Rng;

/// The model: see the module doc. `$1` is how long it works before writing its output.
fn model_script() -> String {
    format!(
        r#"#!/bin/sh
marks="$AUTOLB_RUN_DIR/../../../marks"
mkdir -p "$marks"
echo "start $AUTOLB_RUN" >> "$marks/events"
setsid sleep 300 >/dev/null 2>&1 </dev/null &
sleep 300 >/dev/null 2>&1 </dev/null &
sleep "$1"
"{bin}" simulate --out "$AUTOLB_RUN_DIR" --comp "ATMIFS=$AUTOLB_NPROC_IFS" --comp "oceanx=$AUTOLB_NPROC_NEMO" --seed "$AUTOLB_REPETITION" >/dev/null || exit 1
# Finished: from here on a stop request cannot interrupt it.
trap '' TERM INT HUP
echo "done $AUTOLB_RUN" >> "$marks/events"
exit 0
"#,
        bin = autolb_path().display()
    )
}

/// A small campaign run by [`model_script`] in `tmp/NAME`; `executor_extra` adds settings.
fn setup(tmp: &Path, name: &str, work_s: f64, executor_extra: &str) -> PathBuf {
    let script = tmp.join("model.sh");
    std::fs::write(&script, model_script()).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    common::init_demo_campaign(
        tmp,
        name,
        &CampaignToml::default().table(&format!(
            r#"
[executor]
kind = "command"
jobs = 2
command = ["./model.sh", "{work_s}"]
{executor_extra}
"#
        )),
    )
}

fn start_driver(dir: &Path, cgroup: bool) -> Child {
    autolb()
        .args(["campaign", "run"])
        .arg(dir)
        .env("AUTOLB_CGROUP", if cgroup { "on" } else { "off" })
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("driver.err")).unwrap())
        .spawn()
        .unwrap()
}

/// The `marks/events` lines of a campaign.
fn events(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("marks/events"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Checks a finished campaign: every run done, and each completed exactly once and never
/// started again after it completed. Returns (runs, starts).
fn check_exactly_once(dir: &Path) -> (usize, usize) {
    let state = State::load(dir).unwrap();
    assert!(state.is_done());
    let mut completed: BTreeMap<String, usize> = BTreeMap::new();
    let mut starts = 0;
    for line in events(dir) {
        let (what, run) = line.split_once(' ').unwrap();
        match what {
            "start" => {
                starts += 1;
                assert!(
                    !completed.contains_key(run),
                    "{}: {run} started again after it completed",
                    dir.display()
                );
            }
            "done" => *completed.entry(run.to_string()).or_default() += 1,
            other => panic!("unexpected mark {other}"),
        }
    }
    let mut runs = 0;
    for it in &state.iterations {
        for t in &it.tests {
            for r in &t.runs {
                runs += 1;
                assert_eq!(r.state, RunState::Done, "{}: {:?}", r.id, r.failure);
                assert_eq!(
                    completed.get(&r.id),
                    Some(&1),
                    "{}: {} completed {:?} times",
                    dir.display(),
                    r.id,
                    completed.get(&r.id)
                );
            }
        }
    }
    assert_eq!(
        completed.len(),
        runs,
        "completions of runs the state does not have"
    );
    // No attempt directories pile up: only failed attempts are kept, and none failed.
    let mut old = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                old += usize::from(e.file_name().to_string_lossy().contains(".old-"));
                stack.push(e.path());
            }
        }
    }
    assert_eq!(old, 0, "{old} attempt directories left behind");
    (runs, starts)
}

/// Kills the driver `kills` times at random moments (alternating cgroup and environment-marker
/// tracking); after each restart checks that nothing of any earlier driver's runs is alive;
/// starts a new campaign whenever one finishes; checks every campaign ran each run once.
fn kill_at_random_moments(kills: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let mut rng = rand::rng();
    let mut generation = 0;
    let mut dir = setup(tmp.path(), "camp-0", 0.2, "");
    let mut earlier: HashSet<u32> = HashSet::new();
    let mut done = 0;
    let (mut runs, mut starts) = (0, 0);
    let mut child = start_driver(&dir, true);
    let started = Instant::now();
    let mut k = 0;
    let mut progress_reported = 0;
    while k < kills {
        let delay = Duration::from_millis(rng.random_range(0..700));
        std::thread::sleep(delay);
        if let Some(status) = child.try_wait().unwrap() {
            assert!(
                status.success(),
                "kill {k}: the driver failed ({status:?}): {}",
                std::fs::read_to_string(dir.join("driver.err")).unwrap_or_default()
            );
            // The campaign finished: check it, go on with a new one.
            let (r, s) = check_exactly_once(&dir);
            runs += r;
            starts += s;
            done += 1;
            generation += 1;
            dir = setup(tmp.path(), &format!("camp-{generation}"), 0.2, "");
        } else {
            child.kill().unwrap();
            child.wait().unwrap();
            k += 1;
        }
        earlier.insert(child.id());
        let cgroup = k % 2 == 1;
        child = start_driver(&dir, cgroup);
        let me = child.id();
        // Once the new driver has started a run (or ended), it has resumed: nothing of an
        // earlier driver's runs may be alive any more.
        let resumed = eventually(Duration::from_secs(60), &mut || {
            !run_processes_of_driver(me).is_empty() || child.try_wait().unwrap().is_some()
        });
        assert!(
            resumed,
            "kill {k}: the new driver neither started a run nor ended"
        );
        // A reused pid is the new driver's, not an earlier one's.
        earlier.remove(&me);
        let left = run_processes_of_drivers(&earlier);
        assert!(
            left.is_empty(),
            "kill {k} (cgroup {cgroup}): processes of earlier drivers' runs still alive after the restart: {left:?}"
        );
        if k % 50 == 0 && k > 0 && progress_reported < k {
            progress_reported = k;
            eprintln!(
                "{k} SIGKILLs in {:.0?}: {done} campaigns finished, {runs} runs each completed exactly once so far, no orphan after any restart",
                started.elapsed()
            );
        }
    }
    let status = wait_with_timeout(&mut child, Duration::from_secs(300));
    assert!(status.success());
    let (r, s) = check_exactly_once(&dir);
    runs += r;
    starts += s;
    done += 1;
    assert!(
        run_processes_under(tmp.path()).is_empty(),
        "processes left at the end"
    );
    eprintln!(
        "{kills} SIGKILLs in {:.0?}: {done} campaigns, {runs} runs each completed exactly once, {starts} starts, no orphan after any restart",
        started.elapsed()
    );
}

#[test]
fn kill_9_at_random_moments_leaves_no_orphan_and_runs_nothing_twice() {
    kill_at_random_moments(12);
}

/// The long version (README: "Kill tests"): `cargo test --test campaign_processes --
/// --ignored --nocapture`.
#[test]
#[ignore]
fn kill_9_at_500_random_moments() {
    kill_at_random_moments(500);
}

#[test]
fn sighup_stops_the_driver_like_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = setup(tmp.path(), "camp", 5.0, "");
    for cgroup in [false, true] {
        let mut child = start_driver(&dir, cgroup);
        assert!(eventually(Duration::from_secs(30), &mut || {
            run_processes_under(&dir).len() >= 4
        }));
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGHUP);
        }
        let status = wait_with_timeout(&mut child, Duration::from_secs(30));
        // Stopped by a hangup: 128 + SIGHUP, not the 0 of a finished campaign.
        assert_eq!(status.code(), Some(129), "{status:?}");
        let left = run_processes_under(&dir);
        assert!(left.is_empty(), "cgroup {cgroup}: {left:?}");
        let state = State::load(&dir).unwrap();
        let running = state
            .run_positions()
            .filter(|&p| state.run(p).state == RunState::Running)
            .count();
        assert_eq!(running, 0, "the state still says {running} running");
    }
}

#[test]
fn timeout_and_cancel_end_setsid_descendants_too() {
    for cgroup in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = setup(tmp.path(), "camp", 30.0, "timeout_s = 1\nretries = 0");
        let mut child = start_driver(&dir, cgroup);
        // Every run times out; the campaign stops when every test failed.
        let status = wait_with_timeout(&mut child, Duration::from_secs(120));
        assert!(status.success(), "{status:?}");
        let left = run_processes_under(&dir);
        assert!(left.is_empty(), "cgroup {cgroup}: after timeouts: {left:?}");

        let dir = setup(tmp.path(), "camp2", 30.0, "");
        let mut child = start_driver(&dir, cgroup);
        assert!(eventually(Duration::from_secs(30), &mut || {
            run_processes_under(&dir).len() >= 4
        }));
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
        wait_with_timeout(&mut child, Duration::from_secs(60));
        let left = run_processes_under(&dir);
        assert!(left.is_empty(), "cgroup {cgroup}: after cancel: {left:?}");
    }
}

#[test]
fn eight_simultaneous_drivers_and_a_deleted_lock_run_each_run_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = setup(tmp.path(), "camp", 0.3, "");
    let mut drivers: Vec<Child> = (0..8).map(|_| spawn_campaign_run(&dir)).collect();
    // Delete the lock file while one of them drives; more drivers try.
    std::thread::sleep(Duration::from_millis(500));
    let _ = std::fs::remove_file(dir.join("campaign.lock"));
    for _ in 0..4 {
        drivers.push(spawn_campaign_run(&dir));
    }
    let codes: Vec<Option<i32>> = drivers
        .iter_mut()
        .map(|d| wait_with_timeout(d, Duration::from_secs(300)).code())
        .collect();
    let winners = codes.iter().filter(|c| **c == Some(0)).count();
    assert_eq!(winners, 1, "exit codes {codes:?}");
    // The others are refused as busy (exit 3).
    assert!(
        codes.iter().all(|c| *c == Some(0) || *c == Some(3)),
        "{codes:?}"
    );
    check_exactly_once(&dir);
}

/// The issue's reproduction: `campaign next` listed the runs a `campaign run` was executing,
/// inviting an outside workflow manager to run them a second time. While a driver holds the
/// campaign it lists none (and says who runs them); once the driver stopped, the unfinished runs
/// are listed again.
#[test]
fn next_lists_nothing_while_a_driver_runs_the_campaign() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = setup(tmp.path(), "camp", 30.0, "");
    let next = |args: &[&str]| {
        let mut all: Vec<&std::ffi::OsStr> =
            vec!["campaign".as_ref(), "next".as_ref(), dir.as_os_str()];
        all.extend(args.iter().map(|a| a.as_ref() as &std::ffi::OsStr));
        autolb().args(&all).stdout_ok()
    };
    let waiting = |json: &str| {
        serde_json::from_str::<serde_json::Value>(json)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    let before = waiting(&next(&["--json"]));
    assert!(before >= 2, "the first iteration's runs wait: {before}");

    let mut child = start_driver(&dir, false);
    assert!(eventually(Duration::from_secs(30), &mut || {
        run_processes_under(&dir).len() >= 4
    }));
    assert_eq!(waiting(&next(&["--json"])), 0, "the driver runs them");
    let text = next(&[]);
    assert!(
        text.contains("campaign run") && text.contains(&format!("pid {}", child.id())),
        "{text}"
    );

    // SIGTERM: the driver stops its runs and saves; they wait again.
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    assert_eq!(
        wait_with_timeout(&mut child, Duration::from_secs(60)).code(),
        Some(143),
        "SIGTERM: 128 + 15"
    );
    assert_eq!(waiting(&next(&["--json"])), before);
}
