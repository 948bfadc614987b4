//! `autolb timing`: the table, the JSON contract, and errors.

use std::path::{Path, PathBuf};

use crate::common::autolb;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timing/ecearth3")
}

fn json(args: &[&str]) -> Value {
    let out = autolb().args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The keys of `timing --json`'s object, in order (a contract for scripts).
const COMPONENT_KEYS: [&str; 10] = [
    "name",
    "nproc",
    "steps",
    "compute_s",
    "wait_s",
    "interp_s",
    "send_s",
    "jitter_s",
    "sypd",
    "partial_coupling_cost",
];
const COUPLED_KEYS: [&str; 5] = ["wall_s", "sim_s", "sypd", "chsy", "coupling_cost"];

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn json_contract_on_raw_lucia_with_everything_known() {
    let dir = fixtures().join("lucia_raw/240IFS_144NEMO");
    let v = json(&[
        "timing",
        dir.to_str().unwrap(),
        "--period",
        "2700",
        "--nproc",
        "ATMIFS=240",
        "--nproc",
        "oceanx=144",
    ]);
    let comps = v["components"].as_array().unwrap();
    assert_eq!(comps.len(), 2);
    for c in comps {
        // The contract's keys first, in order; extras after them.
        assert_eq!(keys(c)[..COMPONENT_KEYS.len()], COMPONENT_KEYS);
        assert_eq!(
            c["sampled_ranks"],
            if c["name"] == "ATMIFS" { 20 } else { 21 }
        );
        for k in COMPONENT_KEYS {
            assert!(!c[k].is_null(), "{k} is null in {c}");
        }
    }
    assert_eq!(keys(&v["coupled"]), COUPLED_KEYS);
    assert_eq!(comps[0]["name"], "ATMIFS");
    assert_eq!(comps[0]["nproc"], 240);
    assert_eq!(comps[0]["steps"], 37);
    let compute = comps[0]["compute_s"].as_f64().unwrap();
    assert!((compute - 21.2007).abs() / 21.2007 < 0.02);
    // Costs are fractions.
    let cost = v["coupled"]["coupling_cost"].as_f64().unwrap();
    assert!(cost > 0.0 && cost < 1.0);
    assert_eq!(v["partial"], Value::Null);
    assert_eq!(v["format"], "lucia-raw");
}

#[test]
fn unknown_values_are_null_never_invented() {
    let dir = fixtures().join("lucia_raw/240IFS_144NEMO");
    let v = json(&["timing", dir.to_str().unwrap()]);
    let c = &v["components"][0];
    assert_eq!(c["nproc"], Value::Null);
    assert_eq!(c["sypd"], Value::Null);
    assert_eq!(c["partial_coupling_cost"], Value::Null);
    assert!(c["compute_s"].is_number() && c["jitter_s"].is_number());
    let coupled = &v["coupled"];
    assert!(coupled["wall_s"].is_number());
    for k in ["sim_s", "sypd", "chsy", "coupling_cost"] {
        assert_eq!(coupled[k], Value::Null, "{k}");
    }
    // Tables carry no sending time and no jitter.
    let v = json(&[
        "timing",
        fixtures()
            .join("lucia_lite/240IFS_144NEMO")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(v["components"][0]["send_s"], Value::Null);
    assert_eq!(v["components"][0]["jitter_s"], Value::Null);
    assert!(v["coupled"]["chsy"].is_number());
}

#[test]
fn table_output_and_format_override() {
    let dir = fixtures().join("lucia_lite/1008IFS_411NEMO");
    let out = autolb()
        .args([
            "timing",
            dir.to_str().unwrap(),
            "--format",
            "summary",
            "--period",
            "2700",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("format: summary"), "{text}");
    assert!(text.contains("ATMIFS") && text.contains("27.332"), "{text}");
    assert!(
        text.contains("coupled: wall 969.101 s") && text.contains("SYPD 14.411"),
        "{text}"
    );
}

#[test]
fn step_series_summary_line() {
    let path = fixtures().join("timesteps/mn4_sr_cmip6_ifs_ts_240.csv");
    let out = autolb().arg("timing").arg(&path).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("series ifs: 127 steps"), "{text}");
    assert!(text.contains("format: steps"), "{text}");
}

#[test]
fn bad_input_is_one_line_exit_2() {
    for args in [
        vec!["timing", "/nonexistent/run"],
        vec!["timing", ".", "--format", "xml"],
        vec!["timing", ".", "--period", "-5"],
        vec!["timing", ".", "--nproc", "ATMIFS=lots"],
    ] {
        let out = autolb().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!err.trim().is_empty(), "{args:?}");
    }
    // An empty run directory: nothing to measure yet.
    let empty = tempfile::tempdir().unwrap();
    let out = autolb()
        .args(["timing", empty.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let path = empty.path().display().to_string();
    assert_eq!(
        err.trim(),
        format!(
            "autolb: error: {path}: nothing complete to measure yet: no timing output yet (no \
             lucia.* files, table.csv, summary, lucia.log, load_balancing_info.txt, EC-Earth4 log/NNN/, \
             cesm_timing.* or ESMF_Profile.summary)"
        )
    );
    assert_eq!(err.matches(&path).count(), 1, "the path once: {err}");
}

#[test]
fn a_note_when_the_directory_name_and_the_table_disagree_on_pes() {
    // 1008IFS_411NEMO holds a table of NEMO on 144 PEs (as `model check` also notes).
    for path in [
        fixtures().join("lucia_lite/1008IFS_411NEMO"),
        fixtures().join("lucia_lite/1008IFS_411NEMO/table.csv"),
    ] {
        let out = autolb().arg("timing").arg(&path).output().unwrap();
        assert!(out.status.success());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            err.trim(),
            format!(
                "autolb: note: {}: the name says NEMO 411 PEs, its timing files 144; using 144",
                fixtures().join("lucia_lite/1008IFS_411NEMO").display()
            )
        );
    }
    // Where the name agrees, nothing is said.
    let out = autolb()
        .arg("timing")
        .arg(fixtures().join("lucia_lite/240IFS_144NEMO"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
