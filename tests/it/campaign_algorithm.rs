//! Every decision of Algorithm 1 (the guide's `method/algorithm1.md`) checked on a scripted
//! campaign with synthetic measurements: the donor waits most, the step halves when the
//! direction reverses and while a configuration was already run, moves snap to the allowed
//! list and stop at the limits, a test finishes once its step falls below `minimum_step`, a
//! test whose runs all failed stops as failed, failed runs are never averaged in, and the best
//! configuration is the best FN over every measured configuration.
//!
//! The expected trajectory below was worked out by hand from the rules, not by running the code.

use std::collections::BTreeMap;
use std::path::PathBuf;

use autolb::campaign::state::{
    FrozenComponent, FrozenSettings, Iteration, Outcome, Run, TestIteration, TestRecord,
    STATE_FORMAT,
};
use autolb::campaign::{self, RunMetrics, RunState, State, TestState};

const A: usize = 0;
const B: usize = 1;

fn component(name: &str, allowed: Option<Vec<u32>>) -> FrozenComponent {
    FrozenComponent {
        name: name.into(),
        timing_name: name.into(),
        curve: PathBuf::from(format!("curves/{name}.csv")),
        low: 100,
        high: 600,
        allowed,
        threads: 1,
    }
}

fn pending_test(iteration: u32, test: u32, nproc: [u32; 2], step: u32) -> TestIteration {
    TestIteration {
        test,
        nproc: nproc.to_vec(),
        step,
        runs: (1..=2)
            .map(|r| Run {
                id: campaign::state::run_id(iteration, test, r),
                repetition: r,
                state: RunState::Pending,
                ticket: None,
                attempts: 0,
                metrics: None,
                failure: None,
                started_at: None,
                ended_at: None,
            })
            .collect(),
        decision: None,
        reason: None,
        component: None,
    }
}

fn initial_state() -> State {
    let b_allowed = vec![
        100, 150, 190, 250, 300, 320, 330, 340, 360, 370, 380, 400, 500,
    ];
    let starts = [[400, 300], [300, 400], [540, 250]];
    State {
        format: STATE_FORMAT,
        settings: FrozenSettings {
            max_nproc: 800,
            extra_pes: 0,
            tts_w: 0.5,
            initial_step: 40,
            minimum_step: 10,
            repetitions: 2,
            period_s: Some(2700.0),
            retries: 0,
            step: None,
            interp: None,
            top: None,
            cost_model: None,
            strategy: Default::default(),
            scaling: None,
            max_iterations: None,
            layout: None,
        },
        components: vec![component("A", None), component("B", Some(b_allowed))],
        executor: None,
        base_dir: PathBuf::from("/"),
        tests: (0..3)
            .map(|id| TestRecord {
                id,
                origin: format!("prediction #{}", id + 1),
            })
            .collect(),
        iterations: vec![Iteration {
            phase: None,
            normalisation: None,
            index: 0,
            tests: starts
                .iter()
                .enumerate()
                .map(|(t, &n)| pending_test(0, t as u32, n, 40))
                .collect(),
        }],
        cancelled: false,
        journal: Default::default(),
    }
}

/// Synthetic measurement: who waits (partial coupling costs) and how fast.
fn measured(partial: [f64; 2], sypd: f64, total: u32) -> RunMetrics {
    RunMetrics {
        sypd,
        chsy: 24.0 * f64::from(total) / sypd,
        coupling_cost: partial[0] + partial[1],
        partial_coupling_cost: partial.to_vec(),
    }
}

/// Ends every run of the current iteration: `script[test] = Some((partial, sypd))` measures
/// both repetitions (the second 0.2 SYPD slower), `None` fails both. Repetition 2 of the test
/// in `fail_second` fails with a wild SYPD that must not be averaged in.
fn finish_iteration(
    state: &mut State,
    script: &BTreeMap<u32, Option<([f64; 2], f64)>>,
    fail_second: Option<u32>,
) {
    let it = state.iterations.last_mut().unwrap();
    for test in &mut it.tests {
        let total: u32 = test.nproc.iter().sum();
        for run in &mut test.runs {
            match script[&test.test] {
                Some((partial, sypd))
                    if !(fail_second == Some(test.test) && run.repetition == 2) =>
                {
                    let s = if run.repetition == 2 {
                        sypd - 0.2
                    } else {
                        sypd
                    };
                    run.state = RunState::Done;
                    run.metrics = Some(measured(partial, s, total));
                }
                _ => {
                    run.state = RunState::Failed;
                    run.failure = Some("crashed".into());
                }
            }
        }
    }
}

fn decision(state: &State, iteration: usize, test: u32) -> &campaign::state::Decision {
    state.iterations[iteration]
        .tests
        .iter()
        .find(|t| t.test == test)
        .unwrap()
        .decision
        .as_ref()
        .unwrap()
}

fn tests_of(state: &State, iteration: usize) -> Vec<(u32, Vec<u32>, u32)> {
    state.iterations[iteration]
        .tests
        .iter()
        .map(|t| (t.test, t.nproc.clone(), t.step))
        .collect()
}

#[test]
fn algorithm_1_decision_by_decision() {
    let mut state = initial_state();
    // Nothing is decided while runs are pending.
    assert_eq!(campaign::advance(&mut state), campaign::Advance::default());

    // Iteration 0.
    finish_iteration(
        &mut state,
        &BTreeMap::from([
            (0, Some(([0.30, 0.05], 10.0))),
            (1, Some(([0.01, 0.30], 10.5))),
            (2, Some(([0.01, 0.20], 9.0))),
        ]),
        None,
    );
    let a = campaign::advance(&mut state);
    assert_eq!(a.new_iteration, Some(1));
    // t0: A waits most -> A gives 40 to B.
    let d = decision(&state, 0, 0);
    assert_eq!((d.donor, d.recipient, d.step), (Some(A), Some(B), 40));
    // t1: B waits most -> B gives 40 to A.
    let d = decision(&state, 0, 1);
    assert_eq!((d.donor, d.recipient, d.step), (Some(B), Some(A), 40));
    // t2: B gives; B 250 - 40 = 210 snaps to the allowed 190; A 540 + 40 = 580.
    let d = decision(&state, 0, 2);
    assert_eq!((d.donor, d.recipient), (Some(B), Some(A)));
    assert_eq!(
        tests_of(&state, 1),
        vec![
            (0, vec![360, 340], 40),
            (1, vec![340, 360], 40),
            (2, vec![580, 190], 40),
        ]
    );

    // Iteration 1; repetition 2 of t0 fails (and is not averaged in).
    finish_iteration(
        &mut state,
        &BTreeMap::from([
            (0, Some(([0.20, 0.10], 10.8))),
            (1, Some(([0.02, 0.20], 10.9))),
            (2, Some(([0.02, 0.30], 9.5))),
        ]),
        Some(0),
    );
    campaign::advance(&mut state);
    // t0: A still gives, no reversal: 320 / 380.
    assert_eq!(decision(&state, 1, 0).next, Some(vec![320, 380]));
    // t1: B still gives: 380 / 320.
    assert_eq!(decision(&state, 1, 1).next, Some(vec![380, 320]));
    // t2: A 580 + 40 clamps to its limit 600; B 190 - 40 = 150 (allowed).
    assert_eq!(decision(&state, 1, 2).next, Some(vec![600, 150]));
    assert_eq!(decision(&state, 1, 2).step, 40);

    // Iteration 2: both t0 and t1 reverse.
    finish_iteration(
        &mut state,
        &BTreeMap::from([
            (0, Some(([0.05, 0.20], 10.2))),
            (1, Some(([0.30, 0.01], 10.1))),
            (2, Some(([0.01, 0.40], 8.0))),
        ]),
        None,
    );
    campaign::advance(&mut state);
    // t0: B (last recipient) now gives: reversed, 40 -> 20 gives 340/360, already run by t1
    // in iteration 1: 20 -> 10 gives 330/370.
    let d = decision(&state, 2, 0);
    assert_eq!((d.donor, d.recipient, d.step), (Some(B), Some(A), 10));
    assert_eq!(d.next, Some(vec![330, 370]));
    assert_eq!(d.notes.len(), 2, "{:?}", d.notes);
    assert!(d.notes[0].contains("reversed") && d.notes[1].contains("already run"));
    // t1: A (last recipient) gives: reversed, 20 gives 360/340 (run by t0): 10 gives 370/330.
    let d = decision(&state, 2, 1);
    assert_eq!(
        (d.donor, d.step, d.next.clone()),
        (Some(A), 10, Some(vec![370, 330]))
    );
    // t2: A is at its limit 600: no move at 40, 20, 10; 5 < 10 finishes the test.
    let d = decision(&state, 2, 2);
    assert_eq!((d.step, d.next.clone()), (5, None));
    assert!(matches!(d.outcome, Outcome::Finished { .. }));
    assert_eq!(d.notes.len(), 3, "{:?}", d.notes);
    assert!(d.notes.iter().all(|n| n.contains("fits")), "{:?}", d.notes);
    assert_eq!(
        tests_of(&state, 3),
        vec![(0, vec![330, 370], 10), (1, vec![370, 330], 10)]
    );

    // Iteration 3: t0 measured, t1's runs all fail.
    finish_iteration(
        &mut state,
        &BTreeMap::from([(0, Some(([0.10, 0.12], 12.0))), (1, None)]),
        None,
    );
    let a = campaign::advance(&mut state);
    assert_eq!(a.new_iteration, None);
    // t0: B gives, last recipient A: no reversal; step 10 gives 340/360 (already run), 5 < 10.
    let d = decision(&state, 3, 0);
    assert_eq!((d.donor, d.step, d.next.clone()), (Some(B), 5, None));
    assert!(matches!(d.outcome, Outcome::Finished { .. }));
    // t1: every run failed.
    assert!(matches!(
        decision(&state, 3, 1).outcome,
        Outcome::Failed { .. }
    ));
    assert!(state.is_done());

    // The view: states, donor names, means without the failed run, the best over everything.
    let dir = tempfile::tempdir().unwrap();
    let status = campaign::Status::from_state(&state, dir.path());
    assert_eq!(status.state, campaign::Phase::Done);
    let row = |i: usize, t: u32| {
        status.iterations[i]
            .tests
            .iter()
            .find(|r| r.test == t)
            .unwrap()
            .clone()
    };
    assert_eq!(row(0, 0).state, TestState::Done);
    assert_eq!(row(0, 0).donor.as_deref(), Some("A"));
    assert_eq!(row(0, 0).recipient.as_deref(), Some("B"));
    assert_eq!(row(2, 2).state, TestState::Finished);
    assert_eq!(row(3, 1).state, TestState::Failed);
    assert_eq!(row(3, 1).sypd, None);
    assert_eq!(row(3, 1).fittingness, None);
    // Iteration 1, t0: only repetition 1 (10.8) counts.
    assert_eq!(row(1, 0).sypd, Some(10.8));
    // Elsewhere the mean of both repetitions.
    assert!((row(0, 1).sypd.unwrap() - 10.4).abs() < 1e-12);
    // Best: every configuration of t0/t1 has 700 PEs, so the fastest wins: 330/370 at 11.9
    // mean SYPD. (t2 configurations use more or fewer PEs but are much slower.)
    let best = status.best.clone().unwrap();
    assert_eq!(best.nproc.0, vec![("A".into(), 330), ("B".into(), 370)]);
    assert_eq!((best.iteration, best.test), (3, 0));
    assert!((best.sypd - 11.9).abs() < 1e-12);
    // FN is normalised over all measured configurations: the best has the largest, the
    // slowest and most expensive (t2 in iteration 2: 8 and 7.8 SYPD on 750 PEs) 0.
    let fns: Vec<f64> = status
        .iterations
        .iter()
        .flat_map(|it| it.tests.iter().filter_map(|t| t.fittingness))
        .collect();
    assert_eq!(fns.len(), 10);
    assert!(fns.iter().all(|&f| f <= best.fittingness));
    assert_eq!(row(2, 2).fittingness, Some(0.0));
}

#[test]
fn a_viewer_can_overlay_a_measurement_and_recompute() {
    let state = initial_state();
    let dir = tempfile::tempdir().unwrap();
    let mut status = campaign::Status::from_state(&state, dir.path());
    assert!(status.best.is_none());
    let components = status.components.clone();
    status
        .run_mut("i00-t01-r1")
        .unwrap()
        .set_measured(&measured([0.1, 0.2], 11.0, 700), &components);
    status.recompute();
    let row = &status.iterations[0].tests[1];
    // One run measured, the other not started: the test waits, as the counts say.
    assert_eq!(row.state, TestState::Pending);
    assert_eq!(status.counts.running, 0);
    assert_eq!(row.sypd, Some(11.0));
    assert_eq!(status.best.as_ref().unwrap().test, 1);
    assert_eq!(status.counts.done, 1);
}

mod properties {
    use autolb::campaign::state::Outcome;
    use autolb::campaign::strategy::algorithm1::{decide, move_pes, DecisionInput, Limits};
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// Two or three components with limits, optional allowed lists, a feasible current
    /// configuration, partial costs, steps, a budget and some configurations already run.
    /// Limits, current configuration, partial costs, step, minimum step, budget, previous
    /// direction, configurations already run.
    type Case = (
        Vec<Limits>,
        Vec<u32>,
        Vec<f64>,
        u32,
        u32,
        u32,
        Option<(usize, usize)>,
        Vec<Vec<u32>>,
    );

    fn case() -> impl Strategy<Value = Case> {
        (2usize..=3)
            .prop_flat_map(|n| {
                (
                    proptest::collection::vec(
                        (
                            10u32..200,
                            50u32..400,
                            proptest::option::of(proptest::collection::btree_set(1u32..700, 1..12)),
                            0.0f64..1.0,
                        ),
                        n,
                    ),
                    1u32..120,
                    1u32..40,
                    0u32..300,
                    proptest::option::of((0..n, 0..n)),
                    proptest::collection::vec(proptest::collection::vec(1u32..700, n), 0..6),
                )
            })
            .prop_filter_map(
                "a feasible start",
                |(comps, step, min, slack, prev, seen)| {
                    let mut limits = Vec::new();
                    let mut nproc = Vec::new();
                    let mut partial = Vec::new();
                    for (low, width, allowed, cost) in comps {
                        let high = low + width;
                        let allowed: Option<Vec<u32>> = allowed.map(|s| s.into_iter().collect());
                        let start = match &allowed {
                            Some(list) => *list.iter().find(|p| (low..=high).contains(p))?,
                            None => low + width / 2,
                        };
                        limits.push(Limits { low, high, allowed });
                        nproc.push(start);
                        partial.push(cost);
                    }
                    let budget = nproc.iter().sum::<u32>() + slack;
                    let prev = prev.filter(|(d, r)| d != r);
                    Some((
                        limits,
                        nproc,
                        partial,
                        step.max(min),
                        min,
                        budget,
                        prev,
                        seen,
                    ))
                },
            )
    }

    proptest! {
        #![proptest_config(crate::common::proptest_default())]
        #[test]
        fn every_decision_follows_algorithm_1(
            (limits, nproc, partial, step, min, budget, prev, seen) in case()
        ) {
            let names: Vec<String> = (0..nproc.len()).map(|i| format!("C{i}")).collect();
            let seen: HashSet<Vec<u32>> = seen.into_iter().chain([nproc.clone()]).collect();
            let d = decide(
                &DecisionInput {
                    nproc: &nproc,
                    step,
                    previous: prev,
                    partial: Some(&partial),
                    minimum_step: min,
                    limits: &limits,
                    max_nproc: budget,
                    names: &names,
                },
                &|c| seen.contains(c),
            );
            // Donor: largest partial coupling cost; recipient: smallest of the others.
            let (donor, recipient) = (d.donor.unwrap(), d.recipient.unwrap());
            prop_assert!(partial.iter().all(|&v| v <= partial[donor]));
            prop_assert!(donor != recipient);
            prop_assert!(partial.iter().enumerate().all(|(i, &v)| i == donor || v >= partial[recipient]));
            // Halving on reversal, then while nothing new fits: the chain of steps tried.
            let reversed = prev.is_some_and(|(_, r)| r == donor);
            let mut s = if reversed { step / 2 } else { step };
            while s >= min && s > 0 {
                match move_pes(&nproc, donor, recipient, s, &limits, budget) {
                    Some(next) if !seen.contains(&next) => break,
                    _ => s /= 2,
                }
            }
            prop_assert_eq!(d.step, s);
            match (&d.outcome, &d.next) {
                (Outcome::Continue, Some(next)) => {
                    prop_assert!(d.step >= min);
                    prop_assert!(!seen.contains(next));
                    prop_assert!(next[donor] < nproc[donor] && next[recipient] > nproc[recipient]);
                    for (i, (&p, l)) in next.iter().zip(&limits).enumerate() {
                        if i != donor && i != recipient {
                            prop_assert_eq!(p, nproc[i]);
                            continue;
                        }
                        prop_assert!((l.low..=l.high).contains(&p));
                        if let Some(list) = &l.allowed {
                            prop_assert!(list.contains(&p));
                        }
                    }
                    prop_assert!(next.iter().sum::<u32>() <= budget);
                    // Snapped to the nearest feasible count on the right side of the current.
                    for (i, sign) in [(donor, -1i64), (recipient, 1i64)] {
                        let l = &limits[i];
                        let current = i64::from(nproc[i]);
                        let target = current + sign * i64::from(d.step);
                        let side = |p: i64| if sign < 0 { p < current } else { p > current };
                        let options: Vec<i64> = match &l.allowed {
                            Some(list) => list.iter().map(|&p| i64::from(p)).collect(),
                            None => (i64::from(l.low)..=i64::from(l.high)).collect(),
                        };
                        let nearest = options
                            .into_iter()
                            .filter(|&p| side(p) && p >= i64::from(l.low) && p <= i64::from(l.high))
                            .map(|p| (p - target).abs())
                            .min();
                        prop_assert_eq!(Some((i64::from(next[i]) - target).abs()), nearest);
                    }
                }
                (Outcome::Finished { .. }, None) => prop_assert!(d.step < min || d.step == 0),
                other => prop_assert!(false, "unexpected {:?}", other),
            }
        }
    }
}
