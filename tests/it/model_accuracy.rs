//! Accuracy of the calibrated performance model on data it did not see (README "Performance
//! model"; the full benchmark: `cargo run --release --example model_accuracy`).

use std::path::Path;

use autolb::curve::Curve;
use autolb::interp::Method;
use autolb::model::check::{few_runs, leave_one_out, leave_one_out_with_steps, ErrorStats};
use autolb::model::measured::{load_runs_dir, Naming};
use autolb::model::steps::{StepProfile, Steps};
use autolb::model::{EstimateRequest, MeasuredRun};
use autolb::predict::ComponentInput;
use autolb::sim::synthetic_check::{
    synthetic_coupling_time_leave_one_out, synthetic_extrapolation, synthetic_leave_one_out,
    synthetic_leave_one_out_without_curves, synthetic_run_length_leave_one_out, CouplingTimeCase,
};

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
/// bounds are the measured values with a little room (see the README for the numbers; the
/// issue asks for median <= 3.5 %, max <= 12 %, coverage >= 80 %).
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
    let standalone = s.standalone.expect("every component has a curve");
    assert!((standalone.median - 0.267).abs() < 0.005, "{s:?}");
    // Measured: median 2.2 %, max 11.3 %, coverage 89 % (a global correction: 5.8 % / 19.8 %).
    assert!(s.calibrated.median < 0.025, "{s:?}");
    assert!(s.calibrated.max < 0.12, "{s:?}");
    assert!(s.coverage >= 0.85, "{s:?}");
    assert!(s.calibrated.median < standalone.median / 3.0, "{s:?}");
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
    // Measured: 4.3 % (the issue: <= 6 %).
    assert!(s.median < 0.05, "{s:?}");
}

/// Stand-in runs of random synthetic truths (shapes drawn from seeds, never tuned): the
/// calibrated model beats the standalone one by a wide margin.
#[test]
fn synthetic_truths_leave_one_out() {
    let summaries = synthetic_leave_one_out(0..8, 2, 14);
    let sa: Vec<f64> = summaries
        .iter()
        .filter_map(|s| s.standalone.map(|e| e.median))
        .collect();
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
    // Measured: median 2.3 %, max 12.2 %, coverage 93 %.
    assert!(s.calibrated.median < 0.03, "{s:?}");
    assert!(s.calibrated.max < 0.13, "{s:?}");
    assert!(s.coverage >= 0.85, "{s:?}");
}

/// The coupling overhead learned on the real runs depends on the balance: nearly balanced
/// IFS and NEMO make the coupled run slower than the slowest of them (irregular steps).
#[test]
fn real_runs_overhead_depends_on_the_balance() {
    let (curves, runs) = real_runs();
    let (model, _) = autolb::model::Model::fit(&curves, Method::default(), &runs);
    let balanced = model.slowdown(&[10.0, 10.0]);
    let apart = model.slowdown(&[10.0, 20.0]);
    assert!(
        balanced > 1.05 && (1.0..1.02).contains(&apart),
        "{balanced} {apart}"
    );
}

/// The runs are a week (225 coupling steps), a month (993) and two months (1889) long, and a
/// run pays about 13 s that do not grow with its length: NEMO on 144 PEs takes 0.564 s a step
/// in the week-long runs and 0.51 s in the two-month ones. Learned from all 28 runs.
#[test]
fn real_runs_fixed_cost_per_run() {
    let (curves, runs) = real_runs();
    let (model, _) = autolb::model::Model::fit(&curves, Method::default(), &runs);
    let autolb::model::Model::Calibrated(m) = &model else {
        panic!("not calibrated")
    };
    assert!((8.0..20.0).contains(&m.fixed_s), "{}", m.fixed_s);
    assert_eq!(m.typical_simulated_s, Some(992.0 * 2700.0));
    // The same configuration is predicted slower for a week than for two months.
    let week = model.estimate(
        &EstimateRequest::curves(&curves, Method::default(), &[576, 144])
            .for_run(Some(224.0 * 2700.0)),
    );
    let months = model.estimate(
        &EstimateRequest::curves(&curves, Method::default(), &[576, 144])
            .for_run(Some(1888.0 * 2700.0)),
    );
    assert!(
        week.sypd < 0.95 * months.sypd,
        "{} {}",
        week.sypd,
        months.sypd
    );
}

/// Synthetic truths with runs of three lengths and a hidden fixed cost per run (8 % of a
/// week-long run): knowing each run's length, the model learns the cost and predicts as well
/// as without one; not knowing them, it cannot.
#[test]
fn synthetic_truths_with_a_fixed_cost_per_run() {
    let cases = synthetic_run_length_leave_one_out(0..6, 2, 15, 0.08);
    let known: Vec<f64> = cases.iter().map(|c| c.0.calibrated.median).collect();
    let unknown: Vec<f64> = cases.iter().map(|c| c.1.calibrated.median).collect();
    let cov: Vec<f64> = cases.iter().map(|c| c.0.coverage).collect();
    let (known, unknown, cov) = (
        ErrorStats::of(&known).median,
        ErrorStats::of(&unknown).median,
        ErrorStats::of(&cov).mean,
    );
    eprintln!("fixed cost: known lengths {known:.3}, unknown {unknown:.3}, coverage {cov:.2}");
    assert!(
        known < 0.02 && known < unknown / 2.0,
        "{known} vs {unknown}"
    );
    assert!(cov >= 0.8, "{cov}");
}

/// Stand-in runs where every component spends a hidden fixed time per coupling step (7 % of
/// the median pace-setter's step, between points of the model's grid) interpolating and
/// sending, outside its compute seconds: the model keeps a coupling time, learns roughly the
/// hidden one, and predicts held-out configurations better than the same model without the
/// term.
#[test]
fn synthetic_truths_with_a_coupling_time_per_step() {
    let cases = synthetic_coupling_time_leave_one_out(0..6, 2, 15, 0.07);
    for c in &cases {
        eprintln!(
            "hidden {:.2} s/day, learned {:?}; median {:.3}, max {:.3}; without the term {:.3}, {:.3}",
            c.hidden_s_per_day,
            c.learned_s_per_day,
            c.model.calibrated.median,
            c.model.calibrated.max,
            c.without_term.calibrated.median,
            c.without_term.calibrated.max
        );
        // The pace-setters' term is kept; its size within a grid step or two of the truth.
        let learned = c.learned_s_per_day.iter().copied().fold(0.0, f64::max);
        let ratio = learned / c.hidden_s_per_day;
        assert!((0.5..1.6).contains(&ratio), "{c:?}");
    }
    let median = |f: &dyn Fn(&CouplingTimeCase) -> f64| {
        ErrorStats::of(&cases.iter().map(f).collect::<Vec<_>>()).median
    };
    let with = median(&|c| c.model.calibrated.median);
    let without = median(&|c| c.without_term.calibrated.median);
    let coverage = median(&|c| c.model.coverage);
    assert!(with < 0.7 * without, "{with} vs {without}");
    assert!(coverage >= 0.8, "{coverage}");
}

/// The same stand-in with no coupling time at all: the term is kept rarely, and when it is,
/// it costs (nearly) nothing.
#[test]
fn synthetic_truths_without_a_coupling_time() {
    let cases = synthetic_coupling_time_leave_one_out(0..6, 2, 15, 0.0);
    let kept = cases
        .iter()
        .filter(|c| c.learned_s_per_day.iter().any(|&t| t > 0.0))
        .count();
    assert!(kept <= 2, "{cases:?}");
    for c in &cases {
        assert!(
            c.model.calibrated.median <= c.without_term.calibrated.median + 0.005,
            "{c:?}"
        );
    }
}

/// IFS and NEMO without their curves: both learned from the runs alone.
fn without_curves() -> Vec<ComponentInput> {
    vec![
        ComponentInput::without_curve("IFS", 48, 1200),
        ComponentInput::without_curve("NEMO", 48, 1632),
    ]
}

/// The target for the model without curves: on the lucia_lite runs without their curves,
/// leave-one-out median within 2 points of the calibrated model's with the MN4 SR reduced
/// curves, on all 29 runs it can use and on the 28 the curves can; the band still holds most
/// runs. Measured: 1.6 % (29 runs) and 2.0 % (28) against 2.2 % with curves; coverage 86 %.
#[test]
fn real_runs_without_curves_are_within_two_points_of_with_curves() {
    let (curves, runs) = real_runs();
    let (with, _) = leave_one_out(&curves, Method::default(), &runs);
    let with = with.summary.calibrated.median;
    let (all, notes) = leave_one_out(&without_curves(), Method::default(), &runs);
    assert_eq!(all.runs.len(), 29, "{notes:?}");
    let usable: Vec<MeasuredRun> = runs
        .iter()
        .filter(|r| r.nproc("NEMO") != Some(1632))
        .cloned()
        .collect();
    let (same, _) = leave_one_out(&without_curves(), Method::default(), &usable);
    assert_eq!(same.runs.len(), 28);
    for s in [all.summary, same.summary] {
        assert!(s.standalone.is_none(), "{s:?}");
        assert!(s.calibrated.median <= with + 0.02, "{s:?} vs {with}");
        assert!(s.calibrated.median < 0.025, "{s:?}");
        assert!(s.calibrated.max < 0.13, "{s:?}");
        assert!(s.coverage >= 0.8, "{s:?}");
    }
}

/// Synthetic truths of two and three components (`sim::synthetic`, not shaped for this model):
/// without curves the model does about as well as with them. Measured (8 and 6 cases):
/// medians of the cases' median errors 1.0 % against 1.2 % (two components), 0.8 % against
/// 0.9 % (three).
#[test]
fn synthetic_truths_without_curves() {
    let med = |v: Vec<f64>| ErrorStats::of(&v).median;
    for (components, cases, runs) in [(2usize, 0..8u64, 14usize), (3, 100..106, 20)] {
        let summaries = synthetic_leave_one_out_without_curves(cases, components, runs);
        let with = med(summaries.iter().map(|s| s.0.calibrated.median).collect());
        let without = med(summaries.iter().map(|s| s.1.calibrated.median).collect());
        let coverage = med(summaries.iter().map(|s| s.1.coverage).collect());
        assert!(without < 0.02, "{components}: {without}");
        assert!(without <= with + 0.005, "{components}: {without} vs {with}");
        assert!(coverage >= 0.85, "{components}: {coverage}");
    }
}

/// Far from the runs the learned curves' bands widen enough: a component's speed predicted in
/// the half of its range no training run reached (up to several times the PEs away) lies in
/// the band at least about as often as the band promises (90 %). Measured on 30 cases by the
/// `model_accuracy` example: coverage 95 % upwards and 97 % downwards, median error 9 % and
/// 5 %; this test runs 10 of them.
#[test]
fn learned_curves_extrapolate_with_an_honest_band() {
    for upwards in [true, false] {
        let x = synthetic_extrapolation(0..10, 2, 30, upwards);
        assert!(x.predictions > 200, "{x:?}");
        assert!(x.coverage >= 0.85, "upwards {upwards}: {x:?}");
        assert!(x.median_log_error < 0.12, "upwards {upwards}: {x:?}");
        assert!(x.median_half_width < 0.6, "upwards {upwards}: {x:?}");
    }
}
