//! `autolb simulate`: standalone runs of the stand-in model.

use crate::common::autolb;
use serde_json::Value;

#[test]
fn writes_lucia_files_that_autolb_timing_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("run");
    let out = autolb()
        .args([
            "simulate", "--comp", "IFS=240", "--comp", "NEMO=144", "--steps", "20", "--seed", "3",
            "--json",
        ])
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let modelled: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(modelled["exchanges"], 21);
    let out = autolb()
        .arg("timing")
        .arg(&out_dir)
        .args([
            "--period", "2700", "--nproc", "IFS=240", "--nproc", "NEMO=144", "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (i, name) in ["IFS", "NEMO"].iter().enumerate() {
        let c = &read["components"][i];
        assert_eq!(c["name"], *name);
        let got = c["compute_s"].as_f64().unwrap();
        let want = modelled["components"][i]["compute_s"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-3, "{name}: {got} vs {want}");
    }
}

#[test]
fn unknown_names_need_a_curve() {
    let dir = tempfile::tempdir().unwrap();
    let out = autolb()
        .args(["simulate", "--comp", "FOO=10", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--curve FOO=PATH"), "{err}");
    let curve = dir.path().join("foo.csv");
    std::fs::write(&curve, "nproc,SYPD\n4,1.0\n16,3.5\n").unwrap();
    autolb()
        .args(["simulate", "--comp", "FOO=10", "--curve"])
        .arg(format!("FOO={}", curve.display()))
        .arg("--out")
        .arg(dir.path().join("run"))
        .assert()
        .success();
    assert!(dir.path().join("run/lucia.01.000009").exists());
}

#[test]
fn fail_exits_non_zero_and_leaves_cut_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = autolb()
        .args([
            "simulate",
            "--comp",
            "ATMIFS=96",
            "--comp",
            "oceanx=48",
            "--fail",
            "5",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("failed after 5"));
    let text = std::fs::read_to_string(dir.path().join("lucia.01.000000")).unwrap();
    assert!(!text.ends_with('\n'));
}
