//! The fast search must return exactly what the naive enumeration returns: top N, counts and
//! normalisation bounds, on random curves small enough to enumerate.

use autolb::curve::{Curve, Point};
use autolb::interp::Method;
use autolb::predict::{naive, ComponentInput, Problem, Settings};
use proptest::prelude::*;

/// A random curve: 2..6 points with distinct PE counts, SYPD in a small set of values so that
/// ties between components (the hard case for bottleneck grouping) happen often.
fn curve_strategy(name: &'static str) -> impl Strategy<Value = Curve> {
    (
        proptest::collection::btree_set(1u32..120, 2..6),
        proptest::collection::vec(1u32..8, 6),
    )
        .prop_map(move |(nprocs, speeds)| {
            let points: Vec<Point> = nprocs
                .iter()
                .zip(speeds)
                .map(|(&nproc, s)| Point {
                    nproc,
                    sypd: f64::from(s) * 0.5,
                })
                .collect();
            Curve::from_points(name, "random", &points).expect("valid by construction")
        })
}

fn component_strategy(name: &'static str) -> impl Strategy<Value = ComponentInput> {
    (
        curve_strategy(name),
        proptest::option::of(proptest::collection::vec(1u32..120, 1..12)),
    )
        .prop_map(|(curve, allowed)| ComponentInput {
            curve,
            allowed,
            min_nproc: None,
            max_nproc: None,
        })
}

fn problem_strategy() -> impl Strategy<Value = (Vec<ComponentInput>, Settings)> {
    let names = ["A", "B", "C", "D"];
    (1usize..=4)
        .prop_flat_map(move |k| {
            let comps: Vec<_> = names[..k].iter().map(|n| component_strategy(n)).collect();
            (
                comps,
                1u32..400,
                1u32..9,
                prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0],
                1usize..8,
                prop_oneof![
                    Just(Method::Linear),
                    Just(Method::Quadratic),
                    Just(Method::Pchip)
                ],
                prop_oneof![Just(0u32), 0u32..20],
            )
        })
        .prop_map(|(comps, max_nproc, step, tts_w, top, interp, extra_pes)| {
            (
                comps,
                Settings {
                    max_nproc,
                    step,
                    tts_w,
                    top,
                    interp,
                    extra_pes,
                },
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn fast_search_equals_naive_enumeration((inputs, settings) in problem_strategy()) {
        let Ok(problem) = Problem::new(&inputs, &settings) else {
            // Invalid problems (budget below the base case, no candidates) are errors for both.
            return Ok(());
        };
        let reference = naive::enumerate(&problem, settings.tts_w, settings.top);
        prop_assert_eq!(problem.candidates, reference.candidates);
        prop_assert_eq!(problem.considered, reference.considered);
        prop_assert_eq!(problem.sypd_bounds, reference.sypd_bounds);
        prop_assert_eq!(problem.chsy_bounds, reference.chsy_bounds);
        let fast = problem.rank(settings.tts_w, settings.top);
        prop_assert_eq!(fast.top, reference.top);
    }
}
