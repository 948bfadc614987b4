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
