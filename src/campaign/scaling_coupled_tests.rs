//! Coupled scaling campaigns (`design = "coupled"`) driven from outside with made-up
//! measurements: the first series pairs counts by rank, an outlier in one component's speed
//! re-runs its coupled configuration, the refinement's partners are near balance, and the
//! campaign ends within its bound with curves that follow the truth.

use std::path::{Path, PathBuf};

use crate::campaign::state::State;
use crate::campaign::{init, RunMetrics, RunState};
use crate::config::CampaignFile;
use crate::sim::synthetic::SyntheticCase;

/// A coupled scaling campaign driven from outside over the case's components (each over its
/// standalone curve's range), with `extra` more `[scaling]` keys.
fn coupled_campaign(case: &SyntheticCase, tmp: &Path, extra: &str) -> (PathBuf, State) {
    let mut text = String::from("step = 4\n");
    for c in &case.components {
        text.push_str(&format!(
            "[[component]]\nname = \"{}\"\nmin_nproc = {}\nmax_nproc = {}\n\n",
            c.name,
            c.standalone.first_nproc(),
            c.standalone.last_nproc()
        ));
    }
    text.push_str(&format!("[scaling]\ndesign = \"coupled\"\n{extra}"));
    let file = CampaignFile::parse(&text, "coupled.toml").unwrap();
    let dir = tmp.join("campaign");
    init(&dir, &file, tmp, false).unwrap();
    let state = State::load(&dir).unwrap();
    (dir, state)
}

/// The metrics of a coupled run whose components compute at `speeds` on `nproc` PEs: the run
/// goes at the slowest, 3 % slower for the coupling; the others wait the rest of the time.
pub(crate) fn coupled_metrics(nproc: &[u32], speeds: &[f64]) -> RunMetrics {
    let sypd = speeds.iter().copied().fold(f64::INFINITY, f64::min) * 0.97;
    let total: f64 = nproc.iter().map(|&p| f64::from(p)).sum();
    let partial: Vec<f64> = nproc
        .iter()
        .zip(speeds)
        .map(|(&p, &s)| (1.0 - sypd / s) * f64::from(p) / total)
        .collect();
    RunMetrics {
        sypd,
        chsy: crate::metrics::chsy(total, sypd),
        coupling_cost: partial.iter().sum(),
        partial_coupling_cost: partial,
    }
}

/// Records every unfinished run of the last iteration, component `c` computing at
/// `speed(c, nproc, run id)`.
fn measure_last(state: &mut State, speed: &dyn Fn(usize, u32, &str) -> f64) {
    let last = state.iterations.len() - 1;
    for test in &mut state.iterations[last].tests {
        for run in test.runs.iter_mut().filter(|r| !r.state.is_terminal()) {
            let speeds: Vec<f64> = test
                .nproc
                .iter()
                .enumerate()
                .map(|(c, &p)| speed(c, p, &run.id))
                .collect();
            run.state = RunState::Done;
            run.metrics = Some(coupled_metrics(&test.nproc, &speeds));
        }
    }
}

fn jitter(id: &str, seed: u64) -> f64 {
    let h = crate::executor::fnv1a(id.bytes().chain(seed.to_le_bytes()));
    (h % 2001) as f64 / 1000.0 - 1.0
}

#[test]
fn the_first_series_pairs_counts_by_rank_and_every_test_is_coupled() {
    let case = SyntheticCase::generate(4, 3);
    let tmp = tempfile::tempdir().unwrap();
    let (_, state) = coupled_campaign(&case, tmp.path(), "counts = 5\n");
    let first = &state.iterations[0].tests;
    assert_eq!(first.len(), 5);
    for c in 0..3 {
        let counts: Vec<u32> = first.iter().map(|t| t.nproc[c]).collect();
        // Ascending together: the smallest with the smallest, the largest with the largest.
        assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
        assert_eq!(counts[0], case.components[c].standalone.first_nproc());
    }
    for t in first {
        assert_eq!(t.component, None);
        assert!(t
            .reason
            .as_deref()
            .unwrap()
            .starts_with("scaling: coupled first series"));
    }
}

#[test]
fn an_outlier_in_one_components_speed_runs_its_coupled_configuration_again() {
    let case = SyntheticCase::generate(6, 2);
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) = coupled_campaign(&case, tmp.path(), "counts = 5\n");
    let odd = state.iterations[0].tests[2].nproc.clone();
    let speed = |c: usize, p: u32, id: &str| {
        let truth = case.components[c].coupled_sypd(p);
        // The second component of test 2, third run: 30 % slow (a slow node).
        if c == 1 && id == "i00-t02-r3" {
            return truth * 0.7;
        }
        truth * (1.0 + 0.004 * jitter(id, c as u64))
    };
    measure_last(&mut state, &speed);
    crate::campaign::advance_in(&mut state, &dir).unwrap();
    let next = &state.iterations[1].tests;
    let rerun = next
        .iter()
        .find(|t| t.test == 2)
        .unwrap_or_else(|| panic!("{next:?}"));
    assert_eq!(rerun.nproc, odd, "the same coupled configuration");
    assert!(
        rerun
            .reason
            .as_deref()
            .unwrap()
            .contains("outlier i00-t02-r3"),
        "{rerun:?}"
    );
    assert_eq!(rerun.runs[0].repetition, 4);
    // The outlier is left out of the second component's point, not of the first's.
    let noise = super::strategy::scaling::points::pooled_noise(&state);
    let points = super::strategy::scaling::points::points_of(&state, 1, noise);
    let point = points.iter().find(|p| p.nproc == odd[1]).unwrap();
    assert_eq!(point.outliers, vec!["i00-t02-r3".to_string()]);
    let first = super::strategy::scaling::points::points_of(&state, 0, noise);
    assert!(first.iter().all(|p| p.outliers.is_empty()));
}

/// Campaigns over random coupled-mode truths run to the end: within the iteration bound and
/// `max_runs`, every point the true speed within the noise, and each refinement's configuration
/// near balance (its components' true speeds within a factor the grid allows).
#[test]
fn coupled_campaigns_end_near_balance_and_follow_random_truths() {
    let mut refinements = 0;
    for seed in 0..6u64 {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = coupled_campaign(
            &case,
            tmp.path(),
            "counts = 5\nrepetitions = 2\nmax_runs = 40\n",
        );
        let (bound, _) = super::strategy::scaling::iteration_bound(&state);
        let speed = |c: usize, p: u32, id: &str| {
            case.components[c].coupled_sypd(p) * (1.0 + 0.01 * jitter(id, seed + c as u64))
        };
        let mut iterations = 0;
        while !state.is_done() {
            measure_last(&mut state, &speed);
            crate::campaign::advance_in(&mut state, &dir).unwrap();
            iterations += 1;
            assert!(iterations < 60, "seed {seed}: no end");
        }
        assert!(state.iterations.len() as u32 <= bound);
        let runs: usize = state.run_count();
        assert!(runs <= 40, "seed {seed}: {runs} runs");
        let noise = super::strategy::scaling::points::pooled_noise(&state);
        for (c, comp) in case.components.iter().enumerate() {
            for p in super::strategy::scaling::points::points_of(&state, c, noise) {
                let truth = comp.coupled_sypd(p.nproc);
                assert!(
                    ((p.sypd - truth) / truth).abs() < 0.015,
                    "seed {seed} {} at {}: {} vs {truth}",
                    comp.name,
                    p.nproc,
                    p.sypd
                );
            }
        }
        for t in state.iterations[1..].iter().flat_map(|it| &it.tests) {
            if !t.reason.as_deref().unwrap().contains("uncertain") {
                continue;
            }
            refinements += 1;
            let speeds: Vec<f64> = t
                .nproc
                .iter()
                .enumerate()
                .map(|(c, &p)| case.components[c].coupled_sypd(p))
                .collect();
            let (lo, hi) = (
                speeds.iter().copied().fold(f64::INFINITY, f64::min),
                speeds.iter().copied().fold(0.0, f64::max),
            );
            // Partners come from the estimate so far; where a component's whole range is
            // slower or faster than the other's, its end is the closest it can get.
            let at_an_end = t
                .nproc
                .iter()
                .zip(&state.components)
                .any(|(&p, f)| p == f.low || p == f.high);
            assert!(
                hi / lo < 1.2 || at_an_end,
                "seed {seed}: {:?} runs at {speeds:?}, far from balance",
                t.nproc
            );
        }
    }
    assert!(refinements > 0, "nothing was refined");
}

/// One coupled run in four three times slow (every component of it: a bad node), drawn from
/// the run id: every point of the final curves stays within 8 % of the coupled-mode truth.
#[test]
fn with_a_quarter_of_coupled_runs_three_times_slow_every_point_stays_within_8_percent() {
    for seed in 0..6u64 {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = coupled_campaign(&case, tmp.path(), "counts = 5\nrepetitions = 2\n");
        let slow = |id: &str| {
            crate::executor::fnv1a(id.bytes().chain((seed ^ 0x51).to_le_bytes())) % 4 == 0
        };
        let speed = |c: usize, p: u32, id: &str| {
            let s =
                case.components[c].coupled_sypd(p) * (1.0 + 0.003 * jitter(id, seed + c as u64));
            if slow(id) {
                s / 3.0
            } else {
                s
            }
        };
        let mut iterations = 0;
        while !state.is_done() {
            measure_last(&mut state, &speed);
            crate::campaign::advance_in(&mut state, &dir).unwrap();
            iterations += 1;
            assert!(iterations < 80, "seed {seed}: no end");
        }
        let noise = super::strategy::scaling::points::pooled_noise(&state);
        for (c, comp) in case.components.iter().enumerate() {
            for p in super::strategy::scaling::points::points_of(&state, c, noise) {
                let truth = comp.coupled_sypd(p.nproc);
                assert!(
                    ((p.sypd - truth) / truth).abs() < 0.08,
                    "seed {seed} {} at {}: {} vs {truth} ({p:?})",
                    comp.name,
                    p.nproc,
                    p.sypd
                );
            }
        }
    }
}
