//! The prediction scenarios of the performance targets, shared by the benchmark and the
//! memory/timing report (`cargo run --release --example predict_scale`).

use autolb::curve::{Curve, Point};
use autolb::interp::Method;
use autolb::predict::{ComponentInput, Settings};

const IFS: &str = include_str!("../../assets/curves/mn4_sr_cmip6_ifs.csv");
const NEMO: &str = include_str!("../../assets/curves/mn4_sr_cmip6_nemo.csv");
const PISCES: &str = include_str!("../../assets/curves/mn4_sr_reduced_nemo_pisces.csv");

fn curve(name: &str, text: &str) -> ComponentInput {
    ComponentInput::new(Curve::from_csv_str(name, name, text).expect("bundled curve"))
}

/// An Amdahl-like synthetic curve measured from 24 to 2400 PEs.
fn amdahl(name: &str, serial: f64, speed: f64) -> ComponentInput {
    let points: Vec<Point> = [24u32, 48, 96, 192, 384, 768, 1200, 1536, 2000, 2400]
        .iter()
        .map(|&p| {
            let p_f = f64::from(p);
            Point {
                nproc: p,
                sypd: speed * p_f / (1.0 + serial * p_f),
            }
        })
        .collect();
    ComponentInput::new(Curve::from_points(name, "synthetic", &points).expect("valid"))
}

/// A named scenario: inputs and settings.
pub struct Scenario {
    pub name: &'static str,
    pub inputs: Vec<ComponentInput>,
    pub settings: Settings,
}

/// The three scenarios of the targets (issue 2), all with quadratic interpolation as the
/// reference script uses.
pub fn all() -> Vec<Scenario> {
    let base = Settings {
        tts_w: 0.5,
        top: 5,
        interp: Method::Quadratic,
        extra_pes: 0,
        ..Settings::default()
    };
    vec![
        Scenario {
            name: "2 components, step 1, max_nproc 2000",
            inputs: vec![curve("IFS", IFS), curve("NEMO", NEMO)],
            settings: Settings {
                max_nproc: 2000,
                step: 1,
                ..base.clone()
            },
        },
        Scenario {
            name: "3 components, step 6, max_nproc 2000",
            inputs: vec![
                curve("IFS", IFS),
                curve("NEMO", NEMO),
                curve("PISCES", PISCES),
            ],
            settings: Settings {
                max_nproc: 2000,
                step: 6,
                ..base.clone()
            },
        },
        Scenario {
            name: "5 components 24..2400, step 24, max_nproc 3000",
            inputs: vec![
                amdahl("ATM", 0.0020, 0.080),
                amdahl("OCE", 0.0015, 0.110),
                amdahl("ICE", 0.0040, 0.300),
                amdahl("BGC", 0.0010, 0.060),
                amdahl("LND", 0.0030, 0.200),
            ],
            settings: Settings {
                max_nproc: 3000,
                step: 24,
                ..base
            },
        },
    ]
}

/// A scenario ranked with the calibrated model (`predict --measured`): the inputs, the
/// settings and the model fitted on measured runs.
pub struct CalibratedScenario {
    pub name: String,
    pub inputs: Vec<ComponentInput>,
    pub settings: Settings,
    pub model: autolb::model::Model,
}

/// `predict --measured tests/fixtures/lucia_lite` over 2000 PEs at steps 24, 6, 2 and 1: with
/// the MN4 SR reduced curves (`--curve`), and without curves (`--component IFS=48-1200
/// --component NEMO=48-1632`, both learned from the 30 runs); and a synthetic three-component
/// case (`autolb::sim::synthetic`, 20 stand-in runs) at step 6.
pub fn calibrated() -> Vec<CalibratedScenario> {
    use autolb::model::measured::{load_runs_dir, Naming};
    use autolb::model::Model;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let names = [Naming::new("IFS", "ATMIFS"), Naming::new("NEMO", "oceanx")];
    let (runs, _) = load_runs_dir(&root.join("tests/fixtures/lucia_lite"), &names, None)
        .expect("the bundled runs");
    let load = |name: &str, file: &str| {
        let path = root.join("assets/curves").join(file);
        ComponentInput::new(Curve::load(name, &path).expect("a bundled curve"))
    };
    let with_curves = vec![
        load("IFS", "mn4_sr_reduced_ifs.csv"),
        load("NEMO", "mn4_sr_reduced_nemo.csv"),
    ];
    let without_curves = vec![
        ComponentInput::without_curve("IFS", 48, 1200),
        ComponentInput::without_curve("NEMO", 48, 1632),
    ];
    let mut out = Vec::new();
    for (label, inputs) in [("curves", with_curves), ("no curves", without_curves)] {
        let (model, _) = Model::fit(&inputs, Method::default(), &runs);
        for step in [24, 6, 2, 1] {
            out.push(CalibratedScenario {
                name: format!("lucia_lite, {label}, step {step}, max_nproc 2000"),
                inputs: inputs.clone(),
                settings: Settings {
                    max_nproc: 2000,
                    step,
                    ..Settings::default()
                },
                model: model.clone(),
            });
        }
    }
    let case = autolb::sim::synthetic::SyntheticCase::generate(3, 3);
    let measured: Vec<_> = case
        .random_configurations(20, 3)
        .iter()
        .enumerate()
        .filter_map(|(i, n)| case.measured_run(n, i as u64).ok())
        .collect();
    let inputs: Vec<ComponentInput> = case
        .standalone_curves()
        .into_iter()
        .map(ComponentInput::new)
        .collect();
    let (model, _) = Model::fit(&inputs, Method::default(), &measured);
    let budget = inputs
        .iter()
        .filter_map(|c| c.range())
        .map(|(_, hi)| hi)
        .sum::<u32>()
        / 2;
    out.push(CalibratedScenario {
        name: format!("synthetic 3 components, step 6, max_nproc {budget}"),
        inputs,
        settings: Settings {
            max_nproc: budget,
            step: 6,
            ..Settings::default()
        },
        model,
    });
    out
}
