//! What a search that decides where to measure next needs from the model beyond one
//! [`Estimate`]: how many standard deviations its band spans, the run-to-run noise the model
//! learned, how uncertain a configuration's mean speed is, and the expected improvement of a
//! normal belief over a best value.
//!
//! Kept apart from the fitting code so that the model's internals can change without touching
//! the search: everything here goes through the model's public fields and functions.

use super::{band_quantile, Estimate, Model, BAND_Z, DEFAULT_NOISE_SD};

/// How many predictive standard deviations an estimate's band spans on each side of its mid
/// value: the Student-t quantile the calibrated model widens its band by for the runs it
/// learned from ([`band_quantile`]), [`BAND_Z`] for the standalone model.
pub fn band_sds(model: &Model) -> f64 {
    match model {
        Model::Calibrated(m) => band_quantile(m.runs),
        Model::Standalone => BAND_Z,
    }
}

/// Run-to-run noise of one run's SYPD (standard deviation of ln SYPD) the model assumes: the
/// pooled spread of repeated PE counts it was fitted on, or [`DEFAULT_NOISE_SD`] when nothing
/// was repeated (or the model is the standalone one).
pub fn run_noise_sd(model: &Model) -> f64 {
    match model {
        Model::Calibrated(m) => m.noise_sd,
        Model::Standalone => DEFAULT_NOISE_SD,
    }
}

/// Standard deviation of ln SYPD of what a configuration runs at on average (the mean of many
/// runs), from the model's `estimate` of it: the spread its band stands for, less the
/// run-to-run noise of one run. Whether a configuration is worth measuring depends on its
/// mean; the noise of the one run that would measure it is a different question (how often to
/// repeat it).
pub fn mean_log_sd(model: &Model, estimate: &Estimate) -> f64 {
    if !(estimate.sypd > 0.0 && estimate.high > 0.0) {
        return 0.0;
    }
    let predictive = (estimate.high / estimate.sypd).ln().max(0.0) / band_sds(model);
    let noise = run_noise_sd(model);
    (predictive * predictive - noise * noise).max(0.0).sqrt()
}

/// Expected improvement over `best` of a value believed normal with `mean` and `sd`:
/// `E[max(X - best, 0)]`. Ranks where a run is worth making: a likely small gain and an
/// unlikely large one both count.
pub fn expected_improvement(mean: f64, sd: f64, best: f64) -> f64 {
    if sd <= 1e-12 {
        return (mean - best).max(0.0);
    }
    let u = (mean - best) / sd;
    (mean - best) * normal_cdf(u) + sd * normal_pdf(u)
}

/// Probability that a value believed normal with `mean` and `sd` exceeds `best`.
pub fn probability_above(mean: f64, sd: f64, best: f64) -> f64 {
    if sd <= 1e-12 {
        return if mean > best { 1.0 } else { 0.0 };
    }
    normal_cdf((mean - best) / sd)
}

fn normal_pdf(u: f64) -> f64 {
    (-0.5 * u * u).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The standard normal distribution function.
pub fn normal_cdf(u: f64) -> f64 {
    0.5 * (1.0 + erf(u / std::f64::consts::SQRT_2))
}

/// Abramowitz-Stegun 7.1.26 (absolute error below 1.5e-7): enough to rank and to compare
/// with thresholds of a few percent.
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    if x >= 0.0 {
        y
    } else {
        -y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_improvement_grows_with_mean_and_spread() {
        let a = expected_improvement(0.9, 0.01, 0.91);
        let b = expected_improvement(0.9, 0.05, 0.91);
        let c = expected_improvement(0.92, 0.01, 0.91);
        assert!(a > 0.0 && b > a && c > a, "{a} {b} {c}");
        // Far above the best, the expected improvement is the gap.
        assert!((expected_improvement(1.0, 0.001, 0.9) - 0.1).abs() < 1e-9);
        assert_eq!(expected_improvement(0.8, 0.0, 0.9), 0.0);
    }

    #[test]
    fn the_normal_distribution_function_matches_tables() {
        assert!((erf(1.0) - 0.842_700_79).abs() < 1e-6);
        assert!((normal_cdf(1.644_854) - 0.95).abs() < 1e-6);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-9);
        assert!((probability_above(1.0, 1.0, 0.0) - 0.841_344_7).abs() < 1e-6);
    }

    #[test]
    fn the_mean_is_known_better_than_one_run() {
        let model = Model::Standalone;
        let z = band_sds(&model);
        let noise = run_noise_sd(&model);
        let e = Estimate {
            sypd: 10.0,
            low: 10.0 * (-z * 0.05f64).exp(),
            high: 10.0 * (z * 0.05f64).exp(),
            components: vec![10.0],
        };
        let sd = mean_log_sd(&model, &e);
        assert!(
            (sd - (0.05f64.powi(2) - noise * noise).sqrt()).abs() < 1e-9,
            "{sd}"
        );
        // A band narrower than the noise leaves nothing unknown about the mean.
        let point = Estimate {
            high: 10.0,
            ..e.clone()
        };
        assert_eq!(mean_log_sd(&model, &point), 0.0);
    }

    #[test]
    fn the_standalone_model_has_the_default_noise_and_the_normal_band() {
        assert_eq!(run_noise_sd(&Model::Standalone), DEFAULT_NOISE_SD);
        assert_eq!(band_sds(&Model::Standalone), BAND_Z);
    }
}
