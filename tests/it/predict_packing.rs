//! Node packings on the EC-Earth4 MareNostrum 5 example (assets/examples/ecearth4-mn5: 112-core
//! nodes, OpenIFS and NEMO balanced, XIOS on every node, the runoff mapper on the first): every
//! packing `predict` proposes fits its nodes, places the helpers where they are pinned, adds up
//! to the totals it reports, keeps NEMO on a decomposition of its list, and reaches the speed it
//! claims on the curves.

use crate::common::command::autolb;

use std::path::{Path, PathBuf};

use autolb::config::{load_allowed, CampaignFile};
use autolb::curve::Curve;
use autolb::interp::{Interpolant, Method};
use serde_json::Value;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/ecearth4-mn5")
}

fn predict_json(extra: &[&str]) -> Value {
    let config = example().join("campaign.toml");
    let mut cmd = autolb();
    cmd.args(["predict", "--json", "--config"]).arg(&config);
    cmd.args(extra);
    serde_json::from_str(&cmd.stdout_ok()).expect("predict --json prints one JSON object")
}

/// A component's speed at `ranks` ranks of `threads` threads, from the curve of that thread
/// count in its file.
fn speed(dir: &Path, file: &str, ranks: u64, threads: u64) -> f64 {
    let curve = Curve::load_series(file, &dir.join(file))
        .unwrap()
        .into_iter()
        .find(|c| u64::from(c.threads()) == threads)
        .expect("a curve at that thread count");
    Interpolant::new(Method::Pchip, &curve.xs(), &curve.ys()).eval(ranks as f64)
}

#[test]
fn every_proposed_packing_fits_its_nodes_and_reaches_its_speed() {
    let out = predict_json(&[]);
    let cpn = out["cores_per_node"].as_u64().unwrap();
    assert_eq!(cpn, 112);
    assert_eq!(out["components"], serde_json::json!(["oifs", "nemo"]));
    assert_eq!(out["helpers"], serde_json::json!(["xios", "rnfm"]));
    let nemo_list = load_allowed(&example().join("nemo_ocean.output")).unwrap();
    let top = out["top"].as_array().unwrap();
    assert_eq!(top.len(), 5);
    let mut last_fn = f64::INFINITY;
    for s in top {
        let p = &s["packing"];
        let nodes = p["nodes"].as_u64().unwrap();
        let groups = p["groups"].as_array().unwrap();
        assert_eq!(
            groups
                .iter()
                .map(|g| g["nodes"].as_u64().unwrap())
                .sum::<u64>(),
            nodes
        );
        let threads: Vec<u64> = serde_json::from_value(p["threads"].clone()).unwrap();
        let mut totals = [0u64; 2];
        for (k, g) in groups.iter().enumerate() {
            let ranks: Vec<u64> = serde_json::from_value(g["ranks"].clone()).unwrap();
            let helpers: Vec<u64> = serde_json::from_value(g["helpers"].clone()).unwrap();
            // XIOS on every node, the runoff mapper on the first only.
            assert_eq!(helpers, if k == 0 { vec![1, 1] } else { vec![1, 0] });
            let used: u64 = ranks.iter().zip(&threads).map(|(r, t)| r * t).sum::<u64>()
                + helpers.iter().sum::<u64>();
            assert_eq!(used + g["idle_cores"].as_u64().unwrap(), cpn, "{g}");
            for c in 0..2 {
                totals[c] += g["nodes"].as_u64().unwrap() * ranks[c];
            }
        }
        let reported: Vec<u64> = serde_json::from_value(p["ranks"].clone()).unwrap();
        assert_eq!(reported, totals);
        assert!(
            nemo_list.contains(&(totals[1] as u32)),
            "NEMO on {}",
            totals[1]
        );
        let sypd = p["sypd"].as_f64().unwrap();
        let slowest = speed(&example(), "oifs.csv", totals[0], threads[0]).min(speed(
            &example(),
            "nemo.csv",
            totals[1],
            1,
        ));
        assert!((sypd - slowest).abs() < 1e-9, "{sypd} vs {slowest}");
        let nhsy = s["nhsy"].as_f64().unwrap();
        assert!((nhsy - 24.0 * (nodes * cpn) as f64 / sypd).abs() < 1e-6);
        let fit = s["fittingness"].as_f64().unwrap();
        assert!(fit <= last_fn);
        last_fn = fit;
    }
}

#[test]
fn speed_first_takes_the_most_nodes_and_cost_first_the_fewest_that_run() {
    let fastest = predict_json(&["--tts-w", "1", "--top", "1"]);
    let cheapest = predict_json(&["--tts-w", "0", "--top", "1"]);
    let nodes = |v: &Value| v["top"][0]["packing"]["nodes"].as_u64().unwrap();
    // The curves still rise at 20 nodes (the budget); the bill per simulated year is lowest on
    // few nodes, where the serial part weighs least against the whole nodes paid for.
    assert_eq!(nodes(&fastest), 20);
    assert!(nodes(&cheapest) < nodes(&fastest));
    let nhsy = |v: &Value| v["top"][0]["nhsy"].as_f64().unwrap();
    assert!(nhsy(&cheapest) < nhsy(&fastest));
}

#[test]
fn the_table_lists_each_packing_with_its_node_groups() {
    let config = example().join("campaign.toml");
    let text = autolb()
        .args(["predict", "--top", "2", "--config"])
        .arg(&config)
        .stdout_ok();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("nodes") && lines[0].contains("oifs") && lines[0].contains("FN"));
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("node 1: oifs") && l.contains("xios 1, rnfm 1")),
        "{text}"
    );
    assert!(lines.iter().any(|l| l.contains("nodes 2-")), "{text}");
}

#[test]
fn a_campaign_or_a_model_is_refused_with_what_to_do() {
    let config = example().join("campaign.toml");
    let tmp = tempfile::tempdir().unwrap();
    let out = autolb()
        .args(["campaign", "init"])
        .arg(tmp.path().join("c"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("placement = \"packed\""), "{err}");
    let out = autolb()
        .args(["predict", "--front", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("drop --front"));
    // The file parses as the library reads it: the helpers are set apart.
    let file = CampaignFile::load(&config).unwrap();
    assert_eq!(file.components.len(), 2);
    assert_eq!(file.pinned_helpers().len(), 2);
}

#[test]
fn the_ecearth4_fragment_is_the_best_packing_as_job_groups() {
    let config = example().join("campaign.toml");
    let yaml = autolb()
        .args(["predict", "--emit", "ecearth4", "--config"])
        .arg(&config)
        .stdout_ok();
    let best = &predict_json(&["--top", "1"])["top"][0]["packing"];
    let fragment: serde_norway::Value = serde_norway::from_str(&yaml).unwrap();
    let job = &fragment["job"];
    assert_eq!(job["launch"]["method"], "slurm-wrapper-taskset");
    assert_eq!(fragment["model_config"]["oasis"]["load_balancing"], 1);
    let threads = best["threads"][0].as_u64().unwrap();
    if threads > 1 {
        assert_eq!(job["oifs"]["omp_num_threads"].as_u64(), Some(threads));
    }
    // Every group of the prediction, in order, with the same ranks per node and helpers.
    let groups = job["groups"].as_sequence().unwrap();
    let predicted = best["groups"].as_array().unwrap();
    assert_eq!(groups.len(), predicted.len());
    let n = |v: &serde_norway::Value, k: &str| v[k].as_u64().unwrap_or(0);
    for (g, p) in groups.iter().zip(predicted) {
        assert_eq!(n(g, "nodes"), p["nodes"].as_u64().unwrap());
        assert_eq!(n(g, "oifs"), p["ranks"][0].as_u64().unwrap());
        assert_eq!(n(g, "nemo"), p["ranks"][1].as_u64().unwrap());
        assert_eq!(n(g, "xios"), p["helpers"][0].as_u64().unwrap());
        assert_eq!(n(g, "rnfm"), p["helpers"][1].as_u64().unwrap());
    }
}
