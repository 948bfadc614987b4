//! `autolb predict --measured` and `--model` with a hybrid component: a cold start at 4 OpenMP
//! threads per OpenIFS rank on the stand-in model, then the calibrated model predicts OpenIFS at
//! those 4 threads, in whole ranks, counting cores as the campaign did.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::autolb;

/// The EC-Earth4 example files, copied to `dir` (their paths are relative to the file).
fn examples(dir: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/ecearth4-mn5");
    let to = dir.join("ecearth4-mn5");
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
    to
}

fn json(args: &[&str]) -> Value {
    let out = autolb().args(args).arg("--json").stdout_ok();
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

fn sypd(v: &Value) -> f64 {
    v["sypd"].as_f64().unwrap()
}

#[test]
fn the_calibrated_model_predicts_a_cold_start_at_its_thread_count_in_whole_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let ex = examples(tmp.path());
    let cold_file = ex.join("cold-start-sim.toml");
    let curves_file = ex.join("campaign-sim.toml");
    let dir = tmp.path().join("cold");
    let (cold_file, curves_file, dir_s) = (
        cold_file.to_str().unwrap(),
        curves_file.to_str().unwrap(),
        dir.to_str().unwrap(),
    );
    autolb()
        .args(["campaign", "init", "--config", cold_file, dir_s])
        .stdout_ok();
    autolb().args(["campaign", "run", dir_s]).stdout_ok();
    let best = json(&["campaign", "best", dir_s]);
    let measured = sypd(&best);

    // Without curves: the model learnt from the runs alone, OpenIFS in whole ranks of 4.
    let cold = json(&["predict", "--config", cold_file, "--measured", dir_s]);
    assert_eq!(cold["model"], "calibrated", "{cold:#}");
    for c in cold["top"].as_array().unwrap() {
        let cores = c["nproc"]["oifs"].as_u64().unwrap();
        assert_eq!(c["threads"]["oifs"], 4, "{c:#}");
        assert_eq!(c["ranks"]["oifs"].as_u64().unwrap() * 4, cores, "{c:#}");
        assert!((64..=896).contains(&cores), "{c:#}");
        let total = cores + c["nproc"]["nemo"].as_u64().unwrap();
        assert!(total <= 1024, "{c:#}");
    }
    let cold_best = &cold["top"][0];
    assert!(
        (sypd(cold_best) - measured).abs() / measured < 0.05,
        "{} predicted, {measured} measured",
        sypd(cold_best)
    );

    // With the curves: the runs pull the prediction from the curves' speed toward theirs.
    let curves = json(&["predict", "--config", curves_file]);
    let calibrated = json(&["predict", "--config", curves_file, "--measured", dir_s]);
    let (from_curves, from_runs) = (sypd(&curves["top"][0]), sypd(&calibrated["top"][0]));
    assert!(
        (from_runs - measured).abs() < (from_curves - measured).abs() && from_runs != from_curves,
        "curves {from_curves}, calibrated {from_runs}, measured {measured}"
    );
    assert_eq!(calibrated["top"][0]["threads"]["oifs"], 4);

    // The YAML writes the calibrated best: ranks as ntasks, 4 as omp_num_threads.
    let yaml = autolb()
        .args(["predict", "--config", cold_file, "--measured", dir_s])
        .args(["--emit", "ecearth4"])
        .stdout_ok();
    let doc: serde_norway::Value = serde_norway::from_str(&yaml).unwrap();
    assert_eq!(
        doc["job"]["oifs"]["omp_num_threads"].as_u64(),
        Some(4),
        "{yaml}"
    );
    assert_eq!(
        doc["job"]["oifs"]["ntasks"].as_u64(),
        cold_best["ranks"]["oifs"].as_u64(),
        "{yaml}"
    );
    assert_eq!(doc["job"]["oifs"]["ntasks_per_node"].as_u64(), Some(28));
    assert_eq!(
        doc["job"]["nemo"]["omp_num_threads"].as_u64(),
        None,
        "{yaml}"
    );

    // A model fitted on the runs predicts the same.
    let model = tmp.path().join("model.json");
    autolb()
        .args([
            "model",
            "fit",
            "--config",
            cold_file,
            "--measured",
            dir_s,
            "--out",
        ])
        .arg(&model)
        .stdout_ok();
    let from_file = json(&[
        "predict",
        "--config",
        cold_file,
        "--model",
        model.to_str().unwrap(),
    ]);
    assert_eq!(from_file["top"][0]["nproc"], cold_best["nproc"]);
    assert_eq!(from_file["top"][0]["threads"]["oifs"], 4);

    // Another thread count than the runs' is refused in one line, saying what to do; a list
    // that holds the runs' count predicts at it with a note.
    let text = std::fs::read_to_string(curves_file).unwrap();
    let at_two = ex.join("at-two.toml");
    std::fs::write(&at_two, text.replace("threads = [4]", "threads = [2]")).unwrap();
    let out = autolb()
        .args(["predict", "--config"])
        .arg(&at_two)
        .args(["--measured", dir_s])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("ran it at 4 thread(s) per rank") && err.contains("--threads oifs=4"),
        "{err}"
    );
    let both = ex.join("at-two-or-four.toml");
    std::fs::write(&both, text.replace("threads = [4]", "threads = [2, 4]")).unwrap();
    let out = autolb()
        .args(["predict", "--json", "--config"])
        .arg(&both)
        .args(["--measured", dir_s])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("oifs: predicted at 4 thread(s) per rank"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["top"][0]["nproc"], calibrated["top"][0]["nproc"]);
}
