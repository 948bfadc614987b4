//! From a scaling campaign's runs to measured points: per component and PE count, the mean
//! SYPD of the runs kept, their spread, and the runs left out as outliers.
//!
//! A run at an odd time of day, on a slow node or next to a noisy neighbour is normal on a
//! shared machine, and such a run is slow, never fast. So a count's runs are measured from
//! the top: the runs within the noise of its fastest two are kept, the slower ones are slow
//! runs, left out. The noise that judges a count is pooled over every count of every
//! component ([`pooled_noise`]), so one count's runs are judged against what the machine does
//! elsewhere, not against themselves.
//!
//! A slow run (a bad node, a busy file system) only ever makes a run slower, and a quarter of
//! runs can be slow: then two runs out of three at one count can be, and the median follows
//! them. So a count is also judged against its neighbours (`judge_by_neighbours`): when its
//! runs split into a fast and a slow group, the group the curve through the neighbouring
//! counts agrees with is kept; and a count far below that curve is run again until a run
//! agrees or the disagreement has repeated over every run a count may have: then it is kept
//! and flagged as a real feature of the curve (a dip, as a decomposition change makes).

use super::super::guided::component_speeds;
use crate::campaign::state::{RunMetrics, RunState, State, TestIteration};

/// The noise assumed when too few runs measure it, and its floor: below half a per cent the
/// timing itself (start of the measuring window, clock resolution) dominates.
pub const MIN_NOISE: f64 = 0.005;
/// Runs slower than their count's fastest by more than this share are never noise: the
/// pooled noise leaves them out.
pub const NOISE_BAND: f64 = 0.15;
/// A run this many pooled noise units below the second fastest of its count is a slow run;
/// a fastest run this far above the second stands alone.
pub const OUTLIER_UNITS: f64 = 6.0;
/// A count whose kept runs spread (relative sd) more than this many pooled noise units gets
/// one more run.
pub const SPREAD_UNITS: f64 = 3.0;
/// A count whose speed is this far (relative) below what its neighbours expect, or
/// [`BELOW_NOISE_UNITS`] pooled noise units if more, is far below the curve: run again.
pub const BELOW_LIMIT: f64 = 0.2;
/// [`BELOW_LIMIT`] in pooled noise units, for a noisy machine.
pub const BELOW_NOISE_UNITS: f64 = 10.0;

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
    /// Its runs split into a fast and a slow group, farther apart than the noise, and neither
    /// the runs alone (two fast runs agreeing) nor the neighbours settled which holds the
    /// truth: more runs are needed.
    pub split: bool,
    /// How far below the speed the curve through its neighbours expects here it is, relative
    /// (negative: above); `None` without a neighbour.
    pub below_neighbours: Option<f64>,
    /// Far below its neighbours' curve though every run a count may have agreed: kept as a
    /// real feature of the curve.
    pub feature: bool,
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

/// The pooled relative noise of the campaign: the median over every count of every
/// component with two runs or more of their relative standard deviation, at least
/// [`MIN_NOISE`]. The median, so that one noisy count does not make every count look quiet
/// beside it; and only the runs within [`NOISE_BAND`] of their count's fastest take part: a
/// slow run (a bad node) is not noise, and a quarter of them would make every count look
/// noisy and so hide themselves.
pub fn pooled_noise(state: &State) -> f64 {
    let spreads: Vec<f64> = (0..state.components.len())
        .flat_map(|c| raw_of(state, c))
        .filter_map(|raw| {
            let values: Vec<f64> = raw.2.iter().map(|(_, s)| *s).collect();
            let fastest = values.iter().copied().reduce(f64::max)?;
            let band: Vec<f64> = values
                .into_iter()
                .filter(|&v| v >= fastest * (1.0 - NOISE_BAND))
                .collect();
            let (mean, sd) = mean_sd(&band);
            (band.len() >= 2).then_some(sd / mean)
        })
        .collect();
    if spreads.is_empty() {
        MIN_NOISE
    } else {
        median(&spreads).max(MIN_NOISE)
    }
}

/// Component `c`'s points, ascending by PE count, judged with the pooled `noise`: first
/// each count by its own runs (`judge_own_runs`), then against its neighbours
/// (`judge_by_neighbours`).
pub fn points_of(state: &State, c: usize, noise: f64) -> Vec<MeasuredPoint> {
    let mut raws = raw_of(state, c);
    raws.sort_by_key(|r| r.1);
    let judged: Vec<OwnJudgement> = raws
        .iter()
        .map(|raw| {
            let values: Vec<f64> = raw.2.iter().map(|(_, s)| *s).collect();
            judge_own_runs(&values, noise)
        })
        .collect();
    let max_runs = state
        .settings
        .scaling
        .as_ref()
        .map_or(u32::MAX, |s| s.repetitions + super::MAX_EXTRA_RUNS);
    let totals: Vec<u32> = raws.iter().map(|r| r.5).collect();
    let chosen = judge_by_neighbours(&raws, &judged, &totals, max_runs, noise);
    raws.into_iter()
        .zip(chosen)
        .map(|((test, nproc, runs, failed, queued, total), verdict)| {
            let kept: Vec<f64> = verdict.kept.iter().map(|&i| runs[i].1).collect();
            let left_out: Vec<usize> = (0..runs.len())
                .filter(|i| !verdict.kept.contains(i))
                .collect();
            let (sypd, sd) = mean_sd(&kept);
            MeasuredPoint {
                test,
                nproc,
                sypd,
                sd,
                runs: kept.len() as u32,
                outliers: left_out.iter().map(|&i| runs[i].0.clone()).collect(),
                outlier_sypd: left_out.iter().map(|&i| runs[i].1).collect(),
                failed,
                queued,
                total,
                split: verdict.split,
                below_neighbours: verdict.below,
                feature: verdict.feature,
            }
        })
        .collect()
}

/// Mean and sample standard deviation (NaN and 0 without values, 0 sd with one).
fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let sd = if n < 2 {
        0.0
    } else {
        (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    (mean, sd)
}

/// What one count's own runs say (indices into its measured runs).
#[derive(Debug, Clone, PartialEq)]
struct OwnJudgement {
    /// The runs kept by the count's own runs.
    kept: Vec<usize>,
    /// When the runs split and the runs alone cannot say which group holds the truth: the
    /// fast group and the slow group.
    split: Option<(Vec<usize>, Vec<usize>)>,
}

/// One count by its own runs. When its fastest run is within [`OUTLIER_UNITS`] noise units
/// of the second fastest, those two agree at the top: the runs within that noise below the
/// second fastest are kept, the slower ones are slow runs, left out (nothing makes two runs
/// fast by chance, a bad node makes runs slow). When the fastest run stands alone above the
/// others, the runs alone do not settle it: the median rule keeps what agrees with the
/// median (with three runs or more; two disagreeing runs are both kept) and the count is
/// split, for its neighbours or more runs to settle.
fn judge_own_runs(values: &[f64], noise: f64) -> OwnJudgement {
    let all: Vec<usize> = (0..values.len()).collect();
    let mut order = all.clone();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let tolerance = OUTLIER_UNITS * noise;
    let (Some(&first), Some(&second)) = (order.first(), order.get(1)) else {
        return OwnJudgement {
            kept: all,
            split: None,
        };
    };
    if values[first] <= values[second] * (1.0 + tolerance) {
        let kept: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&i| values[i] >= values[second] * (1.0 - tolerance))
            .collect();
        return OwnJudgement { kept, split: None };
    }
    let kept = if values.len() >= 3 {
        let m = median(values);
        all.iter()
            .copied()
            .filter(|&i| ((values[i] - m) / m).abs() <= tolerance)
            .collect::<Vec<_>>()
    } else {
        all.clone()
    };
    OwnJudgement {
        kept: if kept.is_empty() { all } else { kept },
        split: Some((vec![first], order[1..].to_vec())),
    }
}

/// The verdict on one count after its neighbours had their say.
#[derive(Debug, Clone, PartialEq)]
struct Verdict {
    kept: Vec<usize>,
    split: bool,
    below: Option<f64>,
    feature: bool,
}

/// The speed the curve through the other counts expects at `at` (indices into `speeds`,
/// ascending by count; `None` for a count without a trusted speed): between two neighbours
/// the straight line in log-log between them; past the last, the last's speed continued
/// with the last gap's slope if it falls, else flat; before the first, the first's speed
/// scaled down with perfect scaling (or the first gap's slope if steeper). Each is a low
/// estimate for a curve that flattens as PEs grow, so only a count truly below the curve
/// is far below it.
fn expected_at(nprocs: &[u32], speeds: &[Option<f64>], at: usize) -> Option<f64> {
    let known = |i: usize| speeds[i].map(|s| (f64::from(nprocs[i]), s));
    let left: Vec<(f64, f64)> = (0..at).rev().filter_map(known).take(2).collect();
    let right: Vec<(f64, f64)> = (at + 1..speeds.len()).filter_map(known).take(2).collect();
    let x = f64::from(nprocs[at]);
    let slope = |a: (f64, f64), b: (f64, f64)| (b.1 / a.1).ln() / (b.0 / a.0).ln();
    match (left.first(), right.first()) {
        (Some(&l), Some(&r)) => {
            let t = (x / l.0).ln() / (r.0 / l.0).ln();
            Some((l.1.ln() + t * (r.1 / l.1).ln()).exp())
        }
        (Some(&l), None) => {
            let falls = left.get(1).map_or(0.0, |&ll| slope(ll, l).min(0.0));
            Some(l.1 * (x / l.0).powf(falls))
        }
        (None, Some(&r)) => {
            let steep = right.get(1).map_or(1.0, |&rr| slope(r, rr).max(1.0));
            Some(r.1 * (x / r.0).powf(steep))
        }
        (None, None) => None,
    }
}

/// Every count of one component against its neighbours. A split count keeps the group
/// nearer the curve through its settled neighbours (still split without any); then every
/// count is measured against the curve through all the others: far below it
/// ([`BELOW_LIMIT`]) with every run a count may have made (`max_runs`), it is a real
/// feature.
fn judge_by_neighbours(
    raws: &[Raw],
    judged: &[OwnJudgement],
    totals: &[u32],
    max_runs: u32,
    noise: f64,
) -> Vec<Verdict> {
    let nprocs: Vec<u32> = raws.iter().map(|r| r.1).collect();
    let values: Vec<Vec<f64>> = raws
        .iter()
        .map(|r| r.2.iter().map(|(_, s)| *s).collect())
        .collect();
    let mean_of = |k: usize, idx: &[usize]| -> Option<f64> {
        (!idx.is_empty()).then(|| idx.iter().map(|&i| values[k][i]).sum::<f64>() / idx.len() as f64)
    };
    let settled: Vec<Option<f64>> = judged
        .iter()
        .enumerate()
        .map(|(k, j)| match j.split {
            Some(_) => None,
            None => mean_of(k, &j.kept),
        })
        .collect();
    let mut verdicts: Vec<Verdict> = judged
        .iter()
        .enumerate()
        .map(|(k, j)| {
            let (kept, split) = match &j.split {
                None => (j.kept.clone(), false),
                Some((fast, slow)) => match expected_at(&nprocs, &settled, k) {
                    Some(e) => {
                        let miss = |idx: &[usize]| {
                            mean_of(k, idx).map_or(f64::INFINITY, |m| (m / e).ln().abs())
                        };
                        if miss(fast) <= miss(slow) {
                            (fast.clone(), false)
                        } else {
                            (slow.clone(), false)
                        }
                    }
                    None => (j.kept.clone(), true),
                },
            };
            Verdict {
                kept,
                split,
                below: None,
                feature: false,
            }
        })
        .collect();
    let speeds: Vec<Option<f64>> = verdicts
        .iter()
        .enumerate()
        .map(|(k, v)| mean_of(k, &v.kept))
        .collect();
    let limit = BELOW_LIMIT.max(BELOW_NOISE_UNITS * noise);
    for (k, v) in verdicts.iter_mut().enumerate() {
        let (Some(own), Some(e)) = (speeds[k], expected_at(&nprocs, &speeds, k)) else {
            continue;
        };
        let below = 1.0 - own / e;
        v.below = Some(below);
        v.feature = below > limit && !v.split && totals[k] >= max_runs;
    }
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn two_fast_runs_outvote_slow_ones_and_one_fast_run_leaves_the_count_split() {
        let noise = 0.005;
        // Two runs agreeing at the top: the slow ones are left out, however many.
        let j = judge_own_runs(&[3.0, 1.0, 2.99, 1.01, 1.0], noise);
        assert_eq!(j.kept, vec![0, 2]);
        assert_eq!(j.split, None);
        // Noise alone: every run kept.
        let j = judge_own_runs(&[3.0, 2.99, 3.01], noise);
        assert_eq!(j.kept, vec![0, 1, 2]);
        // One fast run against two slow ones: the median's side for now, and split.
        let j = judge_own_runs(&[3.0, 1.0, 1.01], noise);
        assert_eq!(j.kept, vec![1, 2]);
        assert_eq!(j.split, Some((vec![0], vec![2, 1])));
        // A spread within the noise of the second fastest is noise, not a slow run.
        let j = judge_own_runs(&[1.025, 1.0, 0.975], noise);
        assert_eq!(j.kept, vec![0, 1, 2]);
    }

    #[test]
    fn the_curve_through_the_neighbours_is_a_low_estimate() {
        let nprocs = [48, 96, 192, 384];
        let s = |x: f64| Some(x);
        // Between two neighbours: the log-log line.
        let e = expected_at(&nprocs, &[s(2.0), None, s(8.0), s(10.0)], 1).unwrap();
        assert!((e - 4.0).abs() < 1e-9, "{e}");
        // Past the last: flat after a rising gap, falling on after a falling one.
        let e = expected_at(&nprocs, &[s(2.0), s(4.0), s(8.0), None], 3).unwrap();
        assert!((e - 8.0).abs() < 1e-9, "{e}");
        let e = expected_at(&nprocs, &[s(2.0), s(8.0), s(4.0), None], 3).unwrap();
        assert!((e - 2.0).abs() < 1e-9, "{e}");
        // Before the first: perfect scaling down from it.
        let e = expected_at(&nprocs, &[None, s(4.0), s(6.0), s(7.0)], 0).unwrap();
        assert!((e - 2.0).abs() < 1e-9, "{e}");
        assert_eq!(expected_at(&nprocs, &[None, s(4.0), None, None], 1), None);
    }
}
