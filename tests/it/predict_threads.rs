//! Hybrid MPI/OpenMP components: the fast search over ranks and threads together must return
//! exactly what a naive enumeration of every (ranks, threads) option of every component finds,
//! built from the curves themselves, not from the search's merged candidates.

use std::num::NonZeroU32;

use crate::common;
use crate::common::predict::{curve_strategy, Speeds};
use autolb::curve::Curve;
use autolb::predict::{naive, ComponentInput, Problem, Settings};
use proptest::prelude::*;

/// A component measured at one to three thread counts in 1..=4, each its own random curve.
fn threaded_component(name: &'static str) -> impl Strategy<Value = ComponentInput> {
    proptest::collection::btree_set(1u32..=4, 1..=3).prop_flat_map(move |threads| {
        let curves: Vec<_> = threads
            .iter()
            .map(|&t| {
                curve_strategy(name, Speeds::Coarse)
                    .prop_map(move |c| c.with_threads(NonZeroU32::new(t).expect("t >= 1")))
            })
            .collect();
        curves.prop_map(|series: Vec<Curve>| {
            ComponentInput::threaded(series, None).expect("distinct thread counts")
        })
    })
}

/// A random problem of one to three threaded components, settings as the pure-MPI tests draw them.
pub(crate) fn threaded_problem() -> impl Strategy<Value = (Vec<ComponentInput>, Settings)> {
    common::predict::problem_of(1..=3, threaded_component)
}

proptest! {
    #![proptest_config(common::proptest_cases(400))]

    #[test]
    fn ranks_and_threads_search_equals_naive_enumeration((inputs, settings) in threaded_problem()) {
        let reference = naive::enumerate_ranks_threads(&inputs, &settings);
        let problem = Problem::new(&inputs, &settings);
        let (Ok(problem), Some(reference)) = (problem.as_ref(), reference.as_ref()) else {
            // Refused by one only when it is refused by both.
            prop_assert!(problem.is_err() && reference.is_none(), "{problem:?} / {reference:?}");
            return Ok(());
        };
        prop_assert_eq!(problem.configurations, reference.configurations);
        prop_assert_eq!(problem.considered, reference.considered);
        prop_assert_eq!(problem.sypd_bounds, reference.sypd_bounds);
        prop_assert_eq!(problem.cost_bounds, reference.cost_bounds);
        let fast = problem.rank(settings.tts_w, settings.top);
        prop_assert_eq!(&fast.top, &reference.top);
        // The merged candidates hold to the problem's own naive enumeration as well.
        common::predict::same_as_naive(problem, &settings)?;
    }
}

proptest! {
    // 10 001 TTS_w samples per case, as in the pure-MPI front's test.
    #![proptest_config(common::proptest_cases(64))]

    #[test]
    fn threaded_front_and_intervals_equal_brute_force((inputs, settings) in threaded_problem()) {
        if let Ok(problem) = Problem::new(&inputs, &settings) {
            crate::predict_front::check_problem(&problem)?;
        }
    }
}

fn curve(name: &str, threads: u32, points: &[(u32, f64)]) -> Curve {
    let points: Vec<autolb::curve::Point> = points
        .iter()
        .map(|&(nproc, sypd)| autolb::curve::Point { nproc, sypd })
        .collect();
    Curve::from_points(name, "t", &points)
        .unwrap()
        .with_threads(NonZeroU32::new(threads).unwrap())
}

#[test]
fn threads_pay_where_ranks_alone_cannot_and_cores_count_threads() {
    // OpenIFS stops scaling past 64 ranks at 1 thread; at 4 threads 32 ranks (128 cores) beat
    // it. NEMO is pure MPI.
    let oifs = ComponentInput::threaded(
        vec![
            curve("OIFS", 1, &[(16, 2.0), (64, 6.0), (128, 6.5)]),
            curve("OIFS", 4, &[(8, 3.0), (32, 9.0)]),
        ],
        None,
    )
    .unwrap();
    let nemo = ComponentInput::new(curve("NEMO", 1, &[(16, 3.0), (128, 12.0)]));
    let settings = Settings {
        max_nproc: 256,
        step: 8,
        tts_w: 1.0,
        top: 3,
        ..Settings::default()
    };
    let prediction = autolb::predict::predict(&[oifs.clone(), nemo.clone()], &settings).unwrap();
    let best = &prediction.top[0];
    assert_eq!(best.threads, [4, 1]);
    assert_eq!(best.ranks()[0] * 4, best.nproc[0]);
    assert!(best.nproc.iter().sum::<u32>() <= 256);
    assert!(best.sypd > 6.5, "{best:?}");
    // A node of 2 cores cannot hold a rank's 4 threads: only 1 thread is searched.
    let model = autolb::machine::CostModel {
        machine: Some(autolb::machine::Machine {
            cores_per_node: 2,
            placement: autolb::machine::Placement::Packed,
            extras_share_node: true,
            node_power_w: None,
        }),
        ..Default::default()
    };
    let small_nodes =
        autolb::predict::predict_billed(&[oifs.clone(), nemo], &settings, &model).unwrap();
    assert!(small_nodes.top.iter().all(|c| c.threads == [1, 1]));
    // With only threads the node cannot hold, the error says so.
    let only4 =
        ComponentInput::threaded(vec![curve("OIFS", 4, &[(8, 3.0), (32, 9.0)])], None).unwrap();
    let e = autolb::predict::predict_billed(&[only4], &settings, &model).unwrap_err();
    assert_eq!(
        e.to_string(),
        "OIFS: every thread count per rank (4) is more than the 2 cores of one node; a rank's \
         threads must share its node: allow fewer threads"
    );
}
