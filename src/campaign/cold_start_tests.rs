//! Cold starts (`strategy = "guided"`, no curves) driven from outside with made-up coupled
//! measurements, and from Rust on the stand-in model the way a benchmark drives one: the
//! first iteration, when the model counts as firm, the one-way switch to balancing, and what
//! the status shows in each phase.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::scaling_coupled_tests::coupled_metrics;
use crate::campaign::state::{ColdStartPhase, Outcome, RunState, State};
use crate::campaign::strategy::cold_start::{firmness, MIN_COUNTS};
use crate::campaign::{advance_in, drive, init, DriveOptions, Status};
use crate::config::CampaignFile;
use crate::sim::synthetic::SyntheticCase;

/// A cold start on `case` driven from outside (no executor), budget 60 % of the ranges' tops.
fn outside_cold_start(case: &SyntheticCase, tmp: &Path) -> (PathBuf, State) {
    let tops: u32 = case
        .components
        .iter()
        .map(|c| c.standalone.last_nproc())
        .sum();
    let budget = tops * 6 / 10;
    let original: Vec<u32> = case
        .components
        .iter()
        .map(|c| (c.standalone.last_nproc() / 4).max(c.standalone.first_nproc()))
        .collect();
    let mut file = CampaignFile::synthetic_cold_start(case, tmp, budget, &original).unwrap();
    file.executor = None;
    file.step = Some(4);
    let dir = tmp.join("campaign");
    init(&dir, &file, tmp, false).unwrap();
    let state = State::load(&dir).unwrap();
    (dir, state)
}

/// Records the last iteration's runs at the case's true coupled-mode speeds (1 % noise).
fn measure_last(case: &SyntheticCase, state: &mut State) {
    measure_last_scattered(case, state, 0.01);
}

/// [`measure_last`] with each run off the truth by up to `scatter` (a share) either way.
fn measure_last_scattered(case: &SyntheticCase, state: &mut State, scatter: f64) {
    let last = state.iterations.len() - 1;
    for test in &mut state.iterations[last].tests {
        for run in test.runs.iter_mut().filter(|r| !r.state.is_terminal()) {
            let h = crate::executor::fnv1a(run.id.bytes().chain(test.test.to_le_bytes()));
            let noise = 1.0 + scatter * ((h % 2001) as f64 / 1000.0 - 1.0);
            let speeds: Vec<f64> = case
                .components
                .iter()
                .zip(&test.nproc)
                .map(|(c, &p)| c.coupled_sypd(p) * noise)
                .collect();
            run.state = RunState::Done;
            run.metrics = Some(coupled_metrics(&test.nproc, &speeds));
        }
    }
}

#[test]
fn the_first_iteration_is_the_original_and_the_coupled_first_series() {
    let case = SyntheticCase::generate(12, 2);
    let tmp = tempfile::tempdir().unwrap();
    let (_, state) = outside_cold_start(&case, tmp.path());
    assert!(state.is_cold_start() && !state.is_scaling());
    assert_eq!(state.phase(), Some(ColdStartPhase::Scaling));
    assert_eq!(state.tests[0].origin, "original");
    assert!(state.tests[1..].iter().all(|t| t.origin == "scaling"));
    let first = &state.iterations[0];
    assert_eq!(first.phase, Some(ColdStartPhase::Scaling));
    // Four counts per component by default, one run each.
    assert!(first.tests.len() >= 4 && first.tests.iter().all(|t| t.runs.len() == 1));
    // Wider moves than a balancing campaign's 2 x step.
    assert!(
        state.settings.initial_step > 8,
        "{}",
        state.settings.initial_step
    );
    let status = Status::from_state(&state, tmp.path());
    assert!(status.best.is_none());
    assert!(status
        .cold_start
        .unwrap()
        .phase
        .starts_with("phase scaling"));
}

#[test]
fn the_model_is_not_firm_before_three_counts_per_component() {
    let case = SyntheticCase::generate(12, 2);
    let tmp = tempfile::tempdir().unwrap();
    let (_, mut state) = outside_cold_start(&case, tmp.path());
    // Only the first two tests measured: two counts per component.
    for test in &mut state.iterations[0].tests[2..] {
        test.runs.clear();
    }
    measure_last(&case, &mut state);
    let why = firmness(&state).unwrap_err();
    assert!(
        why.contains(&format!("needs {MIN_COUNTS}")) && why.contains("IFS"),
        "{why}"
    );
}

/// Cold starts on random truths to the end: the scaling phase comes first and the switch to
/// balancing happens once, when the model is firm (or the design has nothing left); every
/// test carries its reason, and the status has a best only once it balances.
#[test]
fn cold_starts_switch_once_and_end_with_a_best() {
    for seed in [2u64, 5, 9] {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = outside_cold_start(&case, tmp.path());
        let mut switched_at = None;
        let mut iterations = 0;
        while !state.is_done() {
            measure_last(&case, &mut state);
            let before = state.phase();
            let firm = firmness(&state);
            advance_in(&mut state, &dir).unwrap();
            let after = state.phase();
            if before == Some(ColdStartPhase::Scaling) && after == Some(ColdStartPhase::Balancing) {
                assert!(switched_at.is_none(), "seed {seed}: switched twice");
                switched_at = Some(state.iterations.len() - 1);
                let last = &state.iterations[state.iterations.len() - 2];
                let reason = match &last.tests[0].decision.as_ref().unwrap().outcome {
                    Outcome::Finished { reason } => reason.clone(),
                    other => panic!("{other:?}"),
                };
                assert!(reason.starts_with("scaling phase over: "), "{reason}");
                if let Ok(why) = firm {
                    assert!(reason.contains(&why), "{reason}");
                }
                let status = Status::from_state(&state, &dir);
                assert!(status.cold_start.unwrap().normalisation.is_some());
            }
            if before == Some(ColdStartPhase::Balancing) {
                assert_eq!(after, before, "seed {seed}: back to scaling");
            }
            iterations += 1;
            assert!(iterations < 80, "seed {seed}: no end");
        }
        let at = switched_at.unwrap_or_else(|| panic!("seed {seed}: never balanced"));
        for (k, it) in state.iterations.iter().enumerate() {
            for t in &it.tests {
                let reason = t.reason.as_deref().unwrap();
                assert_eq!(
                    reason.starts_with("scaling: "),
                    k < at,
                    "seed {seed}: {reason}"
                );
            }
        }
        let status = Status::from_state(&state, &dir);
        assert!(status.best.is_some(), "seed {seed}");
        // Over: what it came to, not what it does next.
        let phase = status.cold_start.unwrap().phase;
        assert_eq!(
            phase,
            format!("phase balancing, ended: the model learnt from every coupled run guided the runs since iteration {at}"),
            "seed {seed}"
        );
    }
}

/// A model that never gets firm still leads to an answer: with every run scattered 25 % either
/// way around the truth, far more than the model's scaling laws explain, its band at its best
/// stays wide, yet every scaling run is measured. The scaling phase stops at its run budget
/// (plus the one run at the model's best it may make past it), the guided strategy balances
/// with what the model knows, and the campaign ends with a best.
#[test]
fn a_cold_start_whose_model_never_gets_firm_ends_with_a_best() {
    use crate::campaign::strategy::cold_start::{
        scaling_run_budget, scaling_runs, PROBES_PAST_BUDGET,
    };
    for seed in [12u64, 21] {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = outside_cold_start(&case, tmp.path());
        let mut iterations = 0;
        let mut switch = None;
        while !state.is_done() {
            measure_last_scattered(&case, &mut state, 0.25);
            if state.phase() == Some(ColdStartPhase::Scaling) {
                if let Ok(why) = firmness(&state) {
                    panic!("seed {seed}: the model got firm ({why}); scatter the runs more");
                }
            }
            let before = state.phase();
            advance_in(&mut state, &dir).unwrap();
            if before == Some(ColdStartPhase::Scaling)
                && state.phase() == Some(ColdStartPhase::Balancing)
            {
                let last = &state.iterations[state.iterations.len() - 2];
                switch = match &last.tests[0].decision.as_ref().unwrap().outcome {
                    Outcome::Finished { reason } => Some(reason.clone()),
                    other => panic!("seed {seed}: {other:?}"),
                };
            }
            iterations += 1;
            assert!(iterations < 80, "seed {seed}: no end");
        }
        let switch = switch.unwrap_or_else(|| panic!("seed {seed}: never balanced"));
        assert!(
            switch.contains("the model not firm") && switch.contains("balancing with what"),
            "seed {seed}: {switch}"
        );
        assert!(
            scaling_runs(&state) <= scaling_run_budget(&state) + PROBES_PAST_BUDGET,
            "seed {seed}: {} scaling runs",
            scaling_runs(&state)
        );
        let status = Status::from_state(&state, &dir);
        assert!(status.best.is_some(), "seed {seed}: no best");
        assert_eq!(status.state_label(), "done", "seed {seed}");
    }
}

/// A slow run (every component a third as fast, as on a bad node) is left out of what the
/// model learns from; a dip of one component in another run is kept, the other components'
/// speeds in it agreeing with their curves.
#[test]
fn slow_runs_are_left_out_of_the_model_and_dips_of_one_component_kept() {
    use crate::campaign::strategy::cold_start::{slow_runs, trusted};
    let case = SyntheticCase::generate(12, 2);
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) = outside_cold_start(&case, tmp.path());
    let mut iterations = 0;
    while state
        .iterations
        .iter()
        .filter(|it| it.phase == Some(ColdStartPhase::Balancing))
        .count()
        < 2
    {
        measure_last(&case, &mut state);
        assert!(slow_runs(&state).is_empty(), "{:?}", slow_runs(&state));
        advance_in(&mut state, &dir).unwrap();
        assert!(!state.is_done(), "ended before two balancing iterations");
        iterations += 1;
        assert!(iterations < 40, "no balancing");
    }
    measure_last(&case, &mut state);
    let last = state.iterations.len() - 1;
    let tests = &mut state.iterations[last].tests;
    assert!(tests.len() >= 2, "{} tests", tests.len());
    let remeasure = |test: &mut crate::campaign::state::TestIteration, factors: [f64; 2]| {
        let speeds: Vec<f64> = case
            .components
            .iter()
            .zip(&test.nproc)
            .zip(factors)
            .map(|((c, &p), f)| c.coupled_sypd(p) * f)
            .collect();
        test.runs[0].metrics = Some(coupled_metrics(&test.nproc, &speeds));
        test.runs[0].id.clone()
    };
    let slow = remeasure(&mut tests[0], [1.0 / 3.0, 1.0 / 3.0]);
    let dip = remeasure(&mut tests[1], [0.6, 1.0]);
    let left_out = slow_runs(&state);
    assert!(left_out.contains(&slow), "{left_out:?}");
    assert!(!left_out.contains(&dip), "{left_out:?}");
    let kept = trusted(&state);
    let run_of = |s: &State, id: &str| {
        s.iterations
            .iter()
            .flat_map(|it| &it.tests)
            .flat_map(|t| &t.runs)
            .find(|r| r.id == id)
            .cloned()
            .unwrap()
    };
    assert!(run_of(&kept, &slow).metrics.is_none());
    assert_eq!(run_of(&kept, &dip), run_of(&state, &dip));
}

/// What a benchmark does: the library's cold-start file for a synthetic case, `init` and
/// `drive` on the stand-in model, to a best configuration.
#[test]
fn a_synthetic_cold_start_is_driven_from_rust_to_a_best() {
    let case = SyntheticCase::generate(31, 2);
    let tmp = tempfile::tempdir().unwrap();
    let tops: u32 = case
        .components
        .iter()
        .map(|c| c.standalone.last_nproc())
        .sum();
    let original: Vec<u32> = case
        .components
        .iter()
        .map(|c| (c.standalone.last_nproc() / 4).max(c.standalone.first_nproc()))
        .collect();
    let mut file =
        CampaignFile::synthetic_cold_start(&case, tmp.path(), tops * 6 / 10, &original).unwrap();
    file.step = Some(4);
    let sim = file.executor.as_mut().unwrap().sim.as_mut().unwrap();
    sim.steps = Some(12);
    sim.compression = Some(0.0);
    let dir = tmp.path().join("campaign");
    init(&dir, &file, tmp.path(), false).unwrap();
    drive(&dir, &DriveOptions::default(), &AtomicBool::new(false)).unwrap();
    let state = State::load(&dir).unwrap();
    assert!(state.is_done());
    assert_eq!(state.phase(), Some(ColdStartPhase::Balancing));
    assert!(Status::from_state(&state, &dir).best.is_some());
}

/// The balancing never starts far from the model's answer: when the model is firm (or the
/// design has nothing left) but no measured configuration is within `initial_step` PEs of the
/// model's best, the cold start measures that best first, as one more scaling run. At the
/// switch the model's best is then within `initial_step` of a measured configuration.
#[test]
fn the_balancing_starts_next_to_the_models_best() {
    use crate::campaign::strategy::cold_start::distance_to_measured;
    use crate::campaign::strategy::guided::landscape::Landscape;
    let mut probes = 0;
    for seed in [2u64, 5, 9, 19] {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = outside_cold_start(&case, tmp.path());
        let mut iterations = 0;
        while !state.is_done() {
            measure_last(&case, &mut state);
            let before = state.clone();
            advance_in(&mut state, &dir).unwrap();
            let new = &state.iterations[state.iterations.len() - 1];
            probes += new
                .tests
                .iter()
                .filter(|t| {
                    t.reason
                        .as_deref()
                        .is_some_and(|r| r.starts_with("scaling: the model's best"))
                })
                .count();
            if before.phase() == Some(ColdStartPhase::Scaling)
                && state.phase() == Some(ColdStartPhase::Balancing)
            {
                let view = Landscape::new(&before, &[None, None]).unwrap();
                let best = view.predicted_best.unwrap();
                let nearest = distance_to_measured(&before, &best).unwrap();
                assert!(
                    nearest <= before.settings.initial_step,
                    "seed {seed}: the balancing starts {nearest} PEs from the model's best {best:?}"
                );
            }
            iterations += 1;
            assert!(iterations < 80, "seed {seed}: no end");
        }
    }
    assert!(probes > 0, "no case measured the model's best first");
}

/// The run at the model's best is a scaling run: it is not made once the scaling phase's
/// `max_runs` is spent, and its reason says how far the best is from what was measured.
#[test]
fn the_run_at_the_models_best_keeps_to_the_scaling_budget() {
    use crate::campaign::strategy::cold_start::answer_probe;
    let mut found = false;
    for seed in [2u64, 5, 9, 19] {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = outside_cold_start(&case, tmp.path());
        let mut iterations = 0;
        while !state.is_done() && state.phase() == Some(ColdStartPhase::Scaling) {
            measure_last(&case, &mut state);
            if let Some(probe) = answer_probe(&state) {
                let reason = probe.reason.unwrap();
                assert!(
                    reason.contains("PEs from every measured configuration"),
                    "{reason}"
                );
                let runs: u32 = state.run_count() as u32;
                let mut spent = state.clone();
                spent.settings.scaling.as_mut().unwrap().max_runs = Some(runs);
                assert!(answer_probe(&spent).is_none(), "seed {seed}");
                spent.settings.scaling.as_mut().unwrap().max_runs = Some(runs + 1);
                assert!(answer_probe(&spent).is_some(), "seed {seed}");
                found = true;
                break;
            }
            advance_in(&mut state, &dir).unwrap();
            iterations += 1;
            assert!(iterations < 80, "seed {seed}: no end");
        }
    }
    assert!(found, "no case wanted a run at the model's best");
}

#[test]
fn a_cold_start_whose_every_run_failed_stops_after_its_first_iteration() {
    let case = SyntheticCase::generate(12, 2);
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) = outside_cold_start(&case, tmp.path());
    let first_runs: usize = state.iterations[0].tests.iter().map(|t| t.runs.len()).sum();
    for test in &mut state.iterations[0].tests {
        for run in &mut test.runs {
            run.state = RunState::Failed;
        }
    }
    advance_in(&mut state, &dir).unwrap();
    assert!(state.is_done(), "{} iterations", state.iterations.len());
    assert_eq!(state.iterations.len(), 1);
    let runs: usize = state.run_count();
    assert_eq!(runs, first_runs);
    let reasons: Vec<String> = state.iterations[0]
        .tests
        .iter()
        .filter_map(|t| match &t.decision.as_ref()?.outcome {
            Outcome::Failed { reason } | Outcome::Finished { reason } => Some(reason.clone()),
            Outcome::Continue => None,
        })
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("every run of the campaign failed") && r.contains("iter-00/test-")),
        "{reasons:?}"
    );
    // Status, its JSON and the app's best line (which shows the phase as given) say what
    // happened, and promise no balancing.
    let status = Status::from_state(&state, &dir);
    assert_eq!(status.state_label(), "done: no successful run");
    let phase = &status.cold_start.as_ref().unwrap().phase;
    assert_eq!(phase, "phase scaling, ended: no coupled run was measured");
    let json = serde_json::to_value(&status).unwrap();
    assert_eq!(json["cold_start"]["phase"], phase.as_str());
    let text = status.render(&crate::campaign::DriverState::Done, &dir, 200);
    assert!(
        text.contains("cold start, phase scaling, ended: no coupled run was measured"),
        "{text}"
    );
    assert!(!text.contains("balancing starts"), "{text}");
    assert!(text.contains("best: none, no run succeeded"), "{text}");
    assert!(!text.contains("nothing measured yet"), "{text}");
    // Cancelled in the scaling phase after some runs were measured: the counts, no promise.
    let case = SyntheticCase::generate(12, 2);
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) = outside_cold_start(&case, tmp.path());
    measure_last(&case, &mut state);
    state.cancelled = true;
    let phase = Status::from_state(&state, &dir).cold_start.unwrap().phase;
    assert!(
        phase.starts_with("phase scaling, cancelled before any balancing (PE counts measured: ")
            && !phase.contains("balancing starts"),
        "{phase}"
    );
}
