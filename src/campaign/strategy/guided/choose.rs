//! The guided strategy's choice of the next iteration's tests from a [`Landscape`]: the
//! donor/recipient move from the best, the model's most promising configurations near the best,
//! and repetitions of the configurations the noise leaves in contention with the best.

use super::super::algorithm1;
use super::super::PlannedTest;
use super::landscape::{within_budget, Landscape, MeasuredConfig};
use super::tuning::*;
use crate::model::guide::{expected_improvement, run_noise_sd};
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

    /// How far one standard deviation of the difference between its mean and one more run at
    /// its FN moves FN: what a single new run can tell against it.
    fn comparison_sd(&self, view: &Landscape, noise_sd: f64) -> f64 {
        let one = view.fn_at(&self.config.nproc, self.sypd * noise_sd.exp()) - self.fn_;
        (self.fn_sd(view, noise_sd).powi(2) + one * one).sqrt()
    }
}

/// What running `k` and `best` once more can gain the answer: the expected FN by which `k`
/// beats `best` (the expected improvement of `k` over `best`), believing their gap normal
/// around the measured one with the spread of the difference of the two means (the root of the
/// sum of both means' FN variances, each the model's run-to-run noise over the root of its run
/// count). Answering `best` without the repetition loses that much on average; a near tie that
/// the noise could turn gains about 0.4 of the spread, a rival several spreads behind nothing.
fn repetition_gain(view: &Landscape, best: &Scored, k: &Scored) -> f64 {
    let noise_sd = run_noise_sd(&view.model);
    let sd = (best.fn_sd(view, noise_sd).powi(2) + k.fn_sd(view, noise_sd).powi(2)).sqrt();
    expected_improvement(k.fn_, sd, best.fn_)
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
    // The floor a new configuration's expected gain must reach: a gain the noise of the
    // comparison the run makes hides is not worth a run. A new configuration is one run:
    // what it tells against the best is the difference of that run and the best's mean,
    // whose spread is the root of the sum of both variances however often the best ran.
    // A cold start's balancing keeps the floor of the best's own mean: its model learnt every
    // curve from a few coupled runs, and with the comparison's floor it stopped short of the
    // optimum.
    let noise_floor = if view.learns_curves() {
        MIN_EI_NOISE * best.fn_sd(view, run_noise_sd(&view.model))
    } else {
        MIN_EI_NOISE * best.comparison_sd(view, run_noise_sd(&view.model))
    };
    // A repetition settles a gap between two measured means, which at best is a tie whose
    // expected gain is 0.4 of the spread of their difference: it is held to the noise of the
    // best's own mean instead (a gain that noise hides is not worth a run).
    // A cold start holds it to MIN_EI only: its repetitions are also what its model learns
    // the run-to-run noise from.
    let repetition_floor = if view.learns_curves() {
        MIN_EI
    } else {
        MIN_EI_NOISE * best.fn_sd(view, run_noise_sd(&view.model))
    };
    // The measured rival whose repetition could change the answer most.
    let rival: Option<(&Scored, f64)> = scored
        .iter()
        .skip(1)
        .map(|k| (k, repetition_gain(view, best, k)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
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

    // Nothing unmeasured can win: before answering, run the best and its closest rival once
    // more (up to `repetitions` runs each) when the rival could still turn out better by an
    // expected gain the floors let a run go for.
    if let Some((rival, gain)) = rival.filter(|r| r.1 >= MIN_EI.max(repetition_floor)) {
        for k in [best, rival] {
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
                    "repetition: the rival {} (model-scale FN {:.3}) beats the best {} ({best_fn:.3}) by an expected {gain:.4} given the noise ({} of at most {} runs)",
                    ConfigurationText::new(&view.names, &rival.config.nproc).slashed(),
                    rival.fn_,
                    ConfigurationText::new(&view.names, &best.config.nproc).slashed(),
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
            "no unmeasured configuration can beat the best FN {best_fn:.3} by the model's band by an expected {:.4} or more (the larger of {MIN_EI} and {MIN_EI_NOISE} standard deviations of one run's FN against the best's mean), no unmeasured neighbour of it {check_step} PEs away by an expected {MIN_EI} or more, and no measured rival would beat it by as much given the noise",
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
        let floor = |view: &Landscape| {
            MIN_EI_NOISE * best_of(view).comparison_sd(view, run_noise_sd(&view.model))
        };
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
        // Nine runs of every configuration know the best's mean three times better: the
        // comparison with one new run is left with that run's noise, so the floor falls from
        // sqrt(2) to sqrt(1 + 1/9) of one run's spread, and gains it hid before are worth runs.
        for m in &mut view.measured {
            let first = m.runs[0].clone();
            m.runs = vec![first; 9];
        }
        let nine = floor(&view);
        let expected = ((1.0 + 1.0 / 9.0) / 2.0f64).sqrt();
        assert!((nine / once - expected).abs() < 0.02, "{nine} vs {once}");
        let more = model_gains(&choose(&view, 4));
        assert!(
            more.len() >= model_gains(&chosen).len(),
            "{more:?} with floor {nine}"
        );
        assert!(
            more.iter().all(|&g| g >= nine - 1e-4 && g < once),
            "{more:?}"
        );
    }

    #[test]
    fn a_repetition_gains_for_a_near_tie_and_less_with_more_runs() {
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
        let floor = MIN_EI_NOISE * best.fn_sd(&view, run_noise_sd(&view.model));
        // A tie within the noise: worth a run; 20 % slower: no gain the floor lets through.
        let tie = repetition_gain(&view, &best, &at(once, sypd));
        assert!(tie > floor, "{tie} vs floor {floor}");
        let behind = repetition_gain(&view, &best, &at(once, sypd * 0.8));
        assert!(behind < floor.min(MIN_EI), "{behind}");
        // Two runs each know their means better: a tie's gain shrinks by 1/sqrt(2).
        let best2 = at(twice, sypd);
        let ratio = repetition_gain(&view, &best2, &at(twice, sypd)) / tie;
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
