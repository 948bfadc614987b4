//! The speed/cost front and the TTS_w intervals against brute force: the front against an
//! O(n^2) dominance check over every kept configuration, the intervals against the top-1 found by
//! scoring every kept configuration at every TTS_w from 0 to 1 in steps of 1e-4. Also with a
//! machine (node rounding in both placements, node-hour and energy cost, queues) and with a
//! calibrated model's candidate speeds.

use crate::common::predict::{bundled, cost_model_strategy, fitted, problem_strategy, Speeds};
use autolb::interp::Method;
use autolb::metrics::{self, Bounds};
use autolb::predict::front::Winner;
use autolb::predict::{ComponentInput, Problem, ProblemOptions, Settings};
use proptest::prelude::*;

/// One kept configuration, found the obvious way.
#[derive(Debug, Clone)]
struct Kept {
    nproc: Vec<u32>,
    total: u32,
    sypd: f64,
    /// The cost FN weighs: CHSY, or the machine's bill.
    cost: f64,
}

/// Every kept configuration of `problem`: every combination of candidates within the budget
/// (and the chosen queue) whose speed-up x efficiency against the base case is at least 1,
/// costed by the obvious formula: 24 x (used PEs, billed cores or node kW) / SYPD.
fn naive_kept(problem: &Problem) -> Vec<Kept> {
    let sizes: Vec<usize> = problem.components.iter().map(|c| c.nproc.len()).collect();
    let base_total = f64::from(problem.total_nproc(problem.baseline_nproc.iter().sum()));
    let mut kept = Vec::new();
    let mut index = vec![0usize; sizes.len()];
    'all: loop {
        let nproc: Vec<u32> = index
            .iter()
            .zip(&problem.components)
            .map(|(&i, c)| c.nproc[i])
            .collect();
        let sum: u32 = nproc.iter().sum();
        if sum <= problem.settings.max_nproc {
            let sypd = index
                .iter()
                .zip(&problem.components)
                .map(|(&i, c)| c.sypd[i])
                .fold(f64::INFINITY, f64::min);
            let total = problem.total_nproc(sum);
            let extras = problem.settings.extra_pes;
            if metrics::beats_base_case(sypd, f64::from(total), problem.baseline_sypd, base_total)
                && problem.cost_model.fits(&nproc, extras, sypd)
            {
                let cost = metrics::chsy(problem.cost_model.weight_of(&nproc, extras), sypd);
                kept.push(Kept {
                    nproc,
                    total,
                    sypd,
                    cost,
                });
            }
        }
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < sizes[d] {
                continue 'all;
            }
            index[d] = 0;
        }
        break;
    }
    kept
}

fn dominates(b: &Kept, a: &Kept) -> bool {
    b.sypd >= a.sypd && b.cost <= a.cost && (b.sypd > a.sypd || b.cost < a.cost)
}

/// The distinct (SYPD, cost) points of the kept configurations, each as the first configuration
/// in ranking order that lands there. Configurations on one point score the same at every TTS_w
/// and none dominates another, so brute force over points is brute force over configurations.
fn points(kept: &[Kept]) -> Vec<Kept> {
    let mut sorted: Vec<&Kept> = kept.iter().collect();
    sorted.sort_by(|a, b| {
        a.sypd
            .total_cmp(&b.sypd)
            .then(a.cost.total_cmp(&b.cost))
            .then(a.total.cmp(&b.total))
            .then_with(|| a.nproc.cmp(&b.nproc))
    });
    sorted.dedup_by(|b, a| a.sypd == b.sypd && a.cost == b.cost);
    sorted.into_iter().cloned().collect()
}

/// The front by definition: points nobody dominates, in ascending SYPD.
fn naive_front(points: &[Kept]) -> Vec<Kept> {
    let mut front: Vec<Kept> = points
        .iter()
        .filter(|a| !points.iter().any(|b| dominates(b, a)))
        .cloned()
        .collect();
    front.sort_by(|a, b| a.sypd.total_cmp(&b.sypd));
    front
}

/// The top-1 at `w` by scoring every kept configuration, ties by the ranking order of the guide's
/// `method/prediction.md` (step 6).
fn brute_winner<'a>(kept: &'a [Kept], w: f64, sb: &Bounds, cb: &Bounds) -> &'a Kept {
    let fn_of = |k: &Kept| metrics::fittingness_in(w, k.sypd, k.cost, sb, cb);
    kept.iter()
        .min_by(|a, b| {
            fn_of(b)
                .total_cmp(&fn_of(a))
                .then(a.total.cmp(&b.total))
                .then_with(|| a.nproc.cmp(&b.nproc))
        })
        .expect("the base case is always kept")
}

/// The winner whose interval holds `w`.
fn interval_winner(winners: &[Winner], w: f64) -> &Winner {
    winners
        .iter()
        .enumerate()
        .find(|(k, win)| win.holds_at(w, *k == 0))
        .map(|(_, win)| win)
        .unwrap_or_else(|| panic!("no interval holds TTS_w {w}: {winners:?}"))
}

/// The intervals tile [0, 1]: from 0, contiguous, to 1, none empty but a leading [0, 0].
fn check_tiling(winners: &[Winner]) {
    assert!(!winners.is_empty());
    assert_eq!(winners[0].tts_w_from, 0.0);
    assert_eq!(winners.last().unwrap().tts_w_to, 1.0);
    for (k, pair) in winners.windows(2).enumerate() {
        assert_eq!(pair[0].tts_w_to, pair[1].tts_w_from, "{winners:?}");
        assert!(
            pair[1].tts_w_to > pair[1].tts_w_from,
            "empty interval: {winners:?}"
        );
        if k > 0 {
            assert!(pair[0].tts_w_to > pair[0].tts_w_from, "{winners:?}");
        }
    }
}

/// Checks the front and the intervals of one problem against brute force.
pub(crate) fn check_problem(problem: &Problem) -> Result<(), TestCaseError> {
    let kept = points(&naive_kept(problem));
    let expected = naive_front(&kept);
    let front = problem.front(problem.settings.tts_w);
    let got: Vec<&Vec<u32>> = front.iter().map(|c| &c.nproc).collect();
    let want: Vec<&Vec<u32>> = expected.iter().map(|k| &k.nproc).collect();
    prop_assert_eq!(got, want);
    for (c, k) in front.iter().zip(&expected) {
        prop_assert_eq!(c.sypd, k.sypd);
        prop_assert_eq!(c.cost(), k.cost);
        prop_assert_eq!(c.total_nproc, k.total);
    }

    let sb = Bounds::of(kept.iter().map(|k| k.sypd)).unwrap();
    let cb = Bounds::of(kept.iter().map(|k| k.cost)).unwrap();
    // The problem normalises over the same kept set.
    prop_assert_eq!(problem.sypd_bounds, sb);
    prop_assert_eq!(problem.cost_bounds, cb);
    let winners = problem.winners();
    check_tiling(&winners);
    let breakpoints: Vec<f64> = winners.iter().map(|w| w.tts_w_to).collect();
    for step in 0..=10_000u32 {
        let w = f64::from(step) * 1e-4;
        let brute = brute_winner(&kept, w, &sb, &cb);
        let interval = interval_winner(&winners, w);
        if interval.config.nproc != brute.nproc {
            // Only rounding right at a breakpoint may disagree.
            let near = breakpoints.iter().any(|b| (b - w).abs() < 1e-9);
            prop_assert!(
                near,
                "TTS_w {}: brute force picks {:?}, the intervals {:?} ({:?})",
                w,
                brute.nproc,
                interval.config.nproc,
                winners
                    .iter()
                    .map(|x| (x.tts_w_from, x.tts_w_to, x.config.nproc.clone()))
                    .collect::<Vec<_>>()
            );
        }
    }
    // The production ranking agrees inside each interval too.
    for win in &winners {
        let mid = 0.5 * (win.tts_w_from + win.tts_w_to);
        let top = problem.rank(mid, 1);
        if (mid - win.tts_w_from).abs() > 1e-9 && (win.tts_w_to - mid).abs() > 1e-9 {
            prop_assert_eq!(&top.top[0].nproc, &win.config.nproc);
        }
    }
    Ok(())
}

proptest! {
    // 10 001 TTS_w samples per case: fewer cases than the other property tests.
    #![proptest_config(crate::common::proptest_cases(96))]

    #[test]
    fn front_and_intervals_equal_brute_force_coarse_speeds(
        (inputs, settings) in problem_strategy(1..=4, Speeds::Coarse)
    ) {
        let Ok(problem) = Problem::new(&inputs, &settings) else { return Ok(()) };
        check_problem(&problem)?;
    }

    #[test]
    fn front_and_intervals_equal_brute_force_continuous_speeds(
        (inputs, settings) in problem_strategy(1..=4, Speeds::Continuous)
    ) {
        let Ok(problem) = Problem::new(&inputs, &settings) else { return Ok(()) };
        check_problem(&problem)?;
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(96))]

    /// Node rounding (packed and per component), node-hour and energy bills and queue limits:
    /// the front and the intervals on the billed cost are still exact.
    #[test]
    fn front_and_intervals_equal_brute_force_on_the_bill(
        (inputs, settings) in problem_strategy(1..=3, Speeds::Coarse),
        model in cost_model_strategy(),
    ) {
        let Ok(problem) = Problem::build(&inputs, &settings, ProblemOptions { model: None, cost_model: Some(&model) }) else { return Ok(()) };
        check_problem(&problem)?;
    }

    /// A calibrated model (fitted on random coupled runs) changes every candidate's speed;
    /// the front and the intervals follow those speeds exactly, also billed.
    #[test]
    fn front_and_intervals_equal_brute_force_under_a_calibrated_model(
        (inputs, settings) in problem_strategy(2..=3, Speeds::Continuous),
        picks in proptest::collection::vec((0.0f64..1.0, 0.3f64..1.2), 1..5),
        model in cost_model_strategy(),
    ) {
        let Some(calibrated) = fitted(&inputs, &settings, &picks) else { return Ok(()) };
        let Ok(problem) = Problem::build(&inputs, &settings, ProblemOptions { model: Some(&calibrated), cost_model: Some(&model) })
        else {
            return Ok(());
        };
        check_problem(&problem)?;
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_cases(16))]

    #[test]
    fn front_equals_brute_force_with_five_components(
        (inputs, settings) in problem_strategy(5..=5, Speeds::Coarse)
    ) {
        let Ok(problem) = Problem::new(&inputs, &settings) else { return Ok(()) };
        let kept = points(&naive_kept(&problem));
        let expected = naive_front(&kept);
        let got: Vec<Vec<u32>> = problem.front(0.5).into_iter().map(|c| c.nproc).collect();
        let want: Vec<Vec<u32>> = expected.into_iter().map(|k| k.nproc).collect();
        prop_assert_eq!(got, want);
    }
}

/// A linear-scaling pair: every configuration costs the same CHSY, so at TTS_w 0 fittingness
/// ties everywhere and the smallest configuration wins, though the front is the fastest one.
#[test]
fn at_zero_a_cheaper_configuration_off_the_front_can_win_alone() {
    use autolb::curve::{Curve, Point};
    let linear = |name: &str| {
        let points = [
            Point {
                nproc: 10,
                sypd: 1.0,
            },
            Point {
                nproc: 40,
                sypd: 4.0,
            },
        ];
        ComponentInput::new(Curve::from_points(name, "linear", &points).unwrap())
    };
    let settings = Settings {
        max_nproc: 80,
        step: 10,
        interp: Method::Linear,
        ..Settings::default()
    };
    let problem = Problem::new(&[linear("A"), linear("B")], &settings).unwrap();
    let front = problem.front(0.5);
    assert_eq!(front.len(), 1);
    assert_eq!(front[0].nproc, vec![40, 40]);
    let winners = problem.winners();
    let spans: Vec<(f64, f64, Vec<u32>)> = winners
        .iter()
        .map(|w| (w.tts_w_from, w.tts_w_to, w.config.nproc.clone()))
        .collect();
    assert_eq!(
        spans,
        vec![(0.0, 0.0, vec![10, 10]), (0.0, 1.0, vec![40, 40])]
    );
    check_problem(&problem).unwrap();
}

/// The paper's CCA standard-resolution set-up (section 5.3): step 36, budget 864, quadratic.
fn cca_problem() -> Problem {
    let settings = Settings {
        max_nproc: 864,
        step: 36,
        interp: Method::Quadratic,
        ..Settings::default()
    };
    let inputs = [
        bundled("IFS", "cca/cca_sr_ifs.csv"),
        bundled("NEMO", "cca/cca_sr_nemo.csv"),
    ];
    Problem::new(&inputs, &settings).expect("valid")
}

#[test]
fn cca_top_five_at_tts_w_025_is_the_papers() {
    let problem = cca_problem();
    let top: Vec<Vec<u32>> = problem
        .rank(0.25, 5)
        .top
        .into_iter()
        .map(|c| c.nproc)
        .collect();
    assert_eq!(
        top,
        vec![
            vec![576, 144],
            vec![468, 108],
            vec![432, 108],
            vec![468, 144],
            vec![540, 144]
        ]
    );
}

#[test]
fn cca_winner_moves_to_cheaper_configurations_as_tts_w_drops() {
    let problem = cca_problem();
    let winners = problem.winners();
    check_problem(&problem).unwrap();
    let at = |w: f64| interval_winner(&winners, w).config.clone();
    let (half, quarter) = (at(0.5), at(0.25));
    assert_eq!(quarter.nproc, vec![576, 144]);
    assert_eq!(half.nproc, problem.rank(0.5, 1).top[0].nproc);
    assert!(
        quarter.total_nproc < half.total_nproc,
        "{quarter:?} vs {half:?}"
    );
    assert!(quarter.chsy < half.chsy && quarter.sypd < half.sypd);
    // Every breakpoint between 0.25 and 0.5 moves to a faster, dearer configuration.
    let between: Vec<&Winner> = winners
        .iter()
        .filter(|w| w.tts_w_to >= 0.25 && w.tts_w_from < 0.5)
        .collect();
    assert!(between.len() >= 2, "{between:?}");
    for pair in between.windows(2) {
        assert!(pair[1].config.sypd > pair[0].config.sypd);
        assert!(pair[1].config.chsy > pair[0].config.chsy);
    }
}

/// Table 1 / Fig. 3 of the paper: IFS alone (standard resolution, MareNostrum4, its measured
/// PE counts); the best parallelisation moves from slower and cheaper to faster and dearer as
/// TTS_w rises from 0.3 to 0.9.
#[test]
fn ifs_alone_moves_to_faster_parallelisations_as_tts_w_rises() {
    let mut ifs = bundled("IFS", "mn4_sr_cmip6_ifs.csv");
    let points = ifs.curve.as_ref().map_or(&[][..], |c| c.points());
    ifs.allowed = Some(points.iter().map(|p| p.nproc).collect());
    let settings = Settings {
        max_nproc: 1008,
        interp: Method::Linear,
        ..Settings::default()
    };
    let problem = Problem::new(&[ifs], &settings).expect("valid");
    let winners = problem.winners();
    check_problem(&problem).unwrap();
    let picks: Vec<u32> = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
        .iter()
        .map(|&w| interval_winner(&winners, w).config.nproc[0])
        .collect();
    assert!(picks.windows(2).all(|p| p[0] <= p[1]), "{picks:?}");
    assert!(picks[0] < picks[6], "{picks:?}");
    for (w, &p) in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].iter().zip(&picks) {
        assert_eq!(problem.rank(*w, 1).top[0].nproc[0], p, "TTS_w {w}");
    }
}
