//! `autolb report` on the command line: what it writes, and one clear line with exit code 2 for
//! bad input.

use crate::common;

use std::path::PathBuf;

use crate::common::autolb;
use predicates::prelude::*;

fn demo_config() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo-campaign.toml")
}

#[test]
fn a_campaign_report_goes_into_the_campaign_directory_and_markdown_beside_its_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    common::demo_campaign(&dir);
    autolb()
        .arg("report")
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::starts_with(format!(
            "wrote {}",
            dir.join("report.html").display()
        )));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("The recommended configuration is IFS"));
    // The demo's four tests of lb-iteration 0, with the original among them.
    assert!(html.contains("<td>3 (original)</td>"));

    // Prediction flags change the prediction views, not the campaign's measurements.
    let other = tmp.path().join("w09.html");
    autolb()
        .arg("report")
        .arg(&dir)
        .args(["--tts-w", "0.9", "--top", "4", "--out"])
        .arg(&other)
        .assert()
        .success();
    let html = std::fs::read_to_string(&other).unwrap();
    assert!(html.contains(r#"<th scope="row">TTS_w</th><td>0.90</td>"#));
    assert!(html.contains(r#"<th scope="row">campaign TTS_w (its FN and best)</th><td>0.50</td>"#));
    assert!(html.contains("Prediction: the top 4"));
    assert!(html.contains("The recommended configuration is IFS"));

    let md = tmp.path().join("wiki/lb.md");
    autolb()
        .arg("report")
        .arg(&dir)
        .arg("--markdown")
        .arg("--out")
        .arg(&md)
        .assert()
        .success()
        .stdout(predicate::str::contains("and 5 figure(s) beside it"));
    let text = std::fs::read_to_string(&md).unwrap();
    for fig in ["curves-IFS", "curves-NEMO", "matrix", "front", "campaign"] {
        let name = format!("lb-{fig}.svg");
        assert!(text.contains(&format!("]({name})")), "{name} linked");
        let svg = std::fs::read_to_string(tmp.path().join("wiki").join(&name)).unwrap();
        assert!(svg.starts_with("<svg xmlns"), "{name}");
    }
}

#[test]
fn a_prediction_report_from_a_campaign_file_compares_with_its_original() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("p.html");
    autolb()
        .args(["report", "--years", "14020", "--config"])
        .arg(demo_config())
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("The predicted best configuration is IFS"));
    assert!(html.contains("Against the original IFS 384 + NEMO 242"));
    assert!(html.contains("Over 14020 simulated years"));
    assert!(!html.contains("The campaign</h2>"));
}

fn bad(args: &[&str], says: &str) {
    autolb()
        .args(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(says))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().to_str().unwrap();
    bad(
        &["report", empty],
        "not a campaign directory (no campaign.json)",
    );
    bad(&["report"], "nothing to report");
    let config = demo_config();
    let config = config.to_str().unwrap();
    bad(
        &["report", empty, "--config", config],
        "either a campaign DIR or --config",
    );
    bad(
        &["report", "--config", config, "--years", "0"],
        "--years 0: give the simulated years",
    );
    bad(
        &["report", empty, "--allowed", "NEMO=48,96"],
        "--allowed applies to predictions",
    );
    bad(
        &["report", "--config", config, "--years", "nan"],
        "--years NaN",
    );
}

fn curve(name: &str, file: &str) -> String {
    format!(
        "{name}={}",
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("assets/curves")
            .join(file)
            .display()
    )
}

/// The report's prediction from MareNostrum 4's curves and the real lucia_lite runs.
fn real_runs_args(measured: bool) -> Vec<String> {
    let mut args: Vec<String> = [
        "report",
        "--curve",
        &curve("IFS", "mn4_sr_reduced_ifs.csv"),
        "--curve",
        &curve("NEMO", "mn4_sr_reduced_nemo.csv"),
        "--max-nproc",
        "1200",
        "--step",
        "24",
    ]
    .map(String::from)
    .into();
    if measured {
        let runs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lucia_lite");
        args.extend(
            [
                "--timing-name",
                "IFS=ATMIFS",
                "--timing-name",
                "NEMO=oceanx",
                "--measured",
                &runs.display().to_string(),
            ]
            .map(String::from),
        );
    }
    args
}

#[test]
fn a_report_with_measured_runs_ranks_with_the_calibrated_model_like_predict() {
    let tmp = tempfile::tempdir().unwrap();
    let read = |measured: bool, name: &str| {
        let out = tmp.path().join(name);
        autolb()
            .args(real_runs_args(measured))
            .arg("--markdown")
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        std::fs::read_to_string(out).unwrap()
    };
    let alone = read(false, "alone.md");
    let calibrated = read(true, "calibrated.md");
    assert!(
        alone.contains("ranked by | the standalone model (the curves alone)"),
        "{alone}"
    );
    assert!(
        calibrated.contains("ranked by | the calibrated model (fitted on the measured runs in ")
    );
    // The same #1 as `predict --measured` on the same runs, at its SYPD.
    let mut predict = real_runs_args(true);
    predict[0] = "predict".into();
    predict.push("--json".into());
    let out = autolb()
        .args(&predict)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let top = &json["top"][0];
    let nproc: Vec<u64> = top["nproc"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let headline = format!(
        "IFS {} + NEMO {} (predicted \\#1, {} PEs): {:.2} SYPD",
        nproc[0],
        nproc[1],
        top["total_nproc"],
        top["sypd"].as_f64().unwrap()
    );
    assert!(calibrated.contains(&headline), "{headline}\n{calibrated}");
    // The standalone curves overstate the coupled speed on these runs; the report says by how
    // much, next to the calibrated model's error.
    let line = calibrated
        .lines()
        .find(|l| l.starts_with("Predicted against measured on 28 runs"))
        .expect("the error summary");
    let pct = |after: &str| -> f64 {
        let rest = &line[line.find(after).unwrap() + after.len()..];
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    let own = pct("median absolute error ");
    let standalone = pct("% for the calibrated model, ");
    assert!(own < 5.0 && standalone > 15.0, "{line}");
    assert!(
        calibrated.contains("| band (90 %) |"),
        "the top N carry their bands"
    );
    assert!(!alone.contains("| band (90 %) |"));
}

#[test]
fn a_campaign_report_is_ranked_by_the_model_fitted_on_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    common::demo_campaign(&dir);
    let out = tmp.path().join("r.md");
    autolb()
        .arg("report")
        .arg(&dir)
        .arg("--markdown")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(
        md.contains("ranked by | the calibrated model (fitted on the campaign's ")
            && md.contains(" measured runs)"),
        "{md}"
    );
    assert!(md.contains("## The model"));
    assert!(
        md.contains("| calibrated error |"),
        "predicted against measured per run"
    );
}
