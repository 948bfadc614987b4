//! Node packings ranked with measured runs: a campaign of the EC-Earth4 MareNostrum 5 example
//! on the stand-in model (OpenIFS at 4 threads per rank, NEMO; the simulator's hidden thread
//! efficiency makes every run slower than the curves) feeds `predict --config
//! assets/examples/ecearth4-mn5/campaign.toml --measured DIR`, whose `placement = "groups"`
//! packs nodes. The calibrated model must rank the packings, give each SYPD its band, and move
//! the SYPD from the curves' in the direction the runs went; without runs the output must say
//! that the packings are not corrected by measured runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::command::autolb;

use autolb::campaign::{RunState, State};
use autolb::curve::Curve;
use autolb::interp::{Interpolant, Method};
use serde_json::Value;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/ecearth4-mn5")
}

/// A finished campaign of `campaign-sim.toml`, run once for every test of the module.
fn campaign() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, dir) = DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("camp");
        autolb()
            .args(["campaign", "init", "--config"])
            .arg(example().join("campaign-sim.toml"))
            .arg(&dir)
            .stdout_ok();
        autolb().args(["campaign", "run"]).arg(&dir).stdout_ok();
        (tmp, dir)
    });
    dir
}

fn predict(extra: &[&str]) -> String {
    let mut cmd = autolb();
    cmd.args(["predict", "--config"])
        .arg(example().join("campaign.toml"));
    cmd.args(extra);
    cmd.stdout_ok()
}

fn predict_json(measured: bool) -> Value {
    let mut args = vec!["--json", "--top", "20"];
    let dir = campaign().to_str().unwrap().to_string();
    if measured {
        args.extend(["--measured", &dir]);
    }
    serde_json::from_str(&predict(&args)).expect("predict --json prints one JSON object")
}

/// The packings of a `--json` output by node count: (SYPD, low, high).
fn by_nodes(out: &Value) -> BTreeMap<u64, (f64, f64, f64)> {
    out["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |v: &Value| v.as_f64().unwrap();
            (
                s["packing"]["nodes"].as_u64().unwrap(),
                (
                    f(&s["packing"]["sypd"]),
                    f(&s["sypd_low"]),
                    f(&s["sypd_high"]),
                ),
            )
        })
        .collect()
}

/// Measured coupled SYPD over what the curves say for each successful run of the campaign: the
/// slowest component's curve speed at its ranks (OpenIFS's 4-thread curve).
fn measured_over_curves(dir: &Path) -> Vec<f64> {
    let state = State::load(dir).unwrap();
    let speed = |file: &str, threads: u32, ranks: u32| {
        let curve = Curve::load_series(file, &example().join(file))
            .unwrap()
            .into_iter()
            .find(|c| c.threads() == threads)
            .unwrap();
        Interpolant::new(Method::Pchip, &curve.xs(), &curve.ys()).eval(f64::from(ranks))
    };
    let mut ratios = Vec::new();
    for it in &state.iterations {
        for test in &it.tests {
            let threads: Vec<u32> = state.components.iter().map(|c| c.threads).collect();
            assert_eq!(threads, [4, 1]);
            let curves =
                speed("oifs.csv", 4, test.nproc[0] / 4).min(speed("nemo.csv", 1, test.nproc[1]));
            for run in &test.runs {
                if let (RunState::Done, Some(m)) = (run.state, &run.metrics) {
                    ratios.push(m.sypd / curves);
                }
            }
        }
    }
    ratios
}

#[test]
fn measured_runs_rank_the_packings_with_the_calibrated_model_and_its_band() {
    let ratios = measured_over_curves(campaign());
    assert!(ratios.len() >= 5, "{ratios:?}");
    // The stand-in's runs all go slower than the curves promise.
    assert!(ratios.iter().all(|r| *r < 0.99), "{ratios:?}");
    let alone = predict_json(false);
    let measured = predict_json(true);
    assert_eq!(alone["model"], "standalone");
    assert_eq!(alone["runs"], 0);
    assert!(alone["basis"]
        .as_str()
        .unwrap()
        .contains("not corrected by measured runs"));
    assert_eq!(measured["model"], "calibrated");
    assert_eq!(measured["runs"].as_u64().unwrap(), ratios.len() as u64);
    let (alone, measured) = (by_nodes(&alone), by_nodes(&measured));
    assert_eq!(measured.len(), 20, "every node count of the budget");
    for (nodes, (sypd, low, high)) in &alone {
        assert_eq!((sypd, sypd), (low, high), "the curves carry no band");
        let (m, lo, hi) = measured[nodes];
        assert!(lo < m && m < hi, "{nodes} nodes: {lo} {m} {hi}");
        // Runs slower than the curves: every packing slower than the curves say, by about
        // what the runs measured.
        let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(m < *sypd * 0.99, "{nodes} nodes: {m} vs {sypd}");
        assert!(m > *sypd * worst * 0.8, "{nodes} nodes: {m} vs {sypd}");
    }
}

#[test]
fn the_table_and_the_yaml_say_which_model_ranked() {
    let dir = campaign().to_str().unwrap().to_string();
    let table = predict(&["--top", "3", "--measured", &dir]);
    let header = table.lines().next().unwrap();
    assert!(
        header.contains("SYPD") && header.contains("band"),
        "{table}"
    );
    assert!(
        table.contains("ranked by the calibrated model, fitted on"),
        "{table}"
    );
    let alone = predict(&["--top", "3"]);
    assert!(!alone.lines().next().unwrap().contains("band"), "{alone}");
    assert!(alone.contains("not corrected by measured runs"), "{alone}");
    for (args, says) in [
        (
            vec!["--emit", "ecearth4"],
            "# ranked by the standalone curves only, not corrected by measured runs",
        ),
        (
            vec!["--emit", "ecearth4", "--measured", dir.as_str()],
            "# ranked by the calibrated model",
        ),
    ] {
        let yaml = predict(&args);
        assert!(yaml.contains(says), "{yaml}");
        // Still YAML: the comments are comments.
        let back: serde_norway::Value = serde_norway::from_str(&yaml).unwrap();
        assert!(back["job"]["groups"].as_sequence().is_some(), "{yaml}");
    }
    let yaml = predict(&["--emit", "ecearth4", "--measured", &dir]);
    let first = yaml.lines().next().unwrap();
    assert!(first.contains("SYPD (band "), "{first}");
}

#[test]
fn runs_that_do_not_say_their_threads_are_refused_with_what_to_do() {
    // A directory of run directories is not a campaign: it does not record OpenIFS's threads.
    let runs = tempfile::tempdir().unwrap();
    let out = autolb()
        .args(["predict", "--config"])
        .arg(example().join("campaign.toml"))
        .arg("--measured")
        .arg(runs.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--threads oifs=T"), "{err}");
    let out = autolb()
        .args(["predict", "--config"])
        .arg(example().join("campaign.toml"))
        .args(["--threads", "oifs=4", "--measured"])
        .arg(runs.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("campaign directory"), "{err}");
}
