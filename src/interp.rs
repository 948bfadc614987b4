//! Interpolation of a scalability curve between its measured points.
//!
//! Three methods:
//! * [`Method::Linear`]: piecewise linear; never leaves the range of its neighbours.
//! * [`Method::Quadratic`]: the quadratic B-spline that `scipy.interpolate.interp1d(kind="quadratic")`
//!   builds (the public reference prediction script's default), reproduced to 1e-9 relative.
//! * [`Method::Pchip`]: the monotone piecewise cubic Hermite interpolant of Fritsch and Carlson
//!   (`scipy.interpolate.PchipInterpolator`). This is our default: measured curves are noisy
//!   (MN4 SR NEMO drops from 48.73 SYPD at 757 PEs to 47.59 at 905), and a quadratic spline
//!   overshoots around such points, inventing speed-ups between measurements that nobody measured.
//!   PCHIP is smooth where the data are, flat where they are flat, and never overshoots.
//!
//! Interpolants are evaluated only inside `[first, last]` measured PE count; the prediction never
//! extrapolates.

use serde::{Deserialize, Serialize};

/// How SYPD is estimated between measured points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Piecewise linear between measured points.
    Linear,
    /// SciPy's quadratic interpolating B-spline (may overshoot between noisy points).
    Quadratic,
    /// Monotone piecewise cubic Hermite (Fritsch-Carlson), the default: never overshoots.
    #[default]
    Pchip,
}

impl Method {
    /// Names accepted on the command line and in config files.
    pub const NAMES: [&'static str; 3] = ["linear", "quadratic", "pchip"];

    /// The method's name as [`Method::NAMES`] lists it (`linear`, `quadratic`, `pchip`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Linear => "linear",
            Method::Quadratic => "quadratic",
            Method::Pchip => "pchip",
        }
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "linear" => Ok(Method::Linear),
            "quadratic" => Ok(Method::Quadratic),
            "pchip" | "monotone" => Ok(Method::Pchip),
            _ => Err(format!(
                "unknown interpolation {s:?}; use one of {}",
                Method::NAMES.join(", ")
            )),
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A ready-to-evaluate interpolant over sorted, distinct abscissae.
#[derive(Debug, Clone)]
pub enum Interpolant {
    /// Piecewise linear through the nodes ([`Method::Linear`], and a quadratic of two points).
    Linear {
        /// The nodes' abscissae (PE counts), strictly increasing.
        xs: Vec<f64>,
        /// The values at the nodes (SYPD), one per abscissa.
        ys: Vec<f64>,
    },
    /// Quadratic B-spline: knot vector and coefficients.
    Quadratic {
        /// The knot vector: the first and last node three times each, the midpoints of the
        /// inner nodes between them (`coefs.len() + 3` knots, SciPy's choice).
        knots: Vec<f64>,
        /// One B-spline coefficient per node, solved so the spline passes through every node.
        coefs: Vec<f64>,
    },
    /// Cubic Hermite: values and slopes at the nodes.
    Hermite {
        /// The nodes' abscissae (PE counts), strictly increasing.
        xs: Vec<f64>,
        /// The values at the nodes (SYPD), one per abscissa.
        ys: Vec<f64>,
        /// The derivative at each node (PCHIP's monotone slopes), in y per unit of x.
        slopes: Vec<f64>,
    },
}

impl Interpolant {
    /// Builds the interpolant. `xs` must be strictly increasing with `xs.len() == ys.len() >= 2`
    /// (a validated [`crate::curve::Curve`] guarantees it). A quadratic spline needs three points;
    /// with two it is the straight line, as any quadratic through two points with no other
    /// constraint would be ambiguous.
    pub fn new(method: Method, xs: &[f64], ys: &[f64]) -> Interpolant {
        assert!(
            xs.len() == ys.len() && xs.len() >= 2,
            "interpolant needs >= 2 points"
        );
        match method {
            Method::Quadratic if xs.len() >= 3 => quadratic_spline(xs, ys),
            Method::Linear | Method::Quadratic => Interpolant::Linear {
                xs: xs.to_vec(),
                ys: ys.to_vec(),
            },
            Method::Pchip => Interpolant::Hermite {
                xs: xs.to_vec(),
                ys: ys.to_vec(),
                slopes: pchip_slopes(xs, ys),
            },
        }
    }

    /// Value at `x`; `x` is clamped to the measured range.
    pub fn eval(&self, x: f64) -> f64 {
        match self {
            Interpolant::Linear { xs, ys } => {
                let x = x.clamp(xs[0], xs[xs.len() - 1]);
                let i = interval(xs, x);
                let t = (x - xs[i]) / (xs[i + 1] - xs[i]);
                ys[i] + t * (ys[i + 1] - ys[i])
            }
            Interpolant::Quadratic { knots, coefs } => eval_bspline2(knots, coefs, x),
            Interpolant::Hermite { xs, ys, slopes } => {
                let x = x.clamp(xs[0], xs[xs.len() - 1]);
                let i = interval(xs, x);
                let h = xs[i + 1] - xs[i];
                let t = (x - xs[i]) / h;
                let (t2, t3) = (t * t, t * t * t);
                let h10 = t3 - 2.0 * t2 + t;
                let h01 = -2.0 * t3 + 3.0 * t2;
                let h11 = t3 - t2;
                // The Hermite form `h00 y0 + h01 y1 + ...` with `h00 = 1 - h01` written out, so
                // that a flat segment (equal speeds, zero slopes: a curve that stopped scaling)
                // gives exactly its speed at every PE count. Rounded separately, two PE counts
                // of one flat segment could differ in the last bit, and the ranking and the
                // TTS_w intervals would then break that false tie differently.
                ys[i] + h01 * (ys[i + 1] - ys[i]) + h * (h10 * slopes[i] + h11 * slopes[i + 1])
            }
        }
    }
}

/// Index i of the interval [xs[i], xs[i+1]] holding x (the last interval for x == last).
fn interval(xs: &[f64], x: f64) -> usize {
    let upper = xs.partition_point(|&v| v <= x);
    upper.clamp(1, xs.len() - 1) - 1
}

/// The knot choice of scipy's `make_interp_spline(k=2)` with no boundary conditions: triple end
/// knots and the midpoints between data sites as interior knots, leaving out the first and the
/// last midpoint (a "not-a-knot"-like choice), then collocation at the data sites.
fn quadratic_spline(xs: &[f64], ys: &[f64]) -> Interpolant {
    let n = xs.len();
    let (first, last) = (xs[0], xs[n - 1]);
    let mut knots = vec![first; 3];
    knots.extend((1..n - 2).map(|i| (xs[i] + xs[i + 1]) / 2.0));
    knots.extend([last; 3]);
    debug_assert_eq!(knots.len(), n + 3);
    // Collocation matrix: row i holds the basis functions at xs[i].
    let mut matrix = vec![vec![0.0; n]; n];
    for (i, &x) in xs.iter().enumerate() {
        let span = knot_span(&knots, n, x);
        let basis = basis2(&knots, span, x);
        for (k, b) in basis.iter().enumerate() {
            matrix[i][span - 2 + k] = *b;
        }
    }
    let coefs = solve(matrix, ys.to_vec());
    Interpolant::Quadratic { knots, coefs }
}

/// The span index s with knots[s] <= x < knots[s+1], restricted to the valid range [2, n-1]
/// for a degree-2 spline with n coefficients (x == last uses the last span).
fn knot_span(knots: &[f64], n: usize, x: f64) -> usize {
    let s = knots.partition_point(|&t| t <= x);
    s.saturating_sub(1).clamp(2, n - 1)
}

/// The three non-zero degree-2 B-spline basis values on span `s` at `x` (Cox-de Boor).
fn basis2(knots: &[f64], s: usize, x: f64) -> [f64; 3] {
    let mut b = [1.0, 0.0, 0.0];
    let mut left = [0.0; 3];
    let mut right = [0.0; 3];
    for j in 1..=2 {
        left[j] = x - knots[s + 1 - j];
        right[j] = knots[s + j] - x;
        let mut saved = 0.0;
        for r in 0..j {
            let denom = right[r + 1] + left[j - r];
            let temp = if denom == 0.0 { 0.0 } else { b[r] / denom };
            b[r] = saved + right[r + 1] * temp;
            saved = left[j - r] * temp;
        }
        b[j] = saved;
    }
    b
}

fn eval_bspline2(knots: &[f64], coefs: &[f64], x: f64) -> f64 {
    let n = coefs.len();
    let x = x.clamp(knots[0], knots[knots.len() - 1]);
    let s = knot_span(knots, n, x);
    let b = basis2(knots, s, x);
    b[0] * coefs[s - 2] + b[1] * coefs[s - 1] + b[2] * coefs[s]
}

/// Gaussian elimination with partial pivoting; the systems here are tiny (one row per point).
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        let p = a[col][col];
        if p == 0.0 {
            continue;
        }
        let (upper, lower) = a.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for (offset, row) in lower.iter_mut().enumerate() {
            let f = row[col] / p;
            if f != 0.0 {
                for (target, source) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                    *target -= f * source;
                }
                b[col + 1 + offset] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = if a[row][row] == 0.0 {
            0.0
        } else {
            (b[row] - s) / a[row][row]
        };
    }
    x
}

/// Slopes of the Fritsch-Carlson monotone interpolant, with scipy's end conditions
/// (`PchipInterpolator`: weighted harmonic means inside, a shape-preserving three-point
/// formula at the ends).
fn pchip_slopes(xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let h: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
    let delta: Vec<f64> = (0..n - 1).map(|i| (ys[i + 1] - ys[i]) / h[i]).collect();
    if n == 2 {
        return vec![delta[0], delta[0]];
    }
    let mut d = vec![0.0; n];
    for k in 1..n - 1 {
        let (m0, m1) = (delta[k - 1], delta[k]);
        if m0 == 0.0 || m1 == 0.0 || m0.signum() != m1.signum() {
            d[k] = 0.0;
        } else {
            let w1 = 2.0 * h[k] + h[k - 1];
            let w2 = h[k] + 2.0 * h[k - 1];
            d[k] = (w1 + w2) / (w1 / m0 + w2 / m1);
        }
    }
    d[0] = pchip_end_slope(h[0], h[1], delta[0], delta[1]);
    d[n - 1] = pchip_end_slope(h[n - 2], h[n - 3], delta[n - 2], delta[n - 3]);
    d
}

fn pchip_end_slope(h0: f64, h1: f64, m0: f64, m1: f64) -> f64 {
    let d = ((2.0 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
    if d.signum() != m0.signum() {
        0.0
    } else if m0.signum() != m1.signum() && d.abs() > 3.0 * m0.abs() {
        3.0 * m0
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XS: [f64; 4] = [48.0, 240.0, 360.0, 384.0];
    const YS: [f64; 4] = [3.27, 12.96, 17.05, 17.34];

    #[test]
    fn a_flat_segment_is_exactly_flat() {
        // A curve that stopped scaling: every PE count between 59 and 77 runs at exactly 3.0.
        let (xs, ys) = ([1.0, 2.0, 6.0, 59.0, 77.0], [0.5, 0.5, 3.5, 3.0, 3.0]);
        for m in [Method::Linear, Method::Pchip] {
            let f = Interpolant::new(m, &xs, &ys);
            for x in 59..=77 {
                assert_eq!(f.eval(f64::from(x)), 3.0, "{m} at {x}");
            }
        }
    }

    #[test]
    fn every_method_passes_through_the_points() {
        for m in [Method::Linear, Method::Quadratic, Method::Pchip] {
            let f = Interpolant::new(m, &XS, &YS);
            for (x, y) in XS.iter().zip(YS) {
                assert!((f.eval(*x) - y).abs() < 1e-12, "{m} at {x}: {}", f.eval(*x));
            }
        }
    }

    #[test]
    fn linear_midpoint() {
        let f = Interpolant::new(Method::Linear, &XS, &YS);
        assert!((f.eval(144.0) - (3.27 + 12.96) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn pchip_is_monotone_on_monotone_data() {
        let f = Interpolant::new(Method::Pchip, &XS, &YS);
        let mut prev = f.eval(48.0);
        for x in 49..=384 {
            let y = f.eval(f64::from(x));
            assert!(y >= prev - 1e-12, "not monotone at {x}");
            prev = y;
        }
    }

    #[test]
    fn quadratic_with_two_points_is_linear() {
        let f = Interpolant::new(Method::Quadratic, &[1.0, 3.0], &[1.0, 5.0]);
        assert!((f.eval(2.0) - 3.0).abs() < 1e-12);
    }

    #[test]
    fn method_names_round_trip() {
        for name in Method::NAMES {
            assert_eq!(name.parse::<Method>().unwrap().name(), name);
        }
        assert!("cubic".parse::<Method>().is_err());
    }
}
