//! `autolb model check|fit` and `predict --measured|--model` end to end on the bundled
//! EC-Earth3 runs: the JSON contracts, the model file round trip, and one-line errors (exit 2).

use std::path::{Path, PathBuf};

use crate::common::autolb;
use predicates::prelude::*;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn curve_args() -> Vec<String> {
    let c = |n: &str, f: &str| format!("{n}={}", root().join("assets/curves").join(f).display());
    vec![
        "--curve".into(),
        c("IFS", "mn4_sr_reduced_ifs.csv"),
        "--curve".into(),
        c("NEMO", "mn4_sr_reduced_nemo.csv"),
        "--timing-name".into(),
        "IFS=ATMIFS".into(),
        "--timing-name".into(),
        "NEMO=oceanx".into(),
    ]
}

fn measured() -> String {
    root()
        .join("tests/fixtures/lucia_lite")
        .display()
        .to_string()
}

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).expect("JSON")
}

#[test]
fn check_prints_the_json_contract() {
    let out = autolb()
        .args(["model", "check"])
        .args(curve_args())
        .args(["--measured", &measured(), "--json"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "960IFS_411NEMO: the name says NEMO 411 PEs",
        ))
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 28);
    let r = &runs[0];
    for key in [
        "path",
        "measured_sypd",
        "standalone_sypd",
        "calibrated_sypd",
        "low",
        "high",
    ] {
        assert!(r[key].is_string() || r[key].is_f64(), "{key}: {r}");
    }
    assert!(r["nproc"]["IFS"].is_u64() && r["nproc"]["NEMO"].is_u64());
    for m in ["standalone", "calibrated"] {
        for k in ["mean", "median", "max"] {
            assert!(v["summary"][m][k].as_f64().unwrap() < 1.0, "{m}.{k}");
        }
    }
    let cov = v["summary"]["coverage"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&cov));
}

#[test]
fn check_table_has_a_summary() {
    autolb()
        .args(["model", "check"])
        .args(curve_args())
        .args(["--measured", &measured()])
        .assert()
        .success()
        .stdout(predicate::str::contains("28 runs, leave-one-out"))
        .stdout(predicate::str::contains("calibrated: mean"));
}

#[test]
fn fit_then_predict_with_the_model_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.json");
    autolb()
        .args(["model", "fit"])
        .args(curve_args())
        .args(["--measured", &measured(), "--out", file.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("fitted on 28 run(s)"))
        .stdout(predicate::str::contains(
            "fixed cost per run 13.4 s; predictions are for runs of 31 simulated days",
        ))
        // IFS interpolates and sends a fixed time per coupling step; NEMO's is too small to keep.
        .stdout(predicate::str::contains(
            "coupling time per simulated day (fixed per coupling step): IFS 0.46 s\n",
        ));
    let predict = |extra: &[&str]| {
        let mut cmd = autolb();
        cmd.args(["predict"])
            .args(curve_args())
            .args(["--max-nproc", "1200", "--step", "48", "--json"])
            .args(extra);
        json_of(&cmd.assert().success().get_output().stdout)
    };
    let with_file = predict(&["--model", file.to_str().unwrap()]);
    let with_runs = predict(&["--measured", &measured()]);
    assert_eq!(with_file["model"], "calibrated");
    // The same ranking; numbers equal to the last bits JSON float parsing keeps (1e-12).
    let (a, b) = (
        with_file["top"].as_array().unwrap(),
        with_runs["top"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x["nproc"], y["nproc"]);
        for k in ["sypd", "sypd_low", "sypd_high", "fittingness"] {
            let (u, v) = (x[k].as_f64().unwrap(), y[k].as_f64().unwrap());
            assert!((u / v - 1.0).abs() < 1e-12, "{k}: {u} vs {v}");
        }
    }
    let top = &with_file["top"][0];
    let (lo, s, hi) = (
        top["sypd_low"].as_f64().unwrap(),
        top["sypd"].as_f64().unwrap(),
        top["sypd_high"].as_f64().unwrap(),
    );
    assert!(lo < s && s < hi, "{top}");
    let plain = predict(&[]);
    assert!(plain.get("model").is_none());
    assert!(plain["top"][0].get("sypd_low").is_none());
    // The calibrated model is slower than the standalone curves promise.
    assert!(s < plain["top"][0]["sypd"].as_f64().unwrap());
}

#[test]
fn predict_says_which_model_ranked() {
    autolb()
        .args(["predict"])
        .args(curve_args())
        .args([
            "--max-nproc",
            "1200",
            "--step",
            "48",
            "--measured",
            &measured(),
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "ranked by the calibrated model (fitted on 28 run(s))",
        ));
}

#[test]
fn one_run_directory_with_nproc() {
    let run = root().join("tests/fixtures/timing/ecearth3/lucia_raw/240IFS_144NEMO");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.json");
    autolb()
        .args(["model", "fit"])
        .args(curve_args())
        .args([
            "--measured",
            run.to_str().unwrap(),
            "--nproc",
            "IFS=240",
            "--nproc",
            "NEMO=144",
        ])
        .args(["--period", "2700", "--out", file.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("fitted on 1 run(s)"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let missing = Path::new("/nonexistent/runs");
    autolb()
        .args(["model", "check"])
        .args(curve_args())
        .args(["--measured", missing.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--measured /nonexistent/runs: no such file",
        ));
    autolb()
        .args(["model", "check"])
        .args(curve_args())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no measured runs"));
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{not json").unwrap();
    autolb()
        .args(["predict"])
        .args(curve_args())
        .args(["--max-nproc", "1200", "--model", bad.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--model").and(predicate::str::contains("bad.json")));
    autolb()
        .args(["model", "check", "--timing-name", "XX=ATMIFS"])
        .args(curve_args())
        .args(["--measured", &measured()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--timing-name names \"XX\""));
}

/// A campaign directory as `--measured`: its measured runs, read again from their timing
/// output; and the library's refit after recording (`campaign::measured::campaign_model`).
#[test]
fn a_campaign_directory_feeds_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--demo")
        .assert()
        .success();
    autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .assert()
        .success();
    let state = autolb::campaign::State::load(&dir).unwrap();
    let (runs, notes) = autolb::campaign::measured::campaign_runs_of(&state, &dir);
    assert!(runs.len() >= 3, "{notes:?}");
    let (model, _) = autolb::campaign::measured::campaign_model(&state, &dir).unwrap();
    assert!(model.is_calibrated());
    let names = state.component_names();
    let curve = |i: usize| {
        format!(
            "{}={}",
            names[i],
            dir.join(&state.components[i].curve).display()
        )
    };
    let out = autolb()
        .args([
            "model",
            "check",
            "--curve",
            &curve(0),
            "--curve",
            &curve(1),
            "--json",
        ])
        .args(["--measured", dir.to_str().unwrap()])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    assert_eq!(v["runs"].as_array().unwrap().len(), runs.len());
}

#[test]
fn a_missing_timing_name_is_said_once_with_the_count_of_runs() {
    let c = |n: &str, f: &str| format!("{n}={}", root().join("assets/curves").join(f).display());
    let out = autolb()
        .args(["model", "check", "--curve"])
        .arg(c("IFS", "mn4_sr_reduced_ifs.csv"))
        .arg("--curve")
        .arg(c("NEMO", "mn4_sr_reduced_nemo.csv"))
        .args(["--measured", &measured()])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    let hints: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("--timing-name IFS=NAME"))
        .collect();
    assert_eq!(hints.len(), 1, "{err}");
    assert!(
        hints[0].starts_with(&format!(
            "autolb: note: {}: 29 run directories skipped (1008IFS_411NEMO, 1008IFS_521NEMO_t2 and 27 more): no component \"IFS\"",
            measured()
        )),
        "{err}"
    );
}

/// The components without curves: `--component NAME` (a range for a prediction), learned from
/// the runs alone.
fn component_args(range: bool) -> Vec<String> {
    let (ifs, nemo) = if range {
        ("IFS=48-1200", "NEMO=48-1632")
    } else {
        ("IFS", "NEMO")
    };
    [
        "--component",
        ifs,
        "--component",
        nemo,
        "--timing-name",
        "IFS=ATMIFS",
        "--timing-name",
        "NEMO=oceanx",
    ]
    .map(String::from)
    .to_vec()
}

/// `model check --component` learns both curves from the 29 usable runs (the run on 1632 NEMO
/// PEs too: there is no curve for it to fall outside) and has no standalone column.
#[test]
fn check_without_curves_learns_them_from_the_runs() {
    let out = autolb()
        .args(["model", "check"])
        .args(component_args(false))
        .args(["--measured", &measured(), "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    assert_eq!(v["runs"].as_array().unwrap().len(), 29);
    assert!(v["runs"][0]["standalone_sypd"].is_null());
    assert!(v["summary"]["standalone"].is_null());
    let median = v["summary"]["calibrated"]["median"].as_f64().unwrap();
    assert!(median < 0.04, "{v}");
    autolb()
        .args(["model", "check"])
        .args(component_args(false))
        .args(["--measured", &measured()])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "standalone: none (a component has no curve",
        ));
}

/// `model fit --component` writes a model that knows both learned curves; `predict` ranks
/// with it as with the runs, and refuses to mix it with a curve.
#[test]
fn fit_and_predict_without_curves() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.json");
    autolb()
        .args(["model", "fit"])
        .args(component_args(false))
        .args(["--measured", &measured(), "--out", file.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("fitted on 29 run(s)"));
    let model: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for c in model["model"]["components"].as_array().unwrap() {
        assert!(c["law"]["parallel"].as_f64().unwrap() > 0.0, "{c}");
    }
    let predict = |extra: &[&str]| {
        let mut cmd = autolb();
        cmd.args(["predict"])
            .args(component_args(true))
            .args(["--max-nproc", "2000", "--step", "24", "--json"])
            .args(extra);
        json_of(&cmd.assert().success().get_output().stdout)
    };
    let with_file = predict(&["--model", file.to_str().unwrap()]);
    let with_runs = predict(&["--measured", &measured()]);
    assert_eq!(with_file["model"], "calibrated");
    assert_eq!(with_file["top"][0]["nproc"], with_runs["top"][0]["nproc"]);
    let top = &with_runs["top"][0];
    let (lo, s, hi) = (
        top["sypd_low"].as_f64().unwrap(),
        top["sypd"].as_f64().unwrap(),
        top["sypd_high"].as_f64().unwrap(),
    );
    assert!(lo < s && s < hi && (15.0..35.0).contains(&s), "{top}");
    // The model file learned IFS without a curve: a curve for it is refused.
    let ifs_curve = format!(
        "IFS={}",
        root()
            .join("assets/curves/mn4_sr_reduced_ifs.csv")
            .display()
    );
    autolb()
        .args([
            "predict",
            "--curve",
            &ifs_curve,
            "--component",
            "NEMO=48-1632",
        ])
        .args(["--timing-name", "NEMO=oceanx", "--max-nproc", "2000"])
        .args(["--model", file.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "learned IFS without a curve; use it with --component IFS",
        ));
}

#[test]
fn a_component_without_a_curve_needs_a_range_and_runs() {
    // A prediction needs the range before anything is read.
    autolb()
        .args(["predict"])
        .args(component_args(false))
        .args(["--max-nproc", "2000", "--measured", "/nonexistent"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "IFS has no curve, so the search needs its PE range: write --component IFS=MIN-MAX",
        ));
    // Without runs there is nothing to learn it from.
    autolb()
        .args(["predict"])
        .args(component_args(true))
        .args(["--max-nproc", "2000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "IFS has no curve and no measured run to learn its curve from",
        ));
    autolb()
        .args([
            "predict",
            "--component",
            "IFS=100-50",
            "--max-nproc",
            "2000",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected a PE range MIN-MAX"));
    let curve = format!(
        "IFS={}",
        root()
            .join("assets/curves/mn4_sr_reduced_ifs.csv")
            .display()
    );
    autolb()
        .args(["model", "check", "--curve", &curve, "--component", "IFS"])
        .args(["--measured", &measured()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "IFS is given both as --curve and as --component",
        ));
}

/// A campaign file's `[[component]]` without `curve`: its range from min_nproc/max_nproc.
#[test]
fn a_campaign_file_component_without_a_curve() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(
        &file,
        format!(
            "max_nproc = 2000\nstep = 24\n\n[[component]]\nname = \"IFS\"\ncurve = \"{}\"\ntiming_name = \"ATMIFS\"\n\n[[component]]\nname = \"NEMO\"\ntiming_name = \"oceanx\"\nmin_nproc = 48\nmax_nproc = 1632\n",
            root().join("assets/curves/mn4_sr_reduced_ifs.csv").display()
        ),
    )
    .unwrap();
    let v = json_of(
        &autolb()
            .args(["predict", "--config", file.to_str().unwrap()])
            .args(["--measured", &measured(), "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(v["model"], "calibrated");
    // The campaign itself still starts from curves: init names the key to add.
    autolb()
        .args(["campaign", "init"])
        .arg(dir.path().join("camp"))
        .args(["--config", file.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "component NEMO has no curve; a campaign starts from the prediction",
        ))
        .stderr(predicate::str::contains("add curve = \"PATH\""));
    std::fs::write(
        &file,
        "max_nproc = 2000\n\n[[component]]\nname = \"NEMO\"\nmin_nproc = 48\n",
    )
    .unwrap();
    autolb()
        .args(["predict", "--config", file.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "component NEMO has no curve, so the search needs its range: add min_nproc and max_nproc",
        ));
}
