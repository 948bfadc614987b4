//! Prediction speed on the target scenarios, and the fast search against the naive enumeration
//! on the largest problem the naive one can do quickly.
//!
//! `cargo bench --bench predict` (`-- 'predict --measured'` for the calibrated model's
//! ranking alone, `-- packing` for node packings, `-- layout` for layout trees)

use criterion::{criterion_group, criterion_main, Criterion};

use autolb::predict::{full_model, naive, Problem, ProblemOptions};

#[path = "support/scenarios.rs"]
mod scenarios;

fn prediction(c: &mut Criterion) {
    let mut group = c.benchmark_group("predict");
    group.sample_size(10);
    for scenario in scenarios::all() {
        group.bench_function(scenario.name, |b| {
            b.iter(|| {
                let problem = Problem::new(&scenario.inputs, &scenario.settings).expect("valid");
                problem.rank(scenario.settings.tts_w, scenario.settings.top)
            })
        });
    }
    // Re-ranking only (what the TTS_w slider costs), on the two-component problem.
    let two = &scenarios::all()[0];
    let problem = Problem::new(&two.inputs, &two.settings).expect("valid");
    group.bench_function("re-rank only (TTS_w change), 2 components step 1", |b| {
        b.iter(|| problem.rank(0.7, 5))
    });
    // The speed/cost front and the TTS_w intervals (what the app recomputes on every budget or
    // model change): on a prepared problem, and with the preparation included.
    group.bench_function("front + TTS_w intervals, 2 components step 1", |b| {
        b.iter(|| problem.trade_off(0.5))
    });
    group.bench_function(
        "prepare + front + TTS_w intervals, 2 components step 1",
        |b| {
            b.iter(|| {
                let problem = Problem::new(&two.inputs, &two.settings).expect("valid");
                problem.trade_off(0.5)
            })
        },
    );
    // The same curves on two resources with budgets of their own (the decoupled pair sweep).
    let resources = autolb::machine::CostModel {
        resources: ["cpu", "gpu"]
            .iter()
            .zip([1.0, 2.5])
            .map(|(name, unit_cost)| autolb::machine::Resource {
                name: name.to_string(),
                units_per_node: 48,
                unit_cost,
                max_units: Some(2000),
            })
            .collect(),
        component_resource: vec![0, 1],
        ..autolb::machine::CostModel::default()
    };
    group.bench_function(
        "2 components on 2 resources, step 1, 2000 units each",
        |b| {
            b.iter(|| {
                let problem = Problem::build(
                    &two.inputs,
                    &two.settings,
                    ProblemOptions {
                        model: None,
                        cost_model: Some(&resources),
                    },
                )
                .expect("valid");
                problem.rank(two.settings.tts_w, two.settings.top)
            })
        },
    );
    // The same pair billed in node-hours on 48-core nodes, each component on its own nodes (a
    // bill that depends on each component's rounding, not on the PE sum).
    let per_component = autolb::machine::CostModel {
        machine: Some(autolb::machine::Machine {
            cores_per_node: 48,
            placement: autolb::machine::Placement::PerComponent,
            extras_share_node: true,
            node_power_w: None,
        }),
        cost: autolb::machine::CostKind::NodeHours,
        ..autolb::machine::CostModel::default()
    };
    group.bench_function(
        "2 components step 1, node-hours, per-component nodes",
        |b| {
            b.iter(|| {
                let problem = Problem::build(
                    &two.inputs,
                    &two.settings,
                    ProblemOptions {
                        model: None,
                        cost_model: Some(&per_component),
                    },
                )
                .expect("valid");
                problem.rank(two.settings.tts_w, two.settings.top)
            })
        },
    );
    // Three components on per-component nodes: all but the last other component are walked
    // per bottleneck group, the last counted by binary searches.
    let three = &scenarios::all()[1];
    group.bench_function(
        "3 components step 6, node-hours, per-component nodes",
        |b| {
            b.iter(|| {
                let problem = Problem::build(
                    &three.inputs,
                    &three.settings,
                    ProblemOptions {
                        model: None,
                        cost_model: Some(&per_component),
                    },
                )
                .expect("valid");
                problem.rank(three.settings.tts_w, three.settings.top)
            })
        },
    );
    group.bench_function("naive enumeration, 2 components step 1", |b| {
        b.iter(|| naive::enumerate(&problem, 0.5, 5))
    });
    group.finish();
}

/// `predict --measured`'s ranking (the runs read and the model fitted once): the calibrated
/// problem built and its top N by the full model, on the lucia_lite runs with and without
/// curves at steps 24 to 1, and a three-component synthetic case; also a TTS_w change alone
/// (what the app's `+`/`-` costs).
fn calibrated(c: &mut Criterion) {
    let mut group = c.benchmark_group("predict --measured");
    group.sample_size(10);
    for s in scenarios::calibrated() {
        let build = || {
            Problem::build(
                &s.inputs,
                &s.settings,
                ProblemOptions {
                    model: Some(&s.model),
                    cost_model: None,
                },
            )
            .expect("valid")
        };
        group.bench_function(&s.name, |b| {
            b.iter(|| full_model::rank(&build(), &s.model, &s.inputs, 0.5, 5))
        });
        if s.settings.step == 1 {
            let problem = build();
            group.bench_function(format!("{}, re-rank only", s.name), |b| {
                b.iter(|| full_model::rank(&problem, &s.model, &s.inputs, 0.7, 5))
            });
        }
    }
    group.finish();
}

/// Node packings on the EC-Earth4 MareNostrum 5 example (112-core nodes, OpenIFS and NEMO with
/// NEMO's decomposition list, XIOS per node and the runoff mapper on the first): the best
/// packing of 2 and of 10 nodes, all 1 to 20 node counts ranked, and the plain enumeration of one node
/// count that the search is held to.
fn packings(c: &mut Criterion) {
    use autolb::config::CampaignFile;
    use autolb::predict::packing::{self, PackingProblem};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/examples/ecearth4-mn5/campaign.toml");
    let file = CampaignFile::load(&path).expect("the example parses");
    let inputs = file
        .component_inputs(path.parent().expect("a directory"))
        .expect("its curves load");
    let problem = PackingProblem::from_inputs(
        &inputs,
        file.pinned_helpers(),
        112,
        autolb::interp::Method::Pchip,
        20,
    )
    .expect("valid");
    let mut group = c.benchmark_group("packing");
    group.sample_size(10);
    group.bench_function("best packing, 2 nodes of 112 cores", |b| {
        b.iter(|| packing::best_packing(&problem, 2))
    });
    group.bench_function("best packing, 10 nodes of 112 cores", |b| {
        b.iter(|| packing::best_packing(&problem, 10))
    });
    group.bench_function("ranked, 1 to 20 nodes", |b| {
        b.iter(|| packing::rank_packings(&problem, 1..=20, 0.5, 5))
    });
    group.bench_function("plain enumeration, 2 nodes of 112 cores", |b| {
        b.iter(|| packing::naive_best(&problem, 2))
    });
    group.finish();
}

/// Layout trees: the speed/PE front of CESM's default tree at step 1 (the search as it was, and
/// the one with threads per component on the same single-thread choices and on choices at 1
/// and 2 threads), and the ranking by fittingness on the CESM-shaped example's scale.
fn layouts(c: &mut Criterion) {
    use autolb::layout::ranked::{self, Choice};
    use autolb::layout::search;
    use autolb::layout::Layout;
    let mut group = c.benchmark_group("layout");
    group.sample_size(10);
    let tree = Layout::parse("ocn | (atm ; (ice | lnd))").expect("valid");
    let work = |n: &str| match n {
        "ocn" => 400.0,
        "atm" => 600.0,
        "ice" => 100.0,
        _ => 80.0,
    };
    let budget = 2000;
    let counts = |_: &str| (1..=budget).collect::<Vec<u32>>();
    let time = |n: &str, k: u32| Some(1.0 + work(n) / f64::from(k));
    let choices = |threads: &'static [u32], step: usize, top: u32| {
        move |n: &str| {
            threads
                .iter()
                .flat_map(|&t| {
                    (8..=top).step_by(step).map(move |k| Choice {
                        tasks: k,
                        threads: t,
                        run_s: 1.0 + work(n) / (f64::from(k * t) * (1.0 - 0.1 * f64::from(t - 1))),
                    })
                })
                .collect::<Vec<_>>()
        }
    };
    group.bench_function("front, CESM tree, step 1, 2000 PEs", |b| {
        b.iter(|| search::front(&tree, budget, 1, 5, &counts, &time))
    });
    let single = choices(&[1], 1, budget);
    group.bench_function("front with threads, 1 thread, step 1, 2000 PEs", |b| {
        b.iter(|| search::front_threaded(&tree, budget, 1, 5, &single))
    });
    let two = choices(&[1, 2], 1, budget);
    group.bench_function(
        "front with threads, 1 or 2 threads, step 1, 2000 PEs",
        |b| b.iter(|| search::front_threaded(&tree, budget, 1, 5, &two)),
    );
    let example = choices(&[1], 8, 256);
    group.bench_function("ranked by fittingness, step 8, 256 PEs", |b| {
        b.iter(|| ranked::rank(&tree, 256, 0, &example).map(|r| r.top(0.5, 5)))
    });
    let fine = choices(&[1], 1, 256);
    group.bench_function("ranked by fittingness, step 1, 256 PEs", |b| {
        b.iter(|| ranked::rank(&tree, 256, 0, &fine).map(|r| r.top(0.5, 5)))
    });
    group.finish();
}

criterion_group!(benches, prediction, calibrated, packings, layouts);
criterion_main!(benches);
