//! The scaling strategy: a campaign that measures each component's scalability curve
//! standalone (step 1 of the method), one component per run.
//!
//! It starts from a first series per component ([`first_series`]): `counts` PE counts,
//! log-spaced over the component's range and snapped to its grid ([`counts::Grid`]), each run
//! `repetitions` times. After every iteration it plans, deterministically and in this order:
//!
//! 1. **Noise and slow runs** ([`points`]): runs slower than a count's fastest two by more
//!    than the noise (pooled over every count) are slow runs, left out, flagged and made up
//!    for; when only one run is fast, the curve through the neighbouring counts says which
//!    group holds, or more runs do. A count far below that curve is run again until a run
//!    agrees or every run it may have agrees with it (then it is a real feature, kept and
//!    flagged). A count whose kept runs spread more than the noise seen elsewhere gets one
//!    more run. At most [`MAX_EXTRA_RUNS`] runs beyond `repetitions` per count.
//! 2. **Refinement**: once a component's counts are settled, one new count per component per
//!    iteration, in the gap where the curve is most uncertain: where the log-log slopes
//!    around the gap disagree most, weighted up where efficiency falls. Not above the first
//!    count where more PEs made the component slower (beyond the noise), and not where the
//!    possible error is below the noise.
//! 3. **Budget**: `max_runs` and `max_core_hours` trim the plan (re-runs first).
//!
//! The campaign ends when nothing is left to plan. Its output, the curves, is written by
//! [`output`] after every run that lands.

pub mod counts;
pub mod output;
pub mod points;

use std::path::Path;

use self::counts::Grid;
use self::points::{
    points_of, pooled_noise, MeasuredPoint, BELOW_LIMIT, BELOW_NOISE_UNITS, SPREAD_UNITS,
};
use super::{Plan, PlanError, PlannedTest, Strategy};
use crate::campaign::state::{Decision, FrozenComponent, Outcome, State};
use crate::config::ScalingSettings;

/// Most runs of one count beyond `repetitions` (re-runs of outliers and for noise), so a
/// count that never settles cannot hold the campaign.
pub const MAX_EXTRA_RUNS: u32 = 4;
/// The least possible interpolation error (relative) worth a new count; below it, or below
/// the noise, the curve is known well enough there.
pub const MIN_REFINE_ERROR: f64 = 0.01;
/// Efficiency below which a gap is where efficiency falls, and a new count there matters most.
const EFFICIENCY_FALLS: f64 = 0.95;
/// Weight of a gap where efficiency has not fallen yet.
const FLAT_WEIGHT: f64 = 0.5;

/// The test origin of a scaling campaign's tests.
pub const ORIGIN: &str = "scaling";

/// The grid of component `c` in this campaign (its limits, allowed list, `step` and nodes).
pub fn grid_of(state: &State, c: usize) -> Grid {
    let comp = &state.components[c];
    grid_for(
        comp,
        state.settings.step.unwrap_or(1),
        state.cores_per_node(),
        state
            .settings
            .scaling
            .as_ref()
            .map_or(crate::config::scaling::scaling_defaults::COUNTS, |s| {
                s.counts
            }),
    )
}

/// The grid of a frozen component with the campaign's `step` and node size, for a first
/// series of `wanted` counts ([`Grid::new`]).
pub fn grid_for(
    comp: &FrozenComponent,
    step: u32,
    cores_per_node: Option<u32>,
    wanted: u32,
) -> Grid {
    Grid::new(
        comp.low,
        comp.high,
        comp.allowed.as_deref(),
        step,
        cores_per_node,
        wanted,
    )
}

/// The first series: per component, its log-spaced counts, as `(component, nproc)` in
/// component order, then ascending.
pub fn first_series(
    components: &[FrozenComponent],
    scaling: &ScalingSettings,
    step: u32,
    cores_per_node: Option<u32>,
) -> Vec<(usize, u32)> {
    components
        .iter()
        .enumerate()
        .flat_map(|(c, comp)| {
            grid_for(comp, step, cores_per_node, scaling.counts)
                .series(scaling.counts)
                .into_iter()
                .map(move |p| (c, p))
        })
        .collect()
}

/// The coupled design's first series: each component's log-spaced counts paired by rank
/// (the smallest with the smallest, the largest with the largest; a component with fewer
/// counts spreads them over the ranks), repeats dropped, and only configurations `fits`
/// accepts (the campaign's budgets).
pub fn coupled_first_series(
    components: &[FrozenComponent],
    scaling: &ScalingSettings,
    step: u32,
    cores_per_node: Option<u32>,
    fits: &dyn Fn(&[u32]) -> bool,
) -> Vec<Vec<u32>> {
    let lists: Vec<Vec<u32>> = components
        .iter()
        .map(|comp| grid_for(comp, step, cores_per_node, scaling.counts).series(scaling.counts))
        .collect();
    let ranks = lists.iter().map(Vec::len).max().unwrap_or(0);
    let mut out: Vec<Vec<u32>> = Vec::new();
    for k in 0..ranks {
        let Some(config) = lists
            .iter()
            .map(|l| {
                let at = if ranks < 2 || l.len() < 2 {
                    0
                } else {
                    (k * (l.len() - 1) + (ranks - 1) / 2) / (ranks - 1)
                };
                l.get(at).copied()
            })
            .collect::<Option<Vec<u32>>>()
        else {
            continue;
        };
        if fits(&config) && !out.contains(&config) {
            out.push(config);
        }
    }
    out
}

/// A configuration in words: `IFS 48, NEMO 96`.
pub fn configuration_words(components: &[FrozenComponent], nproc: &[u32]) -> String {
    components
        .iter()
        .zip(nproc)
        .map(|(c, &p)| format!("{} {}", c.name, c.pes_text(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// PE counts as a test's `nproc`: `p` for component `c`, 0 for the others.
pub fn nproc_vector(n: usize, c: usize, p: u32) -> Vec<u32> {
    let mut v = vec![0; n];
    v[c] = p;
    v
}

/// The scaling strategy ([`Strategy`]).
pub struct Scaling;

/// A run the plan asks for, before the budget trims it.
struct Wanted {
    /// The component whose point asks for it.
    component: usize,
    test: Option<u32>,
    /// The configuration run: the component alone (standalone), or every component.
    nproc: Vec<u32>,
    runs: u32,
    reason: String,
    /// Re-runs come before new counts when the budget is short.
    rerun: bool,
}

impl Strategy for Scaling {
    fn plan(&self, state: &State, _dir: Option<&Path>) -> Result<Plan, PlanError> {
        let mut plan = Plan::default();
        let Some(scaling) = &state.settings.scaling else {
            return Ok(plan);
        };
        let Some(last) = state.iterations.last() else {
            return Ok(plan);
        };
        let nothing_measured = nothing_measured(state);
        let wanted = if nothing_measured {
            Vec::new()
        } else {
            wanted_runs(state, scaling)
        };
        for test in &last.tests {
            let goes_on = wanted.iter().find(|w| w.test == Some(test.test));
            let measured = test.runs.iter().any(|r| r.metrics.is_some());
            plan.decisions.push(Decision {
                donor: None,
                recipient: None,
                step: 0,
                next: goes_on.map(|_| test.nproc.clone()),
                outcome: match (goes_on, measured) {
                    (Some(_), _) => Outcome::Continue,
                    (None, true) => Outcome::Finished {
                        reason: "measured".into(),
                    },
                    (None, false) if nothing_measured => Outcome::Failed {
                        reason: format!(
                            "every run of the campaign failed, so nothing is run again: read a run's stderr and autolb.log in its directory ({}), fix the command or the timing output, and start a new campaign",
                            test.runs.first().map_or_else(
                                || "iter-NN/test-NN/rep-N".to_string(),
                                |r| crate::campaign::state::run_dir_relative(
                                    last.index,
                                    test.test,
                                    r.repetition
                                )
                                .display()
                                .to_string()
                            )
                        ),
                    },
                    (None, false) => Outcome::Failed {
                        reason: match test.component {
                            Some(c) => format!(
                                "no run of {} at {} PEs was measured",
                                state.components[c].name, test.nproc[c]
                            ),
                            None => format!(
                                "no run of {} was measured",
                                configuration_words(&state.components, &test.nproc)
                            ),
                        },
                    },
                },
                notes: Vec::new(),
            });
        }
        let n = state.components.len();
        debug_assert!(wanted.iter().all(|w| w.nproc.len() == n));
        plan.next = wanted
            .into_iter()
            .map(|w| PlannedTest {
                test: w.test,
                nproc: w.nproc,
                step: 0,
                runs: w.runs,
                reason: Some(w.reason),
            })
            .collect();
        Ok(plan)
    }
}

/// Everything the scaling design asks for after an iteration, within the budgets: re-runs
/// for noise, then one new count per component where its curve is most uncertain (with the
/// coupled design, a coupled configuration whose other components are matched in speed).
fn wanted_runs(state: &State, scaling: &ScalingSettings) -> Vec<Wanted> {
    let noise = pooled_noise(state);
    let coupled = scaling.design == crate::config::ScalingDesign::Coupled;
    let n = state.components.len();
    let all_points: Vec<Vec<MeasuredPoint>> = (0..n).map(|c| points_of(state, c, noise)).collect();
    let mut wanted: Vec<Wanted> = Vec::new();
    for (c, points) in all_points.iter().enumerate() {
        let reruns = reruns_of(state, c, points, scaling, noise);
        let settled = reruns.is_empty() && points.iter().all(|p| p.queued == 0);
        wanted.extend(reruns);
        if settled {
            if let Some(mut new) = refinement(state, c, points, noise) {
                if coupled {
                    let Some(config) = partners(state, c, new.nproc[c], &all_points) else {
                        continue;
                    };
                    new.reason = format!(
                        "{}; coupled with {}",
                        new.reason,
                        configuration_words(&state.components, &config)
                    );
                    new.nproc = config;
                }
                wanted.push(new);
            }
        }
    }
    let wanted = merged(wanted);
    within_budget(state, scaling, wanted)
}

/// Re-runs of one test asked for by several components' points become one, with the most
/// runs any asked for and every reason; new configurations asked for twice are run once.
fn merged(wanted: Vec<Wanted>) -> Vec<Wanted> {
    let mut out: Vec<Wanted> = Vec::new();
    for w in wanted {
        let same = out.iter_mut().find(|o| match (o.test, w.test) {
            (Some(a), Some(b)) => a == b,
            (None, None) => o.nproc == w.nproc,
            _ => false,
        });
        match same {
            Some(o) => {
                o.runs = o.runs.max(w.runs);
                o.reason = format!("{}; {}", o.reason, w.reason);
            }
            None => out.push(w),
        }
    }
    out
}

/// The coupled configuration that measures component `c` at `p` PEs near balance: every other
/// component at the count of its grid whose estimated speed (from its points so far) is
/// closest to `c`'s at `p`, so little is paid for waiting; `None` when it does not fit the
/// campaign's budgets.
fn partners(state: &State, c: usize, p: u32, points: &[Vec<MeasuredPoint>]) -> Option<Vec<u32>> {
    let target = estimated_sypd(&points[c], p)?;
    let mut config = Vec::with_capacity(points.len());
    for (k, own) in points.iter().enumerate() {
        if k == c {
            config.push(p);
            continue;
        }
        let grid = grid_of(state, k);
        let (low, high) = grid.ends()?;
        // Candidates log-spaced over the grid, snapped to it; the closest speed wins, the
        // fewer PEs on a tie (past the measured counts the estimate is flat).
        let mut best: Option<(f64, u32)> = None;
        let steps = 256;
        for i in 0..=steps {
            let t = f64::from(i) / f64::from(steps);
            let x = f64::from(low) * (f64::from(high) / f64::from(low)).powf(t);
            let Some(q) = grid.snap(x) else { continue };
            let Some(s) = estimated_sypd(own, q) else {
                continue;
            };
            let miss = (s / target).ln().abs();
            if best.is_none_or(|(m, b)| miss < m - 1e-12 || (miss <= m + 1e-12 && q < b)) {
                best = Some((miss, q));
            }
        }
        config.push(best?.1);
    }
    state.settings.fits(&config).then_some(config)
}

/// More runs of component `c`'s counts: outliers run again, noisy counts one more run, and
/// counts whose runs failed brought up to `repetitions` (all within [`MAX_EXTRA_RUNS`]).
fn reruns_of(
    state: &State,
    c: usize,
    points: &[MeasuredPoint],
    scaling: &ScalingSettings,
    noise: f64,
) -> Vec<Wanted> {
    let name = &state.components[c].name;
    let cap = scaling.repetitions + MAX_EXTRA_RUNS;
    let below_limit = BELOW_LIMIT.max(BELOW_NOISE_UNITS * noise);
    let mut out = Vec::new();
    for p in points {
        let room = cap.saturating_sub(p.total);
        if room == 0 || p.queued > 0 {
            continue;
        }
        let kept = p.runs;
        let (more, why) = if kept < scaling.repetitions {
            let short = scaling.repetitions - kept;
            let why = if p.outliers.is_empty() {
                format!("{short} run(s) failed")
            } else {
                format!(
                    "outlier {} left out ({} off the runs kept)",
                    p.outliers.join(", "),
                    percent(outlier_distance(state, p))
                )
            };
            (short, why)
        } else if p.split {
            (
                1,
                format!(
                    "its runs disagree ({}) and no neighbour says which holds",
                    runs_words(p)
                ),
            )
        } else if p.below_neighbours.is_some_and(|b| b > below_limit) && !p.feature {
            (
                2,
                format!(
                    "{} below the curve through its neighbours: run again to tell slow runs from a real dip",
                    percent(p.below_neighbours.unwrap_or(0.0))
                ),
            )
        } else if p.relative_sd() > SPREAD_UNITS * noise && kept < cap {
            (
                1,
                format!(
                    "spread {} > {SPREAD_UNITS} x the noise seen elsewhere ({})",
                    percent(p.relative_sd()),
                    percent(noise)
                ),
            )
        } else {
            continue;
        };
        let runs = more.min(room);
        out.push(Wanted {
            component: c,
            test: Some(p.test),
            nproc: test_nproc(state, p.test)
                .unwrap_or_else(|| nproc_vector(state.components.len(), c, p.nproc)),
            runs,
            reason: format!(
                "scaling: {name} at {} PEs: {why}; {runs} more run(s)",
                p.nproc
            ),
            rerun: true,
        });
    }
    out
}

/// A count's measured speeds in words, fastest first: `4.12, 1.37, 1.36 SYPD`.
fn runs_words(p: &MeasuredPoint) -> String {
    let mut all: Vec<f64> = p.outlier_sypd.clone();
    if p.runs > 0 {
        all.push(p.sypd);
    }
    all.sort_by(|a, b| b.total_cmp(a));
    let words: Vec<String> = all.iter().map(|s| format!("{s:.2}")).collect();
    format!("{} SYPD", words.join(", "))
}

/// The configuration test `test` last ran.
fn test_nproc(state: &State, test: u32) -> Option<Vec<u32>> {
    state
        .iterations
        .iter()
        .rev()
        .flat_map(|it| &it.tests)
        .find(|t| t.test == test)
        .map(|t| t.nproc.clone())
}

/// How far the farthest outlier of a point is from the kept mean, relative.
fn outlier_distance(state: &State, p: &MeasuredPoint) -> f64 {
    state
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .flat_map(|t| &t.runs)
        .filter(|r| p.outliers.contains(&r.id))
        .filter_map(|r| r.metrics.as_ref())
        .map(|m| ((m.sypd - p.sypd) / p.sypd).abs())
        .fold(0.0, f64::max)
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// Log-log slope between two points.
fn slope(a: &MeasuredPoint, b: &MeasuredPoint) -> f64 {
    (b.sypd / a.sypd).ln() / (f64::from(b.nproc) / f64::from(a.nproc)).ln()
}

/// The new count of component `c` where its curve is most uncertain where it matters, if
/// any is worth a run (see the module doc).
fn refinement(state: &State, c: usize, points: &[MeasuredPoint], noise: f64) -> Option<Wanted> {
    let pts: Vec<&MeasuredPoint> = points.iter().filter(|p| p.runs > 0).collect();
    if pts.len() < 2 {
        return None;
    }
    // Stop going up: nothing above the first count where more PEs made it slower.
    let slower = (1..pts.len()).find(|&k| pts[k].sypd < pts[k - 1].sypd * (1.0 - 2.0 * noise));
    let top = slower.unwrap_or(pts.len() - 1);
    let grid = grid_of(state, c);
    let taken: Vec<u32> = points.iter().map(|p| p.nproc).collect();
    let slopes: Vec<f64> = (0..pts.len() - 1)
        .map(|i| slope(pts[i], pts[i + 1]))
        .collect();
    let efficiency =
        |p: &MeasuredPoint| (p.sypd / f64::from(p.nproc)) / (pts[0].sypd / f64::from(pts[0].nproc));
    let mut best: Option<(f64, u32, usize, f64)> = None;
    for i in 0..top {
        let (a, b) = (pts[i], pts[i + 1]);
        let Some(mid) = grid.snap((f64::from(a.nproc) * f64::from(b.nproc)).sqrt()) else {
            continue;
        };
        if mid <= a.nproc || mid >= b.nproc || taken.contains(&mid) {
            continue;
        }
        let own = slopes[i];
        let left = i.checked_sub(1).map_or(own, |j| slopes[j]);
        let right = slopes.get(i + 1).copied().unwrap_or(own);
        let bend = (own - left).abs().max((own - right).abs());
        // A smooth curve whose slope turns by `bend` across a gap of width `h` (in log-log)
        // is off its chord by `bend * h / 8` in the middle (a parabola's sagitta): what an
        // interpolation between the two counts can miss there.
        let error = bend * (f64::from(b.nproc) / f64::from(a.nproc)).ln() / 8.0;
        let weight = if efficiency(b) < EFFICIENCY_FALLS {
            1.0
        } else {
            FLAT_WEIGHT
        };
        let score = weight * error;
        if score <= noise.max(MIN_REFINE_ERROR) {
            continue;
        }
        if best.is_none_or(|(s, ..)| score > s) {
            best = Some((score, mid, i, efficiency(b)));
        }
    }
    let (score, mid, i, eff) = best?;
    let repetitions = state.settings.scaling.as_ref().map_or(1, |s| s.repetitions);
    Some(Wanted {
        component: c,
        test: None,
        nproc: nproc_vector(state.components.len(), c, mid),
        runs: repetitions,
        reason: format!(
            "scaling: {} uncertain at {}-{} PEs (up to {} between counts, efficiency {:.2}); new count {mid}",
            state.components[c].name,
            pts[i].nproc,
            pts[i + 1].nproc,
            percent(score),
            eff
        ),
        rerun: false,
    })
}

/// An upper bound on a scaling campaign's iterations, and what sets it. Every iteration after
/// the first adds at least one run, a count never gets more than `repetitions` +
/// [`MAX_EXTRA_RUNS`] runs, and counts lie on the components' grids; `max_runs` bounds the
/// runs too.
pub fn iteration_bound(state: &State) -> (u32, String) {
    let Some(scaling) = &state.settings.scaling else {
        return (1, String::new());
    };
    let per_count = u64::from(scaling.repetitions + MAX_EXTRA_RUNS);
    let counts: u64 = (0..state.components.len())
        .map(|c| grid_of(state, c).len())
        .sum();
    let first: u32 = state
        .iterations
        .first()
        .map_or(0, |it| it.tests.iter().map(|t| t.runs.len() as u32).sum());
    let by_grid = counts.saturating_mul(per_count);
    let (runs, why) = match scaling.max_runs {
        Some(max) if u64::from(max) < by_grid => (
            u64::from(max),
            format!(
                "set by max_runs = {max}: every iteration after the first adds a run; a smaller max_runs lowers it"
            ),
        ),
        _ => (
            by_grid,
            format!(
                "set by {counts} PE counts on the components' grids, each run at most {per_count} times (repetitions + {MAX_EXTRA_RUNS}); max_runs lowers it"
            ),
        ),
    };
    let bound = 1 + runs.saturating_sub(u64::from(first));
    (u32::try_from(bound).unwrap_or(u32::MAX), why)
}

/// Core-hours of one run at `nproc` PEs and `sypd`, with the campaign's simulated length.
pub fn run_core_hours(nproc: u32, sypd: f64, scaling: &ScalingSettings) -> Option<f64> {
    let years = scaling.simulated_years()?;
    Some(crate::metrics::chsy(f64::from(nproc), sypd) * years)
}

/// PEs a test's run holds: its component's alone, or (coupled) every component's and the
/// extra PEs.
fn run_pes(state: &State, test: &crate::campaign::state::TestIteration) -> u32 {
    match test.component {
        Some(c) => test.nproc[c],
        None => test
            .nproc
            .iter()
            .fold(state.settings.extra_pes, |a, &p| a.saturating_add(p)),
    }
}

/// Core-hours spent so far: every measured run's PEs over its simulated length.
pub fn core_hours_spent(state: &State, scaling: &ScalingSettings) -> Option<f64> {
    let mut total = 0.0;
    for it in &state.iterations {
        for test in &it.tests {
            let pes = run_pes(state, test);
            for run in &test.runs {
                if let Some(m) = &run.metrics {
                    total += run_core_hours(pes, m.sypd, scaling)?;
                }
            }
        }
    }
    Some(total)
}

/// No run of the campaign has been measured. When an iteration ends so, the set-up is broken
/// (the command, the timing output) and every run more would fail the same way, so the design
/// runs nothing more.
pub(crate) fn nothing_measured(state: &State) -> bool {
    !state
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .flat_map(|t| &t.runs)
        .any(|r| r.metrics.is_some())
}

/// Every run the campaign has made or queued.
pub(crate) fn runs_so_far(state: &State) -> u32 {
    state.run_count() as u32
}

/// The plan trimmed to `max_runs` and `max_core_hours`: re-runs first, then new counts; a
/// run is left out when it would cross either budget.
fn within_budget(state: &State, scaling: &ScalingSettings, mut wanted: Vec<Wanted>) -> Vec<Wanted> {
    wanted.sort_by_key(|w| !w.rerun);
    let mut runs_left = scaling
        .max_runs
        .map(|m| m.saturating_sub(runs_so_far(state)));
    let mut hours_left = scaling
        .max_core_hours
        .and_then(|max| Some(max - core_hours_spent(state, scaling)?));
    let noise = pooled_noise(state);
    let mut out = Vec::new();
    for mut w in wanted {
        if let Some(left) = runs_left {
            w.runs = w.runs.min(left);
        }
        if let Some(left) = hours_left {
            // A run goes at its slowest component: the one measured alone, or every one.
            let speed = w
                .nproc
                .iter()
                .enumerate()
                .filter(|&(_, &p)| p > 0)
                .map(|(k, &p)| estimated_sypd(&points_of(state, k, noise), p))
                .try_fold(f64::INFINITY, |a, s| s.map(|s| a.min(s)));
            let pes = if scaling.design == crate::config::ScalingDesign::Coupled {
                w.nproc
                    .iter()
                    .fold(state.settings.extra_pes, |a, &p| a.saturating_add(p))
            } else {
                w.nproc[w.component]
            };
            let per_run = speed
                .filter(|s| s.is_finite())
                .and_then(|s| run_core_hours(pes, s, scaling))
                .unwrap_or(f64::INFINITY);
            let affordable = (left / per_run).floor().max(0.0) as u32;
            w.runs = w.runs.min(affordable);
            hours_left = Some(left - per_run * f64::from(w.runs));
        }
        if w.runs == 0 {
            continue;
        }
        if let Some(left) = runs_left.as_mut() {
            *left -= w.runs;
        }
        out.push(w);
    }
    out
}

/// SYPD at `nproc` from the measured points: straight lines in log-log between the nearest
/// ones, the nearest point's speed outside them.
pub fn estimated_sypd(points: &[MeasuredPoint], nproc: u32) -> Option<f64> {
    let pts: Vec<&MeasuredPoint> = points.iter().filter(|p| p.runs > 0).collect();
    let first = pts.first()?;
    let last = pts.last()?;
    if nproc <= first.nproc {
        return Some(first.sypd);
    }
    if nproc >= last.nproc {
        return Some(last.sypd);
    }
    let k = pts.iter().position(|p| p.nproc >= nproc)?;
    let (a, b) = (pts[k - 1], pts[k]);
    let t = (f64::from(nproc) / f64::from(a.nproc)).ln()
        / (f64::from(b.nproc) / f64::from(a.nproc)).ln();
    Some((a.sypd.ln() + t * (b.sypd / a.sypd).ln()).exp())
}
