//! Campaigns driven from outside, as a workflow manager drives them: concurrent and retried
//! `record`, a retried `init`, one run at a time with `next --env/--bash` (a hyphenated
//! component name), the exit codes, `wait`, `exec`, `plan`, relative campaign paths and
//! `simulate --campaign`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common::{autolb, autolb_path, campaign_file, init, status_json, stdout};
use predicates::prelude::*;
use serde_json::Value;

/// Writes the stand-in model's timing output of every waiting run into its directory.
fn simulate_waiting_runs(dir: &Path) -> Vec<String> {
    let runs = autolb::campaign::next(dir).unwrap();
    for r in &runs {
        let (run, out) = autolb::campaign::stand_in_run(dir, &r.run, |_| {}).unwrap();
        autolb::sim::simulate(&run, &out).unwrap();
    }
    runs.into_iter().map(|r| r.run).collect()
}

#[test]
fn eight_concurrent_records_all_succeed_while_readers_read() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 4, 2);
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let ids = simulate_waiting_runs(&dir);
    assert_eq!(ids.len(), 8, "{ids:?}");

    // Readers (status and next, as other jobs call them) while the records write.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (dir, stop) = (dir.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                autolb::campaign::status(&dir).expect("status during records");
                autolb::campaign::next(&dir).expect("next during records");
                reads += 1;
            }
            reads
        })
    };
    let children: Vec<_> = ids
        .iter()
        .map(|id| {
            autolb()
                .args(["campaign", "record"])
                .arg(&dir)
                .args(["--run", id])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (id, child) in ids.iter().zip(children) {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{id}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(reader.join().unwrap() > 0);
    let status = status_json(&dir);
    let first = &status["iterations"][0]["tests"];
    let done = first
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["runs"].as_array().unwrap())
        .filter(|r| r["state"] == "done")
        .count();
    assert_eq!(done, 8);
    // The last record took the decisions: iteration 1 exists.
    assert_eq!(status["iteration"], 1);
    assert_eq!(status["done"], false);
}

#[test]
fn a_busy_campaign_has_its_own_exit_code_and_record_waits_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 1, 1);
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let ids = simulate_waiting_runs(&dir);
    let lock = autolb::campaign::state::Lock::acquire(&dir).unwrap();
    autolb()
        .args(["campaign", "record"])
        .arg(&dir)
        .args(["--run", &ids[0], "--wait", "0"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("busy").and(predicate::str::contains("pid ")));
    // Released after a moment: a waiting record gets in.
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        drop(lock);
    });
    autolb()
        .args(["campaign", "record"])
        .arg(&dir)
        .args(["--run", &ids[0], "--wait", "60"])
        .assert()
        .success();
    release.join().unwrap();
}

#[test]
fn a_retried_record_succeeds_and_a_conflicting_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 1, 2);
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let ids = simulate_waiting_runs(&dir);
    let record = |id: &str, failed: bool| {
        let mut c = autolb();
        c.args(["campaign", "record"]).arg(&dir).args(["--run", id]);
        if failed {
            c.arg("--failed");
        }
        c.assert()
    };
    record(&ids[0], false).success();
    let before = std::fs::read(dir.join("campaign.json")).unwrap();
    record(&ids[0], false)
        .success()
        .stdout(predicate::str::contains(
            "already recorded with this outcome",
        ));
    assert_eq!(std::fs::read(dir.join("campaign.json")).unwrap(), before);
    record(&ids[0], true)
        .code(2)
        .stderr(predicate::str::contains("already recorded as done"));
    record(&ids[1], true).success();
    record(&ids[1], true)
        .success()
        .stdout(predicate::str::contains("already recorded"));
    record(&ids[1], false)
        .code(2)
        .stderr(predicate::str::contains("already recorded as failed"));
}

#[test]
fn a_retried_init_with_if_absent_succeeds_and_other_settings_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 2, 2);
    let dir = tmp.path().join("camp");
    for _ in 0..2 {
        autolb()
            .args(["campaign", "init", "--if-absent"])
            .arg(&dir)
            .arg("--config")
            .arg(&file)
            .assert()
            .success();
    }
    assert!(stdout(
        &autolb()
            .args(["campaign", "init", "--if-absent"])
            .arg(&dir)
            .arg("--config")
            .arg(&file)
            .output()
            .unwrap()
    )
    .contains("already exists"));
    // A record in between does not make the retry fail or reset anything.
    let ids = simulate_waiting_runs(&dir);
    autolb()
        .args(["campaign", "record"])
        .arg(&dir)
        .args(["--run", &ids[0]])
        .assert()
        .success();
    autolb()
        .args(["campaign", "init", "--if-absent"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .assert()
        .success();
    assert_eq!(status_json(&dir)["counts"]["done"], 1);
    // Other settings: refused, named.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("repetitions = 2", "repetitions = 3");
    std::fs::write(&file, text).unwrap();
    autolb()
        .args(["campaign", "init", "--if-absent"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("other settings"));
    // A directory with someone else's files is refused as without --if-absent.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    autolb()
        .args(["campaign", "init", "--if-absent"])
        .arg(&other)
        .arg("--config")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not empty"));
    // What an interrupted init left (the lock file, curves, no state) is initialised again.
    let half = tmp.path().join("half");
    std::fs::create_dir_all(half.join("curves")).unwrap();
    std::fs::write(half.join("campaign.lock"), "").unwrap();
    autolb()
        .args(["campaign", "init", "--if-absent"])
        .arg(&half)
        .arg("--config")
        .arg(&file)
        .assert()
        .success();
    assert!(half.join("campaign.json").exists());
}

#[test]
fn a_hyphenated_component_name_goes_through_bash_and_env() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS-atm", "NEMO-oce", 2, 2);
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let runs = autolb::campaign::next(&dir).unwrap();
    let r = &runs[3];
    let script = format!(
        r#"set -euo pipefail
eval "$('{bin}' campaign next '{dir}' --bash)"
echo "bash ${{IFS_atm_nprocs[3]}} ${{NEMO_oce_nprocs[3]}} ${{autolb_runs[3]}} ${{autolb_iterations[3]}} ${{autolb_tests[3]}} ${{autolb_repetitions[3]}} ${{autolb_total_nprocs[3]}} ${{autolb_run_dirs[3]}}"
eval "$('{bin}' campaign next '{dir}' --iteration {i} --test {t} --repetition {rep} --env)"
echo "env $AUTOLB_NPROC_IFS_ATM $AUTOLB_NPROC_NEMO_OCE $AUTOLB_RUN $AUTOLB_ITERATION $AUTOLB_TEST $AUTOLB_REPETITION $AUTOLB_TOTAL_NPROC $AUTOLB_RUN_DIR"
bash -c 'echo "child $AUTOLB_RUN"'
"#,
        bin = autolb_path().display(),
        dir = dir.display(),
        i = r.iteration,
        t = r.test,
        rep = r.repetition,
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let ifs = r.nproc.get("IFS-atm").unwrap();
    let nemo = r.nproc.get("NEMO-oce").unwrap();
    let tail = format!(
        "{ifs} {nemo} {} {} {} {} {} {}",
        r.run,
        r.iteration,
        r.test,
        r.repetition,
        ifs + nemo,
        r.run_dir.display()
    );
    assert!(text.contains(&format!("bash {tail}")), "{text}");
    assert!(text.contains(&format!("env {tail}")), "{text}");
    assert!(text.contains(&format!("child {}", r.run)), "{text}");
    // Names that collide as shell variables are refused at init.
    let clash = tmp.path().join("clash");
    std::fs::create_dir_all(&clash).unwrap();
    let file = campaign_file(&clash, "IFS-atm", "IFS_atm", 1, 1);
    autolb()
        .args(["campaign", "init"])
        .arg(clash.join("camp"))
        .arg("--config")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("same shell variable"));
}

#[test]
fn one_run_at_a_time_has_exit_codes_for_not_waiting_done_and_not_ready() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 1, 1);
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let next = |i: u32, t: u32, r: u32| {
        let mut c = autolb();
        c.args(["campaign", "next"]).arg(&dir).args([
            "--iteration",
            &i.to_string(),
            "--test",
            &t.to_string(),
            "--repetition",
            &r.to_string(),
            "--json",
        ]);
        c.assert()
    };
    let out = next(0, 0, 1).success().get_output().stdout.clone();
    let run: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(run["run"], "i00-t00-r1");
    assert!(Path::new(run["run_dir"].as_str().unwrap()).is_absolute());
    next(1, 0, 1)
        .code(6)
        .stdout("")
        .stderr(predicate::str::contains("has not started"));
    next(0, 1, 1)
        .code(2)
        .stderr(predicate::str::contains("--test 1"));
    next(0, 0, 2)
        .code(2)
        .stderr(predicate::str::contains("--repetition 2"));
    // wait: not recorded yet (checked once), then recorded.
    autolb()
        .args(["campaign", "wait"])
        .arg(&dir)
        .args(["--iteration", "0", "--timeout", "0"])
        .assert()
        .code(6)
        .stderr(predicate::str::contains("missing: i00-t00-r1"));
    simulate_waiting_runs(&dir);
    autolb()
        .args(["campaign", "record"])
        .arg(&dir)
        .args(["--run", "i00-t00-r1"])
        .assert()
        .success();
    autolb()
        .args(["campaign", "wait"])
        .arg(&dir)
        .args(["--iteration", "0", "--timeout", "5"])
        .assert()
        .success();
    next(0, 0, 1)
        .code(4)
        .stderr(predicate::str::contains("already recorded"));
    // Drive it to the end through exec: then every run is "done" (5), and exec is a no-op.
    for _ in 0..30 {
        let status = status_json(&dir);
        if status["done"] == true {
            break;
        }
        let i = status["iteration"].as_u64().unwrap().to_string();
        autolb()
            .args(["campaign", "exec"])
            .arg(&dir)
            .args(["--iteration", &i, "--test", "0", "--repetition", "1", "--"])
            .arg(autolb_path())
            .args(["simulate", "--campaign"])
            .arg(&dir)
            .assert()
            .success()
            .stdout(predicate::str::contains("recorded i"));
    }
    let status = status_json(&dir);
    assert_eq!(status["done"], true);
    let last = status["iteration"].as_u64().unwrap() as u32;
    next(last + 1, 0, 1)
        .code(5)
        .stderr(predicate::str::contains("done"));
    autolb()
        .args(["campaign", "exec"])
        .arg(&dir)
        .args([
            "--iteration",
            "0",
            "--test",
            "0",
            "--repetition",
            "1",
            "--",
            "false",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing to do"));
    autolb()
        .args(["campaign", "wait"])
        .arg(&dir)
        .args(["--iteration", "99"])
        .assert()
        .success()
        .stdout(predicate::str::contains("done"));
}

#[test]
fn exec_fills_placeholders_runs_in_the_run_directory_and_records_failures() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS-atm", "NEMO", 1, 2);
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let runs = autolb::campaign::next(&dir).unwrap();
    autolb()
        .args(["campaign", "exec"])
        .arg(&dir)
        .args(["--iteration", "0", "--test", "0", "--repetition", "1", "--"])
        .args([
            "sh",
            "-c",
            "echo \"$1 $AUTOLB_NPROC_IFS_ATM $AUTOLB_RUN_DIR $(pwd)\" > seen.txt; exit 3",
            "sh",
            "{nproc.IFS-atm}",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("recorded i00-t00-r1 as failed"));
    let p = runs[0].nproc.get("IFS-atm").unwrap();
    let rd = runs[0].run_dir.display();
    assert_eq!(
        std::fs::read_to_string(runs[0].run_dir.join("seen.txt")).unwrap(),
        format!("{p} {p} {rd} {rd}\n")
    );
    let status = status_json(&dir);
    let run = &status["iterations"][0]["tests"][0]["runs"][0];
    assert_eq!(run["state"], "failed");
    assert_eq!(run["failure"], "exit status 3");
    // Exit 0 but no timing output: recorded as failed, saying why.
    autolb()
        .args(["campaign", "exec"])
        .arg(&dir)
        .args([
            "--iteration",
            "0",
            "--test",
            "0",
            "--repetition",
            "2",
            "--",
            "true",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("as failed"));
    let status = status_json(&dir);
    let run = &status["iterations"][0]["tests"][0]["runs"][1];
    assert!(
        run["failure"]
            .as_str()
            .unwrap()
            .contains("exit status 0, but"),
        "{run}"
    );
}

#[test]
fn relative_campaign_directories_work_like_absolute_ones() {
    let tmp = tempfile::tempdir().unwrap();
    // The README's example with the command executor: `$AUTOLB_RUN_DIR` must not be relative
    // while the command runs inside the run directory.
    autolb::campaign::demo::write_demo_inputs(tmp.path()).unwrap();
    let text = std::fs::read_to_string(tmp.path().join("demo-campaign.toml")).unwrap();
    let at = text.find("[executor]").unwrap();
    let bin = autolb_path().display().to_string();
    let text = format!(
        "{}[executor]\nkind = \"command\"\njobs = 2\ncommand = [\"{bin}\", \"simulate\", \"--comp\", \"ATMIFS={{nproc.IFS}}\", \"--comp\", \"oceanx={{nproc.NEMO}}\", \"--out\", \".\"]\n",
        &text[..at]
    );
    std::fs::write(tmp.path().join("cmd.toml"), text).unwrap();
    autolb()
        .current_dir(tmp.path())
        .args(["campaign", "init", "demo", "--config", "cmd.toml"])
        .assert()
        .success();
    let state = std::fs::read_to_string(tmp.path().join("demo/campaign.json")).unwrap();
    assert!(
        state.contains(&tmp.path().display().to_string()),
        "base_dir is absolute"
    );
    let out = autolb()
        .current_dir(tmp.path())
        .args(["campaign", "next", "demo", "--json"])
        .output()
        .unwrap();
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in runs.as_array().unwrap() {
        let d = Path::new(r["run_dir"].as_str().unwrap());
        assert!(d.is_absolute() && d.starts_with(tmp.path()), "{d:?}");
    }
    autolb()
        .current_dir(tmp.path())
        .args(["campaign", "run", "demo"])
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let status = status_json(&tmp.path().join("demo"));
    assert_eq!(status["state"], "done");
    assert_eq!(status["counts"]["failed"], 0, "{}", status["counts"]);
    assert!(!tmp.path().join("demo/iter-00/test-00/rep-1/demo").exists());
}

#[test]
fn simulate_takes_a_campaign_run_and_repetitions_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 1, 2);
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let mut sypd = Vec::new();
    for id in ["i00-t00-r1", "i00-t00-r2"] {
        let out = autolb()
            .args(["simulate", "--json", "--campaign"])
            .arg(&dir)
            .args(["--run", id])
            .output()
            .unwrap();
        assert!(out.status.success());
        let rep = id.chars().last().unwrap();
        assert!(dir
            .join(format!("iter-00/test-00/rep-{rep}/lucia.01.000000"))
            .exists());
        let m = autolb::campaign::record(&dir, id, None, None, Duration::ZERO).unwrap();
        sypd.push(m.metrics.unwrap().sypd);
    }
    assert_ne!(sypd[0], sypd[1], "repetitions must differ");
    // An asked-for failure: one plain line on stderr, exit 1, no colour or backtrace.
    let out = autolb()
        .args([
            "simulate",
            "--comp",
            "ATMIFS=240",
            "--comp",
            "oceanx=144",
            "--fail",
            "3",
        ])
        .arg("--out")
        .arg(tmp.path().join("fail"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        !err.contains('\u{1b}') && !err.contains("Backtrace"),
        "{err}"
    );
}

#[test]
fn plan_sizes_a_workflow_before_init() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 3, 2);
    let out = autolb()
        .args(["campaign", "plan", "--json", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["tests"].as_array().unwrap().len(), 3);
    assert_eq!(plan["repetitions"], 2);
    assert_eq!(plan["job_nproc"], 672);
    // Steps 96 and 48 over IFS 336..480 and NEMO 144..336: 1 + ceil(192/96) + 192/48.
    assert_eq!(plan["max_iterations"], 7);
    // The campaign that init then creates has those tests, and ends within the bound.
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let status = status_json(&dir);
    let tests = status["iterations"][0]["tests"].as_array().unwrap();
    for (t, p) in tests.iter().zip(plan["tests"].as_array().unwrap()) {
        assert_eq!(t["nproc"], p["nproc"]);
    }
    let mut iterations = 1;
    loop {
        simulate_waiting_runs(&dir);
        for r in autolb::campaign::next(&dir).unwrap() {
            autolb::campaign::record(&dir, &r.run, None, None, Duration::ZERO).unwrap();
        }
        let s = autolb::campaign::status(&dir).unwrap();
        if s.done {
            break;
        }
        iterations += 1;
    }
    assert!(iterations <= 7, "{iterations} iterations");
    // The human plan says which settings give the bound.
    let out = autolb()
        .args(["campaign", "plan", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "lb-iterations: at most 7\n  set by initial_step 96 halving to minimum_step 48 \
             (steps 96, 48) over "
        ),
        "{text}"
    );
    let bound_by = plan["bound_by"].as_str().unwrap();
    assert!(bound_by.ends_with("; a larger minimum_step or a narrower range lowers it"));
    assert!(text.contains(&format!("  {bound_by}\n")), "{text}");
}

#[test]
fn a_cancelled_exec_stops_its_command_and_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 1, 1);
    let dir = tmp.path().join("camp");
    init(&dir, &file);
    let mut child = autolb()
        .args(["campaign", "exec"])
        .arg(&dir)
        .args([
            "--iteration",
            "0",
            "--test",
            "t00",
            "--repetition",
            "1",
            "--",
        ])
        .args(["sh", "-c", "touch started; sleep 60"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = dir.join("iter-00/test-00/rep-1/started");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let t = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert!(t.elapsed() < Duration::from_secs(30), "exec did not stop");
    assert_eq!(status.code(), Some(143));
    // The run still waits: a retried job runs it.
    let runs = autolb::campaign::next(&dir).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(status_json(&dir)["counts"]["pending"], 1);
}

#[test]
fn simulate_with_a_campaign_takes_its_sim_table_and_curve_flags_whatever_the_executor() {
    let tmp = tempfile::tempdir().unwrap();
    // Flat truth curves, so the speed the model ran at names the curve it used.
    std::fs::write(tmp.path().join("flat2.csv"), "nproc,SYPD\n48,2\n4000,2\n").unwrap();
    std::fs::write(tmp.path().join("flat5.csv"), "nproc,SYPD\n48,5\n4000,5\n").unwrap();
    let dir = crate::common::init_demo_campaign(
        tmp.path(),
        "camp",
        &crate::common::CampaignToml::default().table(
            r#"
[executor]
kind = "command"
command = ["sh", "-c", "true"]

[executor.sim]
curves = { IFS = "flat2.csv" }
"#,
        ),
    );
    let ifs_truth = |extra: &[&str]| {
        let out = autolb()
            .args(["simulate", "--json", "--campaign"])
            .arg(&dir)
            .args(["--run", "i00-t00-r1"])
            .args(extra)
            .current_dir(tmp.path())
            .stdout_ok();
        let outcome: Value = serde_json::from_str(&out).unwrap();
        outcome["components"][0]["truth_sypd"].as_f64().unwrap()
    };
    assert!((ifs_truth(&[]) - 2.0).abs() < 1e-9, "[executor.sim] curves");
    assert!(
        (ifs_truth(&["--curve", "IFS=flat5.csv"]) - 5.0).abs() < 1e-9,
        "--curve overrides [executor.sim] curves"
    );
    let out = autolb()
        .args(["simulate", "--campaign"])
        .arg(&dir)
        .args(["--run", "i00-t00-r1", "--curve", "LPJG=flat5.csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--curve LPJG=...: the campaign has no component LPJG; use one of IFS, NEMO"),
        "{err}"
    );
}
