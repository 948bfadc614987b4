//! The CPU+GPU worked example as a campaign: Algorithm 1 with a budget per resource, run by the
//! stand-in model to the end.

use crate::common;
use crate::common::autolb;

use serde_json::Value;

/// Creates the campaign of `file` in `dir`, runs it to the end and returns its status (JSON,
/// parsed and as printed).
fn run_to_the_end(dir: &std::path::Path, file: &std::path::Path) -> (Value, String) {
    common::init(dir, file);
    autolb().args(["campaign", "run"]).arg(dir).stdout_ok();
    let out = autolb()
        .args(["campaign", "status"])
        .arg(dir)
        .arg("--json")
        .stdout_ok();
    (serde_json::from_str(&out).unwrap(), out)
}

#[test]
fn the_cpu_gpu_example_runs_a_campaign_to_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cpu_gpu");
    let (status, out) = run_to_the_end(&dir, &common::resources::cpu_gpu_file());
    assert_eq!(status["done"], Value::Bool(true), "{out}");
    assert_eq!(status["counts"]["failed"].as_u64(), Some(0));
    let allowed = [1, 2, 3, 4, 6, 8, 10, 12, 14, 16];
    let (mut to_gpu, mut tests) = (0, 0);
    for it in status["iterations"].as_array().unwrap() {
        for t in it["tests"].as_array().unwrap() {
            tests += 1;
            let (atm, oce) = (
                t["nproc"]["ATM"].as_u64().unwrap(),
                t["nproc"]["OCE"].as_u64().unwrap(),
            );
            // Each resource within its own budget: 768 cores, 16 GPUs from the allowed list.
            assert!(atm <= 768 && allowed.contains(&oce), "{t}");
            // CHSY in CPU core-hour equivalents: 32 XIOS cores, a GPU-hour = 32 core-hours.
            let (sypd, chsy) = (t["sypd"].as_f64().unwrap(), t["chsy"].as_f64().unwrap());
            let expected = 24.0 * ((atm + 32) as f64 + 32.0 * oce as f64) / sypd;
            assert!((chsy - expected).abs() < 1e-9 * expected, "{t}");
            let Some(next) = t["next_nproc"].as_object() else {
                continue;
            };
            let step = t["next_step"].as_u64().unwrap();
            let (na, no) = (next["ATM"].as_u64().unwrap(), next["OCE"].as_u64().unwrap());
            match t["donor"].as_str() {
                // The atmosphere gives `step` cores; the ocean gets the GPUs that cost the
                // same (step / 32, at least one), snapped up to its allowed list.
                Some("ATM") => {
                    to_gpu += 1;
                    assert_eq!(na, atm - step, "{t}");
                    let gpus = (step as f64 / 32.0).round().max(1.0) as u64;
                    let want = *allowed.iter().find(|&&g| g >= oce + gpus).unwrap();
                    assert_eq!(no, want, "{t}");
                }
                // The ocean gives the GPUs that cost `step` cores; the atmosphere gets `step`.
                Some("OCE") => {
                    assert!(no < oce, "{t}");
                    assert_eq!(na, atm + step, "{t}");
                }
                other => panic!("unexpected donor {other:?}: {t}"),
            }
        }
    }
    assert!(tests >= 6, "a few iterations of three tests: {tests}");
    assert!(
        to_gpu > 0,
        "units moved from the CPU atmosphere to the GPU ocean"
    );
    assert!(status["best"].is_object(), "{out}");
}

/// Configurations given in the file (`[original]`, `start`) are checked against each resource's
/// own budget, not against one sum of cores and GPUs.
#[test]
fn given_configurations_fit_each_resource_budget() {
    // 768 cores + 12 GPUs: within both budgets, though 780 units are more than max_nproc.
    let tmp = tempfile::tempdir().unwrap();
    let file = common::resources::cpu_gpu_variant(
        tmp.path(),
        "[executor]\n",
        "[original]\nATM = 768\nOCE = 12\n\n[executor]\n",
    );
    common::init(&tmp.path().join("c"), &file);

    // 12 GPUs over a budget of 8 GPUs.
    let tmp = tempfile::tempdir().unwrap();
    let file = common::resources::cpu_gpu_variant(tmp.path(), "max_units = 16", "max_units = 8");
    let text = std::fs::read_to_string(&file).unwrap().replacen(
        "max_nproc = 768",
        "start = [{ATM = 640, OCE = 12}]\nmax_nproc = 768",
        1,
    );
    std::fs::write(&file, text).unwrap();
    let out = autolb()
        .args(["campaign", "init"])
        .arg(tmp.path().join("c"))
        .arg("--config")
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("start entry 1 uses 12 units of gpu, over its budget of 8"),
        "{err}"
    );
}

mod moves {
    use autolb::campaign::strategy::algorithm1::{move_units, Budgets, Limits};
    use proptest::prelude::*;

    fn case() -> impl Strategy<Value = (Vec<u32>, Vec<Limits>, Budgets, usize, usize, u32)> {
        (2usize..5).prop_flat_map(|n| {
            (
                proptest::collection::vec((1u32..200, 0u32..200, 0u32..300), n),
                proptest::collection::vec(0usize..2, n),
                (1u32..600, 1u32..600),
                (0.1f64..50.0, 0.1f64..50.0),
                0..n,
                0..n,
                1u32..128,
            )
                .prop_map(|(comps, resource_of, (b0, b1), (u0, u1), d, r, step)| {
                    let limits: Vec<Limits> = comps
                        .iter()
                        .map(|&(low, span, _)| Limits {
                            low,
                            high: low + span,
                            allowed: None,
                        })
                        .collect();
                    let nproc: Vec<u32> = comps
                        .iter()
                        .map(|&(low, span, at)| low + at.min(span))
                        .collect();
                    let budgets = Budgets {
                        max_units: vec![b0, b1],
                        resource_of,
                        unit_cost: vec![u0, u1],
                        names: vec!["cpu".into(), "gpu".into()],
                    };
                    (nproc, limits, budgets, d, r, step)
                })
        })
    }

    fn units(b: &Budgets, nproc: &[u32]) -> [u64; 2] {
        let mut u = [0u64; 2];
        for (c, &p) in nproc.iter().enumerate() {
            u[b.resource_of[c]] += u64::from(p);
        }
        u
    }

    proptest! {
        #![proptest_config(crate::common::proptest_default())]
        /// A move takes from the donor, gives to the recipient, leaves the others alone, keeps
        /// every limit, and never takes a resource over its budget (or further over it).
        #[test]
        fn every_move_keeps_each_budget((nproc, limits, budgets, d, r, step) in case()) {
            let Some(next) = move_units(&nproc, d, r, step, &limits, &budgets) else {
                return Ok(());
            };
            prop_assert!(d != r);
            prop_assert!(next[d] < nproc[d] && next[r] > nproc[r]);
            for c in 0..nproc.len() {
                prop_assert!(next[c] >= limits[c].low && next[c] <= limits[c].high);
                if c != d && c != r {
                    prop_assert_eq!(next[c], nproc[c]);
                }
            }
            let (now, after) = (units(&budgets, &nproc), units(&budgets, &next));
            for k in 0..2 {
                prop_assert!(after[k] <= u64::from(budgets.max_units[k]).max(now[k]));
            }
            // The donor gives at most the units that cost `step` on its resource.
            prop_assert!(nproc[d] - next[d] <= budgets.units_for(d, step));
        }
    }
}

/// The guided strategy on the CPU+GPU example: driven to the end by the stand-in model, every
/// configuration it runs keeps each resource's own budget (768 cores, 16 GPUs from the allowed
/// list), and it tries more than one GPU count (its "same configuration" radius counts GPUs in
/// what they cost, not in cores, so 2 and 3 GPUs are different configurations).
#[test]
fn a_guided_campaign_with_resources_keeps_each_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let file = common::resources::cpu_gpu_variant(
        tmp.path(),
        "repetitions = 1\n",
        "repetitions = 1\nstrategy = \"guided\"\n",
    );
    let (status, out) = run_to_the_end(&tmp.path().join("c"), &file);
    assert_eq!(status["done"], Value::Bool(true), "{out}");
    let allowed = [1, 2, 3, 4, 6, 8, 10, 12, 14, 16];
    let mut gpus = std::collections::BTreeSet::new();
    for it in status["iterations"].as_array().unwrap() {
        for t in it["tests"].as_array().unwrap() {
            let (atm, oce) = (
                t["nproc"]["ATM"].as_u64().unwrap(),
                t["nproc"]["OCE"].as_u64().unwrap(),
            );
            assert!(atm <= 768 && allowed.contains(&oce), "{t}");
            gpus.insert(oce);
        }
    }
    assert!(gpus.len() > 1, "one GPU count only: {gpus:?}");
    assert!(status["best"].is_object(), "{out}");
}
