//! Irregular steps: when a component's per-coupling-step compute times are known (the per-step
//! CSV of the guide's `timing.md`, e.g. IFS with its radiation steps), the coupled run's time is
//! the sum over steps of the slowest component's step time, not the slowest mean. Two
//! components with equal mean speeds still wait for each other when one has heavy steps.
//!
//! A series measured at `nproc0` PEs is scaled to `p` PEs by the speed of the component's curve,
//! like the public prediction script's `timestep_info` mode does for two components (here for 1
//! to 5), with one difference: the series gives the *shape* of the steps (each step's time over
//! the series' mean) and the model gives the mean, `t_s(p) = shape_s * period / (365 S(p))`,
//! where `S` is the model's speed of the component (the curve, or the calibrated model's
//! adjusted curve). When the series was measured in the same set-up as the curve, this is the
//! script's `t_s(nproc0) * S(nproc0) / S(p)`; when it was not (the bundled IFS series comes from
//! the CMIP6 set-up, 10-30 % off the other curves), the script's scaling would move the mean
//! speed away from the curve, while this keeps it and adds only the irregularity, so the step
//! sum is never faster than the min of the means. Components without a series take
//! `period / (365 S(p))` every step. Series of different lengths are cycled up to the longest.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::timing::{self, Format, ReadOptions, Reading, StepRow};

/// One component's per-step compute seconds, measured at `nproc` PEs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepProfile {
    /// The model's (curve's) name.
    pub name: String,
    /// PEs the series was measured on.
    pub nproc: u32,
    /// Compute seconds of each coupling step, in order; only their shape (each over the mean)
    /// is used, the model gives the mean.
    pub step_s: Vec<f64>,
    /// Simulated seconds per coupling step, from the series' own time index.
    pub period_s: f64,
}

impl StepProfile {
    /// From a series' rows (at least two steps, positive compute times and a rising index).
    pub fn from_rows(name: &str, nproc: u32, rows: &[StepRow]) -> Result<StepProfile, String> {
        if rows.len() < 2 {
            return Err(format!("{name}: a step series needs at least two steps"));
        }
        let mut gaps: Vec<f64> = rows
            .windows(2)
            .map(|w| w[1].sim_time_s - w[0].sim_time_s)
            .collect();
        gaps.sort_by(f64::total_cmp);
        let period_s = gaps[gaps.len() / 2];
        if !(period_s.is_finite() && period_s > 0.0) {
            return Err(format!(
                "{name}: the step index does not rise (median gap {period_s} s)"
            ));
        }
        let step_s: Vec<f64> = rows.iter().map(|r| r.compute_s).collect();
        if let Some(bad) = step_s.iter().find(|s| !(s.is_finite() && **s >= 0.0)) {
            return Err(format!(
                "{name}: step compute time {bad} is not a number >= 0"
            ));
        }
        if step_s.iter().sum::<f64>() <= 0.0 {
            return Err(format!("{name}: every step takes 0 s"));
        }
        Ok(StepProfile {
            name: name.to_string(),
            nproc,
            step_s,
            period_s,
        })
    }

    /// Mean compute seconds per step of the series.
    pub fn mean_step_s(&self) -> f64 {
        self.step_s.iter().sum::<f64>() / self.step_s.len() as f64
    }

    /// Reads `--steps NAME=PATH[@NPROC]`: the per-step CSV at `path`; PEs from `@NPROC`, else
    /// from a file name like `..._ts_240.csv`.
    pub fn load(name: &str, path: &Path, nproc: Option<u32>) -> Result<StepProfile, String> {
        let opts = ReadOptions {
            format: Some(Format::Steps),
            ..ReadOptions::default()
        };
        let reading = timing::read(path, &opts).map_err(|e| e.to_string())?;
        let m = match reading {
            Reading::Measured(m) => m,
            Reading::Incomplete { reason } => {
                return Err(format!("{}: incomplete: {reason}", path.display()))
            }
        };
        let series = m
            .series
            .first()
            .ok_or_else(|| format!("{}: no per-step series", path.display()))?;
        let p = nproc
            .or(series.nproc)
            .or_else(|| timing::step_series::name_from_file(path).1)
            .ok_or_else(|| {
                format!(
                    "--steps {name}={}: PEs of the series unknown; write {name}={}@NPROC",
                    path.display(),
                    path.display()
                )
            })?;
        StepProfile::from_rows(name, p, &series.rows)
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The step series of some of a prediction's components.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Steps {
    /// The series of the components that have one (the first of a name counts; the first
    /// profile's coupling period is the prediction's).
    pub profiles: Vec<StepProfile>,
}

impl Steps {
    /// Whether no component has a series (then the coupled SYPD is the slowest mean speed).
    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty()
    }

    /// The series of the component (curve) called `name`, if it has one.
    pub fn profile(&self, name: &str) -> Option<&StepProfile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// Coupled SYPD of a configuration. `speed(c, p)` is the model's SYPD of component `c`
    /// (index into `names`) at `p` PEs; `nproc` the configuration's PEs.
    pub fn coupled_sypd(
        &self,
        names: &[String],
        nproc: &[u32],
        speed: impl Fn(usize, u32) -> f64,
    ) -> f64 {
        let period = self.profiles.first().map_or(2700.0, |p| p.period_s);
        let steps = self
            .profiles
            .iter()
            .map(|p| p.step_s.len())
            .max()
            .unwrap_or(1);
        // Per component: a constant step time, or a scaled series.
        let per: Vec<Result<f64, (&[f64], f64)>> = names
            .iter()
            .zip(nproc)
            .enumerate()
            .map(|(c, (name, &p))| {
                let mean_step = period / (365.0 * speed(c, p));
                match self.profile(name) {
                    Some(prof) => Err((&prof.step_s[..], mean_step / prof.mean_step_s())),
                    None => Ok(mean_step),
                }
            })
            .collect();
        let wall: f64 = (0..steps)
            .map(|k| {
                per.iter()
                    .map(|t| match t {
                        Ok(v) => *v,
                        Err((series, scale)) => series[k % series.len()] * scale,
                    })
                    .fold(0.0, f64::max)
            })
            .sum();
        steps as f64 * period / (365.0 * wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(times: &[f64]) -> Vec<StepRow> {
        times
            .iter()
            .enumerate()
            .map(|(i, &c)| StepRow {
                sim_time_s: 2700.0 * i as f64,
                compute_s: c,
                wait_s: 0.0,
                interp_s: 0.0,
                send_s: 0.0,
            })
            .collect()
    }

    #[test]
    fn heavy_steps_slow_a_balanced_pair_below_the_min_of_means() {
        // A: mean 1 s per step (0.5, 0.5, 0.5, 2.5); B: a steady 1 s.
        let a = StepProfile::from_rows("A", 10, &rows(&[0.5, 0.5, 0.5, 2.5])).unwrap();
        let steps = Steps { profiles: vec![a] };
        let names = vec!["A".to_string(), "B".to_string()];
        let s_one = 2700.0 / 365.0; // SYPD of 1 s per step
        let sypd = steps.coupled_sypd(&names, &[10, 10], |_, _| s_one);
        // Sum of max: 1 + 1 + 1 + 2.5 = 5.5 s for 4 steps instead of 4 s.
        assert!((sypd / s_one - 4.0 / 5.5).abs() < 1e-12, "{sypd}");
        // Twice the PEs at twice the speed halves A's steps: 0.25 x3, 1.25; B stays 1 s.
        let sypd2 = steps.coupled_sypd(&names, &[20, 10], |c, p| {
            if c == 0 {
                s_one * f64::from(p) / 10.0
            } else {
                s_one
            }
        });
        assert!((sypd2 / s_one - 4.0 / 4.25).abs() < 1e-12, "{sypd2}");
    }

    #[test]
    fn the_bundled_ifs_series_loads_with_its_pes_from_the_name() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/timesteps/mn4_sr_cmip6_ifs_ts_240.csv");
        let p = StepProfile::load("IFS", &path, None).unwrap();
        assert_eq!(p.nproc, 240);
        assert_eq!(p.period_s, 2700.0);
        assert!(p.step_s.len() > 100);
    }
}
