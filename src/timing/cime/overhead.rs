//! The coupler's communication overhead the layout tree leaves out, learned from runs.
//!
//! The layout model puts a run's TOT together from the components' own run times, the coupler's
//! among them: one after the other on shared PEs, the slowest of the groups side by side. What
//! it leaves out is the driver's communication and the waiting inside its loop: rearranging
//! every field between the components' decompositions and the coupler's, which the summaries
//! count apart (`CPL COMM`) and never in a component's time. On real runs that is a small part,
//! always on the same side: TOT a little above the tree.
//!
//! It is work the coupler's PEs share, so it is modelled as one coefficient: `k` core-seconds
//! per simulated day, spread over the coupler's cores (tasks x threads), so a run of `d`
//! simulated days with the coupler on `P` cores spends `k d / P` seconds more than its tree.
//! One coefficient, because a few runs are what a user has: a second term (a constant part per
//! day) fitted on three runs follows their noise. `k` is fitted by least squares on the
//! relative TOT errors (every run weighs alike, whatever its length) and is never below zero
//! (the overhead is time spent, never saved).
//!
//! [`leave_one_out`] says how well that holds for a run the fit did not see: each run's TOT
//! predicted from the others' `k`. On the NorESM3 and CESM2 runs in the repository it takes the
//! tree's error from 0.19-0.54 % to under 0.1 %.

use super::CimeRun;

/// The class whose cores share the overhead.
const COUPLER: &str = "cpl";

/// What one run says about the overhead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OverheadSample {
    /// The measured TOT run time (s).
    pub run_s: f64,
    /// The layout tree's TOT from the components' run times (s).
    pub tree_s: f64,
    /// Simulated days of the run.
    pub sim_days: f64,
    /// The coupler's cores (tasks x threads); the run's cores when it names no coupler.
    pub coupler_cores: u64,
}

impl OverheadSample {
    /// The sample of `run`, when it gives its TOT, simulated days, a layout and every run time
    /// that layout needs.
    pub fn from_run(run: &CimeRun) -> Option<OverheadSample> {
        let run_s = run.run_s.filter(|t| *t > 0.0)?;
        let sim_days = run.sim_days.filter(|d| *d > 0.0)?;
        let tree_s = run.predicted_run_s()?;
        let coupler_cores = match run.components.iter().find(|c| c.name == COUPLER) {
            Some(c) => u64::from(c.nproc) * u64::from(c.threads.unwrap_or(1)),
            None => run.cores()?,
        };
        (coupler_cores > 0).then_some(OverheadSample {
            run_s,
            tree_s,
            sim_days,
            coupler_cores,
        })
    }

    /// The regressor of the overhead: simulated days per coupler core.
    fn days_per_core(&self) -> f64 {
        self.sim_days / self.coupler_cores as f64
    }
}

/// The learned overhead: `core_s_per_day` core-seconds per simulated day over the coupler's
/// cores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CouplerOverhead {
    /// Core-seconds of coupler communication per simulated day.
    pub core_s_per_day: f64,
    /// Runs it was fitted on.
    pub runs: usize,
}

impl CouplerOverhead {
    /// Fits the coefficient to `samples`; `None` without a sample.
    pub fn fit(samples: &[OverheadSample]) -> Option<CouplerOverhead> {
        let (mut xy, mut xx) = (0.0, 0.0);
        for s in samples {
            // Relative errors: each term weighted by 1 / TOT^2.
            let w = 1.0 / (s.run_s * s.run_s);
            let x = s.days_per_core();
            xy += w * x * (s.run_s - s.tree_s);
            xx += w * x * x;
        }
        (xx > 0.0 && xy.is_finite()).then(|| CouplerOverhead {
            core_s_per_day: (xy / xx).max(0.0),
            runs: samples.len(),
        })
    }

    /// Seconds the overhead adds to a run of `sim_days` with the coupler on `coupler_cores`.
    pub fn seconds(&self, sim_days: f64, coupler_cores: u64) -> f64 {
        self.core_s_per_day * sim_days / coupler_cores.max(1) as f64
    }

    /// The TOT the tree plus the overhead gives for `sample`'s layout.
    pub fn predict(&self, sample: &OverheadSample) -> f64 {
        sample.tree_s + self.seconds(sample.sim_days, sample.coupler_cores)
    }
}

/// Each sample's TOT predicted by its tree plus the overhead fitted on the other samples;
/// `None` with fewer than two samples (nothing to fit on).
pub fn leave_one_out(samples: &[OverheadSample]) -> Option<Vec<f64>> {
    if samples.len() < 2 {
        return None;
    }
    (0..samples.len())
        .map(|i| {
            let others: Vec<OverheadSample> = samples
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, s)| *s)
                .collect();
            Some(CouplerOverhead::fit(&others)?.predict(&samples[i]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(tree_s: f64, sim_days: f64, coupler_cores: u64, k: f64) -> OverheadSample {
        OverheadSample {
            run_s: tree_s + k * sim_days / coupler_cores as f64,
            tree_s,
            sim_days,
            coupler_cores,
        }
    }

    #[test]
    fn recovers_the_coefficient_and_predicts_a_run_it_did_not_see() {
        let runs = [
            sample(2000.0, 365.0, 256, 90.0),
            sample(900.0, 365.0, 1024, 90.0),
            sample(30.0, 5.0, 128, 90.0),
        ];
        let fit = CouplerOverhead::fit(&runs).unwrap();
        assert!((fit.core_s_per_day - 90.0).abs() < 1e-9, "{fit:?}");
        assert_eq!(fit.runs, 3);
        assert!((fit.seconds(730.0, 512) - 90.0 * 730.0 / 512.0).abs() < 1e-9);
        let predicted = leave_one_out(&runs).unwrap();
        for (p, s) in predicted.iter().zip(&runs) {
            assert!((p - s.run_s).abs() < 1e-9);
        }
    }

    #[test]
    fn the_overhead_is_never_negative_and_needs_two_runs_to_be_checked() {
        let mut s = sample(1000.0, 365.0, 256, 0.0);
        s.run_s = 990.0;
        assert_eq!(CouplerOverhead::fit(&[s]).unwrap().core_s_per_day, 0.0);
        assert_eq!(leave_one_out(&[s]), None);
        assert_eq!(CouplerOverhead::fit(&[]), None);
    }
}
