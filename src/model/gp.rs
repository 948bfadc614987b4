//! A small one-dimensional Gaussian-process smoother (no dependency: the systems are tiny).
//!
//! Kernel: `k(x, x') = prior_sd^2 + sf^2 exp(-(x - x')^2 / (2 ell^2))`, plus `sn^2` on the
//! diagonal for measurement noise. The constant term lets the data move the level away from
//! the prior mean (a component's own average ratio), the squared-exponential term lets it vary
//! smoothly with x; far from any data the mean returns to the level and the variance grows
//! back to `prior_sd^2 + sf^2`. Hyperparameters `ell` and `sf` are chosen by maximising the
//! marginal likelihood over a fixed grid (type-II maximum likelihood, a rule that uses the
//! training data only); `sn` is given by the caller.

use serde::{Deserialize, Serialize};

/// Length scales tried (in the units of x; the model uses ln nproc, so 0.35 is about a 40 %
/// change in PEs).
const ELL_GRID: [f64; 5] = [0.1, 0.2, 0.35, 0.6, 1.0];
/// Signal standard deviations tried (in ln SYPD ratio).
const SF_GRID: [f64; 3] = [0.05, 0.1, 0.2];

/// The data and hyperparameters of a fitted process; what is serialised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpData {
    /// Training inputs (the model uses ln nproc).
    pub xs: Vec<f64>,
    /// Training targets, one per input (the model uses ln of a component's SYPD in a coupled
    /// run over its standalone curve's SYPD at those PEs).
    pub ys: Vec<f64>,
    /// The level the mean returns to far from the data (the model: the mean ln ratio over all
    /// components).
    pub prior_mean: f64,
    /// Prior standard deviation of that level (the kernel's constant term).
    pub prior_sd: f64,
    /// Length scale of the squared-exponential term, in units of x.
    pub ell: f64,
    /// Signal standard deviation of the squared-exponential term, in units of y.
    pub sf: f64,
    /// Measurement noise standard deviation, in units of y.
    pub sn: f64,
    /// Extra noise variance per point, on top of `sn^2` (empty: none).
    #[serde(default)]
    pub extra_var: Vec<f64>,
    /// Prior sd of the linear trend's slope (0 in files written before it existed: no trend).
    #[serde(default)]
    pub slope_sd: f64,
    /// Where the trend is centred (the mean of the training xs).
    #[serde(default)]
    pub centre: f64,
}

/// A fitted process, ready to predict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "GpData", into = "GpData")]
pub struct Gp {
    data: GpData,
    /// Lower Cholesky factor of the covariance, row-major.
    chol: Vec<f64>,
    /// `K^-1 (y - prior_mean)`.
    alpha: Vec<f64>,
    /// Negative log marginal likelihood (without the constant).
    nll: f64,
}

impl From<GpData> for Gp {
    fn from(d: GpData) -> Gp {
        Gp::build(d).unwrap_or_else(|d| Gp {
            chol: Vec::new(),
            alpha: Vec::new(),
            nll: f64::INFINITY,
            data: GpData {
                xs: Vec::new(),
                ys: Vec::new(),
                ..*d
            },
        })
    }
}

impl From<Gp> for GpData {
    fn from(g: Gp) -> GpData {
        g.data
    }
}

impl Gp {
    /// Factorises; `Err` gives the data back when the covariance is not positive definite.
    fn build(data: GpData) -> Result<Gp, Box<GpData>> {
        let n = data.xs.len();
        let mut k = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let mut v = kernel(&data, data.xs[i], data.xs[j]);
                if i == j {
                    v += data.sn * data.sn + data.extra_var.get(i).copied().unwrap_or(0.0);
                }
                k[i * n + j] = v;
                k[j * n + i] = v;
            }
        }
        let Some(chol) = cholesky(&k, n) else {
            return Err(Box::new(data));
        };
        let r: Vec<f64> = data.ys.iter().map(|y| y - data.prior_mean).collect();
        let z = forward(&chol, n, &r);
        let alpha = backward(&chol, n, &z);
        let nll = 0.5 * z.iter().map(|v| v * v).sum::<f64>()
            + (0..n).map(|i| chol[i * n + i].ln()).sum::<f64>();
        Ok(Gp {
            data,
            chol,
            alpha,
            nll,
        })
    }

    /// Fits on `(xs, ys)` with noise `sn`, choosing `ell` and `sf` by marginal likelihood.
    pub fn fit(xs: &[f64], ys: &[f64], prior_mean: f64, prior_sd: f64, sn: f64) -> Gp {
        Gp::fit_weighted(xs, ys, &[], prior_mean, prior_sd, sn)
    }

    /// [`Gp::fit`] with `extra_var[i]` added to point `i`'s noise variance (less trusted points).
    pub fn fit_weighted(
        xs: &[f64],
        ys: &[f64],
        extra_var: &[f64],
        prior_mean: f64,
        prior_sd: f64,
        sn: f64,
    ) -> Gp {
        Gp::fit_trend(xs, ys, extra_var, prior_mean, prior_sd, 0.0, sn)
    }

    /// [`Gp::fit_weighted`] with a linear trend in x whose slope has prior sd `slope_sd`
    /// (centred on the mean of `xs`): far from the data the mean follows the trend instead of
    /// returning to the level, and the variance grows with the distance.
    pub fn fit_trend(
        xs: &[f64],
        ys: &[f64],
        extra_var: &[f64],
        prior_mean: f64,
        prior_sd: f64,
        slope_sd: f64,
        sn: f64,
    ) -> Gp {
        Gp::fit_on_grid(
            xs, ys, extra_var, prior_mean, prior_sd, slope_sd, sn, &ELL_GRID, &SF_GRID,
        )
    }

    /// [`Gp::fit_trend`] with the length scale `ell` and signal sd `sf` given (no search): a
    /// cheap fit to compare transformations of the same data.
    #[allow(clippy::too_many_arguments)]
    pub fn fit_with(
        xs: &[f64],
        ys: &[f64],
        extra_var: &[f64],
        prior_mean: f64,
        prior_sd: f64,
        slope_sd: f64,
        sn: f64,
        (ell, sf): (f64, f64),
    ) -> Gp {
        Gp::fit_on_grid(
            xs,
            ys,
            extra_var,
            prior_mean,
            prior_sd,
            slope_sd,
            sn,
            &[ell],
            &[sf],
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn fit_on_grid(
        xs: &[f64],
        ys: &[f64],
        extra_var: &[f64],
        prior_mean: f64,
        prior_sd: f64,
        slope_sd: f64,
        sn: f64,
        ells: &[f64],
        sfs: &[f64],
    ) -> Gp {
        let centre = if xs.is_empty() {
            0.0
        } else {
            xs.iter().sum::<f64>() / xs.len() as f64
        };
        let mut best: Option<Gp> = None;
        for &ell in ells {
            for &sf in sfs {
                let data = GpData {
                    xs: xs.to_vec(),
                    ys: ys.to_vec(),
                    prior_mean,
                    prior_sd,
                    ell,
                    sf,
                    sn,
                    extra_var: extra_var.to_vec(),
                    slope_sd,
                    centre,
                };
                if let Ok(g) = Gp::build(data) {
                    if best.as_ref().is_none_or(|b| g.nll < b.nll) {
                        best = Some(g);
                    }
                }
            }
        }
        best.unwrap_or_else(|| {
            // Only reachable with no data or degenerate noise: the prior alone.
            Gp::from(GpData {
                xs: Vec::new(),
                ys: Vec::new(),
                prior_mean,
                prior_sd,
                ell: ELL_GRID[2],
                sf: SF_GRID[1],
                sn,
                extra_var: Vec::new(),
                slope_sd,
                centre,
            })
        })
    }

    /// Negative log marginal likelihood of the data it was fitted on (without the constant).
    pub fn nll(&self) -> f64 {
        self.nll
    }

    /// The training data and hyperparameters it was built from (what is saved; reused to refit
    /// with the same `ell` and `sf`).
    pub fn data(&self) -> &GpData {
        &self.data
    }

    /// Posterior mean at `x` only (what the search needs for every candidate: no solve).
    pub fn mean(&self, x: f64) -> f64 {
        self.data.prior_mean
            + self
                .data
                .xs
                .iter()
                .zip(&self.alpha)
                .map(|(&xi, a)| kernel(&self.data, x, xi) * a)
                .sum::<f64>()
    }

    /// Posterior mean and variance of the latent function at `x` (without the noise).
    pub fn predict(&self, x: f64) -> (f64, f64) {
        let n = self.data.xs.len();
        let ks: Vec<f64> = self
            .data
            .xs
            .iter()
            .map(|&xi| kernel(&self.data, x, xi))
            .collect();
        let mean =
            self.data.prior_mean + ks.iter().zip(&self.alpha).map(|(a, b)| a * b).sum::<f64>();
        let v = forward(&self.chol, n, &ks);
        let var = kernel(&self.data, x, x) - v.iter().map(|t| t * t).sum::<f64>();
        (mean, var.max(0.0))
    }
}

fn kernel(d: &GpData, a: f64, b: f64) -> f64 {
    let z = (a - b) / d.ell;
    d.prior_sd * d.prior_sd
        + d.slope_sd * d.slope_sd * (a - d.centre) * (b - d.centre)
        + d.sf * d.sf * (-0.5 * z * z).exp()
}

/// Lower Cholesky factor (row-major) of the `n` x `n` matrix `a`; `None` unless it is positive
/// definite.
pub(super) fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let s = a[i * n + j] - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            if i == j {
                if !(s > 0.0 && s.is_finite()) {
                    return None;
                }
                l[i * n + i] = s.sqrt();
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// Solves `L L^T x = b` given the factor `l` of [`cholesky`].
pub(super) fn solve_cholesky(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    backward(l, n, &forward(l, n, b))
}

fn forward(l: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; n];
    for i in 0..n {
        let s = b[i] - (0..i).map(|k| l[i * n + k] * y[k]).sum::<f64>();
        y[i] = s / l[i * n + i];
    }
    y
}

fn backward(l: &[f64], n: usize, y: &[f64]) -> Vec<f64> {
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s = y[i] - (i + 1..n).map(|k| l[k * n + i] * x[k]).sum::<f64>();
        x[i] = s / l[i * n + i];
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_data_near_it_and_returns_to_the_level_far_away() {
        let xs: Vec<f64> = (0..8).map(|i| 4.0 + 0.2 * f64::from(i)).collect();
        let ys: Vec<f64> = xs.iter().map(|x| -0.2 + 0.05 * (3.0 * x).sin()).collect();
        let g = Gp::fit(&xs, &ys, 0.0, 0.2, 0.01);
        let (m, v_near) = g.predict(xs[3]);
        assert!((m - ys[3]).abs() < 0.02, "{m} vs {}", ys[3]);
        let (far, v_far) = g.predict(20.0);
        // The level is learned (about -0.2), not the prior mean 0.
        assert!((far + 0.2).abs() < 0.06, "{far}");
        assert!(v_far > 4.0 * v_near);
    }

    #[test]
    fn with_a_trend_it_extrapolates_the_drift() {
        // A ratio that falls by 0.08 per unit of x, measured on x in 5..7.
        let xs: Vec<f64> = (0..9).map(|i| 5.0 + 0.25 * f64::from(i)).collect();
        let ys: Vec<f64> = xs.iter().map(|x| -0.1 - 0.08 * (x - 6.0)).collect();
        let flat = Gp::fit(&xs, &ys, -0.1, 0.2, 0.01);
        let trend = Gp::fit_trend(&xs, &ys, &[], -0.1, 0.2, 0.1, 0.01);
        let truth = -0.1 - 0.08 * (3.5 - 6.0);
        let (m_trend, v_trend) = trend.predict(3.5);
        let (m_flat, _) = flat.predict(3.5);
        assert!((m_trend - truth).abs() < 0.03, "{m_trend} vs {truth}");
        assert!((m_trend - truth).abs() < (m_flat - truth).abs());
        assert!(v_trend > trend.predict(6.0).1);
    }

    #[test]
    fn survives_a_json_round_trip() {
        let g = Gp::fit(&[1.0, 2.0, 3.0], &[0.1, 0.0, -0.1], 0.0, 0.2, 0.02);
        let back: Gp = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        assert_eq!(back.predict(2.5), g.predict(2.5));
    }
}
