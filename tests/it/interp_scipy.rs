//! Interpolation against scipy: `interp1d(kind="quadratic")` and `PchipInterpolator`, evaluated
//! once with scipy over every bundled curve and stored in tests/fixtures/interp (regenerate with
//! the Python snippet in that file's `generated_by` note: it only calls those two functions).

use autolb::curve::Curve;
use autolb::interp::{Interpolant, Method};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    curves: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    file: String,
    x: Vec<f64>,
    quadratic: Vec<f64>,
    pchip: Vec<f64>,
}

fn relative_error(ours: f64, theirs: f64) -> f64 {
    (ours - theirs).abs() / theirs.abs().max(1e-300)
}

#[test]
fn quadratic_and_pchip_equal_scipy() {
    let fixture: Fixture =
        serde_json::from_str(include_str!("../fixtures/interp/scipy_reference.json"))
            .expect("fixture");
    assert!(fixture.curves.len() >= 16);
    for case in fixture.curves {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/curves")
            .join(&case.file);
        let curve = Curve::load("c", &path).expect("bundled curve");
        for (method, expected, tolerance) in [
            (Method::Quadratic, &case.quadratic, 1e-9),
            (Method::Pchip, &case.pchip, 1e-9),
        ] {
            let f = Interpolant::new(method, &curve.xs(), &curve.ys());
            let worst = case
                .x
                .iter()
                .zip(expected)
                .map(|(&x, &y)| relative_error(f.eval(x), y))
                .fold(0.0, f64::max);
            assert!(
                worst <= tolerance,
                "{} {method}: worst relative error {worst:e}",
                case.file
            );
        }
    }
}
