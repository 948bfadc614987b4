//! The fast search must return exactly what the naive enumeration returns: top N, counts and
//! normalisation bounds, on random curves small enough to enumerate.

use autolb::curve::{Curve, Point};
use autolb::interp::Method;
use autolb::machine::{CostKind, CostModel, Machine, Placement, Queue};
use autolb::predict::{naive, ComponentInput, PredictError, Problem, Settings};
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
    problem_strategy_of(1..=4)
}

/// Random problems of `components` components (a count from the range).
fn problem_strategy_of(
    components: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = (Vec<ComponentInput>, Settings)> {
    let names = ["A", "B", "C", "D"];
    components
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

/// A random machine, cost and queue table: node sizes small enough that rounding matters at
/// these PE counts, both placements, extras sharing or not, queues limited by cores, nodes or
/// wall time, chosen or not.
fn cost_model_strategy() -> impl Strategy<Value = CostModel> {
    let machine = (
        1u32..40,
        prop_oneof![Just(Placement::Packed), Just(Placement::PerComponent)],
        any::<bool>(),
        prop_oneof![Just(None), (100.0f64..900.0).prop_map(Some)],
    )
        .prop_map(
            |(cores_per_node, placement, extras_share_node, node_power_w)| Machine {
                cores_per_node,
                placement,
                extras_share_node,
                node_power_w,
            },
        );
    (
        proptest::option::of(machine),
        prop_oneof![
            Just(CostKind::CoreHours),
            Just(CostKind::NodeHours),
            Just(CostKind::Energy)
        ],
        proptest::collection::vec(queue_strategy(), 0..3),
        proptest::option::of(0usize..3),
    )
        .prop_map(|(machine, cost, queues, chosen)| cost_model(machine, cost, queues, chosen))
}

/// A queue limited by cores, nodes or wall time (or nothing), named later.
fn queue_strategy() -> impl Strategy<Value = Queue> {
    (
        proptest::option::of(1u32..500),
        proptest::option::of(1u32..30),
        proptest::option::of((1u32..6).prop_map(f64::from)),
    )
        .prop_map(|(max_nproc, max_nodes, min_sypd)| Queue {
            name: String::new(),
            max_nproc,
            max_nodes,
            // Walltime 24 h with chunk_years = min SYPD: the slowest SYPD allowed.
            max_walltime_h: min_sypd.map(|_| 24.0),
            chunk_years: min_sypd,
            partition: None,
            qos: None,
        })
}

/// The cost model of a machine (or none), a wished cost (core-hours where the machine cannot
/// bill it), queues named q0, q1, ... and the chosen one's number (ignored past the last).
fn cost_model(
    machine: Option<Machine>,
    cost: CostKind,
    mut queues: Vec<Queue>,
    chosen: Option<usize>,
) -> CostModel {
    for (k, q) in queues.iter_mut().enumerate() {
        q.name = format!("q{k}");
        if machine.is_none() {
            q.max_nodes = None;
        }
    }
    let cost = match (cost, &machine) {
        (CostKind::Energy, Some(m)) if m.node_power_w.is_some() => CostKind::Energy,
        (CostKind::CoreHours, _) | (CostKind::Energy, _) | (_, None) => CostKind::CoreHours,
        (k, Some(_)) => k,
    };
    let queue = chosen
        .filter(|&k| k < queues.len())
        .map(|k| format!("q{k}"));
    CostModel {
        machine,
        cost,
        queues,
        queue,
        ..CostModel::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Node rounding (both placements), node-hour and energy costs and queue limits keep the
    /// fast search exact.
    #[test]
    fn billed_search_equals_naive_enumeration(
        (inputs, settings) in problem_strategy(),
        model in cost_model_strategy(),
    ) {
        let problem = match Problem::billed(&inputs, &settings, &model) {
            Ok(p) => p,
            Err(PredictError::NothingFitsQueue(_)) => {
                // Then the naive enumeration must find nothing that fits either.
                let open = CostModel { queue: None, ..model.clone() };
                let Ok(all) = Problem::billed(&inputs, &settings, &open) else {
                    return Ok(());
                };
                let queue = model.chosen_queue().expect("only a chosen queue can exclude all");
                let sums = naive::enumerate(&all, settings.tts_w, usize::MAX);
                prop_assert!(sums.top.iter().all(|c| !model.fits_queue(
                    queue, &c.nproc, settings.extra_pes, c.sypd)));
                return Ok(());
            }
            Err(_) => return Ok(()),
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

/// A machine that gives each component its own whole nodes, with a cost it can bill and random
/// queues: every two-component problem under it goes through the pair sweep of
/// `src/predict/placed.rs` (budget and queue as binary searches, the weight's extremes at the
/// ends of the kept candidates).
fn per_component_model_strategy() -> impl Strategy<Value = CostModel> {
    let machine = (
        1u32..40,
        any::<bool>(),
        prop_oneof![Just(None), (100.0f64..900.0).prop_map(Some)],
    )
        .prop_map(
            |(cores_per_node, extras_share_node, node_power_w)| Machine {
                cores_per_node,
                placement: Placement::PerComponent,
                extras_share_node,
                node_power_w,
            },
        );
    (
        machine,
        prop_oneof![
            Just(CostKind::NodeHours),
            Just(CostKind::Energy),
            Just(CostKind::CoreHours)
        ],
        proptest::collection::vec(queue_strategy(), 0..3),
        proptest::option::of(0usize..3),
    )
        .prop_map(|(machine, cost, queues, chosen)| cost_model(Some(machine), cost, queues, chosen))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Two components on per-component nodes (allowed lists, extra PEs, every cost, queues by
    /// cores, nodes and wall time): the pair sweep finds the naive enumeration's counts, bounds
    /// and top N.
    #[test]
    fn per_component_pair_equals_naive_enumeration(
        (inputs, settings) in problem_strategy_of(2..=2),
        model in per_component_model_strategy(),
    ) {
        let problem = match Problem::billed(&inputs, &settings, &model) {
            Ok(p) => p,
            Err(PredictError::NothingFitsQueue(_)) => {
                let open = CostModel { queue: None, ..model.clone() };
                let Ok(all) = Problem::billed(&inputs, &settings, &open) else {
                    return Ok(());
                };
                let queue = model.chosen_queue().expect("only a chosen queue can exclude all");
                let every = naive::enumerate(&all, settings.tts_w, usize::MAX);
                prop_assert!(every.top.iter().all(|c| !model.fits_queue(
                    queue, &c.nproc, settings.extra_pes, c.sypd)));
                return Ok(());
            }
            Err(_) => return Ok(()),
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
