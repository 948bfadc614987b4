//! Prediction fixtures: random problems for property tests and the bundled curves.

use std::path::Path;

use autolb::curve::{Curve, Point};
use autolb::interp::Method;
use autolb::predict::{ComponentInput, Settings};
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
            curve,
            allowed,
            min_nproc: None,
            max_nproc: None,
        })
}

/// A random problem of `components` components (a range), any interpolation, budget up to 400.
pub fn problem_strategy(
    components: std::ops::RangeInclusive<usize>,
    speeds: Speeds,
) -> impl Strategy<Value = (Vec<ComponentInput>, Settings)> {
    let names = ["A", "B", "C", "D", "E"];
    components
        .prop_flat_map(move |k| {
            let comps: Vec<_> = names[..k]
                .iter()
                .map(|n| component_strategy(n, speeds))
                .collect();
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

/// A random machine, cost and queue table for the billed property tests: node sizes small
/// enough that rounding matters at these PE counts, both placements, extras sharing or not,
/// queues limited by cores, nodes or wall time, chosen or not. Only consistent models come
/// out (node-hours and energy with a machine, energy with a node power).
pub fn cost_model_strategy() -> impl Strategy<Value = autolb::machine::CostModel> {
    use autolb::machine::{CostKind, CostModel, Machine, Placement, Queue};
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
    let queue = (
        proptest::option::of(1u32..500),
        proptest::option::of(1u32..30),
        proptest::option::of((1u32..6).prop_map(f64::from)),
    )
        .prop_map(|(max_nproc, max_nodes, min_sypd)| Queue {
            name: String::new(),
            max_nproc,
            max_nodes,
            // Wall time 24 h with chunk_years = min SYPD: the slowest SYPD allowed.
            max_walltime_h: min_sypd.map(|_| 24.0),
            chunk_years: min_sypd,
            partition: None,
            qos: None,
        });
    (
        proptest::option::of(machine),
        prop_oneof![
            Just(CostKind::CoreHours),
            Just(CostKind::NodeHours),
            Just(CostKind::Energy)
        ],
        proptest::collection::vec(queue, 0..3),
        proptest::option::of(0usize..3),
    )
        .prop_map(|(machine, cost, mut queues, chosen)| {
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
            }
        })
}
