//! From a scaling campaign's runs to measured points: per component and PE count, the mean
//! SYPD of the runs kept, their spread, and the runs left out as outliers.
//!
//! Robust statistics, because a run at an odd time of day, on a slow node or next to a noisy
//! neighbour is normal on a shared machine: the median and the median absolute deviation
//! (MAD) find an outlier without letting it move the yardstick, where a mean and a standard
//! deviation would. The noise that judges a count is pooled over every count of every
//! component ([`pooled_noise`]), so one count's three runs are judged against what the
//! machine does elsewhere, not against themselves.

use super::super::guided::component_speeds;
use crate::campaign::state::{RunMetrics, RunState, State, TestIteration};

/// 1.4826 x MAD estimates a normal standard deviation.
const MAD_TO_SD: f64 = 1.4826;
/// The noise assumed when too few runs measure it, and its floor: below half a per cent the
/// timing itself (start of the measuring window, clock resolution) dominates.
pub const MIN_NOISE: f64 = 0.005;
/// A run this many pooled noise units off its count's median is an outlier.
pub const OUTLIER_UNITS: f64 = 6.0;
/// A count whose kept runs spread (relative sd) more than this many pooled noise units gets
/// one more run.
pub const SPREAD_UNITS: f64 = 3.0;

/// One PE count of one component, as measured so far.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPoint {
    /// The scaling test that first measured it (with the coupled design, other tests may
    /// measure the same count beside other partners).
    pub test: u32,
    /// The PE count.
    pub nproc: u32,
    /// Mean SYPD of the runs kept (NaN without any).
    pub sypd: f64,
    /// Standard deviation of the runs kept (0 with one run).
    pub sd: f64,
    /// Runs kept (measured, not outliers).
    pub runs: u32,
    /// Ids of the measured runs left out as outliers.
    pub outliers: Vec<String>,
    /// The SYPD each outlier measured for this component, in the order of `outliers` (in a
    /// coupled run, the component's own coupled-mode speed, not the run's).
    pub outlier_sypd: Vec<f64>,
    /// Runs that ended without a measurement.
    pub failed: u32,
    /// Runs not ended yet (pending or running).
    pub queued: u32,
    /// Every run made of it (any state).
    pub total: u32,
}

impl MeasuredPoint {
    /// Relative spread of the runs kept: sd / mean (0 with fewer than two).
    pub fn relative_sd(&self) -> f64 {
        if self.runs < 2 || self.sypd.is_nan() || self.sypd <= 0.0 {
            0.0
        } else {
            self.sd / self.sypd
        }
    }
}

/// Median of a non-empty slice (sorted copy).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Robust relative spread of one count's measurements: 1.4826 x MAD / median; `None` with
/// fewer than three (the MAD of two is their half-distance, which says nothing robust).
fn robust_spread(values: &[f64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    let m = median(values);
    let deviations: Vec<f64> = values.iter().map(|x| (x - m).abs()).collect();
    Some(MAD_TO_SD * median(&deviations) / m)
}

/// The measured SYPD of every run of component `c`, per PE count, in the order the counts
/// were first run: `(first test, nproc, [(run id, sypd)], failed, queued, total)`.
type Raw = (u32, u32, Vec<(String, f64)>, u32, u32, u32);

/// Component `c`'s SYPD in one run of `test`: a standalone run's own SYPD, or (a coupled run,
/// every component at once) the component's coupled-mode speed from its computing time,
/// waiting left out ([`component_speeds`]). `None` when the run does not measure `c`.
fn sample(state: &State, test: &TestIteration, c: usize, m: &RunMetrics) -> Option<f64> {
    match test.component {
        Some(k) => (k == c).then_some(m.sypd),
        None => {
            let unit_cost: Vec<f64> = (0..state.components.len())
                .map(|k| {
                    state
                        .settings
                        .cost_model
                        .as_ref()
                        .map_or(1.0, |model| model.unit_cost_of(k))
                })
                .collect();
            component_speeds(m, &test.nproc, &unit_cost).get(c).copied()
        }
    }
}

fn raw_of(state: &State, c: usize) -> Vec<Raw> {
    let mut out: Vec<Raw> = Vec::new();
    for it in &state.iterations {
        let measures_c = |t: &&TestIteration| t.component.is_none_or(|k| k == c);
        for test in it.tests.iter().filter(measures_c) {
            let p = test.nproc[c];
            let at = match out.iter().position(|r| r.1 == p) {
                Some(at) => at,
                None => {
                    out.push((test.test, p, Vec::new(), 0, 0, 0));
                    out.len() - 1
                }
            };
            for run in &test.runs {
                let raw = &mut out[at];
                raw.5 += 1;
                let measured = run.metrics.as_ref().and_then(|m| sample(state, test, c, m));
                match (run.state, measured) {
                    (RunState::Done, Some(sypd)) => raw.2.push((run.id.clone(), sypd)),
                    (RunState::Done | RunState::Failed, _) => raw.3 += 1,
                    _ => raw.4 += 1,
                }
            }
        }
    }
    out
}

/// The pooled relative noise of the campaign: the median robust spread over every count of
/// every component with three or more measured runs, at least [`MIN_NOISE`].
pub fn pooled_noise(state: &State) -> f64 {
    let spreads: Vec<f64> = (0..state.components.len())
        .flat_map(|c| raw_of(state, c))
        .filter_map(|raw| {
            let values: Vec<f64> = raw.2.iter().map(|(_, s)| *s).collect();
            robust_spread(&values)
        })
        .collect();
    if spreads.is_empty() {
        MIN_NOISE
    } else {
        median(&spreads).max(MIN_NOISE)
    }
}

/// Component `c`'s points, ascending by PE count, judged with the pooled `noise`: with
/// three or more runs at a count, a run more than [`OUTLIER_UNITS`] noise units off the
/// median is left out (never more than leaves two runs kept).
pub fn points_of(state: &State, c: usize, noise: f64) -> Vec<MeasuredPoint> {
    let mut points: Vec<MeasuredPoint> = raw_of(state, c)
        .into_iter()
        .map(|(test, nproc, runs, failed, queued, total)| {
            let values: Vec<f64> = runs.iter().map(|(_, s)| *s).collect();
            let mut outliers = Vec::new();
            let mut outlier_sypd = Vec::new();
            let mut kept: Vec<f64> = values.clone();
            if values.len() >= 3 {
                let m = median(&values);
                let mut off: Vec<(f64, &String, f64)> = runs
                    .iter()
                    .map(|(id, s)| (((s - m) / m).abs(), id, *s))
                    .filter(|(d, _, _)| *d > OUTLIER_UNITS * noise)
                    .collect();
                // The farthest first; at least two runs stay.
                off.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
                off.truncate(values.len() - 2);
                outliers = off.iter().map(|(_, id, _)| (*id).clone()).collect();
                outlier_sypd = off.iter().map(|(_, _, s)| *s).collect();
                kept = runs
                    .iter()
                    .filter(|(id, _)| !outliers.contains(id))
                    .map(|(_, s)| *s)
                    .collect();
            }
            let n = kept.len();
            let mean = if n == 0 {
                f64::NAN
            } else {
                kept.iter().sum::<f64>() / n as f64
            };
            let sd = if n < 2 {
                0.0
            } else {
                (kept.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
            };
            MeasuredPoint {
                test,
                nproc,
                sypd: mean,
                sd,
                runs: n as u32,
                outliers,
                outlier_sypd,
                failed,
                queued,
                total,
            }
        })
        .collect();
    points.sort_by_key(|p| p.nproc);
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(robust_spread(&[1.0, 1.0]), None);
        let s = robust_spread(&[1.0, 1.02, 0.98, 1.0, 5.0]).unwrap();
        // One wild run does not move the robust spread much.
        assert!(s < 0.05, "{s}");
    }
}
