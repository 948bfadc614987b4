//! The scaling law of a component without a curve, with its terms chosen by leave-one-out.
//!
//! [`ScalingLaw::fit`] keeps the terms the training runs' AIC prefers. On EC-Earth4-like sweeps
//! (20-30 runs, NEMO's speed jumping between neighbouring counts as its decomposition changes,
//! a slow run now and then) that choice follows the jumps: a communication term fitted to two
//! slow counts at the top of the range predicts the next count 30 % slow. What matters is how
//! well a law predicts a count it was not fitted on, so here each set of terms is scored by
//! that directly: every measured count is left out in turn (its repeats together), the law of
//! that set fitted on the others (robustly, `ScalingLaw::fit_sets`) and its error at the
//! left-out count scored with Huber's loss, so one slow run weighs like a large error, not a
//! squared one. The set with the lowest score wins; a set with more terms must beat a simpler
//! one clearly ([`SIMPLER_MARGIN`]).
//!
//! The same left-out errors give the law's *scatter*: how far a count it was not fitted on
//! lies from it, decomposition jumps and repeats' noise together (a robust standard deviation,
//! 1.4826 times the median absolute error). The calibrated model's band uses it as the
//! component's predictive spread, so the band is as wide as the law's real errors.

use super::scaling_law::{ScalingLaw, HUBER_K, TERM_SETS};

/// A set of terms with more coefficients replaces a simpler one only when its left-out score
/// is lower by this fraction: the scores of close sets differ by noise.
pub const SIMPLER_MARGIN: f64 = 0.05;

/// The law chosen by leave-one-out, and its scatter.
#[derive(Debug, Clone, PartialEq)]
pub struct RobustLaw {
    /// The law, fitted on every point with the chosen terms.
    pub law: ScalingLaw,
    /// Robust standard deviation (ln units) of the law's errors at left-out counts; `None`
    /// with fewer than three counts (nothing was left out).
    pub scatter_sd: Option<f64>,
}

/// One point of a component: `(x, SYPD, variance of ln SYPD)`, `x` its (effective) processes.
pub type Point = (f64, f64, f64);

/// Fits the law to `points`, its terms chosen by leave-one-out over the distinct `x` (see the
/// module doc); `None` without a usable point.
pub fn fit(points: &[Point]) -> Option<RobustLaw> {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 3 {
        // Nothing to leave out: the AIC's choice (two counts keep two terms at most).
        return ScalingLaw::fit_sets(points, &TERM_SETS).map(|law| RobustLaw {
            law,
            scatter_sd: None,
        });
    }
    let mut best: Option<(f64, usize, Vec<f64>)> = None;
    for (k, set) in TERM_SETS.iter().enumerate() {
        let terms = set.iter().filter(|&&f| f).count();
        // Each left-out fit needs more counts than terms.
        if terms + 1 >= xs.len() {
            continue;
        }
        let Some(errors) = left_out_errors(points, &xs, set) else {
            continue;
        };
        let score: f64 = errors
            .iter()
            .zip(points)
            .map(|(e, p)| huber(e / p.2.sqrt()))
            .sum();
        let better = match &best {
            None => true,
            Some((s, kb, _)) => {
                let more = terms > TERM_SETS[*kb].iter().filter(|&&f| f).count();
                if more {
                    score < s * (1.0 - SIMPLER_MARGIN)
                } else {
                    score < *s
                }
            }
        };
        if better {
            best = Some((score, k, errors));
        }
    }
    let Some((_, k, errors)) = best else {
        return ScalingLaw::fit_sets(points, &TERM_SETS).map(|law| RobustLaw {
            law,
            scatter_sd: None,
        });
    };
    let law = ScalingLaw::fit_sets(points, &[TERM_SETS[k]])?;
    let mut abs: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    abs.sort_by(f64::total_cmp);
    Some(RobustLaw {
        law,
        scatter_sd: Some(1.4826 * super::check::median_sorted(&abs)),
    })
}

/// ln(measured / law) at each point, the law of `set` fitted without the point's count;
/// `None` when a fit fails.
fn left_out_errors(points: &[Point], xs: &[f64], set: &[bool; 3]) -> Option<Vec<f64>> {
    let mut errors = vec![0.0; points.len()];
    for &x in xs {
        let train: Vec<Point> = points.iter().copied().filter(|p| p.0 != x).collect();
        let law = ScalingLaw::fit_sets(&train, std::slice::from_ref(set))?;
        for (e, p) in errors.iter_mut().zip(points) {
            if p.0 == x {
                *e = (p.1 / law.sypd(x)).ln();
            }
        }
    }
    Some(errors)
}

/// Huber's loss of a standardised error.
fn huber(z: f64) -> f64 {
    let a = z.abs();
    if a <= HUBER_K {
        0.5 * a * a
    } else {
        HUBER_K * (a - 0.5 * HUBER_K)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_no_communication_term_that_two_slow_counts_suggest() {
        // Amdahl's law, two top counts 12 % slow (a decomposition jump and a slow run).
        let truth = |p: f64| 1.0 / (0.006 + 6.0 / p);
        let mut pts: Vec<Point> = [50.0, 70.0, 90.0, 120.0, 150.0, 200.0, 260.0, 330.0, 380.0]
            .iter()
            .map(|&p| (p, truth(p), 0.03f64.powi(2)))
            .collect();
        let n = pts.len();
        pts[n - 1].1 *= 0.88;
        pts[n - 2].1 *= 0.9;
        let fit = fit(&pts).unwrap();
        assert!(
            (fit.law.sypd(300.0) / truth(300.0) - 1.0).abs() < 0.06,
            "{fit:?}"
        );
        assert!(fit.scatter_sd.unwrap() > 0.0);
    }

    #[test]
    fn finds_a_real_communication_term() {
        let truth = |p: f64| 1.0 / (0.004 + 5.0 / p + 1e-4 * p);
        let pts: Vec<Point> = [40.0, 60.0, 90.0, 130.0, 180.0, 250.0, 330.0]
            .iter()
            .map(|&p| (p, truth(p), 0.02f64.powi(2)))
            .collect();
        let fit = fit(&pts).unwrap();
        assert!(fit.law.growth > 0.0, "{fit:?}");
        assert!((fit.law.sypd(400.0) / truth(400.0) - 1.0).abs() < 0.02);
    }
}
