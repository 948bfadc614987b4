//! Killing `autolb campaign run` with SIGKILL at random moments and running it again loses no
//! finished run and runs no finished run twice; a second driver is refused while one runs;
//! Ctrl-C (SIGINT) stops cleanly and the next run resumes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use autolb::campaign::{RunMetrics, RunState, State};
use rand::Rng;

use crate::common::processes::wait_with_timeout;
use crate::common::{autolb, spawn_campaign_run_stderr_piped};

/// The demo campaign with a slower stand-in model, so kills land mid-run, choosing its tests
/// with `strategy`.
fn setup(tmp: &Path, strategy: &str) -> PathBuf {
    let file = autolb::campaign::demo::write_demo_inputs(tmp).unwrap();
    let text = std::fs::read_to_string(&file)
        .unwrap()
        // Slow enough that several kills land even on a guided campaign's few runs.
        .replace("compression = 0.01", "compression = 0.1")
        .replace(
            "strategy = \"guided\"",
            &format!("strategy = \"{strategy}\""),
        );
    assert!(text.contains(&format!("strategy = \"{strategy}\"")));
    std::fs::write(&file, text).unwrap();
    let dir = tmp.join("camp");
    let status = autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

fn done_runs(dir: &Path) -> BTreeMap<String, RunMetrics> {
    let state = State::load(dir).unwrap();
    let mut out = BTreeMap::new();
    for it in &state.iterations {
        for t in &it.tests {
            for r in &t.runs {
                if r.state == RunState::Done {
                    out.insert(r.id.clone(), r.metrics.clone().unwrap());
                }
            }
        }
    }
    out
}

/// Every directory under `dir` (recursively) whose name matches `pred`.
fn dirs_named(dir: &Path, pred: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            if pred(&e.file_name().to_string_lossy()) {
                out.push(p.clone());
            }
            dirs_named(&p, pred, out);
        }
    }
}

#[test]
fn kill_and_resume_loses_nothing_and_repeats_nothing() {
    kill_and_resume("algorithm1");
}

/// The guided strategy plans from the state alone (the plan is saved with the decisions in
/// one atomic write), so a killed guided campaign resumes just the same.
#[test]
fn kill_and_resume_holds_for_guided_campaigns() {
    kill_and_resume("guided");
}

fn kill_and_resume(strategy: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = setup(tmp.path(), strategy);
    let mut rng = rand::rng();
    let mut known = BTreeMap::new();
    let mut kills = 0;
    for round in 0..8 {
        let mut child = spawn_campaign_run_stderr_piped(&dir);
        let delay = Duration::from_millis(rng.random_range(150..1200));
        std::thread::sleep(delay);
        if round == 2 {
            // A second driver is refused while this one holds the campaign: busy (exit 3).
            let second = autolb()
                .args(["campaign", "run"])
                .arg(&dir)
                .output()
                .unwrap();
            if child.try_wait().unwrap().is_none() {
                assert_eq!(second.status.code(), Some(3));
                let msg = String::from_utf8_lossy(&second.stderr);
                assert!(msg.contains(&format!("pid {}", child.id())), "{msg}");
            }
        }
        if child.try_wait().unwrap().is_some() {
            break; // finished before the kill
        }
        if round == 4 {
            // Ctrl-C: a clean stop.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGINT);
            }
            let status = wait_with_timeout(&mut child, Duration::from_secs(30));
            // Interrupted, not done: a wrapper script can tell the two apart.
            assert_eq!(status.code(), Some(130), "Ctrl-C exit: {status:?}");
        } else {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            kills += 1;
        }
        eprintln!("round {round}: stopped after {delay:?}");
        // No finished run lost: every run done before is still done, with the same numbers.
        let now = done_runs(&dir);
        for (id, m) in &known {
            assert_eq!(now.get(id), Some(m), "run {id} changed or was lost");
        }
        known = now;
    }
    assert!(
        kills >= 3,
        "only {kills} kills landed; the campaign ran too fast"
    );
    let mut child = spawn_campaign_run_stderr_piped(&dir);
    let status = wait_with_timeout(&mut child, Duration::from_secs(120));
    assert!(status.success());

    let state = State::load(&dir).unwrap();
    assert!(state.is_done());
    assert_eq!(state.settings.strategy.name(), strategy);
    let final_runs = done_runs(&dir);
    for (id, m) in &known {
        assert_eq!(final_runs.get(id), Some(m), "run {id} changed or was lost");
    }
    for (i, it) in state.iterations.iter().enumerate() {
        for (t, test) in it.tests.iter().enumerate() {
            for (r, run) in test.runs.iter().enumerate() {
                assert_eq!(run.state, RunState::Done, "{}: {:?}", run.id, run.failure);
                let run_dir = state.request(&dir, i, t, r).run_dir;
                assert_eq!(
                    std::fs::read_to_string(run_dir.join("exit_status"))
                        .unwrap()
                        .trim(),
                    "0"
                );
                // The directory holds exactly one attempt: the one that finished.
                let log = std::fs::read_to_string(run_dir.join("autolb.log")).unwrap();
                assert_eq!(log.matches("start attempt").count(), 1, "{}: {log}", run.id);
            }
        }
    }
    // Attempts moved aside never finished: no finished run was run again.
    let mut old = Vec::new();
    dirs_named(&dir, &|n| n.contains(".old-"), &mut old);
    for d in &old {
        assert!(
            !d.join("exit_status").exists(),
            "{} finished but was run again",
            d.display()
        );
    }
    eprintln!(
        "{kills} kills, {} attempts moved aside, {} runs",
        old.len(),
        final_runs.len()
    );
}
