//! Accuracy of the performance model (README "Performance model"):
//! `cargo run --release --example model_accuracy`.
//!
//! 1. The 28 EC-Earth3 SR runs bundled in tests/fixtures/lucia_lite whose PE counts lie inside
//!    the mn4_sr_reduced_{ifs,nemo} curves: leave-one-out (grouped by configuration) with the
//!    standalone and calibrated models, and the few-runs test (fit on 5, predict the other 23,
//!    20 seeded draws).
//! 2. Synthetic truths: stand-in model runs of random cases (`autolb::sim::synthetic`), 2 %
//!    noise, leave-one-out per case; also with a hidden coupling time per step (and none),
//!    against the model without that term, and with runs of three lengths.
//! 3. Without curves: the same 29 lucia_lite runs with both components learned from the runs
//!    alone (`--component`), synthetic truths of two and three components without their
//!    curves, and the learned curves predicted in the half of each range no run reached.
//! 4. Speed: fitting on 100 runs and ranking a 2-component prediction at step 1.

use std::path::Path;
use std::time::Instant;

use autolb::curve::Curve;
use autolb::interp::Method;
use autolb::model::check::{
    few_runs, leave_one_out, leave_one_out_with_steps, CheckSummary, ErrorStats,
};
use autolb::model::measured::{load_runs_dir, Naming};
use autolb::model::steps::{StepProfile, Steps};
use autolb::model::Model;
use autolb::predict::{ComponentInput, Problem, ProblemOptions, Settings};
use autolb::sim::synthetic::SyntheticCase;
use autolb::sim::synthetic_check::{
    synthetic_coupling_time_leave_one_out, synthetic_extrapolation, synthetic_leave_one_out,
    synthetic_leave_one_out_without_curves, synthetic_run_length_leave_one_out, CouplingTimeCase,
};

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
            r.standalone_sypd.unwrap_or(f64::NAN),
            100.0 * r.standalone_error().unwrap_or(f64::NAN),
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
        100.0 * s.standalone.map_or(f64::NAN, |e| e.median),
        100.0 * s.standalone.map_or(f64::NAN, |e| e.max)
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
    if let (Model::Calibrated(m), _) = Model::fit(&curves, interp, &used) {
        let terms: Vec<String> = m
            .components
            .iter()
            .map(|c| {
                format!(
                    "{} {:.2} s per simulated day ({:.1} ms per 2700 s coupling step)",
                    c.name,
                    c.coupling_s_per_day,
                    1000.0 * c.coupling_s_per_day * 2700.0 / 86_400.0
                )
            })
            .collect();
        println!(
            "  fitted on all {}: k0 {:.3}, irregularity {}, fixed cost {:.1} s per run, coupling time {}",
            used.len(),
            m.coupled.log_mean.exp(),
            m.coupled.irregularity,
            m.fixed_s,
            terms.join(", ")
        );
    }
    let draws = few_runs(&curves, interp, &used, 5, 20, 1, &Steps::default());
    let stats = ErrorStats::of(&draws);
    println!(
        "  fit on 5 runs (20 draws): median of the draws' median errors {:.1} %, worst draw {:.1} %",
        100.0 * stats.median,
        100.0 * stats.max
    );
    // The same with the bundled IFS per-step series (--steps IFS=...): the coupled time is the
    // sum over steps of the slowest component's step time.
    let series = root.join("tests/fixtures/timesteps/mn4_sr_cmip6_ifs_ts_240.csv");
    let steps = Steps {
        profiles: vec![StepProfile::load("IFS", &series, None).unwrap()],
    };
    let (check, _) = leave_one_out_with_steps(&curves, interp, &runs, &steps);
    let s = check.summary;
    println!(
        "  with --steps IFS=mn4_sr_cmip6_ifs_ts_240.csv: standalone median {:.1} %, max {:.1} %; calibrated median {:.1} %, max {:.1} %, mean {:.1} %, coverage {:.0} %",
        100.0 * s.standalone.map_or(f64::NAN, |e| e.median),
        100.0 * s.standalone.map_or(f64::NAN, |e| e.max),
        100.0 * s.calibrated.median,
        100.0 * s.calibrated.max,
        100.0 * s.calibrated.mean,
        100.0 * s.coverage
    );
    let stats = ErrorStats::of(&few_runs(&curves, interp, &used, 5, 20, 1, &steps));
    println!(
        "  with --steps, fit on 5 runs (20 draws): median {:.1} %, worst draw {:.1} %",
        100.0 * stats.median,
        100.0 * stats.max
    );

    without_curves(&runs, interp);

    let summaries = synthetic_leave_one_out(0..20, 2, 14);
    let med_all = |f: &dyn Fn(&autolb::model::check::CheckSummary) -> f64| {
        ErrorStats::of(&summaries.iter().map(f).collect::<Vec<_>>()).median
    };
    println!("synthetic truths (20 random 2-component cases, 14 stand-in runs each, LOO):");
    println!(
        "  standalone: median of the cases' median errors {:.1} %, of their max {:.1} %",
        100.0 * med_all(&|s| s.standalone.map_or(f64::NAN, |e| e.median)),
        100.0 * med_all(&|s| s.standalone.map_or(f64::NAN, |e| e.max))
    );
    println!(
        "  calibrated: median of the cases' median errors {:.1} %, of their max {:.1} %, band coverage {:.0} %",
        100.0 * med_all(&|s| s.calibrated.median),
        100.0 * med_all(&|s| s.calibrated.max),
        100.0 * med_all(&|s| s.coverage)
    );
    let three = synthetic_leave_one_out(100..110, 3, 20);
    println!(
        "  3 components (10 cases, 20 runs): standalone {:.1} %, calibrated {:.1} %",
        100.0
            * ErrorStats::of(
                &three
                    .iter()
                    .map(|s| s.standalone.map_or(f64::NAN, |e| e.median))
                    .collect::<Vec<_>>()
            )
            .median,
        100.0
            * ErrorStats::of(
                &three
                    .iter()
                    .map(|s| s.calibrated.median)
                    .collect::<Vec<_>>()
            )
            .median
    );

    for (share, label) in [
        (
            0.07,
            "a hidden coupling time of 7 % of the median pace-setter's step",
        ),
        (0.0, "no coupling time at all"),
    ] {
        let cases = synthetic_coupling_time_leave_one_out(0..20, 2, 15, share);
        let med = |f: &dyn Fn(&CouplingTimeCase) -> f64| {
            100.0 * ErrorStats::of(&cases.iter().map(f).collect::<Vec<_>>()).median
        };
        let kept = cases
            .iter()
            .filter(|c| c.learned_s_per_day.iter().any(|&t| t > 0.0))
            .count();
        let ratio = if share > 0.0 {
            format!(
                ", learned / hidden (largest component) median {:.2}",
                med(&|c| c.learned_s_per_day.iter().copied().fold(0.0, f64::max)
                    / c.hidden_s_per_day)
                    / 100.0
            )
        } else {
            String::new()
        };
        println!(
            "  {label} (20 cases, 15 runs): term kept in {kept} of 20{ratio}; calibrated median {:.1} % (max {:.1} %, coverage {:.0} %), without the term {:.1} % (max {:.1} %, coverage {:.0} %)",
            med(&|c| c.model.calibrated.median),
            med(&|c| c.model.calibrated.max),
            med(&|c| c.model.coverage),
            med(&|c| c.without_term.calibrated.median),
            med(&|c| c.without_term.calibrated.max),
            med(&|c| c.without_term.coverage),
        );
    }

    let lengths = synthetic_run_length_leave_one_out(0..20, 2, 15, 0.08);
    let med = |f: &dyn Fn(&(CheckSummary, CheckSummary)) -> f64| {
        100.0 * ErrorStats::of(&lengths.iter().map(f).collect::<Vec<_>>()).median
    };
    println!(
        "  runs of a week, a month and two months with a hidden fixed cost (8 % of a week; 20 cases, 15 runs): calibrated median {:.1} % (max {:.1} %, coverage {:.0} %) knowing the lengths, {:.1} % (max {:.1} %) not",
        med(&|s| s.0.calibrated.median),
        med(&|s| s.0.calibrated.max),
        med(&|s| s.0.coverage),
        med(&|s| s.1.calibrated.median),
        med(&|s| s.1.calibrated.max)
    );

    // Speed: fit on 100 runs, then rank a 2-component prediction at step 1.
    let case = SyntheticCase::generate(7, 2);
    let runs100: Vec<_> = case
        .random_configurations(100, 7)
        .iter()
        .enumerate()
        .filter_map(|(i, n)| case.measured_run(n, i as u64).ok())
        .collect();
    let curves = case.standalone_curves();
    let budget: u32 = curves.iter().map(|c| c.last_nproc()).sum::<u32>() / 2;
    let settings = Settings {
        max_nproc: budget,
        step: 1,
        ..Settings::default()
    };
    let inputs: Vec<ComponentInput> = curves.iter().cloned().map(ComponentInput::new).collect();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        let (model, _) = Model::fit(&curves, interp, &runs100);
        let problem = Problem::build(
            &inputs,
            &settings,
            ProblemOptions {
                model: Some(&model),
                cost_model: None,
            },
        )
        .unwrap();
        let p = problem.rank(0.5, 5);
        assert!(!p.top.is_empty());
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "speed: fit on {} runs + rank 2 components at step 1 ({} feasible configurations): {:.1} ms (best of 5)",
        runs100.len(),
        Problem::build(&inputs, &settings, ProblemOptions { model: Some(&Model::Standalone), cost_model: None }).unwrap().configurations,
        1000.0 * best
    );
    let t = Instant::now();
    let _ = Problem::build(
        &inputs,
        &settings,
        ProblemOptions {
            model: Some(&Model::Standalone),
            cost_model: None,
        },
    )
    .unwrap()
    .rank(0.5, 5);
    let standalone_ms = 1000.0 * t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (model, _) = Model::fit(&curves, interp, &runs100);
    let fit_ms = 1000.0 * t.elapsed().as_secs_f64();
    println!("  of which: fit {fit_ms:.1} ms; the same ranking with the standalone model {standalone_ms:.1} ms");
    // Runs of three lengths: the fixed cost per run is learned on its grid (11 fits).
    let mixed: Vec<_> = runs100
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            let s = [7.0, 31.0, 59.0][i % 3] * 86_400.0;
            let phi = autolb::model::run_length::penalty(10.0, Some(s));
            r.simulated_s = Some(s);
            r.coupled_sypd = autolb::model::run_length::lengthen(r.coupled_sypd, phi);
            for c in &mut r.components {
                c.sypd = autolb::model::run_length::lengthen(c.sypd, phi);
            }
            r
        })
        .collect();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        let (model, _) = Model::fit(&curves, interp, &mixed);
        let problem = Problem::build(
            &inputs,
            &settings,
            ProblemOptions {
                model: Some(&model),
                cost_model: None,
            },
        )
        .unwrap();
        assert!(!problem.rank(0.5, 5).top.is_empty());
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "  the same with runs of three lengths (the fixed cost learned): {:.1} ms (best of 5)",
        1000.0 * best
    );
    let _ = model;
}

/// Section 3: the model without curves (`model check --component IFS --component NEMO`).
fn without_curves(runs: &[autolb::model::MeasuredRun], interp: Method) {
    let bare = [
        ComponentInput::without_curve("IFS", 48, 1200),
        ComponentInput::without_curve("NEMO", 48, 1632),
    ];
    let show = |label: &str, s: &CheckSummary, n: usize| {
        println!(
            "  without curves, {label} ({n} runs): calibrated LOO median {:.1} %, max {:.1} %, mean {:.1} %, band coverage {:.0} %",
            100.0 * s.calibrated.median,
            100.0 * s.calibrated.max,
            100.0 * s.calibrated.mean,
            100.0 * s.coverage
        );
    };
    let (all, _) = leave_one_out(&bare, interp, runs);
    show("every usable run", &all.summary, all.runs.len());
    let inside: Vec<_> = runs
        .iter()
        .filter(|r| r.nproc("NEMO") != Some(1632))
        .cloned()
        .collect();
    let (same, _) = leave_one_out(&bare, interp, &inside);
    show("the runs the curves cover", &same.summary, same.runs.len());
    let med = |v: Vec<f64>| 100.0 * ErrorStats::of(&v).median;
    for (components, seeds, n) in [(2usize, 0..20u64, 14usize), (3, 100..110, 20)] {
        let cases = synthetic_leave_one_out_without_curves(seeds.clone(), components, n);
        println!(
            "  synthetic truths, {components} components ({} cases, {n} runs): calibrated median of the cases' medians {:.1} % with curves, {:.1} % without (max {:.1} % / {:.1} %, coverage {:.0} % / {:.0} %)",
            cases.len(),
            med(cases.iter().map(|c| c.0.calibrated.median).collect()),
            med(cases.iter().map(|c| c.1.calibrated.median).collect()),
            med(cases.iter().map(|c| c.0.calibrated.max).collect()),
            med(cases.iter().map(|c| c.1.calibrated.max).collect()),
            med(cases.iter().map(|c| c.0.coverage).collect()),
            med(cases.iter().map(|c| c.1.coverage).collect()),
        );
    }
    for upwards in [true, false] {
        let x = synthetic_extrapolation(0..30, 2, 30, upwards);
        println!(
            "  learned curves {} (30 cases, 30 runs, a component's speed in the half of its range no training run reached; {} predictions): median |ln error| {:.3}, median band half-width {:.3}, coverage {:.0} %",
            if upwards { "upwards" } else { "downwards" },
            x.predictions,
            x.median_log_error,
            x.median_half_width,
            100.0 * x.coverage
        );
    }
}
