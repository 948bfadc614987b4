//! A test's state word and the campaign's run counts come from the same runs, so they agree:
//! a test waiting for a workflow manager with one run recorded is not "running" while the
//! counts say nothing runs, and a campaign cancelled before any run started shows its tests
//! cancelled, not failed.

use std::path::Path;

use crate::common::{autolb, CampaignToml};
use serde_json::Value;

/// An externally driven campaign (no `[executor]`) with two repetitions per test, initialised
/// in `tmp/camp`.
fn init(tmp: &Path) -> std::path::PathBuf {
    let file = CampaignToml::default()
        .set("repetitions", 2)
        .write(tmp, "c.toml");
    let dir = tmp.join("camp");
    autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&file)
        .stdout_ok();
    dir
}

fn status_json(dir: &Path) -> Value {
    serde_json::from_str(
        &autolb()
            .args(["campaign", "status", "--json"])
            .arg(dir)
            .stdout_ok(),
    )
    .unwrap()
}

/// Every test's state word beside the campaign's counts.
fn words_and_counts(json: &Value) -> (Vec<String>, &Value) {
    let words = json["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|it| it["tests"].as_array().unwrap())
        .map(|t| t["state"].as_str().unwrap().to_string())
        .collect();
    (words, &json["counts"])
}

#[test]
fn a_test_with_one_run_recorded_and_none_running_waits_as_the_counts_say() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init(tmp.path());
    let next: Value = serde_json::from_str(
        &autolb()
            .args(["campaign", "next", "--json"])
            .arg(&dir)
            .stdout_ok(),
    )
    .unwrap();
    let runs = next.as_array().unwrap();
    // Repetition 1 of every test recorded; repetition 2 still waits for the workflow manager.
    let mut recorded = 0;
    for r in runs.iter().filter(|r| r["repetition"] == 1) {
        let id = r["run"].as_str().unwrap();
        let out = tmp.path().join(format!("timing-{id}"));
        autolb()
            .args(["simulate", "--out"])
            .arg(&out)
            .arg(format!("--comp=ATMIFS={}", r["nproc"]["IFS"]))
            .arg(format!("--comp=oceanx={}", r["nproc"]["NEMO"]))
            .stdout_ok();
        autolb()
            .args(["campaign", "record"])
            .arg(&dir)
            .args(["--run", id, "--timing"])
            .arg(&out)
            .stdout_ok();
        recorded += 1;
    }
    assert!(recorded >= 2, "{next}");

    let json = status_json(&dir);
    let (words, counts) = words_and_counts(&json);
    assert_eq!(counts["running"], 0, "{counts}");
    assert_eq!(counts["done"], recorded, "{counts}");
    assert_eq!(counts["pending"], recorded, "{counts}");
    assert!(words.iter().all(|w| w == "pending"), "{words:?}");

    let table = autolb().args(["campaign", "status"]).arg(&dir).stdout_ok();
    assert!(table.contains("pending 1/2"), "{table}");
    assert!(!table.contains("running 1/2"), "{table}");
    assert!(table.contains("0 running"), "{table}");
}

#[test]
fn a_campaign_cancelled_before_any_run_started_shows_no_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init(tmp.path());
    autolb().args(["campaign", "cancel"]).arg(&dir).stdout_ok();

    let json = status_json(&dir);
    let (words, counts) = words_and_counts(&json);
    assert!(!words.is_empty());
    assert!(words.iter().all(|w| w == "cancelled"), "{words:?}");
    assert_eq!(counts["failed"], 0, "{counts}");
    assert_eq!(
        counts["cancelled"].as_u64().unwrap(),
        2 * words.len() as u64
    );

    let table = autolb().args(["campaign", "status"]).arg(&dir).stdout_ok();
    assert!(table.contains("cancelled 0/2"), "{table}");
    assert!(!table.contains("failed"), "{table}");
    assert!(!table.contains('✗'), "{table}");

    let out = tmp.path().join("report.md");
    autolb()
        .args(["report", "--markdown", "--out"])
        .arg(&out)
        .arg(&dir)
        .stdout_ok();
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(!md.contains("FAILED"), "{md}");
    assert!(!md.contains("run(s) failed"), "{md}");
}
