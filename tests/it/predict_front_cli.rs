//! `autolb predict --front` end to end: the JSON contract, the CSV, the table, and its flags'
//! errors.

use std::path::{Path, PathBuf};

use crate::common::autolb;
use serde_json::Value;

fn curves() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/curves")
}

fn curve_arg(name: &str, file: &str) -> String {
    format!("{name}={}", curves().join(file).display())
}

/// The paper's CCA standard-resolution set-up.
fn cca_args() -> Vec<String> {
    [
        "predict",
        "--curve",
        &curve_arg("IFS", "cca/cca_sr_ifs.csv"),
        "--curve",
        &curve_arg("NEMO", "cca/cca_sr_nemo.csv"),
        "--max-nproc",
        "864",
        "--step",
        "36",
        "--interp",
        "quadratic",
        "--front",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run(extra: &[&str]) -> std::process::Output {
    autolb()
        .args(cca_args())
        .args(extra)
        .output()
        .expect("runs")
}

#[test]
fn json_holds_the_front_and_contiguous_winners() {
    let out = run(&["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let front = json["front"].as_array().expect("front");
    assert!(front.len() >= 3);
    for pair in front.windows(2) {
        assert!(pair[1]["sypd"].as_f64() > pair[0]["sypd"].as_f64());
        assert!(pair[1]["chsy"].as_f64() > pair[0]["chsy"].as_f64());
    }
    for point in front {
        for key in ["total_nproc", "sypd", "chsy", "coupling_cost"] {
            assert!(point[key].is_number(), "{key} in {point}");
        }
        assert!(point["nproc"]["IFS"].is_u64() && point["nproc"]["NEMO"].is_u64());
    }
    let winners = json["winners"].as_array().expect("winners");
    assert_eq!(winners[0]["tts_w_from"], 0.0);
    assert_eq!(winners.last().unwrap()["tts_w_to"], 1.0);
    for pair in winners.windows(2) {
        assert_eq!(pair[0]["tts_w_to"], pair[1]["tts_w_from"]);
    }
    // The paper's TTS_w 0.25 recommendation wins an interval holding 0.25.
    let at_quarter = winners
        .iter()
        .find(|w| {
            w["tts_w_from"].as_f64().unwrap() < 0.25 && w["tts_w_to"].as_f64().unwrap() >= 0.25
        })
        .expect("a winner at 0.25");
    assert_eq!(at_quarter["nproc"]["IFS"], 576);
    assert_eq!(at_quarter["nproc"]["NEMO"], 144);
    for key in ["sypd", "chsy"] {
        assert!(at_quarter[key].is_number());
    }
}

#[test]
fn csv_has_one_row_per_configuration_and_the_intervals() {
    let out = run(&["--csv"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "IFS",
            "NEMO",
            "total_nproc",
            "sypd",
            "chsy",
            "coupling_cost",
            "on_front",
            "tts_w_from",
            "tts_w_to"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert!(rows.len() >= 3);
    let winning: Vec<&csv::StringRecord> = rows.iter().filter(|r| !r[7].is_empty()).collect();
    assert!(winning.len() >= 2);
    assert!(winning.iter().any(|r| &r[0] == "576" && &r[1] == "144"));
    for r in &rows {
        let sypd: f64 = r[3].parse().unwrap();
        let chsy: f64 = r[4].parse().unwrap();
        let total: f64 = r[2].parse().unwrap();
        assert!((chsy - 24.0 * total / sypd).abs() < 1e-6 * chsy);
    }
}

#[test]
fn table_names_the_front_and_the_intervals() {
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Speed/cost front"), "{text}");
    assert!(text.contains("[0.0000, "), "{text}");
    assert!(text
        .lines()
        .any(|l| l.contains("576") && l.contains("144") && l.contains('(')));
}

#[test]
fn csv_without_front_is_refused_with_exit_code_2() {
    let out = autolb()
        .args(["predict", "--max-nproc", "100", "--csv"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--front"));
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `predict --front --json` with extra arguments, on the reduced EC-Earth3 SR curves whose
/// timing files are in tests/fixtures/lucia_lite.
fn reduced_front(extra: &[&str]) -> Value {
    let c = |n: &str, f: &str| format!("{n}={}", curves().join(f).display());
    let out = autolb()
        .args([
            "predict",
            "--front",
            "--json",
            "--max-nproc",
            "1200",
            "--step",
            "48",
        ])
        .args(["--curve", &c("IFS", "mn4_sr_reduced_ifs.csv")])
        .args(["--curve", &c("NEMO", "mn4_sr_reduced_nemo.csv")])
        .args([
            "--timing-name",
            "IFS=ATMIFS",
            "--timing-name",
            "NEMO=oceanx",
        ])
        .args(extra)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn nprocs(v: &Value, key: &str) -> Vec<(u64, u64)> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["nproc"]["IFS"].as_u64().unwrap(),
                p["nproc"]["NEMO"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The calibrated model's front: from the measured runs or from the fitted model file, the
/// same; and not the standalone curves' front (the runs are slower in coupled mode).
#[test]
fn the_front_of_the_calibrated_model_from_runs_or_a_model_file() {
    let measured = root().join("tests/fixtures/lucia_lite");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.json");
    let c = |n: &str, f: &str| format!("{n}={}", curves().join(f).display());
    autolb()
        .args(["model", "fit"])
        .args(["--curve", &c("IFS", "mn4_sr_reduced_ifs.csv")])
        .args(["--curve", &c("NEMO", "mn4_sr_reduced_nemo.csv")])
        .args([
            "--timing-name",
            "IFS=ATMIFS",
            "--timing-name",
            "NEMO=oceanx",
        ])
        .args(["--measured", measured.to_str().unwrap()])
        .args(["--out", file.to_str().unwrap()])
        .assert()
        .success();
    let standalone = reduced_front(&[]);
    let from_runs = reduced_front(&["--measured", measured.to_str().unwrap()]);
    let from_file = reduced_front(&["--model", file.to_str().unwrap()]);
    assert_eq!(nprocs(&from_runs, "front"), nprocs(&from_file, "front"));
    assert_eq!(nprocs(&from_runs, "winners"), nprocs(&from_file, "winners"));
    assert_ne!(nprocs(&standalone, "front"), nprocs(&from_runs, "front"));
    let fastest = |v: &Value| {
        v["front"].as_array().unwrap().last().unwrap()["sypd"]
            .as_f64()
            .unwrap()
    };
    assert!(fastest(&from_runs) < fastest(&standalone));
}

/// With the CMIP6 machine file: the cost axis is the node-hour bill, every point carries its
/// nodes, billed and idle cores and queue, and only what fits the chosen debug queue is on it.
#[test]
fn the_front_on_the_machine_is_billed_and_fits_the_queue() {
    let config = root().join("assets/machine-cmip6.toml");
    let config = config.to_str().unwrap();
    let out = autolb()
        .args(["predict", "--front", "--json", "--config", config])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cost"], "node-hours");
    let front = v["front"].as_array().unwrap();
    assert!(front.len() >= 2, "{v}");
    for pair in front.windows(2) {
        assert!(pair[1]["sypd"].as_f64() > pair[0]["sypd"].as_f64());
        assert!(pair[1]["cost"].as_f64() > pair[0]["cost"].as_f64());
    }
    for p in front.iter().chain(v["winners"].as_array().unwrap()) {
        let (nodes, billed, idle) = (
            p["nodes"].as_u64().unwrap(),
            p["billed_cores"].as_u64().unwrap(),
            p["idle_cores"].as_u64().unwrap(),
        );
        assert_eq!(billed, nodes * 48);
        assert_eq!(idle, billed - p["total_nproc"].as_u64().unwrap());
        assert!(billed <= 768, "{p}");
        assert_eq!(p["queue"], "debug");
        let cost = p["cost"].as_f64().unwrap();
        assert!((cost - 24.0 * billed as f64 / p["sypd"].as_f64().unwrap()).abs() < 1e-9);
    }
    // The CSV carries the bill in trailing columns, the table in its own columns.
    let csv_out = autolb()
        .args(["predict", "--front", "--csv", "--config", config])
        .output()
        .expect("runs");
    let text = String::from_utf8(csv_out.stdout).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("tts_w_to,nodes,billed_cores,idle_cores,cost,queue"),
        "{text}"
    );
    let table = autolb()
        .args(["predict", "--front", "--config", config])
        .output()
        .expect("runs");
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("cost node-hours (NHSY)") && text.contains("debug"),
        "{text}"
    );
}

#[test]
fn the_front_refuses_per_step_series_with_exit_code_2() {
    let out = run(&["--steps", "IFS=/nonexistent"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--front cannot use --steps"), "{err}");
}
