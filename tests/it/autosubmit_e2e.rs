//! The real Autosubmit 4 drives a campaign end to end on its LOCAL platform with the experiment
//! in assets/autosubmit/local (no flock, jq or retry workaround), and the campaign it drives
//! ends where `campaign run` ends for the same settings and seeds.
//!
//! Needs Autosubmit: `AUTOSUBMIT=/path/to/autosubmit` or `autosubmit` on PATH (`.ci/run`
//! installs 4.1 into a virtual environment). Without it the test skips with a message;
//! `AUTOLB_REQUIRE_AUTOSUBMIT=1` (set by CI) makes it fail instead.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{autolb, autolb_path, course, status_json as status};

fn autosubmit() -> Option<PathBuf> {
    let candidate = std::env::var_os("AUTOSUBMIT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("autosubmit"));
    let works = std::process::Command::new(&candidate)
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    works.then_some(candidate)
}

#[test]
fn autosubmit_drives_the_local_experiment_to_the_end() {
    let Some(autosubmit) = autosubmit() else {
        let msg = "Autosubmit not found (set AUTOSUBMIT or put autosubmit on PATH)";
        if std::env::var("AUTOLB_REQUIRE_AUTOSUBMIT").as_deref() == Ok("1") {
            panic!("{msg}, and AUTOLB_REQUIRE_AUTOSUBMIT=1");
        }
        eprintln!("skipped: {msg}");
        return;
    };
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let started = Instant::now();
    let out = std::process::Command::new("bash")
        .arg(assets.join("autosubmit/local/run-local.sh"))
        .arg(&work)
        .arg(autolb_path())
        .env("AUTOSUBMIT", &autosubmit)
        .output()
        .unwrap();
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "run-local.sh failed:\n{log}");
    eprintln!(
        "Autosubmit ran the experiment in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    assert!(log.contains("Run successful"), "{log}");
    let driven = status(&work.join("campaign"));
    assert_eq!(driven["state"], "done", "{log}");
    assert_eq!(driven["counts"]["failed"], 0);
    assert_eq!(driven["counts"]["pending"], 0);
    // No job failed, none needed a retry: every job log says COMPLETED on its first attempt.
    let logs = work.join("exps");
    let failed: Vec<String> = walk(&logs)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("_FAILED"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(failed.is_empty(), "failed jobs: {failed:?}");

    // The same campaign driven by `campaign run` with the sim executor: same settings, same
    // seeds (the run ids), so the same course and the same best.
    let text = std::fs::read_to_string(assets.join("autosubmit/local/campaign.toml"))
        .unwrap()
        .replace(
            "../../curves/",
            &format!("{}/", assets.join("curves").display()),
        );
    let file = tmp.path().join("sim.toml");
    std::fs::write(
        &file,
        format!("{text}\n[executor]\nkind = \"sim\"\njobs = 4\n"),
    )
    .unwrap();
    let reference = tmp.path().join("reference");
    common::init(&reference, &file);
    autolb()
        .args(["campaign", "run"])
        .arg(&reference)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    let reference = status(&reference);
    assert_eq!(reference["state"], "done");
    assert_eq!(driven["best"]["nproc"], reference["best"]["nproc"]);
    assert_eq!(driven["best"]["sypd"], reference["best"]["sypd"]);
    assert_eq!(course(&driven), course(&reference));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}
