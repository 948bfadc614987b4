//! Prediction fixtures: random problems for property tests and the bundled curves.

use std::path::Path;

use autolb::curve::{Curve, Point};
use autolb::interp::Method;
use autolb::model::{MeasuredComponent, MeasuredRun, Model};
use autolb::predict::{ComponentInput, Problem, Settings};
use proptest::prelude::*;

/// How random curves pick their SYPD values.
#[derive(Debug, Clone, Copy)]
pub enum Speeds {
    /// Half-integers from a small set, so that ties between components (the hard case for
    /// bottleneck grouping and for the front) happen often.
    Coarse,
    /// Any value in (0.1, 40): the general case.
    Continuous,
}

/// A random curve: 2..6 points with distinct PE counts in 1..120.
pub fn curve_strategy(name: &'static str, speeds: Speeds) -> impl Strategy<Value = Curve> {
    (
        proptest::collection::btree_set(1u32..120, 2..6),
        proptest::collection::vec(1u32..8, 6),
        proptest::collection::vec(0.1f64..40.0, 6),
    )
        .prop_map(move |(nprocs, coarse, continuous)| {
            let points: Vec<Point> = nprocs
                .iter()
                .enumerate()
                .map(|(k, &nproc)| Point {
                    nproc,
                    sypd: match speeds {
                        Speeds::Coarse => f64::from(coarse[k]) * 0.5,
                        Speeds::Continuous => continuous[k],
                    },
                })
                .collect();
            Curve::from_points(name, "random", &points).expect("valid by construction")
        })
}

/// A random component: a random curve, sometimes with an allowed list.
pub fn component_strategy(
    name: &'static str,
    speeds: Speeds,
) -> impl Strategy<Value = ComponentInput> {
    (
        curve_strategy(name, speeds),
        proptest::option::of(proptest::collection::vec(1u32..120, 1..12)),
    )
        .prop_map(|(curve, allowed)| ComponentInput {
            name: curve.name.clone(),
            curve: Some(curve),
            allowed,
            min_nproc: None,
            max_nproc: None,
            thread_curves: Vec::new(),
        })
}

/// A random problem of `components` components (a range), any interpolation, budget up to 400.
pub fn problem_strategy(
    components: std::ops::RangeInclusive<usize>,
    speeds: Speeds,
) -> impl Strategy<Value = (Vec<ComponentInput>, Settings)> {
    problem_of(components, move |n| component_strategy(n, speeds))
}

/// A random problem of `components` components (a range) made by `component`, any
/// interpolation, budget up to 400.
pub fn problem_of<S>(
    components: std::ops::RangeInclusive<usize>,
    component: impl Fn(&'static str) -> S + Clone + 'static,
) -> impl Strategy<Value = (Vec<ComponentInput>, Settings)>
where
    S: Strategy<Value = ComponentInput> + 'static,
{
    let names = ["A", "B", "C", "D", "E"];
    components
        .prop_flat_map(move |k| {
            let comps: Vec<_> = names[..k].iter().map(|n| component(n)).collect();
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

/// A bundled curve from `assets/curves`, e.g. `"cca/cca_sr_ifs.csv"`.
pub fn bundled(name: &str, file: &str) -> ComponentInput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/curves")
        .join(file);
    ComponentInput::new(Curve::load(name.to_string(), &path).expect("bundled curve"))
}

/// A random `[[resource]]` layout for `components` components on two resources (`cpu` first,
/// where the extras run, then `gpu`): any assignment (both on one resource too), unit costs
/// that are not whole numbers, small nodes so rounding matters, budgets of their own or
/// `max_nproc`, core-hour or node-hour cost, packed or per-component nodes.
pub fn resource_model_strategy(
    components: usize,
) -> impl Strategy<Value = autolb::machine::CostModel> {
    use autolb::machine::{CostKind, CostModel, Machine, Placement, Resource};
    (
        proptest::collection::vec(0usize..2, components),
        prop_oneof![Just(1.0f64), Just(0.5), 0.1f64..50.0],
        prop_oneof![Just(1.0f64), Just(2.5), Just(40.0), 0.1f64..50.0],
        (1u32..9, 1u32..9),
        (
            proptest::option::of(1u32..250),
            proptest::option::of(1u32..250),
        ),
        prop_oneof![Just(CostKind::CoreHours), Just(CostKind::NodeHours)],
        proptest::option::of((
            prop_oneof![Just(Placement::Packed), Just(Placement::PerComponent)],
            proptest::bool::ANY,
        )),
    )
        .prop_map(
            |(assign, cpu_cost, gpu_cost, (cpu_node, gpu_node), (cpu_max, gpu_max), cost, m)| {
                CostModel {
                    cost,
                    machine: m.map(|(placement, extras_share_node)| Machine {
                        cores_per_node: cpu_node,
                        placement,
                        extras_share_node,
                        node_power_w: None,
                    }),
                    resources: vec![
                        Resource {
                            name: "cpu".into(),
                            units_per_node: cpu_node,
                            unit_cost: cpu_cost,
                            max_units: cpu_max,
                        },
                        Resource {
                            name: "gpu".into(),
                            units_per_node: gpu_node,
                            unit_cost: gpu_cost,
                            max_units: gpu_max,
                        },
                    ],
                    component_resource: assign,
                    ..CostModel::default()
                }
            },
        )
}

/// A random machine, cost and queue table for the billed property tests: node sizes small
/// enough that rounding matters at these PE counts, both placements, extras sharing or not,
/// queues limited by cores, nodes or wall time, chosen or not. Only consistent models come
/// out (node-hours and energy with a machine, energy with a node power).
pub fn cost_model_strategy() -> impl Strategy<Value = autolb::machine::CostModel> {
    use autolb::machine::{CostKind, Placement};
    (
        proptest::option::of(machine_strategy(prop_oneof![
            Just(Placement::Packed),
            Just(Placement::PerComponent)
        ])),
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

/// A random machine with the placement `placement` draws: 1 to 39 cores per node, extras
/// sharing nodes or not, a node power or none.
pub fn machine_strategy(
    placement: impl Strategy<Value = autolb::machine::Placement>,
) -> impl Strategy<Value = autolb::machine::Machine> {
    (
        1u32..40,
        placement,
        any::<bool>(),
        prop_oneof![Just(None), (100.0f64..900.0).prop_map(Some)],
    )
        .prop_map(
            |(cores_per_node, placement, extras_share_node, node_power_w)| {
                autolb::machine::Machine {
                    cores_per_node,
                    placement,
                    extras_share_node,
                    node_power_w,
                }
            },
        )
}

/// A queue limited by cores, nodes or wall time (or nothing), named by [`cost_model`].
pub fn queue_strategy() -> impl Strategy<Value = autolb::machine::Queue> {
    (
        proptest::option::of(1u32..500),
        proptest::option::of(1u32..30),
        proptest::option::of((1u32..6).prop_map(f64::from)),
    )
        .prop_map(|(max_nproc, max_nodes, min_sypd)| autolb::machine::Queue {
            name: String::new(),
            max_nproc,
            max_nodes,
            // Wall time 24 h with chunk_years = min SYPD: the slowest SYPD allowed.
            max_walltime_h: min_sypd.map(|_| 24.0),
            chunk_years: min_sypd,
            partition: None,
            qos: None,
        })
}

/// The cost model of a machine (or none), a wished cost (core-hours where the machine cannot
/// bill it), queues named q0, q1, ... and the chosen one's number (ignored past the last).
pub fn cost_model(
    machine: Option<autolb::machine::Machine>,
    cost: autolb::machine::CostKind,
    mut queues: Vec<autolb::machine::Queue>,
    chosen: Option<usize>,
) -> autolb::machine::CostModel {
    use autolb::machine::{CostKind, CostModel};
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

/// The fast search of `problem` against the naive enumeration: counts, bounds and the top N at
/// `settings`' TTS_w. Returns the fast top N for further checks.
pub fn same_as_naive(
    problem: &autolb::predict::Problem,
    settings: &Settings,
) -> Result<Vec<autolb::predict::Scored>, TestCaseError> {
    let reference = autolb::predict::naive::enumerate(problem, settings.tts_w, settings.top);
    prop_assert_eq!(problem.configurations, reference.configurations);
    prop_assert_eq!(problem.considered, reference.considered);
    prop_assert_eq!(problem.sypd_bounds, reference.sypd_bounds);
    prop_assert_eq!(problem.cost_bounds, reference.cost_bounds);
    let fast = problem.rank(settings.tts_w, settings.top);
    prop_assert_eq!(&fast.top, &reference.top);
    Ok(fast.top)
}

/// A calibrated model fitted on coupled runs at candidate PE counts picked by `picks` (where in
/// each component's candidates, and the fraction of its standalone speed it ran at).
pub fn fitted(
    inputs: &[ComponentInput],
    settings: &Settings,
    picks: &[(f64, f64)],
) -> Option<Model> {
    let standalone = Problem::new(inputs, settings).ok()?;
    let runs: Vec<MeasuredRun> = picks
        .iter()
        .enumerate()
        .map(|(k, &(at, ratio))| {
            let components: Vec<MeasuredComponent> = standalone
                .components
                .iter()
                .enumerate()
                .map(|(d, c)| {
                    // Each component at its own spot, so the runs are not all on the diagonal.
                    let spot = (at + 0.37 * d as f64).fract();
                    let i = ((c.nproc.len() - 1) as f64 * spot).round() as usize;
                    MeasuredComponent::from_speed(
                        c.name.clone(),
                        c.nproc[i],
                        c.sypd[i] * (ratio + 0.1 * d as f64),
                    )
                })
                .collect();
            let slowest = components
                .iter()
                .map(|c| c.sypd)
                .fold(f64::INFINITY, f64::min);
            MeasuredRun {
                path: format!("run{k}"),
                components,
                coupled_sypd: 0.95 * slowest,
                simulated_s: None,
            }
        })
        .collect();
    let (model, _) = Model::fit(inputs, settings.interp, &runs);
    model.is_calibrated().then_some(model)
}
