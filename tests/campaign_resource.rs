//! The CPU+GPU worked example as a campaign: Algorithm 1 with a budget per resource, run by the
//! stand-in model to the end.

mod common;

use serde_json::Value;

#[test]
fn the_cpu_gpu_example_runs_a_campaign_to_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cpu_gpu");
    common::init(&dir, &common::resources::cpu_gpu_file());
    common::run_autolb(&["campaign".as_ref(), "run".as_ref(), dir.as_os_str()]);
    let out = common::run_autolb(&[
        "campaign".as_ref(),
        "status".as_ref(),
        dir.as_os_str(),
        "--json".as_ref(),
    ]);
    let status: Value = serde_json::from_str(&out).unwrap();
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
    let out = std::process::Command::new(common::bin())
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
