//! `autolb predict` end to end: the reference recommendation, the JSON contract, and a clear
//! one-line error with exit code 2 for every kind of bad input.

use std::path::{Path, PathBuf};

use crate::common::autolb;
use predicates::prelude::*;
use serde_json::Value;

fn curves() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/curves")
}

fn curve_arg(name: &str, file: &str) -> String {
    format!("{name}={}", curves().join(file).display())
}

fn reference_args() -> Vec<String> {
    [
        "predict",
        "--curve",
        &curve_arg("IFS", "mn4_sr_cmip6_ifs.csv"),
        "--curve",
        &curve_arg("NEMO", "mn4_sr_cmip6_nemo.csv"),
        "--max-nproc",
        "672",
        "--step",
        "24",
        "--interp",
        "quadratic",
        "--tts-w",
        "0.5",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn recommends_what_the_reference_script_does() {
    let out = autolb()
        .args(reference_args())
        .arg("--json")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["components"], serde_json::json!(["IFS", "NEMO"]));
    let best = &json["top"][0];
    assert_eq!(best["rank"], 1);
    assert_eq!(best["nproc"]["IFS"], 408);
    assert_eq!(best["nproc"]["NEMO"], 240);
    assert_eq!(best["total_nproc"], 648);
    // 18.18 SYPD at 408 IFS PEs is a measured point; NEMO at 240 is faster.
    assert!((best["sypd"].as_f64().unwrap() - 18.18).abs() < 1e-9);
    let cost = best["coupling_cost"].as_f64().unwrap();
    assert!(cost > 0.0 && cost < 1.0, "a fraction: {cost}");
    assert_eq!(json["top"].as_array().unwrap().len(), 5);
    assert_eq!(json["baseline"]["nproc"]["IFS"], 48);
    assert!(json["candidates"].as_u64().unwrap() >= json["considered"].as_u64().unwrap());
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "components",
            "candidates",
            "considered",
            "baseline",
            "top",
            "settings"
        ]
    );
}

#[test]
fn human_table_names_the_recommendation_and_the_base_case() {
    autolb()
        .args(reference_args())
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^\s+1\s+408\s+240\s+648").unwrap())
        .stdout(predicate::str::contains("base"));
}

#[test]
fn config_file_and_flag_override() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!(
            "max_nproc = 672\nstep = 24\ninterp = \"quadratic\"\ntts_w = 0.5\n\n[[component]]\nname = \"IFS\"\ncurve = \"{}\"\n\n[[component]]\nname = \"NEMO\"\ncurve = \"{}\"\n",
            curves().join("mn4_sr_cmip6_ifs.csv").display(),
            curves().join("mn4_sr_cmip6_nemo.csv").display()
        ),
    )
    .unwrap();
    let out = autolb()
        .args(["predict", "--json", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["top"][0]["nproc"]["IFS"], 408);
    // --top on the command line wins over the file's default.
    let out = autolb()
        .args(["predict", "--json", "--top", "2", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["top"].as_array().unwrap().len(), 2);
}

#[test]
fn allowed_lists_inline_and_from_file_are_respected() {
    let allowed = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/nemo_orca1_allowed_nproc.txt");
    let list: Vec<u32> = std::fs::read_to_string(&allowed)
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let mut args = reference_args();
    args.extend([
        "--allowed".into(),
        format!("NEMO={}", allowed.display()),
        "--json".into(),
    ]);
    let json: Value =
        serde_json::from_slice(&autolb().args(&args).output().unwrap().stdout).unwrap();
    for config in json["top"].as_array().unwrap() {
        let nemo = config["nproc"]["NEMO"].as_u64().unwrap() as u32;
        assert!(
            list.contains(&nemo),
            "{nemo} is not an allowed NEMO PE count"
        );
    }
    let mut args = reference_args();
    args.extend([
        "--allowed".into(),
        "NEMO=48,229,331".into(),
        "--json".into(),
    ]);
    let json: Value =
        serde_json::from_slice(&autolb().args(&args).output().unwrap().stdout).unwrap();
    for config in json["top"].as_array().unwrap() {
        assert!([48, 229, 331].contains(&config["nproc"]["NEMO"].as_u64().unwrap()));
    }
}

#[test]
fn one_curve_ranks_its_own_candidates() {
    let out = autolb()
        .args([
            "predict",
            "--json",
            "--max-nproc",
            "1000",
            "--step",
            "24",
            "--curve",
        ])
        .arg(curve_arg("IFS", "mn4_sr_cmip6_ifs.csv"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["components"], serde_json::json!(["IFS"]));
    assert!(json["top"][0]["coupling_cost"].as_f64().unwrap().abs() < 1e-12);
}

/// Runs `autolb` and expects exit code 2 with one line on stderr containing every `needle`.
fn rejects(args: &[&str], needles: &[&str]) {
    let out = autolb().args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "args {args:?}: stderr {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "args {args:?}: {stderr:?} lacks {needle:?}"
        );
    }
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    format!("X={}", path.display())
}

#[test]
fn bad_curves_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = curve_arg("IFS", "mn4_sr_cmip6_ifs.csv");
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            format!("X={}", d.join("missing.csv").display()),
            vec!["missing.csv", "cannot read"],
        ),
        (write(d, "empty.csv", ""), vec!["empty.csv", "empty"]),
        (
            write(d, "header.csv", "nproc,SYPD\n"),
            vec!["header.csv", "at least two"],
        ),
        (
            write(d, "text.csv", "nproc,SYPD\n48,3\n96,fast\n"),
            vec!["text.csv", "line 3", "fast"],
        ),
        (
            write(d, "nan.csv", "nproc,SYPD\n48,3\n96,NaN\n"),
            vec!["nan.csv", "line 3", "NaN"],
        ),
        (
            write(d, "neg.csv", "nproc,SYPD\n48,3\n96,-2\n"),
            vec!["neg.csv", "line 3", "-2"],
        ),
        (
            write(d, "zero.csv", "nproc,SYPD\n0,3\n96,2\n"),
            vec!["zero.csv", "line 2", "0"],
        ),
        (
            write(d, "dup.csv", "nproc,SYPD\n48,3\n48,4\n"),
            vec!["dup.csv", "line 3", "48"],
        ),
    ];
    for (curve, needles) in cases {
        rejects(
            &[
                "predict",
                "--max-nproc",
                "2000",
                "--curve",
                &good,
                "--curve",
                &curve,
            ],
            &needles,
        );
    }
}

#[test]
fn bad_settings_are_clear_errors() {
    let ifs = curve_arg("IFS", "mn4_sr_cmip6_ifs.csv");
    let nemo = curve_arg("NEMO", "mn4_sr_cmip6_nemo.csv");
    let base = ["predict", "--curve", &ifs, "--curve", &nemo];
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        base.iter().chain(extra).copied().collect()
    }
    rejects(
        &with(&base, &["--max-nproc", "672", "--tts-w", "1.5"]),
        &["TTS_w", "1.5"],
    );
    rejects(
        &with(&base, &["--max-nproc", "672", "--tts-w", "-0.1"]),
        &["TTS_w"],
    );
    rejects(
        &with(&base, &["--max-nproc", "50"]),
        &["50", "base case", "96"],
    );
    rejects(
        &with(&base, &["--max-nproc", "672", "--step", "0"]),
        &["step"],
    );
    rejects(
        &with(&base, &["--max-nproc", "672", "--allowed", "OCEAN=48,96"]),
        &["OCEAN", "IFS, NEMO"],
    );
    rejects(&with(&base, &[]), &["--max-nproc"]);
    let six: Vec<String> = (0..6)
        .map(|i| curve_arg(&format!("C{i}"), "mn4_sr_cmip6_ifs.csv"))
        .collect();
    let mut args = vec!["predict", "--max-nproc", "9000"];
    for c in &six {
        args.extend(["--curve", c.as_str()]);
    }
    rejects(&args, &["6 curves", "at most 5"]);
}
