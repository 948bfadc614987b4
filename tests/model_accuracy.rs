//! Accuracy of the calibrated performance model on data it did not see (README "Performance
//! model"; the full benchmark: `cargo run --release --example model_accuracy`).

use std::path::Path;

use autolb::curve::Curve;
use autolb::interp::Method;
use autolb::model::check::{
    few_runs, leave_one_out, leave_one_out_with_steps, synthetic_leave_one_out, ErrorStats,
};
use autolb::model::measured::{load_runs_dir, Naming};
use autolb::model::steps::{StepProfile, Steps};
use autolb::model::MeasuredRun;

fn real_runs() -> (Vec<Curve>, Vec<MeasuredRun>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let curves = vec![
        Curve::load("IFS", &root.join("assets/curves/mn4_sr_reduced_ifs.csv")).unwrap(),
        Curve::load("NEMO", &root.join("assets/curves/mn4_sr_reduced_nemo.csv")).unwrap(),
    ];
    let names = [Naming::new("IFS", "ATMIFS"), Naming::new("NEMO", "oceanx")];
    let (runs, _) = load_runs_dir(&root.join("tests/fixtures/lucia_lite"), &names, None).unwrap();
    (curves, runs)
}

/// The 28 EC-Earth3 runs: the table PE counts win over two wrong directory names, one run
/// lies outside the NEMO curve, and leave-one-out beats the standalone model by far. The
/// bounds are the measured values with a little room (see the README for the numbers and the
/// issue's stricter targets, which this model does not reach on these runs).
#[test]
fn real_runs_leave_one_out() {
    let (curves, runs) = real_runs();
    assert_eq!(runs.len(), 29);
    let r960 = runs
        .iter()
        .find(|r| r.path.ends_with("960IFS_411NEMO"))
        .unwrap();
    assert_eq!(r960.nproc("NEMO"), Some(144));
    let (check, notes) = leave_one_out(&curves, Method::default(), &runs);
    assert_eq!(check.runs.len(), 28, "{notes:?}");
    let s = check.summary;
    assert!((s.standalone.median - 0.267).abs() < 0.005, "{s:?}");
    assert!(s.calibrated.median < 0.075, "{s:?}");
    assert!(s.calibrated.max < 0.18, "{s:?}");
    assert!(s.coverage >= 0.8, "{s:?}");
    assert!(s.calibrated.median < s.standalone.median / 3.0, "{s:?}");
}

#[test]
fn real_runs_few_runs() {
    let (curves, runs) = real_runs();
    let (check, _) = leave_one_out(&curves, Method::default(), &runs);
    let used: Vec<MeasuredRun> = runs
        .into_iter()
        .filter(|r| check.runs.iter().any(|c| c.path == r.path))
        .collect();
    let draws = few_runs(
        &curves,
        Method::default(),
        &used,
        5,
        20,
        1,
        &Steps::default(),
    );
    let s = ErrorStats::of(&draws);
    assert!(s.median < 0.11, "{s:?}");
}

/// Stand-in runs of random synthetic truths (shapes drawn from seeds, never tuned): the
/// calibrated model beats the standalone one by a wide margin.
#[test]
fn synthetic_truths_leave_one_out() {
    let summaries = synthetic_leave_one_out(0..8, 2, 14);
    let sa: Vec<f64> = summaries.iter().map(|s| s.standalone.median).collect();
    let ca: Vec<f64> = summaries.iter().map(|s| s.calibrated.median).collect();
    let cov: Vec<f64> = summaries.iter().map(|s| s.coverage).collect();
    let (sa, ca, cov) = (
        ErrorStats::of(&sa).median,
        ErrorStats::of(&ca).median,
        ErrorStats::of(&cov).mean,
    );
    eprintln!("synthetic: standalone median {sa:.3}, calibrated {ca:.3}, coverage {cov:.2}");
    assert!(ca < sa / 3.0, "calibrated {ca} vs standalone {sa}");
    assert!(ca < 0.05, "{ca}");
    assert!(cov >= 0.8, "{cov}");
}

/// With the bundled IFS per-step series, the coupled time is the sum over steps of the slowest
/// step: the balance effect the per-component model alone misses.
#[test]
fn real_runs_with_irregular_steps() {
    let (curves, runs) = real_runs();
    let series = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/timesteps/mn4_sr_cmip6_ifs_ts_240.csv");
    let steps = Steps {
        profiles: vec![StepProfile::load("IFS", &series, None).unwrap()],
    };
    let (check, _) = leave_one_out_with_steps(&curves, Method::default(), &runs, &steps);
    let s = check.summary;
    assert_eq!(check.runs.len(), 28);
    assert!(s.calibrated.median < 0.05, "{s:?}");
    assert!(s.calibrated.max < 0.16, "{s:?}");
    assert!(s.coverage >= 0.8, "{s:?}");
}
