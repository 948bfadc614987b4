//! Scaling campaigns on the stand-in model, with random truths nobody chose
//! ([`crate::sim::synthetic`]): campaigns run to the end, and the curves they write follow the
//! true standalone speed.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::campaign::state::State;
use crate::campaign::{drive, init, DriveOptions};
use crate::config::CampaignFile;
use crate::curve::Curve;
use crate::sim::synthetic::{write_curve_csv, SyntheticCase};

/// A standalone scaling campaign file for a synthetic case, its truths written into `dir`.
fn scaling_file(case: &SyntheticCase, dir: &Path, extra: &str) -> CampaignFile {
    let mut text = String::new();
    let mut sim = String::from("[executor.sim]\nsteps = 12\n");
    sim.push_str(&format!("seed = {}\n", case.seed));
    let mut truths = String::from("[executor.sim.curves]\n");
    let mut alone = String::from("[executor.sim.standalone_curves]\n");
    for c in &case.components {
        let truth = dir.join(format!("truth_{}.csv", c.name));
        let sa = dir.join(format!("standalone_{}.csv", c.name));
        write_curve_csv(&c.coupled_truth, &truth).unwrap();
        write_curve_csv(&c.standalone_truth, &sa).unwrap();
        text.push_str(&format!(
            "[[component]]\nname = \"{}\"\nmin_nproc = {}\nmax_nproc = {}\n\n",
            c.name,
            c.standalone.first_nproc(),
            c.standalone.last_nproc()
        ));
        truths.push_str(&format!("{} = {:?}\n", c.name, truth.display().to_string()));
        alone.push_str(&format!("{} = {:?}\n", c.name, sa.display().to_string()));
    }
    text.push_str(&format!(
        "[scaling]\ndesign = \"standalone\"\n{extra}\n[executor]\nkind = \"sim\"\njobs = 8\n\n{sim}\n{truths}\n{alone}"
    ));
    CampaignFile::parse(&text, "scaling.toml").unwrap()
}

fn run_to_end(case: &SyntheticCase, tmp: &Path, extra: &str) -> State {
    let file = scaling_file(case, tmp, extra);
    let dir = tmp.join("campaign");
    init(&dir, &file, tmp, false).unwrap();
    drive(&dir, &DriveOptions::default(), &AtomicBool::new(false)).unwrap();
    State::load(&dir).unwrap()
}

#[test]
fn campaigns_on_random_truths_end_and_their_curves_follow_the_standalone_truth() {
    for seed in [3, 11, 29] {
        let case = SyntheticCase::generate(seed, 2);
        let tmp = tempfile::tempdir().unwrap();
        let state = run_to_end(&case, tmp.path(), "");
        assert!(state.is_done(), "seed {seed}");
        let dir = tmp.path().join("campaign");
        for (k, c) in case.components.iter().enumerate() {
            let written = Curve::load(c.name.clone(), &dir.join(&state.components[k].curve))
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            // Every measured point is the true standalone speed within the noise.
            for p in written.points() {
                let truth = c.standalone_sypd(p.nproc);
                let off = (p.sypd - truth).abs() / truth;
                assert!(
                    off < 0.03,
                    "seed {seed} {} at {}: {} vs {truth}",
                    c.name,
                    p.nproc,
                    p.sypd
                );
            }
            assert!(
                written.points().len() >= 4,
                "seed {seed}: {:?}",
                written.points()
            );
            // The first series spans the range.
            assert_eq!(written.first_nproc(), c.standalone.first_nproc());
        }
        // Every test carries its reason and one component.
        for it in &state.iterations {
            for t in &it.tests {
                assert!(t
                    .reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("scaling: ")));
                let c = t.component.unwrap();
                assert!(t
                    .nproc
                    .iter()
                    .enumerate()
                    .all(|(k, &p)| (k == c) == (p > 0)));
            }
        }
    }
}

#[test]
fn the_run_budget_holds() {
    let case = SyntheticCase::generate(5, 2);
    let tmp = tempfile::tempdir().unwrap();
    let state = run_to_end(
        &case,
        tmp.path(),
        "counts = 4\nrepetitions = 2\nmax_runs = 18\n",
    );
    assert!(state.is_done());
    let runs: usize = state.run_count();
    assert!((16..=18).contains(&runs), "{runs}");
    // Curves a kill left behind the state are brought up to it by the next driver.
    let curve = tmp.path().join("campaign").join(&state.components[1].curve);
    let written = std::fs::read_to_string(&curve).unwrap();
    std::fs::remove_file(&curve).unwrap();
    drive(
        &tmp.path().join("campaign"),
        &DriveOptions::default(),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(&curve).unwrap(), written);
}

/// A scaling campaign driven from outside (no executor) over one component `X` with range
/// `low..=high`, `top` keys at the top level and `extra` more `[scaling]` keys; its directory
/// and state.
fn outside_campaign(
    tmp: &Path,
    low: u32,
    high: u32,
    top: &str,
    extra: &str,
) -> (std::path::PathBuf, State) {
    let text = format!(
        "{top}[[component]]\nname = \"X\"\nmin_nproc = {low}\nmax_nproc = {high}\n\n[scaling]\ndesign = \"standalone\"\n{extra}"
    );
    let file = CampaignFile::parse(&text, "scaling.toml").unwrap();
    let dir = tmp.join("campaign");
    init(&dir, &file, tmp, false).unwrap();
    let state = State::load(&dir).unwrap();
    (dir, state)
}

/// Records every unfinished run of the last iteration as measured at `sypd(nproc, run id)`.
fn measure_last(state: &mut State, sypd: &dyn Fn(u32, &str) -> f64) {
    let last = state.iterations.len() - 1;
    for test in &mut state.iterations[last].tests {
        let c = test.component.unwrap();
        let p = test.nproc[c];
        for run in test.runs.iter_mut().filter(|r| !r.state.is_terminal()) {
            let s = sypd(p, &run.id);
            run.state = crate::campaign::RunState::Done;
            run.metrics = Some(crate::campaign::RunMetrics {
                sypd: s,
                chsy: crate::metrics::chsy(f64::from(p), s),
                coupling_cost: 0.0,
                partial_coupling_cost: vec![0.0],
            });
        }
    }
}

/// Measures and advances a campaign driven from outside until it is done, each run at
/// `sypd(nproc, run id)`; fails past `most` iterations.
fn drive_outside(
    state: &mut State,
    dir: &Path,
    sypd: &dyn Fn(u32, &str) -> f64,
    most: u32,
    what: &str,
) {
    let mut iterations = 0;
    while !state.is_done() {
        measure_last(state, sypd);
        crate::campaign::advance_in(state, dir).unwrap();
        iterations += 1;
        assert!(iterations < most, "{what}: no end");
    }
}

/// Deterministic jitter in [-1, 1] from a run id.
fn jitter(id: &str, seed: u64) -> f64 {
    let h = crate::executor::fnv1a(id.bytes().chain(seed.to_le_bytes()));
    (h % 2001) as f64 / 1000.0 - 1.0
}

#[test]
fn an_outlier_is_left_out_flagged_and_run_again_and_a_noisy_count_gets_one_more_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) = outside_campaign(tmp.path(), 16, 512, "", "counts = 6\n");
    let counts: Vec<u32> = state.iterations[0]
        .tests
        .iter()
        .map(|t| t.nproc[0])
        .collect();
    let (odd, noisy) = (counts[2], counts[4]);
    // Runs 1, 2, 3 of each count: -0.4 %, 0, +0.4 % (the machine's noise), except an outlier
    // at `odd` (30 % slow) and a spread of +-2.5 % at `noisy`.
    let spread = |p: u32, id: &str| {
        let rep: i32 = id.rsplit('r').next().unwrap().parse().unwrap();
        let base = f64::from(p).sqrt();
        let unit = if p == noisy { 0.025 } else { 0.004 };
        if p == odd && rep == 3 {
            return base * 0.7;
        }
        base * (1.0 + unit * f64::from(rep - 2))
    };
    measure_last(&mut state, &spread);
    let advance = crate::campaign::advance_in(&mut state, &dir).unwrap();
    assert_eq!(advance.new_iteration, Some(1));
    let next = &state.iterations[1].tests;
    assert_eq!(next.len(), 2, "{next:?}");
    let rerun = next.iter().find(|t| t.nproc[0] == odd).unwrap();
    let reason = rerun.reason.clone().unwrap();
    assert!(reason.contains("outlier i00-t02-r3"), "{reason}");
    assert_eq!(rerun.runs.len(), 1);
    assert_eq!(rerun.runs[0].repetition, 4, "repetitions go on");
    let more = next.iter().find(|t| t.nproc[0] == noisy).unwrap();
    assert!(more.reason.clone().unwrap().contains("spread"), "{more:?}");
    // The outlier is not averaged in: the point is the mean of the two others.
    let noise = super::strategy::scaling::points::pooled_noise(&state);
    let points = super::strategy::scaling::points::points_of(&state, 0, noise);
    let point = points.iter().find(|p| p.nproc == odd).unwrap();
    assert_eq!(point.outliers, vec!["i00-t02-r3".to_string()]);
    let base = f64::from(odd).sqrt();
    assert!((point.sypd - base * 0.998).abs() < 1e-9, "{point:?}");
    // The curve written so far holds it, with the runs kept.
    super::strategy::scaling::output::write_curves(&state, &dir).unwrap();
    let text = std::fs::read_to_string(dir.join("curves/X.csv")).unwrap();
    assert!(
        text.contains(&format!("{odd},{:.6},", point.sypd)),
        "{text}"
    );
    assert!(text
        .lines()
        .any(|l| l.starts_with(&format!("{odd},")) && l.ends_with(",2")));
}

/// Campaigns over random standalone truths ([`SyntheticCase`]), measured with 1 % noise, run
/// to the end: they end, never refine above the first count that ran slower, stay on the
/// grid and within the range, and their curves interpolate the truth below that count.
#[test]
fn refinement_ends_stays_below_the_slowdown_and_follows_random_truths() {
    use crate::interp::{Interpolant, Method};
    let mut refined = 0;
    for seed in 0..20u64 {
        let case = SyntheticCase::generate(seed, 1);
        let truth = &case.components[0];
        let (low, high) = (
            truth.standalone.first_nproc(),
            truth.standalone.last_nproc(),
        );
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) = outside_campaign(tmp.path(), low, high, "step = 4\n", "");
        let (bound, _) = super::strategy::scaling::iteration_bound(&state);
        let measure = |p: u32, id: &str| truth.standalone_sypd(p) * (1.0 + 0.01 * jitter(id, seed));
        drive_outside(&mut state, &dir, &measure, 60, &format!("seed {seed}"));
        assert!(
            state.iterations.len() as u32 <= bound,
            "seed {seed}: past {bound}"
        );
        let grid = super::strategy::scaling::grid_of(&state, 0);
        let first: Vec<u32> = state.iterations[0]
            .tests
            .iter()
            .map(|t| t.nproc[0])
            .collect();
        let noise = super::strategy::scaling::points::pooled_noise(&state);
        let points = super::strategy::scaling::points::points_of(&state, 0, noise);
        let slower = points
            .windows(2)
            .find(|w| w[1].sypd < w[0].sypd * (1.0 - 2.0 * noise))
            .map(|w| w[1].nproc);
        for p in &points {
            assert!(grid.contains(p.nproc) && (low..=high).contains(&p.nproc));
            if !first.contains(&p.nproc) {
                refined += 1;
                if let Some(s) = slower {
                    assert!(p.nproc < s, "seed {seed}: refined at {} above {s}", p.nproc);
                }
            }
        }
        // Below the first slower count the written curve follows the truth.
        let top = slower.unwrap_or(high);
        let xs: Vec<f64> = points.iter().map(|p| f64::from(p.nproc)).collect();
        let ys: Vec<f64> = points.iter().map(|p| p.sypd).collect();
        let curve = Interpolant::new(Method::Pchip, &xs, &ys);
        let mut worst: f64 = 0.0;
        for p in (low..=top).step_by(7) {
            let t = truth.standalone_sypd(p);
            worst = worst.max((curve.eval(f64::from(p)) - t).abs() / t);
        }
        eprintln!(
            "seed {seed}: {} counts ({} first), {} iterations, worst {:.2}% off the truth below {top}",
            points.len(),
            first.len(),
            state.iterations.len(),
            100.0 * worst
        );
        assert!(
            worst < 0.02,
            "seed {seed}: {:.1}% off the truth",
            100.0 * worst
        );
    }
    assert!(refined > 0, "no campaign refined anything");
}

#[test]
fn init_refuses_a_run_budget_below_the_first_series_and_a_curve() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[[component]]\nname = \"X\"\nmin_nproc = 16\nmax_nproc = 512\n\n[scaling]\ndesign = \"standalone\"\nmax_runs = 10\n";
    let file = CampaignFile::parse(text, "scaling.toml").unwrap();
    let e = init(&tmp.path().join("c"), &file, tmp.path(), false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("max_runs = 10") && e.contains("6 counts x 3 runs = 18 runs"),
        "{e}"
    );
}

#[test]
fn a_hand_edited_scaling_setting_is_refused_when_the_state_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) = outside_campaign(tmp.path(), 16, 512, "", "");
    state.settings.scaling.as_mut().unwrap().repetitions = 0;
    state.save(&dir).unwrap();
    let e = State::load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("`settings.scaling`") && e.contains("repetitions = 0"),
        "{e}"
    );
}

/// `timing = "wall"` on the stand-in model: it writes its modelled wall time (initialisation
/// included) into `wall_s`, which is slower than the standalone truth by that start-up.
#[test]
fn wall_timing_on_the_stand_in_model_includes_its_start_up() {
    let case = SyntheticCase::generate(8, 1);
    let tmp = tempfile::tempdir().unwrap();
    // 12 coupling steps of 2700 s.
    let days = 12.0 * 2700.0 / 86_400.0;
    let state = run_to_end(
        &case,
        tmp.path(),
        &format!("counts = 4\ntiming = \"wall\"\nsimulated_days = {days}\n"),
    );
    assert!(state.is_done());
    let c = &case.components[0];
    let status = crate::campaign::status::Status::from_state(&state, tmp.path());
    assert!(status.best.is_none());
    assert!(status
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .all(|t| t.fittingness.is_none()));
    let curve = Curve::load(
        c.name.clone(),
        &tmp.path().join("campaign").join(&state.components[0].curve),
    )
    .unwrap();
    for p in curve.points() {
        let truth = c.standalone_sypd(p.nproc);
        // The run's 12 steps at the truth's speed, and 1 s of initialisation.
        let wall = days / 365.0 * 86_400.0 / truth + 1.0;
        let expected = days / 365.0 / (wall / 86_400.0);
        assert!(p.sypd < truth, "{}: {} not below {truth}", p.nproc, p.sypd);
        assert!(
            ((p.sypd - expected) / expected).abs() < 0.03,
            "{}: {} vs {expected}",
            p.nproc,
            p.sypd
        );
    }
}

/// `max_core_hours`: the runs after the first series stay within it (each planned run priced
/// at the speed measured nearest its count), and a smaller budget makes fewer runs.
#[test]
fn the_core_hour_budget_holds_after_the_first_series() {
    let case = SyntheticCase::generate(12, 2);
    let days = "simulated_days = 30\n";
    let spent = |state: &State| {
        super::strategy::scaling::core_hours_spent(state, state.settings.scaling.as_ref().unwrap())
            .unwrap()
    };
    let first_series = |state: &State| {
        let scaling = state.settings.scaling.as_ref().unwrap();
        state.iterations[0]
            .tests
            .iter()
            .flat_map(|t| t.runs.iter().map(move |r| (t, r)))
            .filter_map(|(t, r)| {
                let c = t.component.unwrap();
                super::strategy::scaling::run_core_hours(
                    t.nproc[c],
                    r.metrics.as_ref()?.sypd,
                    scaling,
                )
            })
            .sum::<f64>()
    };
    let tmp = tempfile::tempdir().unwrap();
    let free = run_to_end(&case, tmp.path(), days);
    let (all, first) = (spent(&free), first_series(&free));
    assert!(all > first, "no refinement to cut");
    let budget = first + 0.4 * (all - first);
    let tmp = tempfile::tempdir().unwrap();
    let bounded = run_to_end(
        &case,
        tmp.path(),
        &format!("{days}max_core_hours = {budget}\n"),
    );
    assert!(bounded.is_done());
    // Planned runs are priced at the nearest measured speed, so the spend may exceed the
    // budget only by that estimate's error.
    assert!(
        spent(&bounded) <= budget * 1.02,
        "{} > {budget}",
        spent(&bounded)
    );
    assert!(
        bounded.run_count() < free.run_count(),
        "{} vs {}",
        bounded.run_count(),
        free.run_count()
    );
}

#[test]
fn a_scaling_campaign_whose_every_run_fails_ends_after_its_first_series() {
    let case = SyntheticCase::generate(3, 2);
    let tmp = tempfile::tempdir().unwrap();
    let mut file = scaling_file(&case, tmp.path(), "");
    let sim = file.executor.as_mut().unwrap().sim.as_mut().unwrap();
    sim.fail_probability = Some(1.0);
    let dir = tmp.path().join("campaign");
    init(&dir, &file, tmp.path(), false).unwrap();
    let first: usize = State::load(&dir).unwrap().iterations[0]
        .tests
        .iter()
        .map(|t| t.runs.len())
        .sum();
    drive(&dir, &DriveOptions::default(), &AtomicBool::new(false)).unwrap();
    let state = State::load(&dir).unwrap();
    assert!(state.is_done());
    assert_eq!(state.iterations.len(), 1);
    let runs: usize = state.iterations[0].tests.iter().map(|t| t.runs.len()).sum();
    assert_eq!(runs, first, "no failed count is run again");
    let status = crate::campaign::Status::from_state(&state, &dir);
    assert!(
        status.state_label().contains("no successful run"),
        "{}",
        status.state_label()
    );
}

/// One run in four three times slow (a bad node), drawn from the run id; and both first runs
/// of the second count slow, the case a median gets wrong. Every point of the final curve is
/// within 8 % of the truth, and the slow runs are flagged.
#[test]
fn with_a_quarter_of_runs_three_times_slow_every_point_stays_within_8_percent_of_the_truth() {
    let mut left_out = 0;
    for seed in 0..12u64 {
        let case = SyntheticCase::generate(seed, 1);
        let truth = &case.components[0];
        let (low, high) = (
            truth.standalone.first_nproc(),
            truth.standalone.last_nproc(),
        );
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut state) =
            outside_campaign(tmp.path(), low, high, "step = 4\n", "repetitions = 2\n");
        let second = state.iterations[0].tests[1].test;
        let slow = |id: &str| {
            id.starts_with(&format!("i00-t{second:02}-"))
                || crate::executor::fnv1a(id.bytes().chain((seed ^ 0x51).to_le_bytes())) % 4 == 0
        };
        let measure = |p: u32, id: &str| {
            let s = truth.standalone_sypd(p) * (1.0 + 0.003 * jitter(id, seed));
            if slow(id) {
                s / 3.0
            } else {
                s
            }
        };
        drive_outside(&mut state, &dir, &measure, 80, &format!("seed {seed}"));
        let noise = super::strategy::scaling::points::pooled_noise(&state);
        let points = super::strategy::scaling::points::points_of(&state, 0, noise);
        for p in points.iter().filter(|p| p.runs > 0) {
            let t = truth.standalone_sypd(p.nproc);
            assert!(
                (p.sypd / t - 1.0).abs() < 0.08,
                "seed {seed} at {}: {} vs {t} ({p:?})",
                p.nproc,
                p.sypd
            );
            assert!(!p.feature, "seed {seed}: a smooth curve has no dip: {p:?}");
        }
        left_out += points.iter().map(|p| p.outliers.len()).sum::<usize>();
    }
    assert!(left_out >= 12, "{left_out} slow runs left out");
}

/// A real dip: a count whose every run is 40 % below the smooth curve through its neighbours
/// is run again up to the most runs a count may have, then kept and flagged, and `campaign
/// status` says so.
#[test]
fn a_count_far_below_its_neighbours_in_every_run_is_kept_as_a_real_dip() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) =
        outside_campaign(tmp.path(), 16, 1024, "", "counts = 5\nrepetitions = 2\n");
    let dip = state.iterations[0].tests[2].nproc[0];
    let measure = |p: u32, id: &str| {
        let s = f64::from(p).powf(0.8) * (1.0 + 0.003 * jitter(id, 5));
        if p == dip {
            0.6 * s
        } else {
            s
        }
    };
    drive_outside(&mut state, &dir, &measure, 40, "the dip");
    let noise = super::strategy::scaling::points::pooled_noise(&state);
    let points = super::strategy::scaling::points::points_of(&state, 0, noise);
    let at = points.iter().find(|p| p.nproc == dip).unwrap();
    assert!(at.feature, "{at:?}");
    assert_eq!(
        at.total,
        2 + super::strategy::scaling::MAX_EXTRA_RUNS,
        "{at:?}"
    );
    assert!(at.outliers.is_empty());
    assert!(
        points.iter().filter(|p| p.feature).count() == 1,
        "{points:?}"
    );
    // A re-run's reason says why.
    let reasons: Vec<String> = state
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .filter(|t| t.nproc[0] == dip)
        .filter_map(|t| t.reason.clone())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("below the curve through its neighbours")),
        "{reasons:?}"
    );
    let status = crate::campaign::status::Status::from_state(&state, &dir);
    let curve_points = &status.curves.as_ref().unwrap().0[0].1;
    let flagged: Vec<u32> = curve_points
        .iter()
        .filter(|p| p.feature)
        .map(|p| p.nproc)
        .collect();
    assert_eq!(flagged, vec![dip]);
    assert!(
        status.scaling_text().contains(&format!(
            "real dips kept (far below their neighbours, every run agreeing): {dip}"
        )),
        "{}",
        status.scaling_text()
    );
}

/// `repetitions` at the top of the file is what runs at each count when `[scaling]` leaves it
/// out; counts whose two runs agree within the noise get no third.
#[test]
fn top_level_repetitions_are_the_runs_per_count_and_quiet_counts_get_no_more() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, mut state) =
        outside_campaign(tmp.path(), 16, 512, "repetitions = 2\n", "counts = 5\n");
    assert_eq!(state.settings.scaling.as_ref().unwrap().repetitions, 2);
    assert!(state.iterations[0].tests.iter().all(|t| t.runs.len() == 2));
    // 0.3 % noise: well within what the pooled noise explains.
    let measure = |p: u32, id: &str| f64::from(p).powf(0.9) * (1.0 + 0.003 * jitter(id, 9));
    measure_last(&mut state, &measure);
    crate::campaign::advance_in(&mut state, &dir).unwrap();
    let reruns: Vec<&str> = state.iterations[1..]
        .iter()
        .flat_map(|it| &it.tests)
        .filter_map(|t| t.reason.as_deref())
        .filter(|r| !r.contains("new count"))
        .collect();
    assert!(reruns.is_empty(), "{reruns:?}");
}
