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
//!
//! A single slow run (a bad node, a busy file system) at one count is something else than a
//! law that bends: the law bends at several counts, the slow run at one. Huber's loss takes
//! the edge off such a run, but with five counts and three terms it still decides which terms
//! are kept, so a 30 % slow run inside the range can cost the law its communication term and
//! put it 20 % off. So, with 5 to 10 counts measured (with more, no one run decides the
//! terms), each count measured once is also left out *before* the terms are chosen: when the
//! other counts agree with their own law within their noise and the left-out run lies far
//! outside what its noise and the law's uncertainty there allow ([`OUTLIER_Z`]), that run is
//! set aside and the law fitted without it ([`RobustLaw::dropped`] names it). A run at the top
//! of the range is an extrapolation of the others: the law's uncertainty there is wide, and
//! one run cannot tell a slow run from a component that stops scaling, so it is set aside only
//! when even that uncertainty cannot explain it. Repeats decide that case (a campaign's
//! `repetitions`); a count with repeats is never set aside, its repeats already say what one
//! run is worth.
//!
//! When a single top run is far from the others' law but not set aside, the fit keeps both
//! readings: the law with it, and the law without it ([`RobustLaw::alternative`]). A caller
//! choosing a layout can then take the one whose regret is smallest under either reading
//! ([`least_regret`]): never the best for a reading that turns out false, never far from it.

use super::scaling_law::{ScalingLaw, HUBER_K, TERM_SETS};

/// A set of terms with more coefficients replaces a simpler one only when its left-out score
/// is lower by this fraction: the scores of close sets differ by noise.
pub const SIMPLER_MARGIN: f64 = 0.05;
/// A left-out run further than this many predictive standard deviations from the law of the
/// other counts is set aside: noise alone puts a run there about once in a million.
pub const OUTLIER_Z: f64 = 5.0;
/// The other counts must fit their law within this many of their noise's standard deviations
/// for one run to be called the odd one.
pub const CONSISTENT_Z: f64 = 3.0;
/// Counts needed before one is set aside: four stay, enough to choose the law's terms.
pub const OUTLIER_MIN_COUNTS: usize = 5;
/// Past this many counts no run is set aside: with many counts Huber's loss and the
/// left-out scores already keep one run from deciding the law, and leaving every count out
/// before choosing the terms would cost a fit per count squared.
pub const OUTLIER_MAX_COUNTS: usize = 10;

/// The law chosen by leave-one-out, and its scatter.
#[derive(Debug, Clone, PartialEq)]
pub struct RobustLaw {
    /// The law, fitted on every point with the chosen terms.
    pub law: ScalingLaw,
    /// Robust standard deviation (ln units) of the law's errors at left-out counts; `None`
    /// with fewer than three counts (nothing was left out).
    pub scatter_sd: Option<f64>,
    /// The count whose single run was set aside as one the others cannot explain, if any.
    pub dropped: Option<f64>,
    /// The law without the single run at the largest count, when that run is far from what
    /// the other counts say but within what the law's uncertainty there allows: the runs
    /// cannot tell which of the two is the component's.
    pub alternative: Option<ScalingLaw>,
}

/// One point of a component: `(x, SYPD, variance of ln SYPD)`, `x` its (effective) processes.
pub type Point = (f64, f64, f64);

/// Fits the law to `points`, its terms chosen by leave-one-out over the distinct `x`, a count
/// the others call a slow (or fast) run set aside (see the module doc); `None` without a usable
/// point.
pub fn fit(points: &[Point]) -> Option<RobustLaw> {
    let all = fit_all(points)?;
    match outlier(points) {
        Some(x) => {
            let rest: Vec<Point> = points.iter().copied().filter(|p| p.0 != x).collect();
            let mut law = fit_all(&rest)?;
            law.dropped = Some(x);
            Some(law)
        }
        None => {
            let mut all = all;
            all.alternative = doubtful_top(points);
            Some(all)
        }
    }
}

/// The law without the run at the largest count, when that count was measured once, as many
/// counts were as [`outlier`] needs, and the law of the others puts the run further than
/// [`OUTLIER_Z`] of its noise's standard deviations away: one run that either is slow or shows
/// the component stop scaling, which the runs cannot tell apart.
fn doubtful_top(points: &[Point]) -> Option<ScalingLaw> {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let &top = xs.last()?;
    if !(OUTLIER_MIN_COUNTS..=OUTLIER_MAX_COUNTS).contains(&xs.len()) {
        return None;
    }
    let at: Vec<&Point> = points.iter().filter(|p| p.0 == top).collect();
    let [single] = at[..] else {
        return None;
    };
    let rest: Vec<Point> = points.iter().copied().filter(|p| p.0 != top).collect();
    let law = fit_all(&rest)?.law;
    let z = (single.1 / law.sypd(top)).ln() / single.2.sqrt();
    (z.abs() > OUTLIER_Z).then_some(law)
}

/// The count whose single run the law of the other counts cannot explain, if there is one:
/// left out, its run lies more than [`OUTLIER_Z`] predictive standard deviations (its noise
/// and the law's own uncertainty there) from the law fitted to the others, and those others
/// fit their law within [`CONSISTENT_Z`] of their noise. A count with repeats is never set
/// aside (its repeats already say what one run is worth), nor one of fewer than
/// [`OUTLIER_MIN_COUNTS`] counts (too few left to say what the law is) or more than
/// [`OUTLIER_MAX_COUNTS`].
fn outlier(points: &[Point]) -> Option<f64> {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if !(OUTLIER_MIN_COUNTS..=OUTLIER_MAX_COUNTS).contains(&xs.len()) {
        return None;
    }
    let mut worst: Option<(f64, f64)> = None;
    for &x in &xs {
        let at: Vec<&Point> = points.iter().filter(|p| p.0 == x).collect();
        let [single] = at[..] else {
            continue;
        };
        let rest: Vec<Point> = points.iter().copied().filter(|p| p.0 != x).collect();
        let Some(fitted) = fit_all(&rest) else {
            continue;
        };
        let law = &fitted.law;
        let consistent = rest
            .iter()
            .all(|p| ((p.1 / law.sypd(p.0)).ln() / p.2.sqrt()).abs() <= CONSISTENT_Z);
        if !consistent {
            continue;
        }
        let z = (single.1 / law.sypd(x)).ln() / (single.2 + law.log_var(x)).sqrt();
        if z.abs() > OUTLIER_Z && worst.is_none_or(|w| z.abs() > w.1) {
            worst = Some((x, z.abs()));
        }
    }
    worst.map(|w| w.0)
}

/// The law with its terms chosen by leave-one-out over the distinct `x`, every point kept.
fn fit_all(points: &[Point]) -> Option<RobustLaw> {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 3 {
        // Nothing to leave out: the AIC's choice (two counts keep two terms at most).
        return ScalingLaw::fit_sets(points, &TERM_SETS).map(|law| RobustLaw {
            law,
            scatter_sd: None,
            dropped: None,
            alternative: None,
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
            dropped: None,
            alternative: None,
        });
    };
    let law = ScalingLaw::fit_sets(points, &[TERM_SETS[k]])?;
    let mut abs: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    abs.sort_by(f64::total_cmp);
    Some(RobustLaw {
        law,
        scatter_sd: Some(1.4826 * super::check::median_sorted(&abs)),
        dropped: None,
        alternative: None,
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

/// Of several candidates, the one whose largest regret over the readings is smallest:
/// `times[c][r]` is candidate `c`'s time under reading `r` (each reading one way the runs may
/// be read), a candidate's regret under a reading its time over the best candidate's there,
/// minus 1. Where the runs cannot tell the readings apart, this is the choice that is never far
/// from the best, whichever is true; ties go to the first candidate. 0 without candidates.
pub fn least_regret(times: &[Vec<f64>]) -> usize {
    let readings = times.iter().map(Vec::len).min().unwrap_or(0);
    let best: Vec<f64> = (0..readings)
        .map(|r| times.iter().map(|t| t[r]).fold(f64::INFINITY, f64::min))
        .collect();
    let worst = |t: &Vec<f64>| {
        best.iter()
            .enumerate()
            .map(|(r, b)| t[r] / b - 1.0)
            .fold(0.0, f64::max)
    };
    (0..times.len())
        .min_by(|&a, &b| worst(&times[a]).total_cmp(&worst(&times[b])))
        .unwrap_or(0)
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

    /// Five single runs at 1/16 to all of 512 PEs of `a / n + b + c n` (times in days per
    /// simulated year), with 1.5 % noise drawn from a fixed list.
    fn five_runs(a: f64, b: f64, c: f64) -> Vec<Point> {
        let noise = [0.012, -0.009, 0.004, -0.015, 0.007];
        [32.0, 64.0, 128.0, 256.0, 512.0]
            .iter()
            .zip(noise)
            .map(|(&n, e)| (n, (1.0 + e) / (a / n + b + c * n), 0.015f64.powi(2)))
            .collect()
    }

    #[test]
    fn sets_aside_one_slow_run_the_others_cannot_explain() {
        let truth = |n: f64| 1.0 / (40.0 / n + 0.02 + 4e-4 * n);
        let clean = five_runs(40.0, 0.02, 4e-4);
        assert_eq!(fit(&clean).unwrap().dropped, None);
        // The run at 256 of 512 PEs 30 % slow: the law of the other four puts it far off.
        let mut slow = clean.clone();
        slow[3].1 /= 1.3;
        let fitted = fit(&slow).unwrap();
        assert_eq!(fitted.dropped, Some(256.0));
        for n in [256.0, 400.0, 512.0] {
            let error = fitted.law.sypd(n) / truth(n) - 1.0;
            assert!(error.abs() < 0.04, "{n}: {error} {fitted:?}");
        }
        // Kept, the slow run bends the law: it loses the communication term and is 20 % off.
        let kept = fit_all(&slow).unwrap();
        assert_eq!(kept.law.growth, 0.0);
        assert!((kept.law.sypd(256.0) / truth(256.0) - 1.0).abs() > 0.15);
        assert!(fitted.scatter_sd.unwrap() < 0.05 && kept.scatter_sd.unwrap() > 0.1);
    }

    #[test]
    fn a_count_with_repeats_is_never_set_aside() {
        let mut pts = five_runs(40.0, 0.02, 1e-5);
        pts[3].1 /= 1.3;
        // The same count measured again, just as slow: two runs agree, so it is the curve.
        pts.push(pts[3]);
        assert_eq!(fit(&pts).unwrap().dropped, None);
    }

    #[test]
    fn a_doubtful_top_run_gives_the_law_without_it_as_the_other_reading() {
        // Amdahl's law; the run at the top count 30 % slow. The other four say the component
        // still scales; the run says it stopped: one run cannot tell.
        let truth = |n: f64| 1.0 / (40.0 / n + 0.02);
        let clean = five_runs(40.0, 0.02, 0.0);
        assert_eq!(fit(&clean).unwrap().alternative, None);
        let mut slow = clean.clone();
        slow[4].1 /= 1.3;
        let fitted = fit(&slow).unwrap();
        let alternative = fitted.alternative.clone().expect("the top run is doubtful");
        assert!((alternative.sypd(512.0) / truth(512.0) - 1.0).abs() < 0.05);
        // The main reading follows the slow run at the top.
        assert!(fitted.law.sypd(512.0) < 0.9 * truth(512.0), "{fitted:?}");
        // Measured twice alike, the top count is the component's: nothing to doubt.
        let mut twice = slow.clone();
        twice.push(slow[4]);
        assert_eq!(fit(&twice).unwrap().alternative, None);
    }

    #[test]
    fn least_regret_picks_the_candidate_never_far_from_the_best() {
        // Candidate 0 is best under reading 0 and 30 % off under reading 1; candidate 2 is
        // 3 % off under either.
        let times = vec![vec![100.0, 130.0], vec![125.0, 100.0], vec![103.0, 103.0]];
        assert_eq!(least_regret(&times), 2);
        // One reading: the fastest.
        assert_eq!(least_regret(&[vec![3.0], vec![2.0], vec![2.0]]), 1);
        assert_eq!(least_regret(&[]), 0);
    }
}
