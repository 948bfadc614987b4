//! Which counts are worth measuring: the value of a measurement to the prediction the curves
//! are for.
//!
//! A curve is measured to pick a balanced configuration, so a count is worth a run only where
//! what the run could show would change that pick. For each place a run could go (the middle
//! of a gap between measured counts, or a measured count whose runs spread more than the
//! noise explains), the curve is bent there as far as it may plausibly be off (a new count:
//! what a smooth curve turning as the slopes around the gap turn can miss between them; a
//! measured count: its own spread), both ways, and the prediction is run again on the bent
//! curves. When the configuration the unbent curves pick is worse on a bent one than that
//! curve's own best by more than the noise in FN (how far the pick's FN moves when its
//! slowest component is off by the pooled noise), the run is worth making. A dip far from any
//! configuration the prediction could pick changes nothing there, so it is not mapped; a
//! curve known within the noise everywhere that matters ends the campaign.
//!
//! [`next_counts`] is the whole decision, a pure function of the points, the grids and the
//! prediction's settings.

use super::counts::Grid;
use crate::curve::{Curve, Point};
use crate::interp::Interpolant;
use crate::predict::{ComponentInput, Problem, Settings};

/// The least FN change that counts as a change of the answer, whatever the noise: below it two
/// configurations are the same answer to any user.
pub const MIN_FN_CHANGE: f64 = 0.002;
/// Candidate PE counts per component the prediction considers when the campaign sets no
/// `step`: enough that neighbouring candidates differ by a few per cent.
const CANDIDATES_PER_COMPONENT: u32 = 96;

/// One measured count of a component, as the decision sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KnownPoint {
    /// The PE count.
    pub nproc: u32,
    /// Its speed (mean of the runs kept).
    pub sypd: f64,
    /// Relative spread of its runs kept (sd / mean; 0 with one run).
    pub spread: f64,
    /// Runs kept.
    pub runs: u32,
}

/// One component: its name, grid and measured points (ascending).
#[derive(Debug, Clone)]
pub struct KnownCurve {
    /// The component's name.
    pub name: String,
    /// The counts it may run at.
    pub grid: Grid,
    /// Its measured points, ascending by count, each with at least one run kept.
    pub points: Vec<KnownPoint>,
}

/// What one more measurement could change.
#[derive(Debug, Clone, PartialEq)]
pub struct Worth {
    /// The component.
    pub component: usize,
    /// The count to measure.
    pub nproc: u32,
    /// A new count (else one more run of a measured count).
    pub new: bool,
    /// How far (relative) the curve may be off there.
    pub error: f64,
    /// How much FN the pick loses on the bent curve against that curve's own best.
    pub fn_change: f64,
    /// The noise in FN it was held against.
    pub fn_noise: f64,
    /// The counts around it: the gap it splits (a new count) or the count itself.
    pub gap: (u32, u32),
}

/// The decision after an iteration.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Per component at most one new count and any re-runs worth making.
    Measure(Vec<Worth>),
    /// No count could change the answer by more than the noise in FN.
    Done {
        /// The noise in FN the changes were held against.
        fn_noise: f64,
    },
}

/// The prediction's settings for the decision: the campaign's budget, TTS_w and extra PEs, and
/// as the spacing of candidates its `step` or, if wider, a spacing of about
/// `CANDIDATES_PER_COMPONENT` candidates over the narrowest range (a finer one changes no
/// decision and makes each prediction slower).
pub fn decision_settings(
    curves: &[KnownCurve],
    max_nproc: u32,
    tts_w: f64,
    extra_pes: u32,
    step: Option<u32>,
) -> Settings {
    let narrowest = curves
        .iter()
        .filter_map(|c| Some(c.points.last()?.nproc - c.points.first()?.nproc))
        .min()
        .unwrap_or(0);
    Settings {
        max_nproc,
        step: step
            .unwrap_or(1)
            .max(narrowest / CANDIDATES_PER_COMPONENT)
            .max(1),
        tts_w,
        top: 1,
        extra_pes,
        ..Settings::default()
    }
}

/// The curve through `points` with the speed at `at` set to `sypd` (a point added there when
/// none is measured).
fn bent(name: &str, points: &[KnownPoint], at: u32, sypd: f64) -> Option<Curve> {
    let mut pts: Vec<Point> = points
        .iter()
        .filter(|p| p.nproc != at)
        .map(|p| Point {
            nproc: p.nproc,
            sypd: p.sypd,
        })
        .collect();
    pts.push(Point { nproc: at, sypd });
    pts.sort_by_key(|p| p.nproc);
    Curve::from_points(name, "measured so far", &pts).ok()
}

fn plain(name: &str, points: &[KnownPoint]) -> Option<Curve> {
    let pts: Vec<Point> = points
        .iter()
        .map(|p| Point {
            nproc: p.nproc,
            sypd: p.sypd,
        })
        .collect();
    Curve::from_points(name, "measured so far", &pts).ok()
}

/// The prediction over `curves`, each over its measured range.
fn problem(names: &[&str], curves: &[Curve], settings: &Settings) -> Option<Problem> {
    let inputs: Vec<ComponentInput> = names
        .iter()
        .zip(curves)
        .map(|(name, curve)| ComponentInput {
            name: (*name).to_string(),
            curve: Some(curve.clone()),
            allowed: None,
            min_nproc: None,
            max_nproc: None,
            thread_curves: Vec::new(),
        })
        .collect();
    Problem::new(&inputs, settings).ok()
}

/// How much FN configuration `pick` loses, on `problem`, against its best.
fn loss(problem: &Problem, pick: &[u32], tts_w: f64) -> Option<f64> {
    let index: Vec<usize> = pick
        .iter()
        .enumerate()
        .map(|(c, &p)| problem.candidate_index(c, p))
        .collect::<Option<_>>()?;
    let best = problem.rank(tts_w, 1).top.first()?.fittingness;
    Some((best - problem.score(&index, tts_w).fittingness).max(0.0))
}

/// How far a smooth curve may be off the measured ones in each gap (relative): a curve whose
/// log-log slope turns by `bend` (the most the slope of the gap differs from its neighbours')
/// across a gap of log width `h` is off its chord by `bend * h / 8` in the middle, a parabola's
/// sagitta: what an interpolation between the two counts can miss there.
pub fn gap_errors(points: &[KnownPoint]) -> Vec<f64> {
    let slope = |a: &KnownPoint, b: &KnownPoint| {
        (b.sypd / a.sypd).ln() / (f64::from(b.nproc) / f64::from(a.nproc)).ln()
    };
    let slopes: Vec<f64> = points.windows(2).map(|w| slope(&w[0], &w[1])).collect();
    (0..slopes.len())
        .map(|i| {
            let own = slopes[i];
            let left = i.checked_sub(1).map_or(own, |j| slopes[j]);
            let right = slopes.get(i + 1).copied().unwrap_or(own);
            let bend = (own - left).abs().max((own - right).abs());
            let h = (f64::from(points[i + 1].nproc) / f64::from(points[i].nproc)).ln();
            bend * h / 8.0
        })
        .collect()
}

/// The next counts worth measuring, or done (see the module doc). `noise` is the pooled
/// relative noise of one run; `spread_limit` the relative spread beyond which a measured
/// count's runs disagree more than that noise explains. `None` when no prediction can be made
/// from the points (a component with fewer than two, a budget below the smallest counts):
/// then the caller decides by the curves' shape alone.
pub fn next_counts(
    curves: &[KnownCurve],
    settings: &Settings,
    noise: f64,
    spread_limit: f64,
) -> Option<Next> {
    if curves.iter().any(|c| c.points.len() < 2) {
        return None;
    }
    let names: Vec<&str> = curves.iter().map(|c| c.name.as_str()).collect();
    let base: Vec<Curve> = curves
        .iter()
        .map(|c| plain(&c.name, &c.points))
        .collect::<Option<_>>()?;
    let tts_w = settings.tts_w;
    let unbent = problem(&names, &base, settings)?;
    let best = unbent.rank(tts_w, 1).top.first()?.clone();
    let pick = best.nproc.clone();
    // The noise in FN: how far the pick's FN moves, on the prediction's own scale, when its
    // speed is off by the noise (its cost then off the other way).
    let fn_noise = {
        let at = &best;
        let fn_at = |sypd: f64, chsy: f64| {
            crate::metrics::fittingness_in(
                tts_w,
                sypd,
                chsy,
                &unbent.sypd_bounds,
                &unbent.cost_bounds,
            )
        };
        let cost = at.billing.as_ref().map_or(at.chsy, |b| b.cost);
        (fn_at(at.sypd, cost) - fn_at(at.sypd * (1.0 - noise), cost / (1.0 - noise)))
            .abs()
            .max(MIN_FN_CHANGE)
    };
    // The most the pick loses when component `c`'s curve is set to `sypd` at `at`.
    let change = |c: usize, at: u32, sypd: f64| -> f64 {
        let Some(curve) = bent(&curves[c].name, &curves[c].points, at, sypd) else {
            return 0.0;
        };
        let mut set = base.clone();
        set[c] = curve;
        problem(&names, &set, settings)
            .and_then(|p| loss(&p, &pick, tts_w))
            .unwrap_or(0.0)
    };
    let mut out = Vec::new();
    for (c, curve) in curves.iter().enumerate() {
        let pts = &curve.points;
        let interpolant = Interpolant::new(settings.interp, &base[c].xs(), &base[c].ys());
        let errors = gap_errors(pts);
        let mut best: Option<Worth> = None;
        for (i, &error) in errors.iter().enumerate() {
            let (a, b) = (pts[i].nproc, pts[i + 1].nproc);
            let Some(mid) = curve.grid.snap((f64::from(a) * f64::from(b)).sqrt()) else {
                continue;
            };
            if mid <= a || mid >= b || error <= noise {
                continue;
            }
            let here = interpolant.eval(f64::from(mid));
            if !(here.is_finite() && here > 0.0) {
                continue;
            }
            let moved =
                change(c, mid, here * (1.0 + error)).max(change(c, mid, here * (1.0 - error)));
            if moved > fn_noise && best.as_ref().is_none_or(|w| moved > w.fn_change) {
                best = Some(Worth {
                    component: c,
                    nproc: mid,
                    new: true,
                    error,
                    fn_change: moved,
                    fn_noise,
                    gap: (a, b),
                });
            }
        }
        out.extend(best);
        for p in pts {
            if p.runs < 2 || p.spread <= spread_limit {
                continue;
            }
            let moved = change(c, p.nproc, p.sypd * (1.0 + p.spread)).max(change(
                c,
                p.nproc,
                p.sypd * (1.0 - p.spread),
            ));
            if moved > fn_noise {
                out.push(Worth {
                    component: c,
                    nproc: p.nproc,
                    new: false,
                    error: p.spread,
                    fn_change: moved,
                    fn_noise,
                    gap: (p.nproc, p.nproc),
                });
            }
        }
    }
    Some(if out.is_empty() {
        Next::Done { fn_noise }
    } else {
        Next::Measure(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOISE: f64 = 0.005;

    /// A component measured at `counts` on a power law `a * p^e`, times `factor(p)`.
    fn measured(name: &str, counts: &[u32], speed: &dyn Fn(u32) -> f64) -> KnownCurve {
        KnownCurve {
            name: name.into(),
            grid: Grid::new(48, 960, None, 8, None, 4),
            points: counts
                .iter()
                .map(|&p| KnownPoint {
                    nproc: p,
                    sypd: speed(p),
                    spread: 0.0,
                    runs: 2,
                })
                .collect(),
        }
    }

    fn settings(curves: &[KnownCurve]) -> Settings {
        decision_settings(curves, 1200, 0.5, 0, Some(8))
    }

    fn pick(curves: &[KnownCurve]) -> Vec<u32> {
        let names: Vec<&str> = curves.iter().map(|c| c.name.as_str()).collect();
        let base: Vec<Curve> = curves
            .iter()
            .map(|c| plain(&c.name, &c.points).unwrap())
            .collect();
        problem(&names, &base, &settings(curves))
            .unwrap()
            .rank(0.5, 1)
            .top[0]
            .nproc
            .clone()
    }

    const COUNTS: [u32; 7] = [48, 96, 192, 288, 384, 672, 960];

    fn slow(p: u32) -> f64 {
        0.08 * f64::from(p).powf(0.85)
    }

    fn fast(p: u32) -> f64 {
        0.6 * f64::from(p).powf(0.7)
    }

    #[test]
    fn a_curve_known_within_the_noise_stops() {
        // Power laws with noise-sized wiggles: nothing between the counts can be off by more
        // than the noise.
        let wiggle = |p: u32| 1.0 + NOISE * if p.is_multiple_of(96) { 0.5 } else { -0.5 };
        let curves = [
            measured("ATM", &COUNTS, &|p| slow(p) * wiggle(p)),
            measured("OCN", &COUNTS, &|p| fast(p) * wiggle(p)),
        ];
        let next = next_counts(&curves, &settings(&curves), NOISE, 3.0 * NOISE).unwrap();
        assert!(matches!(next, Next::Done { .. }), "{next:?}");
    }

    #[test]
    fn a_dip_far_from_balance_is_not_mapped() {
        // The ocean is fast: balanced configurations give it few PEs. A dip at 672 of its
        // counts, far above any of them, leaves its neighbouring gaps uncertain but changes
        // no answer.
        let dip = |p: u32| fast(p) * if p == 672 { 0.6 } else { 1.0 };
        let curves = [
            measured("ATM", &COUNTS, &slow),
            measured("OCN", &COUNTS, &dip),
        ];
        let chosen = pick(&curves);
        assert!(chosen[1] < 384, "balanced far below the dip: {chosen:?}");
        assert!(gap_errors(&curves[1].points)[4..]
            .iter()
            .all(|&e| e > NOISE));
        let next = next_counts(&curves, &settings(&curves), NOISE, 3.0 * NOISE).unwrap();
        if let Next::Measure(worth) = &next {
            assert!(
                worth.iter().all(|w| w.component != 1 || w.nproc < 384),
                "the dip is mapped: {worth:?}"
            );
        }
        // The same dip where the ocean's balanced count lies is measured.
        let near = chosen[1];
        let k = COUNTS.iter().position(|&p| p >= near).unwrap().max(2);
        let counts: Vec<u32> = COUNTS
            .iter()
            .copied()
            .filter(|&p| p != COUNTS[k - 1])
            .collect();
        let wide = measured("OCN", &counts, &|p| {
            fast(p) * if p == COUNTS[k] { 0.7 } else { 1.0 }
        });
        let curves = [measured("ATM", &COUNTS, &slow), wide];
        let next = next_counts(&curves, &settings(&curves), NOISE, 3.0 * NOISE).unwrap();
        let Next::Measure(worth) = next else {
            panic!("a dip at balance is left unmeasured")
        };
        assert!(worth.iter().any(|w| w.component == 1 && w.new), "{worth:?}");
    }

    #[test]
    fn a_spread_count_is_run_again_only_near_balance() {
        let base = [
            measured("ATM", &COUNTS, &slow),
            measured("OCN", &COUNTS, &fast),
        ];
        let chosen = pick(&base);
        let nearest = |c: usize| {
            *COUNTS
                .iter()
                .min_by_key(|&&p| p.abs_diff(chosen[c]))
                .unwrap()
        };
        let with_spread = |c: usize, at: u32| {
            let mut curves = base.clone();
            for p in &mut curves[c].points {
                if p.nproc == at {
                    p.spread = 0.1;
                }
            }
            next_counts(&curves, &settings(&curves), NOISE, 3.0 * NOISE).unwrap()
        };
        let again = |next: &Next, c: usize, at: u32| matches!(next, Next::Measure(w) if w.iter().any(|w| !w.new && w.component == c && w.nproc == at));
        let near = nearest(1);
        assert!(
            again(&with_spread(1, near), 1, near),
            "{near} of {chosen:?}"
        );
        assert!(!again(&with_spread(1, 960), 1, 960), "{chosen:?}");
        // Too few points to predict from: the caller decides alone.
        let short = [
            measured("ATM", &[48], &slow),
            measured("OCN", &COUNTS, &fast),
        ];
        assert_eq!(next_counts(&short, &settings(&short), NOISE, 0.015), None);
    }
}
