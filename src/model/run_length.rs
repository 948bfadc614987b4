//! The run's length: a fixed cost per run, amortised over the simulated time.
//!
//! A coupled run pays some seconds that do not grow with the simulated time (the first coupling
//! steps' set-up, reading restarts and forcing, the last steps' output), and a timing window
//! that covers the whole run counts them. Its SYPD is then lower for a short run than for a long
//! one on the same configuration: with `F` fixed seconds and `S` simulated seconds, the wall
//! time is `S / (365 x_inf) + F` days-in-seconds, i.e. `1 / x = 1 / x_inf + 365 F / S` (`x` in
//! SYPD, [`lengthen`]). On the real EC-Earth3 SR runs NEMO on 144 PEs, as the bottleneck, takes
//! 0.564 s per coupling step in the week-long (225-step) runs and 0.507-0.518 s in the
//! two-month (1889-step) runs: about 12 s per run that a per-step speed cannot explain (the
//! profile over every component and the coupled times of all 28 runs finds 13.4 s).
//!
//! The length of a run is known before it runs (the user chooses it), so it is an input of a
//! prediction, not an outcome. The model learns `F` from the measured runs when they have at
//! least two clearly different lengths (otherwise it is not identifiable and every run's SYPD
//! already holds it): every measured speed is turned into its long-run value ([`steady`]) for
//! a fixed cost on a grid ([`FIXED_SHARE_GRID`]), the rest of the model is fitted on those, and
//! the fixed cost whose fit has the highest likelihood of the *measured* speeds (the
//! transformed data's likelihood plus the log Jacobian of the transformation) wins: a profile
//! likelihood, computed on the training runs only, with the smoothers' hyperparameters held
//! where the fit without a fixed cost put them.

use super::MeasuredRun;

/// Fixed costs tried, as a share of the shortest training run's coupled wall time.
pub const FIXED_SHARE_GRID: [f64; 11] = [
    0.0, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25,
];
/// Lengths must differ at least by this factor for the fixed cost to be learned.
pub const MIN_LENGTH_RATIO: f64 = 1.5;

/// `365 F / S`: what a fixed cost of `fixed_s` seconds adds to 1 / SYPD in a run of
/// `simulated_s` simulated seconds (0 when either is unknown).
pub fn penalty(fixed_s: f64, simulated_s: Option<f64>) -> f64 {
    match simulated_s {
        Some(s) if s > 0.0 && fixed_s > 0.0 => 365.0 * fixed_s / s,
        _ => 0.0,
    }
}

/// The long-run SYPD of a speed `x` measured with penalty `phi` (`None` if the fixed cost
/// would take the whole run).
pub fn steady(x: f64, phi: f64) -> Option<f64> {
    let inv = 1.0 / x - phi;
    (inv > 0.0 && inv.is_finite()).then(|| 1.0 / inv)
}

/// The SYPD of a run with penalty `phi` whose long-run speed is `x`.
pub fn lengthen(x: f64, phi: f64) -> f64 {
    if phi <= 0.0 {
        x
    } else {
        1.0 / (1.0 / x + phi)
    }
}

/// The fixed costs (seconds) to try on `runs`: just 0 unless every run knows its length and
/// the lengths differ by [`MIN_LENGTH_RATIO`].
pub fn candidates(runs: &[&MeasuredRun]) -> Vec<f64> {
    let lengths: Option<Vec<f64>> = runs.iter().map(|r| r.simulated_s).collect();
    let Some(lengths) = lengths.filter(|l| l.len() >= 3) else {
        return vec![0.0];
    };
    let (lo, hi) = lengths
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &s| {
            (lo.min(s), hi.max(s))
        });
    if !(lo > 0.0 && hi >= MIN_LENGTH_RATIO * lo) {
        return vec![0.0];
    }
    // Coupled wall seconds of the shortest run: S / (365 x).
    let shortest = runs
        .iter()
        .filter_map(|r| Some(r.simulated_s? / (365.0 * r.coupled_sypd)))
        .filter(|t| t.is_finite() && *t > 0.0)
        .fold(f64::INFINITY, f64::min);
    if !shortest.is_finite() {
        return vec![0.0];
    }
    FIXED_SHARE_GRID.iter().map(|f| f * shortest).collect()
}

/// The median length of `runs` (seconds simulated), when every run knows it.
pub fn typical(runs: &[&MeasuredRun]) -> Option<f64> {
    let mut v: Vec<f64> = runs.iter().map(|r| r.simulated_s).collect::<Option<_>>()?;
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(super::check::median_sorted(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_and_lengthen_are_inverse() {
        let phi = penalty(12.0, Some(224.0 * 2700.0));
        let x = 13.05;
        let inf = steady(x, phi).unwrap();
        assert!(inf > x && (lengthen(inf, phi) - x).abs() < 1e-12);
        // 12 s in a week-long run at 13 SYPD is about 9 % of its wall time.
        assert!((inf / x - 1.0 - 0.105).abs() < 0.01, "{inf}");
        assert_eq!(lengthen(x, 0.0), x);
        assert!(steady(x, 1.0).is_none());
    }
}
