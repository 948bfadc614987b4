//! The guided strategy's choice of the next iteration's tests from a [`Landscape`]: the
//! donor/recipient move from the best, the model's most promising configurations near the best,
//! and repetitions of the configurations the noise leaves in contention with the best.

use super::super::algorithm1;
use super::super::PlannedTest;
use super::landscape::{within_budget, Landscape, MeasuredConfig};
use super::tuning::*;
use crate::model::guide::{band_sds, expected_improvement, run_noise_sd};
use crate::predict::ConfigurationText;

/// What [`choose`] decided.
pub struct Chosen {
    pub next: Vec<PlannedTest>,
    /// Why the campaign stops, when it does.
    pub stop: Option<String>,
}

/// Within `minimum_step` PEs of `b` in every component: the same configuration for the search.
fn near(a: &[u32], b: &[u32], minimum_step: u32, budgets: &algorithm1::Budgets) -> bool {
    within(a, b, minimum_step, budgets)
}

/// Closer than `radius` PEs in every component; on another resource than the first, closer
/// than the units that cost `radius` PEs (at least one unit: only equal counts are that close).
fn within(a: &[u32], b: &[u32], radius: u32, budgets: &algorithm1::Budgets) -> bool {
    a.iter()
        .zip(b)
        .enumerate()
        .all(|(c, (x, y))| x.abs_diff(*y) < budgets.units_for(c, radius))
}

/// A measured configuration with its FN on the landscape's normalisation.
struct Scored<'a> {
    config: &'a MeasuredConfig,
    fn_: f64,
    /// Mean SYPD of its runs.
    sypd: f64,
}

impl Scored<'_> {
    /// How far one standard deviation of its mean SYPD (run noise over the root of its run
    /// count) moves its FN.
    fn fn_sd(&self, view: &Landscape, noise_sd: f64) -> f64 {
        let n = self.config.runs.len().max(1) as f64;
        let up = self.sypd * (noise_sd / n.sqrt()).exp();
        view.fn_at(&self.config.nproc, up) - self.fn_
    }
}

/// Is `k` still in contention with `best` given the noise? Yes when its FN gap to the best is
/// within the band of the difference of the two means: z (the model's band width in standard
/// deviations) times the root of the sum of both means' FN variances (the model's run-to-run
/// noise over the root of each one's run count). Returns that margin.
fn contention_margin(view: &Landscape, best: &Scored, k: &Scored) -> Option<f64> {
    let noise_sd = run_noise_sd(&view.model);
    let sd = (best.fn_sd(view, noise_sd).powi(2) + k.fn_sd(view, noise_sd).powi(2)).sqrt();
    let margin = band_sds(&view.model) * sd;
    (best.fn_ - k.fn_ <= margin).then_some(margin)
}

/// Decides the next iteration (see the module documentation of [`super`]).
pub fn choose(view: &Landscape, max_tests: usize) -> Chosen {
    let s = view.settings();
    let mut scored: Vec<Scored> = view
        .measured
        .iter()
        .filter_map(|m| {
            let means = algorithm1::mean_metrics(&m.runs)?;
            Some(Scored {
                config: m,
                fn_: view.fn_at(&m.nproc, means.sypd),
                sypd: means.sypd,
            })
        })
        .collect();
    // Best first; on a tie, fewer PEs.
    scored.sort_by(|a, b| {
        b.fn_.total_cmp(&a.fn_).then(
            a.config
                .nproc
                .iter()
                .sum::<u32>()
                .cmp(&b.config.nproc.iter().sum()),
        )
    });
    let Some(best) = scored.first() else {
        return Chosen {
            next: Vec::new(),
            stop: Some("nothing was measured: every run failed".into()),
        };
    };
    let best_fn = best.fn_;
    let budgets = s.budgets();
    let taken = |n: &[u32], planned: &[PlannedTest]| {
        view.measured
            .iter()
            .any(|m| near(&m.nproc, n, s.minimum_step, &budgets))
            || planned
                .iter()
                .any(|p| near(&p.nproc, n, s.minimum_step, &budgets))
    };
    let contenders: Vec<(&Scored, f64)> = scored
        .iter()
        .filter_map(|k| contention_margin(view, best, k).map(|margin| (k, margin)))
        .take(CONTENDERS_AT_MOST)
        .collect();
    let mut next: Vec<PlannedTest> = Vec::new();

    // Local evidence: Algorithm 1's move from the best, when the band lets it win.
    if let Some((target, step, donor, recipient, upper)) =
        donor_move(view, best.config, best_fn, &taken)
    {
        {
            next.push(PlannedTest {
                test: None,
                nproc: target,
                step,
                runs: 1,
                reason: Some(format!(
                    "donor/recipient: {} PEs {} -> {} from the best ({}); model: {}",
                    step,
                    view.names[donor],
                    view.names[recipient],
                    ConfigurationText::new(&view.names, &best.config.nproc).slashed(),
                    on_the_model_scale(upper, best_fn)
                )),
            });
        }
    }

    // The model: every unmeasured configuration near the best ones whose upper FN beats the
    // best, by expected improvement, spread out.
    let centres: Vec<&[u32]> = scored
        .iter()
        .take(TRUST_AROUND)
        .map(|k| k.config.nproc.as_slice())
        .collect();
    let radius = s.initial_step + 1;
    let near_centre = |c: usize, p: u32| {
        centres
            .iter()
            .any(|n| n[c].abs_diff(p) < budgets.units_for(c, radius))
    };
    let trusted = |n: &[u32]| centres.iter().any(|c| within(c, n, radius, &budgets));
    let mut options: Vec<(f64, f64, Vec<u32>)> = view
        .candidates(&near_centre, &|n| trusted(n) && !taken(n, &[]))
        .into_iter()
        .filter_map(|n| {
            let b = view.belief(&n);
            (b.upper > best_fn).then(|| (expected_improvement(b.mean, b.sd, best_fn), b.upper, n))
        })
        .collect();
    options.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.2.cmp(&b.2)));
    let spread = (s.initial_step / 2).max(s.minimum_step);
    let first_ei = options.first().map(|o| o.0).unwrap_or(0.0);
    let noise_floor = MIN_EI_NOISE * best.fn_sd(view, run_noise_sd(&view.model));
    for (ei, upper, nproc) in &options {
        if next.len() >= max_tests
            || *ei < MIN_EI_SHARE * first_ei
            || *ei < MIN_EI
            || *ei < noise_floor
        {
            break;
        }
        if taken(nproc, &next)
            || next
                .iter()
                .any(|p| within(&p.nproc, nproc, spread, &budgets))
        {
            continue;
        }
        next.push(PlannedTest {
            test: None,
            nproc: nproc.clone(),
            step: 0,
            runs: 1,
            reason: Some(format!(
                "model: {} (expected gain {ei:.4})",
                on_the_model_scale(*upper, best_fn)
            )),
        });
    }
    if !next.is_empty() {
        return Chosen { next, stop: None };
    }

    // Before answering: the best's unmeasured neighbours (see [`neighbours`]) that the model's
    // band cannot rule out.
    let check_step = (s.initial_step / 2).max(s.minimum_step);
    let mut checks: Vec<(f64, Vec<u32>, String, f64)> = Vec::new();
    for (t, what) in neighbours(view, &best.config.nproc, check_step) {
        if taken(&t, &[]) {
            continue;
        }
        let b = view.belief(&t);
        let ei = expected_improvement(b.mean, b.sd, best_fn);
        if b.upper > best_fn && ei >= MIN_EI {
            checks.push((ei, t, what, b.upper));
        }
    }
    checks.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let first_check = checks.first().map(|c| c.0).unwrap_or(0.0);
    for (ei, nproc, what, upper) in checks {
        if next.len() >= max_tests || ei < MIN_EI_SHARE * first_check {
            break;
        }
        if taken(&nproc, &next) {
            continue;
        }
        next.push(PlannedTest {
            test: None,
            nproc,
            step: 0,
            runs: 1,
            reason: Some(format!(
                "neighbour: {what} from the best ({}); model: {} (expected gain {ei:.4})",
                ConfigurationText::new(&view.names, &best.config.nproc).slashed(),
                on_the_model_scale(upper, best_fn)
            )),
        });
    }
    if !next.is_empty() {
        return Chosen { next, stop: None };
    }

    // Nothing unmeasured can win: before answering, run once more what the noise leaves in
    // contention with the best (the best included), up to `repetitions` runs each.
    if contenders.len() > 1 {
        for (k, margin) in &contenders {
            let m = k.config;
            if m.attempts >= s.repetitions {
                continue;
            }
            next.push(PlannedTest {
                test: Some(m.test),
                nproc: m.nproc.clone(),
                step: 0,
                runs: 1,
                reason: Some(format!(
                    "repetition: model-scale FN {:.3} is within {margin:.3} of the best {best_fn:.3} ({} of at most {} runs)",
                    k.fn_,
                    m.attempts + 1,
                    s.repetitions
                )),
            });
        }
    }
    if !next.is_empty() {
        return Chosen { next, stop: None };
    }
    Chosen {
        next,
        stop: Some(format!(
            "no unmeasured configuration can beat the best FN {best_fn:.3} by the model's band by an expected {:.4} or more (the larger of {MIN_EI} and {MIN_EI_NOISE} standard deviations of the best's measured FN), no unmeasured neighbour of it {check_step} PEs away by an expected {MIN_EI} or more, and no other measured one is within the noise of it",
            MIN_EI.max(noise_floor)
        )),
    }
}

/// The configurations one move of `step` PEs from `nproc`, with the move in words: one
/// component's PEs up or down (the next candidate count at least `step` away; the total changes,
/// as FN's trade of speed against cost may want), or `step` PEs from one component to another
/// (Algorithm 1's move, in either direction). Within the budget and the limits.
fn neighbours(view: &Landscape, nproc: &[u32], step: u32) -> Vec<(Vec<u32>, String)> {
    let s = view.settings();
    let budgets = s.budgets();
    let mut out = Vec::new();
    for (c, list) in view.lists.iter().enumerate() {
        let dist = budgets.units_for(c, step);
        let p = nproc[c];
        let down = list.iter().rev().find(|&&q| q + dist <= p);
        let up = list.iter().find(|&&q| q >= p + dist);
        for (q, sign) in [(down, '-'), (up, '+')] {
            let Some(&q) = q else { continue };
            let mut t = nproc.to_vec();
            t[c] = q;
            if within_budget(&budgets, &t) {
                out.push((t, format!("{} {sign}{}", view.names[c], q.abs_diff(p))));
            }
        }
    }
    for d in 0..nproc.len() {
        for r in 0..nproc.len() {
            let moved = algorithm1::move_units(nproc, d, r, step, &view.limits, &budgets)
                .filter(|t| within_budget(&budgets, t));
            if let Some(t) = moved {
                out.push((
                    t,
                    format!("{step} PEs {} -> {}", view.names[d], view.names[r]),
                ));
            }
        }
    }
    out
}

/// Algorithm 1's move from the best measured configuration: its donor gives `step` PEs to its
/// recipient, at the largest step from `initial_step` down to `minimum_step` (halving) whose
/// target is unmeasured and can beat the best by the model's band. Algorithm 1 halves its step
/// when the move overshoots (the recipient becomes the donor); the band says so before the run.
/// `None` without a partial coupling cost or when no step qualifies.
fn donor_move(
    view: &Landscape,
    best: &MeasuredConfig,
    best_fn: f64,
    taken: &dyn Fn(&[u32], &[PlannedTest]) -> bool,
) -> Option<(Vec<u32>, u32, usize, usize, f64)> {
    let s = view.settings();
    let means = algorithm1::mean_metrics(&best.runs)?;
    let (donor, recipient) = algorithm1::donor_and_recipient(&means.partial_coupling_cost)?;
    let budgets = s.budgets();
    let mut step = s.initial_step;
    while step >= s.minimum_step && step > 0 {
        // With `[[resource]]` tables the donor gives the units that cost `step` PEs and the
        // recipient gets those that cost the same on its resource, as in Algorithm 1.
        let target =
            algorithm1::move_units(&best.nproc, donor, recipient, step, &view.limits, &budgets)
                .filter(|t| within_budget(&budgets, t) && !taken(t, &[]));
        if let Some(target) = target {
            let upper = view.upper_fn(&target);
            if upper > best_fn {
                return Some((target, step, donor, recipient, upper));
            }
        }
        step /= 2;
    }
    None
}

/// A model's comparison in words. Its FN is on the landscape's scale (normalised over the
/// predicted range, see [`Landscape::fn_at`]), not the campaign's FN over its measured runs,
/// so it says so, and says why a value above 1 is possible.
fn on_the_model_scale(upper: f64, best_fn: f64) -> String {
    let above = if upper > 1.0 {
        "; above 1: beyond the predicted range"
    } else {
        ""
    };
    format!("upper band {upper:.3} > best {best_fn:.3} on the model's FN scale{above}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::demo;
    use crate::campaign::state::{RunMetrics, RunState, State};
    use crate::campaign::strategy::guided;
    use crate::interp::Interpolant;

    /// The demo campaign (IFS + NEMO, budget 672) with every run of its first iteration
    /// measured: each component at 0.9 of its standalone curve, the slowest sets the pace.
    fn measured_demo(tmp: &std::path::Path) -> (State, Landscape) {
        let dir = demo::init_demo(tmp, Some(0.0)).unwrap();
        let mut state = State::load(&dir).unwrap();
        let curves = guided::load_curves(&state, &dir).unwrap();
        let interp = state.settings.interp.unwrap_or_default();
        let curve_at: Vec<Interpolant> = curves
            .iter()
            .flatten()
            .map(|c| Interpolant::new(interp, &c.xs(), &c.ys()))
            .collect();
        let extra = state.settings.extra_pes;
        for test in &mut state.iterations[0].tests {
            let speeds: Vec<f64> = test
                .nproc
                .iter()
                .zip(&curve_at)
                .map(|(&p, i)| 0.9 * i.eval(f64::from(p)))
                .collect();
            let coupled = speeds.iter().copied().fold(f64::INFINITY, f64::min);
            let total: f64 = test.nproc.iter().map(|&p| f64::from(p)).sum();
            let partial: Vec<f64> = speeds
                .iter()
                .zip(&test.nproc)
                .map(|(s, &p)| (1.0 - coupled / s) * f64::from(p) / total)
                .collect();
            for run in &mut test.runs {
                run.state = RunState::Done;
                run.metrics = Some(RunMetrics {
                    sypd: coupled,
                    chsy: crate::metrics::chsy(total + f64::from(extra), coupled),
                    coupling_cost: partial.iter().sum(),
                    partial_coupling_cost: partial.clone(),
                });
            }
        }
        let view = Landscape::new(&state, &curves).unwrap();
        (state, view)
    }

    #[test]
    fn choices_can_beat_the_best_keep_their_distance_and_the_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let (state, view) = measured_demo(tmp.path());
        let s = &state.settings;
        let chosen = choose(&view, 4);
        assert!(chosen.stop.is_none(), "{:?}", chosen.stop);
        assert!(!chosen.next.is_empty() && chosen.next.len() <= 4);
        for (k, t) in chosen.next.iter().enumerate() {
            let reason = t.reason.clone().unwrap();
            assert!(
                reason.starts_with("model: upper band ") || reason.starts_with("donor/recipient: "),
                "{reason}"
            );
            assert!(t.test.is_none() && t.runs == 1);
            assert!(within_budget(&s.budgets(), &t.nproc), "{:?}", t.nproc);
            for m in &view.measured {
                assert!(
                    !near(&m.nproc, &t.nproc, s.minimum_step, &s.budgets()),
                    "{:?}",
                    t.nproc
                );
            }
            for other in &chosen.next[..k] {
                assert!(!near(&other.nproc, &t.nproc, s.minimum_step, &s.budgets()));
            }
        }
    }

    /// The best measured configuration of a view, scored as [`choose`] scores it.
    fn best_of(view: &Landscape) -> Scored<'_> {
        view.measured
            .iter()
            .map(|m| {
                let sypd = algorithm1::mean_metrics(&m.runs).unwrap().sypd;
                Scored {
                    config: m,
                    fn_: view.fn_at(&m.nproc, sypd),
                    sypd,
                }
            })
            .max_by(|a, b| a.fn_.total_cmp(&b.fn_))
            .unwrap()
    }

    /// The expected gains of the model's choices, read from their reasons.
    fn model_gains(chosen: &Chosen) -> Vec<f64> {
        chosen
            .next
            .iter()
            .filter_map(|t| {
                let gain = t.reason.as_deref()?.split("(expected gain ").nth(1)?;
                gain.trim_end_matches(')').parse().ok()
            })
            .collect()
    }

    #[test]
    fn the_model_proposes_only_gains_the_noise_of_the_best_does_not_hide() {
        let tmp = tempfile::tempdir().unwrap();
        let (_, mut view) = measured_demo(tmp.path());
        let floor =
            |view: &Landscape| MIN_EI_NOISE * best_of(view).fn_sd(view, run_noise_sd(&view.model));
        let once = floor(&view);
        assert!(
            once > MIN_EI,
            "the noise floor {once} is the binding one here"
        );
        let chosen = choose(&view, 4);
        for g in model_gains(&chosen) {
            assert!(
                g >= once - 1e-4,
                "expected gain {g} below the noise floor {once}"
            );
        }
        // Nine runs of every configuration know the best's mean three times better: the floor
        // falls to a third, and gains it hid before are worth runs now.
        for m in &mut view.measured {
            let first = m.runs[0].clone();
            m.runs = vec![first; 9];
        }
        let nine = floor(&view);
        assert!((nine / once - 1.0 / 3.0).abs() < 0.05, "{nine} vs {once}");
        let more = model_gains(&choose(&view, 4));
        assert!(
            more.len() > model_gains(&chosen).len(),
            "{more:?} with floor {nine}"
        );
        assert!(
            more.iter().all(|&g| g >= nine - 1e-4 && g < once),
            "{more:?}"
        );
    }

    #[test]
    fn contention_needs_a_gap_within_the_noise_and_narrows_with_repetitions() {
        let tmp = tempfile::tempdir().unwrap();
        let (_, view) = measured_demo(tmp.path());
        let once = view.measured[0].clone();
        let mut twice = once.clone();
        twice.runs.push(twice.runs[0].clone());
        fn at<'a>(view: &Landscape, config: &'a MeasuredConfig, sypd: f64) -> Scored<'a> {
            Scored {
                config,
                fn_: view.fn_at(&config.nproc, sypd),
                sypd,
            }
        }
        let (once, twice) = (&once, &twice);
        let at = |config, sypd| at(&view, config, sypd);
        let sypd = once.runs[0].sypd;
        let best = at(once, sypd);
        // 0.2 % slower: within the noise of one run each; 20 % slower: out.
        let margin = contention_margin(&view, &best, &at(once, sypd * 0.998)).unwrap();
        assert!(margin > 0.0);
        assert!(contention_margin(&view, &best, &at(once, sypd * 0.8)).is_none());
        // Two runs each know their means better: the margin narrows by about 1/sqrt(2).
        let best2 = at(twice, sypd);
        let margin2 = contention_margin(&view, &best2, &at(twice, sypd * 0.998)).unwrap();
        let ratio = margin2 / margin;
        assert!((ratio - 0.5f64.sqrt()).abs() < 0.02, "{ratio}");
    }
    #[test]
    fn neighbours_are_one_move_away_within_the_budget_in_every_direction() {
        let tmp = tempfile::tempdir().unwrap();
        let (state, view) = measured_demo(tmp.path());
        let s = &state.settings;
        let step = s.initial_step / 2;
        let from = view.measured[0].nproc.clone();
        let all = neighbours(&view, &from, step);
        let (mut up, mut down, mut pairs) = (0, 0, 0);
        for (t, what) in &all {
            assert!(within_budget(&s.budgets(), t), "{t:?}");
            let changed: Vec<usize> = (0..t.len()).filter(|&c| t[c] != from[c]).collect();
            match changed.as_slice() {
                [c] => {
                    assert!(t[*c].abs_diff(from[*c]) >= step, "{what}: {t:?}");
                    assert!(view.lists[*c].contains(&t[*c]), "{what}: {t:?}");
                    if t[*c] > from[*c] {
                        up += 1;
                    } else {
                        down += 1;
                    }
                }
                [d, r] => {
                    assert!(what.contains(" -> "), "{what}");
                    assert!(t[*d] < from[*d] || t[*r] < from[*r], "{what}: {t:?}");
                    pairs += 1;
                }
                _ => panic!("{what}: {t:?} is more than one move from {from:?}"),
            }
        }
        // Both directions of each kind of move: the neighbour check does not trust the
        // donor/recipient direction mean times give.
        assert!(down > 0 && pairs >= 2, "{all:?}");
        assert!(
            up > 0 || from.iter().sum::<u32>() + step > s.max_nproc,
            "{all:?}"
        );
    }
}
