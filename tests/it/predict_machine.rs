//! Prediction on a described machine: whole nodes, node-hour cost and queue limits on the
//! EC-Earth3 SR CMIP6 curves (assets/machine-cmip6.toml: 48-core nodes, max_nproc 672, 96 extra
//! PEs, the 768-core debug queue).

use crate::common;

use std::path::{Path, PathBuf};

use autolb::config::CampaignFile;
use autolb::machine::CostKind;
use autolb::predict::{predict, predict_billed};
use serde_json::Value;

fn asset() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/machine-cmip6.toml")
}

fn file() -> CampaignFile {
    CampaignFile::load(&asset()).expect("the asset parses")
}

/// Why node-hours recommend something else than core-hours on these curves.
///
/// In core-hours IFS 408 / NEMO 240 wins: 744 PEs at 18.18 SYPD, CHSY 982. But 744 PEs are
/// 15.5 nodes of 48 cores, and the centre bills 16 nodes = 768 cores: 24 cores idle. Billed by
/// the node it costs 1014 core-hours per simulated year, as much as IFS 408 / NEMO 264 and more
/// than IFS 432 / NEMO 240 (768 PEs, faster). IFS 408 / NEMO 216 is 720 PEs, exactly 15 nodes
/// with nothing idle, at 17.85 SYPD and 968 billed core-hours: in node-hours it is the best
/// trade of speed against the bill.
#[test]
fn node_hours_recommend_whole_nodes_where_core_hours_do_not() {
    let f = file();
    let dir = asset().parent().unwrap().to_path_buf();
    let inputs = f.component_inputs(&dir).unwrap();
    let settings = f.settings();
    let mut model = f.cost_model();
    assert_eq!(model.cost, CostKind::NodeHours);

    let billed = predict_billed(&inputs, &settings, &model).unwrap();
    let best = &billed.top[0];
    assert_eq!(best.nproc, vec![408, 216]);
    let bill = best.billing.as_ref().unwrap();
    assert_eq!(
        (bill.nodes, bill.billed_cores, bill.idle_cores),
        (15, 720, 0)
    );
    assert_eq!(bill.queue.as_deref(), Some("debug"));

    model.cost = CostKind::CoreHours;
    let by_cores = predict_billed(&inputs, &settings, &model).unwrap();
    let best = &by_cores.top[0];
    assert_eq!(best.nproc, vec![408, 240]);
    let bill = best.billing.as_ref().unwrap();
    assert_eq!(
        (bill.nodes, bill.billed_cores, bill.idle_cores),
        (16, 768, 24)
    );
    // The same configuration billed by the node costs what a full 16 nodes cost.
    let node_bill = billed
        .top
        .iter()
        .find(|c| c.nproc == vec![408, 240])
        .and_then(|c| c.billing.clone())
        .unwrap();
    assert!((node_bill.cost - 24.0 * 768.0 / best.sypd).abs() < 1e-9);
    assert!(node_bill.cost > bill.cost);
}

/// Without a machine the answer is the plain prediction (no billing anywhere).
#[test]
fn without_a_machine_nothing_changes() {
    let f = file();
    let dir = asset().parent().unwrap().to_path_buf();
    let inputs = f.component_inputs(&dir).unwrap();
    let plain = predict(&inputs, &f.settings()).unwrap();
    let same = predict_billed(&inputs, &f.settings(), &Default::default()).unwrap();
    assert_eq!(plain, same);
    assert!(plain.top.iter().all(|c| c.billing.is_none()) && plain.cost.is_none());
}

/// The "done when" of the machine issue: predict shows nodes, billed and idle cores.
#[test]
fn predict_shows_billed_and_idle_cores() {
    let out = common::autolb()
        .args(["predict", "--config"])
        .arg(asset())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = common::stdout(&out);
    let header = text.lines().next().unwrap();
    for col in ["nodes", "billed", "idle", "NHSY", "queue"] {
        assert!(header.contains(col), "{header}");
    }
    let first = text.lines().nth(1).unwrap();
    let cols: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(&cols[..3], ["1", "408", "216"], "{text}");
    assert_eq!(&cols[8..], ["15", "720", "0", "968.3", "debug"], "{text}");

    let out = common::autolb()
        .args(["predict", "--json", "--cost", "core-hours", "--config"])
        .arg(asset())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["top"][0]["billed_cores"], 768);
    assert_eq!(v["top"][0]["idle_cores"], 24);
    assert_eq!(v["top"][0]["nodes"], 16);
}

/// Without a chosen queue every configuration names the smallest queue it fits; the larger
/// queue admits what the debug queue does not (a 20-node job).
#[test]
fn queues_filter_and_name_the_smallest_fit() {
    let base = [
        "predict",
        "--max-nproc",
        "864",
        "--json",
        "--top",
        "20",
        "--config",
    ];
    let run = |extra: &[&str]| -> Value {
        let out = common::autolb()
            .args(base)
            .arg(asset())
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let debug = run(&[]);
    for c in debug["top"].as_array().unwrap() {
        assert!(c["billed_cores"].as_u64().unwrap() <= 768);
        assert!(c["sypd"].as_f64().unwrap() >= 12.0);
        assert_eq!(c["queue"], "debug");
    }
    let main = run(&["--queue", "main"]);
    let tops = main["top"].as_array().unwrap();
    assert!(tops
        .iter()
        .any(|c| c["billed_cores"].as_u64().unwrap() > 768));
    // With a chosen queue, every configuration shown runs in it.
    assert!(tops.iter().all(|c| c["queue"] == "main"));

    let out = common::autolb()
        .args(["predict", "--queue", "nope", "--config"])
        .arg(asset())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nope") && err.contains("debug, main"), "{err}");
}

/// The issue's performance budget for a budget change: 2 components, step 1, max_nproc 2000,
/// re-predicted from scratch (candidates, counts, bounds, top 5) for each node-sized budget
/// step, under 16 ms. Timing is meaningless on a loaded machine, so this is ignored by default:
///
/// ```sh
/// cargo test --release --test predict_machine -- --ignored --nocapture
/// ```
#[test]
#[ignore]
fn budget_change_at_step_1_and_2000_pes_is_fast() {
    use autolb::curve::{Curve, Point};
    use autolb::machine::{CostModel, Machine, Placement};
    use autolb::predict::{ComponentInput, Problem, ProblemOptions, Settings};
    use std::time::Instant;

    let curve = |name: &str, scale: f64| {
        let points: Vec<Point> = [24u32, 100, 400, 1000, 2000]
            .iter()
            .map(|&p| Point {
                nproc: p,
                sypd: scale * f64::from(p).powf(0.85) / (1.0 + f64::from(p) / 3000.0),
            })
            .collect();
        Curve::from_points(name, "synthetic", &points).unwrap()
    };
    let inputs = vec![
        ComponentInput::new(curve("ATM", 0.9)),
        ComponentInput::new(curve("OCE", 1.4)),
    ];
    let machine = |placement| Machine {
        cores_per_node: 48,
        placement,
        extras_share_node: true,
        node_power_w: Some(450.0),
    };
    let models = [
        ("core-hours, no machine", CostModel::default()),
        (
            "node-hours, packed",
            CostModel {
                machine: Some(machine(Placement::Packed)),
                cost: CostKind::NodeHours,
                ..CostModel::default()
            },
        ),
        (
            "node-hours, per-component",
            CostModel {
                machine: Some(machine(Placement::PerComponent)),
                cost: CostKind::NodeHours,
                ..CostModel::default()
            },
        ),
    ];
    for (label, model) in models {
        let mut times = Vec::new();
        for budget in (1040..=2000).rev().step_by(48) {
            let settings = Settings {
                max_nproc: budget,
                step: 1,
                extra_pes: 96,
                ..Settings::default()
            };
            let start = Instant::now();
            let problem = Problem::build(
                &inputs,
                &settings,
                ProblemOptions {
                    model: None,
                    cost_model: Some(&model),
                },
            )
            .unwrap();
            let p = problem.rank(0.5, 5);
            times.push(start.elapsed());
            assert_eq!(p.top.len(), 5);
        }
        times.sort();
        let median = times[times.len() / 2];
        let worst = *times.last().unwrap();
        println!(
            "{label}: median {median:?}, worst {worst:?} over {} budgets",
            times.len()
        );
        assert!(worst.as_secs_f64() < 0.016, "{label}: {worst:?}");
    }
}

/// PEs per component, used PEs, SYPD and node-hour cost of one measured configuration.
type Measured = (Vec<u64>, u64, f64, f64);

/// The campaign's choice of best weighs the billed cost: the demo campaign (stand-in model) run
/// with 48-core nodes and node-hours; the best is recomputed here from the measured SYPD with
/// whole-node bills and must be the campaign's.
#[test]
fn a_campaign_chooses_its_best_by_the_node_hour_bill() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let demo = std::fs::read_to_string(root.join("demo-campaign.toml")).unwrap();
    let demo = demo
        .replace("\"curves/", &format!("\"{}/curves/", root.display()))
        .replace("\"nemo_orca1", &format!("\"{}/nemo_orca1", root.display()));
    // Top-level keys must come before the first table.
    let text = format!(
        "cost = \"node-hours\"\n{demo}\n[machine]\ncores_per_node = 48\nplacement = \"per-component\"\n"
    );
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("campaign.toml");
    std::fs::write(&file, text).unwrap();
    let dir = tmp.path().join("c");
    common::init(&dir, &file);
    let run = common::autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = common::autolb()
        .args(["campaign", "status", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["cost_model"]["cost"], "node-hours");

    // Every measured configuration: PEs, SYPD and the whole-node bill.
    let mut measured: Vec<Measured> = Vec::new();
    for it in status["iterations"].as_array().unwrap() {
        for t in it["tests"].as_array().unwrap() {
            let Some(sypd) = t["sypd"].as_f64() else {
                continue;
            };
            let nproc: Vec<u64> = ["IFS", "NEMO"]
                .iter()
                .map(|n| t["nproc"][n].as_u64().unwrap())
                .collect();
            let used: u64 = nproc.iter().sum::<u64>() + 96;
            let own: u64 = nproc.iter().map(|p| p.div_ceil(48)).sum();
            let nodes = own.max(used.div_ceil(48));
            let cost = 24.0 * (nodes * 48) as f64 / sypd;
            measured.push((nproc, used, sypd, cost));
        }
    }
    assert!(measured.len() >= 4, "{status}");
    let bounds = |f: &dyn Fn(&Measured) -> f64| {
        let v: Vec<f64> = measured.iter().map(f).collect();
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    let (s_lo, s_hi) = bounds(&|m| m.2);
    let (c_lo, c_hi) = bounds(&|m| m.3);
    let norm = |v: f64, lo: f64, hi: f64| if hi == lo { 0.0 } else { (v - lo) / (hi - lo) };
    let fn_of = |m: &Measured| 0.5 * norm(m.2, s_lo, s_hi) + 0.5 * (1.0 - norm(m.3, c_lo, c_hi));
    let best = measured
        .iter()
        .max_by(|a, b| {
            fn_of(a)
                .total_cmp(&fn_of(b))
                .then(b.1.cmp(&a.1))
                .then_with(|| b.0.cmp(&a.0))
        })
        .unwrap();
    let chosen: Vec<u64> = ["IFS", "NEMO"]
        .iter()
        .map(|n| status["best"]["nproc"][n].as_u64().unwrap())
        .collect();
    assert_eq!(chosen, best.0, "{status}");
    assert!((status["best"]["fittingness"].as_f64().unwrap() - fn_of(best)).abs() < 1e-9);
}
