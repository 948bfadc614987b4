//! `autolb predict --front` end to end: the JSON contract, the CSV, the table, and its flags'
//! errors.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
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
    Command::cargo_bin("autolb")
        .expect("binary")
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
    let out = Command::cargo_bin("autolb")
        .expect("binary")
        .args(["predict", "--max-nproc", "100", "--csv"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--front"));
}
