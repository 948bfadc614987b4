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
//! The coupled SYPD is `k0 * min(speeds) / slowdown`, `k0` the balance-free overhead, with each
//! component's speed first slowed by its fixed coupling time per step ([`coupling_time`]).
//! They are fitted on ln(coupled SYPD) of the training runs: `sigma` and the coupling times on
//! grids, chosen by BIC, `k0` in closed form for each ([`fit`]).

use super::coupling_time;

/// Relative step-time irregularities tried.
pub const SIGMA_GRID: [f64; 13] = [
    0.0, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6,
];

/// `E[max_c T_c] / max_c E[T_c]` for `T_c ~ N(1/s_c, (sigma/s_c)^2)` (Clark's recursion).
pub fn slowdown(speeds: &[f64], sigma: f64) -> f64 {
    // No allocation: the search evaluates this for every configuration it scores.
    let mut times = speeds
        .iter()
        .filter(|s| s.is_finite() && **s > 0.0)
        .map(|s| 1.0 / s);
    let Some(first) = times.next() else {
        return 1.0;
    };
    let (mut worst, mut count) = (first, 1usize);
    for t in times.clone() {
        worst = worst.max(t);
        count += 1;
    }
    if sigma <= 0.0 || count < 2 {
        return 1.0;
    }
    let (mut m, mut v) = (first, (sigma * first).powi(2));
    for t in times {
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

/// What [`fit`] learns about the coupling overhead.
#[derive(Debug, Clone, PartialEq)]
pub struct Overhead {
    /// ln k0, the balance-free factor.
    pub log_k0: f64,
    /// The step-time irregularity `sigma` (0: no balance slowdown).
    pub irregularity: f64,
    /// Per component, its coupling time in days of wall time per simulated year
    /// ([`coupling_time`]); 0 where the BIC did not keep one.
    pub coupling: Vec<f64>,
    /// Residual standard deviation of ln(coupled SYPD), on the fit's degrees of freedom.
    pub resid_sd: f64,
}

/// Floor of the residual variance in the BIC (ln units): runs that fit exactly must not make
/// every extra parameter look infinitely good.
const MIN_RESID_VAR: f64 = 1e-8;
/// Sweeps of the coordinate search over the components' coupling times (it stops earlier when
/// a sweep changes nothing).
const MAX_SWEEPS: usize = 3;

/// Fits the coupling overhead to the training runs: per run, ln of its coupled SYPD and its
/// components' compute speeds (SYPD, in component order). `pace(i, e)` is the speed run `i`
/// would go at without overhead if its components went at `e` (the min; with per-step series,
/// the step sum); `coupled = k0 * pace(e) / slowdown(e, sigma)` with `e` the speeds with each
/// component's coupling time added ([`coupling_time::effective`]).
///
/// Model selection on these runs only: the irregularity (a grid, [`SIGMA_GRID`]) and each
/// component's coupling time (0 or one of `coupling_grid`, days per simulated year, e.g.
/// [`coupling_time::grid`]; found by coordinate search at each irregularity) minimise the Bayesian
/// information criterion `n ln(SSE / n) + k ln n`, `k` counting `k0`, a non-zero irregularity and
/// every non-zero coupling time; `k0` is the closed-form mean of each candidate. A coupling time is
/// only tried while two residual degrees of freedom remain; with fewer than three runs the overhead
/// is `k0` alone.
pub fn fit(
    runs: &[(f64, Vec<f64>)],
    pace: &dyn Fn(usize, &[f64]) -> f64,
    coupling_grid: &[f64],
) -> Overhead {
    let n = runs.len();
    let comps = runs.first().map_or(0, |r| r.1.len());
    let sigmas: &[f64] = if n >= 3 { &SIGMA_GRID } else { &[0.0] };
    let taus: &[f64] = if n >= 3 { coupling_grid } else { &[] };
    let mut scratch = vec![0.0; comps];
    let mut residuals = vec![0.0; n];
    let mut score = |sigma: f64, coupling: &[f64]| -> Option<Candidate> {
        let kept = coupling.iter().filter(|t| **t > 0.0).count();
        let k = 1 + usize::from(sigma > 0.0) + kept;
        if kept > 0 && n < k + 2 {
            return None;
        }
        for (i, (y, speeds)) in runs.iter().enumerate() {
            for ((e, &s), &t) in scratch.iter_mut().zip(speeds).zip(coupling) {
                *e = coupling_time::effective(s, t);
            }
            residuals[i] = y - pace(i, &scratch).ln() + slowdown(&scratch, sigma).ln();
        }
        let log_k0 = residuals.iter().sum::<f64>() / n.max(1) as f64;
        let sse: f64 = residuals.iter().map(|r| (r - log_k0).powi(2)).sum();
        let nf = n.max(1) as f64;
        Some(Candidate {
            bic: nf * (sse / nf).max(MIN_RESID_VAR).ln() + k as f64 * nf.ln(),
            log_k0,
            sse,
            k,
        })
    };
    let mut best: Option<(Candidate, f64, Vec<f64>)> = None;
    for &sigma in sigmas {
        let mut coupling = vec![0.0; comps];
        let Some(mut here) = score(sigma, &coupling) else {
            continue;
        };
        for _ in 0..MAX_SWEEPS {
            let mut changed = false;
            for c in 0..comps {
                for &t in std::iter::once(&0.0).chain(taus) {
                    if t == coupling[c] {
                        continue;
                    }
                    let mut trial = coupling.clone();
                    trial[c] = t;
                    if let Some(cand) = score(sigma, &trial) {
                        if cand.bic < here.bic - 1e-12 {
                            here = cand;
                            coupling = trial;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        if best.as_ref().is_none_or(|b| here.bic < b.0.bic) {
            best = Some((here, sigma, coupling));
        }
    }
    match best {
        Some((cand, sigma, coupling)) => Overhead {
            log_k0: cand.log_k0,
            irregularity: sigma,
            coupling,
            resid_sd: (cand.sse / (n as f64 - cand.k as f64).max(1.0)).sqrt(),
        },
        None => Overhead {
            log_k0: 0.0,
            irregularity: 0.0,
            coupling: vec![0.0; comps],
            resid_sd: 0.0,
        },
    }
}

/// One candidate structure of the overhead, scored.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    bic: f64,
    log_k0: f64,
    sse: f64,
    /// Parameters fitted.
    k: usize,
}

/// The pace without per-step series: the slowest component.
pub fn slowest(_run: usize, speeds: &[f64]) -> f64 {
    speeds.iter().copied().fold(f64::INFINITY, f64::min)
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

    /// Component 0 pays a coupling time per step: the faster it goes, the further below it the
    /// coupled run. The fit keeps that time and no other; without it in the data, none.
    #[test]
    fn fit_keeps_a_coupling_time_only_where_the_runs_show_one() {
        let sigma = 0.2;
        let grid = coupling_time::grid([vec![5.0]].iter().map(Vec::as_slice));
        let runs = |tau: f64| -> Vec<(f64, Vec<f64>)> {
            [2.0, 3.0, 4.0, 5.0, 6.5, 8.0]
                .iter()
                .map(|&s0| {
                    let s = vec![s0, 1.4 * s0 + 1.0];
                    let e = [coupling_time::effective(s[0], tau), s[1]];
                    ((0.96 * slowest(0, &e) / slowdown(&e, sigma)).ln(), s)
                })
                .collect()
        };
        let o = fit(&runs(grid[3]), &slowest, &grid);
        assert_eq!(o.coupling, vec![grid[3], 0.0], "{o:?}");
        assert_eq!(o.irregularity, sigma);
        assert!((o.log_k0 - 0.96f64.ln()).abs() < 1e-9, "{o:?}");
        let o = fit(&runs(0.0), &slowest, &grid);
        assert_eq!(o.coupling, vec![0.0, 0.0], "{o:?}");
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
        let o = fit(&runs, &slowest, &[0.01, 0.02]);
        assert!((o.log_k0 - (0.97f64).ln()).abs() < 1e-9, "{o:?}");
        assert!(o.irregularity == 0.25 && o.resid_sd < 1e-9, "{o:?}");
        assert_eq!(o.coupling, vec![0.0, 0.0]);
    }
}
