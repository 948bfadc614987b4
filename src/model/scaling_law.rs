//! A component's coupled-mode scalability curve learned from coupled runs alone, for a
//! component that has no standalone curve.
//!
//! Every measured coupled run gives each component's own compute speed (LUCIA, OASIS 5 and
//! lucia_lite tables count its computing seconds without its waiting), so runs spread over a
//! component's PE counts trace its curve in the coupled mode, the one a coupled run goes at.
//! The model needs that curve everywhere in the component's range, also far from any run, with
//! an honest uncertainty. A smoother alone cannot extrapolate a speed that grows with PEs
//! (it returns to a level); a parametric scaling law can, and its uncertainty grows with the
//! distance from the measured counts as the law's parameters allow.
//!
//! The law is Amdahl's with a communication term: wall days per simulated year
//! `1 / SYPD(p) = serial + parallel / p + growth * p`, each coefficient `>= 0`: a part that
//! does not shrink with PEs, perfectly parallel work, and communication that grows with PEs
//! (the reason NEMO gets slower past 1129 PEs on MareNostrum 4). It is fitted to the measured
//! speeds in log space (relative errors, as run-to-run noise is), by Gauss-Newton on the
//! coefficients, each step a weighted non-negative least-squares problem solved exactly by
//! trying every set of free coefficients. Which terms are kept is chosen by AIC on the training
//! runs, so two measured counts give Amdahl's two terms and one count ideal scaling. The fit is
//! robust: Huber weights, so one run 20 % off its repeats (a bad node, an odd time of day)
//! pulls the law little.
//!
//! What the law cannot follow (decomposition effects: NEMO's speed jumps between neighbouring
//! PE counts) the calibrated model's smoother takes up as a ratio around the law, as it does
//! around a standalone curve ([`super::gp`]). The band holds both: the smoother's variance and
//! the law's own, [`ScalingLaw::log_var`], the delta-method variance of ln SYPD from the
//! coefficients' covariance, scaled up by the fit's reduced chi-square when the law fits worse
//! than the noise says.

use serde::{Deserialize, Serialize};

use super::gp::{cholesky, solve_cholesky};

/// Huber's threshold in robust standard deviations: residuals beyond it weigh less.
pub(super) const HUBER_K: f64 = 1.5;
/// Gauss-Newton steps (the fit changes by far less than the noise after a few).
pub(super) const ITERATIONS: usize = 12;
/// The sets of free coefficients tried (serial, parallel, growth), in the order a tie is
/// broken: ideal scaling, Amdahl, Amdahl with communication, then laws without a parallel
/// part (a component measured only past its fastest count).
pub(super) const TERM_SETS: [[bool; 3]; 7] = [
    [false, true, false],
    [true, true, false],
    [false, true, true],
    [true, true, true],
    [true, false, false],
    [true, false, true],
    [false, false, true],
];

/// One measured speed of a component for the law's fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// PEs of the component.
    pub nproc: u32,
    /// Its speed (SYPD from its compute seconds).
    pub sypd: f64,
    /// Variance of ln SYPD of this observation (run-to-run noise, plus more for a speed
    /// measured where the component did not set the pace).
    pub log_var: f64,
}

/// A fitted scaling law `1 / SYPD(p) = serial + parallel / p + growth * p` with the
/// covariance of its coefficients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingLaw {
    /// Days of wall time per simulated year that do not shrink with PEs.
    pub serial: f64,
    /// Days per simulated year on one PE of the perfectly parallel work.
    pub parallel: f64,
    /// Days per simulated year per PE of communication that grows with PEs.
    pub growth: f64,
    /// Covariance of `(serial, parallel, growth)`, row-major; zero rows and columns for the
    /// coefficients the fit left out.
    pub covariance: [f64; 9],
    /// Distinct PE counts it was fitted on (fewer than three leave terms out).
    pub counts: usize,
}

impl ScalingLaw {
    /// The law's speed at `nproc` PEs (SYPD).
    pub fn sypd(&self, nproc: f64) -> f64 {
        1.0 / self.days(nproc)
    }

    /// Wall days per simulated year at `nproc` PEs.
    fn days(&self, nproc: f64) -> f64 {
        let p = nproc.max(1.0);
        self.serial + self.parallel / p + self.growth * p
    }

    /// Variance of ln SYPD at `nproc` PEs from the coefficients' uncertainty (delta method):
    /// small among the measured counts, growing away from them.
    pub fn log_var(&self, nproc: f64) -> f64 {
        let p = nproc.max(1.0);
        let x = [1.0, 1.0 / p, p];
        let t = self.days(p);
        let mut v = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                v += x[i] * self.covariance[3 * i + j] * x[j];
            }
        }
        (v / (t * t)).max(0.0)
    }

    /// Fits the law to `observations`; `None` without a usable observation.
    pub fn fit(observations: &[Observation]) -> Option<ScalingLaw> {
        let points: Vec<(f64, f64, f64)> = observations
            .iter()
            .map(|o| (f64::from(o.nproc), o.sypd, o.log_var))
            .collect();
        ScalingLaw::fit_sets(&points, &TERM_SETS)
    }

    /// Fits the law to points `(x, SYPD, variance of ln SYPD)`, `x` the processes the law is
    /// evaluated at (real ones, or effective ones: [`super::decomposition`]), keeping the
    /// best of `sets` by AIC at each Gauss-Newton step (one set: that set's law); `None`
    /// without a usable point or when no set fits.
    pub(super) fn fit_sets(points: &[(f64, f64, f64)], sets: &[[bool; 3]]) -> Option<ScalingLaw> {
        let obs: Vec<(f64, f64, f64)> = points
            .iter()
            .copied()
            .filter(|&(x, sypd, var)| {
                x.is_finite()
                    && x >= 1.0
                    && sypd.is_finite()
                    && sypd > 0.0
                    && var.is_finite()
                    && var > 0.0
            })
            .collect();
        if obs.is_empty() {
            return None;
        }
        let mut counts: Vec<f64> = obs.iter().map(|o| o.0).collect();
        counts.sort_by(f64::total_cmp);
        counts.dedup();
        // Coefficients in scaled units, so the three columns have similar sizes: p in units of
        // the geometric mean count, days in units of the median measured days.
        let p_ref = (counts.iter().map(|p| p.ln()).sum::<f64>() / counts.len() as f64).exp();
        let mut days: Vec<f64> = obs.iter().map(|o| 1.0 / o.1).collect();
        days.sort_by(f64::total_cmp);
        let t_ref = days[days.len() / 2];
        let rows: Vec<[f64; 3]> = obs
            .iter()
            .map(|o| {
                let q = o.0 / p_ref;
                [1.0, 1.0 / q, q]
            })
            .collect();
        let log_days: Vec<f64> = obs.iter().map(|o| (1.0 / (o.1 * t_ref)).ln()).collect();
        let sd: Vec<f64> = obs.iter().map(|o| o.2.sqrt()).collect();
        // Start from relative residuals around the measured days themselves.
        let mut fitted: Vec<f64> = log_days.iter().map(|l| l.exp()).collect();
        let mut robust = vec![1.0; obs.len()];
        let mut best: Option<Solution> = None;
        for _ in 0..ITERATIONS {
            // The first set in TERM_SETS order wins unless another is clearly better (exact
            // fits tie up to rounding).
            let solution = sets
                .iter()
                .filter(|set| set.iter().filter(|&&f| f).count() <= counts.len())
                .filter_map(|set| solve(set, &rows, &log_days, &fitted, &sd, &robust))
                .reduce(|a, b| if b.aic < a.aic - 1e-9 { b } else { a })?;
            fitted = rows.iter().map(|r| dot(r, &solution.theta)).collect();
            if fitted.iter().any(|t| !(t.is_finite() && *t > 0.0)) {
                break;
            }
            // Huber weights on the standardised log residuals, against their robust scale.
            let z: Vec<f64> = log_days
                .iter()
                .zip(&fitted)
                .zip(&sd)
                .map(|((l, t), s)| (l - t.ln()) / s)
                .collect();
            let scale = (1.4826 * median_abs(&z)).max(1.0);
            robust = z
                .iter()
                .map(|u| (HUBER_K * scale / u.abs().max(1e-12)).min(1.0))
                .collect();
            best = Some(solution);
        }
        let mut s = best?;
        // The uncertainty holds every term the runs cannot rule out, also those the fit left
        // out: a communication term too small to show among the measured counts may still
        // dominate far above them.
        if counts.len() >= 3 {
            let fitted: Vec<f64> = rows.iter().map(|r| dot(r, &s.theta)).collect();
            if let Some(c) = covariance(&[true; 3], &rows, &fitted, &sd, &robust, s.inflation) {
                s.covariance = c;
            }
        }
        // Back to days per simulated year and PEs: serial * t_ref, parallel * t_ref * p_ref,
        // growth * t_ref / p_ref.
        let unit = [t_ref, t_ref * p_ref, t_ref / p_ref];
        let mut covariance = [0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                covariance[3 * i + j] = s.covariance[3 * i + j] * unit[i] * unit[j];
            }
        }
        Some(ScalingLaw {
            serial: s.theta[0] * unit[0],
            parallel: s.theta[1] * unit[1],
            growth: s.theta[2] * unit[2],
            covariance,
            counts: counts.len(),
        })
    }
}

/// One set of free coefficients solved.
pub(super) struct Solution {
    pub(super) theta: [f64; 3],
    pub(super) covariance: [f64; 9],
    /// The reduced chi-square the covariance was scaled by (at least 1).
    pub(super) inflation: f64,
    aic: f64,
}

/// The Gauss-Newton step for the free coefficients of `set`, linearised at the current fitted
/// days `fitted`: minimises `sum w (ln days_i - ln t_i - (x_i . theta - t_i) / t_i)^2`, i.e.
/// weighted least squares on rows `x_i / t_i` against `ln days_i - ln t_i + 1`. `None` when a
/// free coefficient comes out negative (another set is the non-negative optimum) or the
/// system is singular.
pub(super) fn solve(
    set: &[bool; 3],
    rows: &[[f64; 3]],
    log_days: &[f64],
    fitted: &[f64],
    sd: &[f64],
    robust: &[f64],
) -> Option<Solution> {
    let free: Vec<usize> = (0..3).filter(|&k| set[k]).collect();
    let k = free.len();
    let mut ata = vec![0.0; k * k];
    let mut atb = vec![0.0; k];
    for i in 0..rows.len() {
        let w = robust[i] / (sd[i] * sd[i]);
        let t = fitted[i];
        let target = log_days[i] - t.ln() + 1.0;
        for (a, &fa) in free.iter().enumerate() {
            let xa = rows[i][fa] / t;
            atb[a] += w * xa * target;
            for (b, &fb) in free.iter().enumerate() {
                ata[a * k + b] += w * xa * rows[i][fb] / t;
            }
        }
    }
    let chol = cholesky(&ata, k)?;
    let sol = solve_cholesky(&chol, k, &atb);
    if sol.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
        return None;
    }
    let mut theta = [0.0; 3];
    for (a, &f) in free.iter().enumerate() {
        theta[f] = sol[a];
    }
    // Weighted residuals at the new coefficients, in the log space the noise lives in.
    let mut chi2 = 0.0;
    let mut weight_sum = 0.0;
    for i in 0..rows.len() {
        let t = dot(&rows[i], &theta);
        if !(t.is_finite() && t > 0.0) {
            return None;
        }
        let r = (log_days[i] - t.ln()) / sd[i];
        chi2 += robust[i] * r * r;
        weight_sum += robust[i];
    }
    // The coefficients' covariance: the inverse information matrix at the new coefficients,
    // scaled up by the reduced chi-square when the law fits worse than the noise alone would
    // allow.
    let dof = weight_sum - k as f64;
    let inflation = if dof > 0.5 {
        (chi2 / dof).max(1.0)
    } else {
        1.0
    };
    let fitted: Vec<f64> = rows.iter().map(|r| dot(r, &theta)).collect();
    let covariance = covariance(set, rows, &fitted, sd, robust, inflation)?;
    Some(Solution {
        theta,
        covariance,
        inflation,
        aic: chi2 + 2.0 * k as f64,
    })
}

/// `inflation` times the inverse of the information matrix of the free coefficients of `set`
/// about ln days at the fitted days `fitted` (rows `x_i / t_i`, weights `robust_i / sd_i^2`),
/// as a 3 x 3 matrix with zeros for the others; `None` when it is singular.
pub(super) fn covariance(
    set: &[bool; 3],
    rows: &[[f64; 3]],
    fitted: &[f64],
    sd: &[f64],
    robust: &[f64],
    inflation: f64,
) -> Option<[f64; 9]> {
    let free: Vec<usize> = (0..3).filter(|&k| set[k]).collect();
    let k = free.len();
    let mut info = vec![0.0; k * k];
    for i in 0..rows.len() {
        let w = robust[i] / (sd[i] * sd[i]);
        let t = fitted[i];
        for (a, &fa) in free.iter().enumerate() {
            for (b, &fb) in free.iter().enumerate() {
                info[a * k + b] += w * (rows[i][fa] / t) * (rows[i][fb] / t);
            }
        }
    }
    let chol = cholesky(&info, k)?;
    let mut out = [0.0; 9];
    for (b, &fb) in free.iter().enumerate() {
        let mut e = vec![0.0; k];
        e[b] = 1.0;
        let col = solve_cholesky(&chol, k, &e);
        for (a, &fa) in free.iter().enumerate() {
            out[3 * fa + fb] = inflation * col[a];
        }
    }
    Some(out)
}

pub(super) fn dot(x: &[f64; 3], y: &[f64; 3]) -> f64 {
    x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
}

pub(super) fn median_abs(v: &[f64]) -> f64 {
    let mut a: Vec<f64> = v.iter().map(|x| x.abs()).collect();
    a.sort_by(f64::total_cmp);
    super::check::median_sorted(&a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(law: impl Fn(f64) -> f64, counts: &[u32], sd: f64) -> Vec<Observation> {
        counts
            .iter()
            .map(|&p| Observation {
                nproc: p,
                sypd: law(f64::from(p)),
                log_var: sd * sd,
            })
            .collect()
    }

    #[test]
    fn recovers_an_amdahl_law_with_communication() {
        let truth = |p: f64| 1.0 / (0.01 + 4.0 / p + 2e-5 * p);
        let law = ScalingLaw::fit(&obs(truth, &[48, 96, 192, 384, 768, 1200], 0.03)).unwrap();
        for p in [48.0, 300.0, 1200.0, 2000.0] {
            assert!((law.sypd(p) / truth(p) - 1.0).abs() < 1e-6, "{p}");
        }
        assert!((law.growth / 2e-5 - 1.0).abs() < 1e-4, "{law:?}");
    }

    #[test]
    fn its_uncertainty_grows_away_from_the_measured_counts() {
        let truth = |p: f64| 1.0 / (0.02 + 3.0 / p);
        // Noisy: every other point 5 % fast.
        let mut o = obs(truth, &[100, 140, 200, 280, 400], 0.05);
        for (i, x) in o.iter_mut().enumerate() {
            x.sypd *= if i % 2 == 0 { 1.05 } else { 0.95 };
        }
        let law = ScalingLaw::fit(&o).unwrap();
        let near = law.log_var(200.0);
        assert!(law.log_var(2000.0) > 4.0 * near, "{law:?}");
        assert!(law.log_var(20.0) > 4.0 * near, "{law:?}");
        assert!((law.sypd(200.0) / truth(200.0) - 1.0).abs() < 0.05);
    }

    #[test]
    fn one_run_far_off_its_repeats_pulls_the_law_little() {
        let truth = |p: f64| 1.0 / (0.01 + 4.0 / p);
        let mut o = obs(truth, &[48, 96, 192, 192, 192, 384, 768], 0.03);
        o[2].sypd *= 0.7;
        let law = ScalingLaw::fit(&o).unwrap();
        assert!(
            (law.sypd(192.0) / truth(192.0) - 1.0).abs() < 0.03,
            "{law:?}"
        );
    }

    #[test]
    fn few_counts_keep_few_terms() {
        let truth = |p: f64| 1.0 / (0.01 + 4.0 / p + 1e-5 * p);
        let one = ScalingLaw::fit(&obs(truth, &[200, 200], 0.03)).unwrap();
        assert_eq!((one.serial, one.growth, one.counts), (0.0, 0.0, 1));
        assert!((one.sypd(200.0) / truth(200.0) - 1.0).abs() < 1e-9);
        let two = ScalingLaw::fit(&obs(truth, &[100, 400], 0.03)).unwrap();
        assert!(two.serial > 0.0 || two.growth > 0.0);
        assert!((two.sypd(400.0) / truth(400.0) - 1.0).abs() < 1e-6);
        assert!(ScalingLaw::fit(&[]).is_none());
    }
}
