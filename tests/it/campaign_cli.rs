//! `autolb campaign` from the command line: init's refusals and errors, and an externally
//! driven campaign (next / record) run to the end with the stand-in model as "the model".

use std::path::Path;

use crate::common::{autolb, CampaignToml};
use predicates::prelude::*;
use serde_json::Value;

/// The externally driven campaign: the usual small one with one repetition per test.
fn external() -> CampaignToml {
    CampaignToml::default().set("repetitions", 1)
}

#[test]
fn init_refuses_a_non_empty_directory_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let file = external().write(tmp.path(), "c.toml");
    let dir = tmp.path().join("camp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not empty").and(predicate::str::contains("--force")));
    assert!(!dir.join("campaign.json").exists());
    autolb()
        .args(["campaign", "init", "--force"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .assert()
        .success();
    assert!(dir.join("campaign.json").exists());
    // --force replaces the campaign and leaves the user's own files alone.
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    autolb()
        .args(["campaign", "init", "--force"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .assert()
        .success();
}

#[test]
fn bad_campaign_files_name_the_key_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            external().set_after("top", "initial_stepp", 3),
            vec!["line 5", "initial_stepp"],
        ),
        (
            external().set_str("repetitions", "two"),
            vec!["line 7", "repetitions"],
        ),
        (
            external().set("repetitions", 0),
            vec!["repetitions", "c.toml"],
        ),
        (
            external().set("minimum_step", 96),
            vec!["minimum_step", "96", "initial_step"],
        ),
        (
            external().table(
                "\n[executor]\nkind = \"command\"\ncommand = [\"run\", \"{nproc.FESOM}\"]\n",
            ),
            vec!["{nproc.FESOM}", "{nproc.IFS}"],
        ),
        (
            external().table("\n[original]\nIFS = 400\n"),
            vec!["[original]", "NEMO"],
        ),
    ];
    for (i, (campaign, needles)) in cases.iter().enumerate() {
        let file = campaign.write(tmp.path(), "c.toml");
        let dir = tmp.path().join(format!("camp{i}"));
        let out = autolb()
            .args(["campaign", "init"])
            .arg(&dir)
            .arg("--config")
            .arg(&file)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let stderr = String::from_utf8_lossy(&out.stderr);
        for n in needles {
            assert!(stderr.contains(n), "case {i}: {n:?} not in {stderr}");
        }
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        // Nothing is created for a campaign that cannot start.
        assert!(!dir.exists(), "case {i}: {} was created", dir.display());
    }
}

fn next_json(dir: &Path) -> Vec<Value> {
    let out = autolb()
        .args(["campaign", "next", "--json"])
        .arg(dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn next_and_record_drive_a_campaign_to_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let file = external().write(tmp.path(), "c.toml");
    let dir = tmp.path().join("camp");
    autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("autolb campaign next"));
    // `run` refuses: there is no executor.
    autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("campaign record"));

    let first = next_json(&dir);
    assert_eq!(first.len(), 2);
    for key in ["run", "iteration", "test", "repetition", "nproc", "run_dir"] {
        assert!(first[0].get(key).is_some(), "{key} in {}", first[0]);
    }
    // --bash: one array per component, in the order of --json.
    let bash = autolb()
        .args(["campaign", "next", "--bash"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let bash = String::from_utf8(bash).unwrap();
    let ifs: Vec<String> = first
        .iter()
        .map(|r| r["nproc"]["IFS"].to_string())
        .collect();
    assert!(
        bash.contains(&format!("IFS_nprocs=( {} )", ifs.join(" "))),
        "{bash}"
    );
    assert!(bash.contains("NEMO_nprocs=( "), "{bash}");
    assert!(bash.contains(&format!(
        "autolb_runs=( '{}'",
        first[0]["run"].as_str().unwrap()
    )));

    // A run with no timing output yet is refused, and nothing is recorded.
    let id0 = first[0]["run"].as_str().unwrap().to_string();
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    autolb()
        .args(["campaign", "record"])
        .arg(&dir)
        .args(["--run", &id0, "--timing"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--failed"));
    // The timing output of another run (a 960/411 table) is refused, naming both PE counts.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/timing/ecearth3/lucia_lite/960IFS_411NEMO/table.csv"),
        other.join("table.csv"),
    )
    .unwrap();
    autolb()
        .args(["campaign", "record"])
        .arg(&dir)
        .args(["--run", &id0, "--timing"])
        .arg(&other)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("960 PEs").and(predicate::str::contains(format!(
                "the run has {}",
                first[0]["nproc"]["IFS"]
            ))),
        );
    autolb()
        .args(["campaign", "record"])
        .arg(&dir)
        .args(["--run", "i09-t09-r9", "--failed"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run"));

    let mut iterations = 0;
    let mut recorded = 0;
    loop {
        let runs = next_json(&dir);
        if runs.is_empty() {
            break;
        }
        iterations += 1;
        assert!(iterations < 20, "the campaign does not end");
        for (k, r) in runs.iter().enumerate() {
            let id = r["run"].as_str().unwrap();
            // The first run of the second iteration "crashes".
            if iterations == 2 && k == 0 {
                autolb()
                    .args(["campaign", "record"])
                    .arg(&dir)
                    .args(["--run", id, "--failed"])
                    .assert()
                    .success()
                    .stdout(predicate::str::contains("failed"));
                recorded += 1;
                continue;
            }
            let out = tmp.path().join(format!("timing-{id}"));
            autolb()
                .args(["simulate", "--out"])
                .arg(&out)
                .arg(format!("--comp=ATMIFS={}", r["nproc"]["IFS"]))
                .arg(format!("--comp=oceanx={}", r["nproc"]["NEMO"]))
                .args(["--seed", &k.to_string()])
                .assert()
                .success();
            autolb()
                .args(["campaign", "record"])
                .arg(&dir)
                .args(["--run", id, "--timing"])
                .arg(&out)
                .assert()
                .success()
                .stdout(predicate::str::contains("SYPD"));
            recorded += 1;
        }
    }
    assert!(iterations >= 2, "only {iterations} iterations");
    // Recording again with another outcome is refused.
    autolb()
        .args(["campaign", "record"])
        .arg(&dir)
        .args(["--run", &id0, "--failed"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already recorded as done"));

    let out = autolb()
        .args(["campaign", "status", "--json"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let status: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(status["state"], "done");
    let its = status["iterations"].as_array().unwrap();
    assert_eq!(its.len(), iterations);
    let mut runs = 0;
    let mut failed = 0;
    for it in its {
        for t in it["tests"].as_array().unwrap() {
            for key in [
                "test",
                "nproc",
                "step",
                "state",
                "runs",
                "sypd",
                "chsy",
                "coupling_cost",
                "partial_coupling_cost",
                "fittingness",
                "donor",
                "recipient",
            ] {
                assert!(t.get(key).is_some(), "{key} missing in {t}");
            }
            for r in t["runs"].as_array().unwrap() {
                runs += 1;
                for key in ["state", "sypd", "chsy", "coupling_cost"] {
                    assert!(r.get(key).is_some(), "{key} missing in {r}");
                }
                if r["state"] == "failed" {
                    failed += 1;
                    assert!(r["sypd"].is_null());
                }
            }
        }
    }
    assert_eq!((runs, failed), (recorded, 1));
    let best = &status["best"];
    for key in ["nproc", "sypd", "chsy", "coupling_cost", "fittingness"] {
        assert!(best.get(key).is_some(), "{key} missing in best {best}");
    }
    assert!(best["sypd"].as_f64().unwrap() > 10.0);
    // The plain table shows the best.
    autolb()
        .args(["campaign", "status"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("best so far: IFS "));
}

#[test]
fn the_documented_example_file_initialises() {
    let tmp = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/campaign-example.toml");
    let dir = tmp.path().join("camp");
    autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&example)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "6 tests x 2 repetitions (sim executor)",
        ));
    // The prediction reads the same file.
    autolb()
        .args(["predict", "--config"])
        .arg(&example)
        .assert()
        .success();
}

/// `start` replaces the predicted top N with exactly the listed configurations (the terminal
/// app's `w` writes it); each is checked against limits, allowed lists and the budget.
#[test]
fn init_starts_from_the_listed_configurations() {
    let tmp = tempfile::tempdir().unwrap();
    let file = external()
        .set(
            "start",
            "[{IFS = 456, NEMO = 197}, {IFS = 336, NEMO = 331}]",
        )
        .write(tmp.path(), "c.toml");
    let dir = tmp.path().join("camp");
    autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .assert()
        .success();
    let out = autolb()
        .args(["campaign", "status", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tests = status["iterations"][0]["tests"].as_array().unwrap();
    let configs: Vec<(u64, u64)> = tests
        .iter()
        .map(|t| {
            (
                t["nproc"]["IFS"].as_u64().unwrap(),
                t["nproc"]["NEMO"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(configs, [(456, 197), (336, 331)]);

    for (start, needle) in [
        ("[{IFS = 480, NEMO = 193}]", "not in its allowed list"),
        ("[{IFS = 1008, NEMO = 229}]", "over max_nproc"),
        ("[{IFS = 20, NEMO = 229}]", "outside its limits"),
        ("[{IFS = 480}]", "gives no PEs to \"NEMO\""),
    ] {
        let file = external().set("start", start).write(tmp.path(), "c.toml");
        let dir = tmp.path().join("bad");
        autolb()
            .args(["campaign", "init"])
            .arg(&dir)
            .arg("--config")
            .arg(&file)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(needle).and(predicate::str::contains("start entry 1")),
            );
        assert!(!dir.join("campaign.json").exists());
    }
}

#[test]
fn a_failed_repetition_shows_in_status_and_flags_a_best_that_rests_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = external().set("repetitions", 2).write(tmp.path(), "c.toml");
    let dir = tmp.path().join("camp");
    autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .assert()
        .success();
    // Every test of the first iteration: repetition 1 measured, repetition 2 failed.
    for r in next_json(&dir) {
        let id = r["run"].as_str().unwrap();
        if r["repetition"] == 2 {
            autolb()
                .args(["campaign", "record"])
                .arg(&dir)
                .args(["--run", id, "--failed"])
                .assert()
                .success();
            continue;
        }
        let out = tmp.path().join(format!("timing-{id}"));
        autolb()
            .args(["simulate", "--out"])
            .arg(&out)
            .arg(format!("--comp=ATMIFS={}", r["nproc"]["IFS"]))
            .arg(format!("--comp=oceanx={}", r["nproc"]["NEMO"]))
            .assert()
            .success();
        autolb()
            .args(["campaign", "record"])
            .arg(&dir)
            .args(["--run", id, "--timing"])
            .arg(&out)
            .assert()
            .success();
    }
    let out = autolb()
        .args(["campaign", "status"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(out).unwrap();
    assert!(table.contains("done 1/2 ✗1"), "{table}");
    assert!(table.contains("rep 2 failed: "), "{table}");
    // The best line wraps at 80 columns (no terminal here).
    let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("; rests on 1 of 2 runs)"), "{table}");
    let json: Value = serde_json::from_slice(
        &autolb()
            .args(["campaign", "status", "--json"])
            .arg(&dir)
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["best"]["runs"], 1);
}
