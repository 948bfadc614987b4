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
