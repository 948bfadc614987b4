//! The coupling overhead as a function of the balance between components.
//!
//! A coupled step ends when the slowest component of that step is done, so the coupled step
//! time is the *maximum* over components of step times that fluctuate from step to step
//! (irregular radiation steps, I/O, OS noise). When one component is much slower than the
//! others the maximum is its own time and the run goes at its pace; when two are nearly
//! balanced each waits for the other in turn and the run is slower than either. On the real
//! EC-Earth3 runs the coupled run is 0.85-0.88 of its slowest component when IFS and NEMO are
//! within 15 % of each other, and 0.93-0.99 when one is 1.5-2.5 times faster.
//!
//! Model: component `c`'s step time is normal with mean `t_c = 1 / s_c` and standard deviation
//! `sigma * t_c` (one relative irregularity `sigma` for all, learned), independent across
//! components. The expected maximum is computed with Clark's (1961) moment-matching recursion
//! for the maximum of normals; `slowdown(speeds, sigma) = E[max t] / max t >= 1`. It depends
//! only on the speeds' ratios, so it can be applied after any common scale factor.
//! The coupled SYPD is `k0 * min(speeds) / slowdown`, `k0` the balance-free overhead
//! (interpolation, sending). Both are fitted by least squares on ln(coupled / slowest) over the
//! training runs: `sigma` on a fixed grid, `k0` in closed form for each.

/// Relative step-time irregularities tried.
pub const SIGMA_GRID: [f64; 13] = [
    0.0, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6,
];

/// `E[max_c T_c] / max_c E[T_c]` for `T_c ~ N(1/s_c, (sigma/s_c)^2)` (Clark's recursion).
pub fn slowdown(speeds: &[f64], sigma: f64) -> f64 {
    let times: Vec<f64> = speeds
        .iter()
        .filter(|s| s.is_finite() && **s > 0.0)
        .map(|s| 1.0 / s)
        .collect();
    let Some(worst) = times.iter().copied().reduce(f64::max) else {
        return 1.0;
    };
    if sigma <= 0.0 || times.len() < 2 {
        return 1.0;
    }
    let (mut m, mut v) = (times[0], (sigma * times[0]).powi(2));
    for &t in &times[1..] {
        let (m2, v2) = (t, (sigma * t).powi(2));
        let theta = (v + v2).sqrt();
        if theta <= 0.0 {
            m = m.max(m2);
            continue;
        }
        let a = (m - m2) / theta;
        let (pa, pna, da) = (phi_cdf(a), phi_cdf(-a), phi_pdf(a));
        let mean = m * pa + m2 * pna + theta * da;
        let second = (m * m + v) * pa + (m2 * m2 + v2) * pna + (m + m2) * theta * da;
        m = mean;
        v = (second - mean * mean).max(0.0);
    }
    (m / worst).max(1.0)
}

/// Fits `(ln k0, sigma, residual sd)` to `(ln(coupled / pace), speeds)` of the training runs.
/// With fewer than three runs `sigma` is 0 (the overhead is one factor).
pub fn fit(runs: &[(f64, Vec<f64>)]) -> (f64, f64, f64) {
    let grid: &[f64] = if runs.len() >= 3 { &SIGMA_GRID } else { &[0.0] };
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for &sigma in grid {
        let adjusted: Vec<f64> = runs
            .iter()
            .map(|(y, s)| y + slowdown(s, sigma).ln())
            .collect();
        let k0 = adjusted.iter().sum::<f64>() / adjusted.len().max(1) as f64;
        let sse: f64 = adjusted.iter().map(|a| (a - k0).powi(2)).sum();
        if sse < best.0 {
            best = (sse, k0, sigma);
        }
    }
    let n = runs.len() as f64;
    let dof = if best.2 > 0.0 { n - 2.0 } else { n - 1.0 };
    let sd = (best.0 / dof.max(1.0)).sqrt();
    (best.1, best.2, sd)
}

fn phi_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Standard normal CDF (Abramowitz & Stegun 7.1.26 for erf, error below 1.5e-7).
fn phi_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_components_slow_the_run_most() {
        let s = 0.3;
        let balanced = slowdown(&[1.0, 1.0], s);
        let apart = slowdown(&[1.0, 2.0], s);
        assert!(balanced > apart && apart > 1.0, "{balanced} {apart}");
        // Two equal normals: E[max] = mu + sigma_d * phi(0) with sigma_d = sqrt(2) sigma mu.
        let exact = 1.0 + (2.0f64).sqrt() * s * phi_pdf(0.0);
        assert!((balanced - exact).abs() < 1e-6, "{balanced} vs {exact}");
        assert_eq!(slowdown(&[1.0], s), 1.0);
        assert_eq!(slowdown(&[1.0, 1.0], 0.0), 1.0);
        assert!((phi_cdf(1.0) - 0.841_344_7).abs() < 1e-6);
    }

    #[test]
    fn fit_recovers_the_irregularity() {
        let runs: Vec<(f64, Vec<f64>)> = [1.0, 1.1, 1.3, 1.6, 2.0, 2.5]
            .iter()
            .map(|&r| {
                let s = vec![1.0, r];
                ((0.97f64).ln() - slowdown(&s, 0.25).ln(), s)
            })
            .collect();
        let (k0, sigma, sd) = fit(&runs);
        assert!((k0 - (0.97f64).ln()).abs() < 1e-9 && sigma == 0.25 && sd < 1e-9);
    }
}
