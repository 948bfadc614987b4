//! Cold starts (`strategy = "guided"`, no curves, an `[original]`): one campaign from no curve
//! to a best configuration, the coupled scaling design first, then guided balancing once the
//! model is firm. On the stand-in model as the `sim` executor and behind a shell script run by
//! the `command` executor, each killed with SIGKILL half-way and resumed. The best it reports
//! must be near the true optimum.

use std::path::{Path, PathBuf};

use autolb::campaign::{ColdStartPhase, State};
use autolb::config::CampaignFile;
use autolb::curve::Curve;
use autolb::metrics::{chsy, fittingness_in};
use autolb::predict::{ComponentInput, Problem, Settings};
use autolb::sim::synthetic::SyntheticCase;
use serde_json::Value;

use crate::campaign_scaling::{kill_half_way_and_resume, COMPRESSION, STEPS};
use crate::common::{autolb, autolb_path};

/// How far (in true FN) the best configuration a cold start reports may be from the true
/// optimum: the stand-in's noise and radiation steps, and a model learnt from a few runs.
const REGRET_TOLERANCE: f64 = 0.03;
/// How far (in true FN) the best configuration the balancing phase measured may be from the
/// true optimum: the guided phase must look where the answer is.
const FOUND_TOLERANCE: f64 = 0.01;

/// The campaign's budget: 60 % of the components' range tops together.
fn budget(case: &SyntheticCase) -> u32 {
    let tops: u32 = case
        .components
        .iter()
        .map(|c| c.standalone.last_nproc())
        .sum();
    (f64::from(tops) * 0.6) as u32
}

/// A configuration known to run: a third of the budget split in proportion to the ranges' tops,
/// on a grid of 4, within each range.
fn original(case: &SyntheticCase) -> Vec<u32> {
    let tops: u32 = case
        .components
        .iter()
        .map(|c| c.standalone.last_nproc())
        .sum();
    case.components
        .iter()
        .map(|c| {
            let share = f64::from(budget(case)) / 3.0 * f64::from(c.standalone.last_nproc())
                / f64::from(tops);
            ((share / 4.0) as u32 * 4).clamp(c.standalone.first_nproc(), c.standalone.last_nproc())
        })
        .collect()
}

/// The cold-start file of a case, the library's way ([`CampaignFile::synthetic_cold_start`]),
/// with the stand-in's run length and speed of these tests.
pub(crate) fn cold_start_file(case: &SyntheticCase, tmp: &Path) -> CampaignFile {
    let mut file =
        CampaignFile::synthetic_cold_start(case, tmp, budget(case), &original(case)).unwrap();
    file.step = Some(4);
    let executor = file.executor.as_mut().unwrap();
    executor.jobs = Some(3);
    let sim = executor.sim.as_mut().unwrap();
    sim.steps = Some(STEPS);
    sim.compression = Some(COMPRESSION);
    file
}

fn init(tmp: &Path, file: &CampaignFile) -> PathBuf {
    let path = tmp.join("cold.toml");
    std::fs::write(&path, toml::to_string(file).unwrap()).unwrap();
    let dir = tmp.join("camp");
    autolb()
        .args(["campaign", "init"])
        .arg(&dir)
        .arg("--config")
        .arg(&path)
        .stdout_ok();
    dir
}

/// The true coupled SYPD of a configuration: its slowest component's coupled-mode speed.
fn true_sypd(case: &SyntheticCase, nproc: &[u32]) -> f64 {
    case.components
        .iter()
        .zip(nproc)
        .map(|(c, &p)| c.coupled_sypd(p))
        .fold(f64::INFINITY, f64::min)
}

/// True FN of the true optimum minus true FN of `best`, on the prediction over the true
/// coupled-mode curves (its normalisation).
fn regret(case: &SyntheticCase, best: &[u32]) -> f64 {
    let settings = Settings {
        max_nproc: budget(case),
        step: 4,
        ..Settings::default()
    };
    let truth: Vec<ComponentInput> = case
        .components
        .iter()
        .map(|c| ComponentInput {
            name: c.name.clone(),
            curve: Some(c.coupled_truth.clone()),
            allowed: None,
            min_nproc: Some(c.standalone.first_nproc()),
            max_nproc: Some(c.standalone.last_nproc()),
            thread_curves: Vec::new(),
        })
        .collect();
    let problem = Problem::new(&truth, &settings).unwrap();
    let optimum = problem.rank(settings.tts_w, 1).top[0].clone();
    let sypd = true_sypd(case, best);
    let total = best.iter().sum::<u32>();
    let picked = fittingness_in(
        settings.tts_w,
        sypd,
        chsy(f64::from(total), sypd),
        &problem.sypd_bounds,
        &problem.cost_bounds,
    );
    optimum.fittingness - picked
}

/// True FN regret of the best configuration the campaign measured in its balancing phase
/// (did it find the optimum, whatever it reports).
fn found_regret(case: &SyntheticCase, dir: &Path) -> f64 {
    let state = State::load(dir).unwrap();
    let from = state
        .iterations
        .iter()
        .position(|it| it.phase == Some(ColdStartPhase::Balancing))
        .unwrap();
    state.iterations[from..]
        .iter()
        .flat_map(|it| &it.tests)
        .filter(|t| t.runs.iter().any(|r| r.metrics.is_some()))
        .map(|t| regret(case, &t.nproc))
        .fold(f64::INFINITY, f64::min)
}

/// The campaign went from the scaling phase to balancing, each test with its reason, and
/// `status` says the phase; returns the best configuration it reports.
fn check_phases(dir: &Path) -> Vec<u32> {
    let state = State::load(dir).unwrap();
    assert!(state.is_done() && state.is_cold_start());
    let phases: Vec<ColdStartPhase> = state
        .iterations
        .iter()
        .map(|it| it.phase.unwrap())
        .collect();
    let switch = phases
        .iter()
        .position(|&p| p == ColdStartPhase::Balancing)
        .unwrap_or_else(|| panic!("never balanced: {phases:?}"));
    assert!(switch >= 1, "balanced before any curve was measured");
    assert!(phases[..switch]
        .iter()
        .all(|&p| p == ColdStartPhase::Scaling));
    assert!(phases[switch..]
        .iter()
        .all(|&p| p == ColdStartPhase::Balancing));
    for (k, it) in state.iterations.iter().enumerate() {
        for t in &it.tests {
            let reason = t.reason.as_deref().unwrap_or_default();
            assert!(t.component.is_none() && t.nproc.iter().all(|&p| p > 0));
            if k < switch {
                assert!(reason.starts_with("scaling: "), "{reason}");
            } else if it.tests.iter().all(|t| t.decision.is_some()) || k > switch {
                assert!(!reason.starts_with("scaling: "), "{reason}");
            }
        }
    }
    // The decisions that ended the scaling phase say why it ended.
    let ended = state.iterations[switch - 1]
        .tests
        .iter()
        .filter_map(|t| match &t.decision.as_ref()?.outcome {
            autolb::campaign::Outcome::Finished { reason } => Some(reason.clone()),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert!(
        ended.iter().any(|r| r.starts_with("scaling phase over: ")),
        "{ended:?}"
    );
    let status: Value = serde_json::from_str(
        &autolb()
            .args(["campaign", "status", "--json"])
            .arg(dir)
            .stdout_ok(),
    )
    .unwrap();
    let phase = &status["cold_start"]["phase"];
    assert!(
        phase.as_str().unwrap().starts_with("phase balancing"),
        "{phase}"
    );
    assert!(status["cold_start"]["normalisation"]["sypd"]["max"]
        .as_f64()
        .is_some());
    for c in &state.components {
        assert!(status["curves"][&c.name].as_array().unwrap().len() >= 3);
        // The coupled-mode points are written for the app and the report.
        let csv = std::fs::read_to_string(dir.join(&c.curve)).unwrap();
        assert!(csv.contains("coupled mode"), "{csv}");
        Curve::load(c.name.clone(), &dir.join(&c.curve)).unwrap();
    }
    let text = autolb().args(["campaign", "status"]).arg(dir).stdout_ok();
    assert!(text.contains("cold start, phase balancing"), "{text}");
    status["best"]["nproc"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}

/// The best the campaign reports, and the best it measured, are near the true optimum.
fn check_answer(case: &SyntheticCase, dir: &Path) {
    let best = check_phases(dir);
    let r = regret(case, &best);
    let found = found_regret(case, dir);
    let runs: usize = State::load(dir).unwrap().run_count();
    eprintln!(
        "seed {}: reported best {best:?} regret {r:.4}; best measured regret {found:.4}; {runs} runs",
        case.seed
    );
    assert!(r <= REGRET_TOLERANCE, "regret {r}");
    assert!(found <= FOUND_TOLERANCE, "best measured regret {found}");
}

#[test]
fn a_sim_cold_start_survives_a_kill_and_reaches_a_near_best_configuration() {
    let case = SyntheticCase::generate(7, 2);
    let tmp = tempfile::tempdir().unwrap();
    let dir = init(tmp.path(), &cold_start_file(&case, tmp.path()));
    kill_half_way_and_resume(&dir);
    check_answer(&case, &dir);
}

#[test]
fn a_command_cold_start_survives_a_kill_and_reaches_a_near_best_configuration() {
    let case = SyntheticCase::generate(19, 2);
    let tmp = tempfile::tempdir().unwrap();
    let mut file = cold_start_file(&case, tmp.path());
    let mut args = String::new();
    for c in &case.components {
        args.push_str(&format!(
            " --comp \"{0}=$AUTOLB_NPROC_{0}\" --curve \"{0}={1}/truth_{0}.csv\"",
            c.name,
            tmp.path().display()
        ));
    }
    let script = tmp.path().join("run-coupled.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nset -e\nseed=$(printf '%s' \"$AUTOLB_RUN\" | cksum | cut -d' ' -f1)\n\
             exec {autolb:?} simulate{args} --steps {STEPS} --compress {COMPRESSION} \
             --seed \"$seed\" --out \"$AUTOLB_RUN_DIR\" >/dev/null\n",
            autolb = autolb_path().display().to_string()
        ),
    )
    .unwrap();
    let executor = file.executor.as_mut().unwrap();
    executor.kind = autolb::executor::ExecutorKind::Command;
    executor.sim = None;
    executor.command = Some(vec!["sh".into(), script.display().to_string()]);
    file.period_s = Some(2700.0);
    let dir = init(tmp.path(), &file);
    kill_half_way_and_resume(&dir);
    check_answer(&case, &dir);
}

/// Without `[original]` a cold start is refused in one line saying what to add.
#[test]
fn a_cold_start_needs_an_original() {
    let case = SyntheticCase::generate(3, 2);
    let tmp = tempfile::tempdir().unwrap();
    let mut file = cold_start_file(&case, tmp.path());
    file.original = None;
    let path = tmp.path().join("cold.toml");
    std::fs::write(&path, toml::to_string(&file).unwrap()).unwrap();
    let out = autolb()
        .args(["campaign", "init"])
        .arg(tmp.path().join("camp"))
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[original]") && err.lines().count() == 1,
        "{err}"
    );
}

/// A cold start on `case` with heavy atmosphere steps (`heavy_factor`, every 4th step) and
/// interpolation that grows with the sender's PEs, driven to the end in this process; its
/// state and status.
fn heavy_cold_start(
    case: &SyntheticCase,
    tmp: &Path,
    heavy_factor: f64,
    max_iterations: Option<u32>,
) -> (State, autolb::campaign::Status) {
    let mut file = cold_start_file(case, tmp);
    file.max_iterations = max_iterations;
    let sim = file.executor.as_mut().unwrap().sim.as_mut().unwrap();
    sim.compression = Some(0.0);
    sim.heavy_every = Some(4);
    sim.heavy_factor = Some(heavy_factor);
    sim.fields = Some(5);
    sim.interp_s_per_pe = Some(2e-4);
    let dir = tmp.join("heavy");
    autolb::campaign::init(&dir, &file, tmp, false).unwrap();
    autolb::campaign::drive(
        &dir,
        &autolb::campaign::DriveOptions::default(),
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    let state = State::load(&dir).unwrap();
    let status = autolb::campaign::Status::from_state(&state, &dir);
    (state, status)
}

/// Heavy atmosphere steps and interpolation that grows with the PEs are steps the model does
/// not describe: its band may stay wide and the model never firm. The scaling phase still ends
/// within its run budget (and the one run at the model's best past it), the campaign balances,
/// and it ends with a best.
#[test]
fn a_cold_start_whose_model_is_not_firm_balances_within_its_budget_and_ends_with_a_best() {
    use autolb::campaign::strategy::cold_start::{
        scaling_run_budget, scaling_runs, PROBES_PAST_BUDGET,
    };
    let seed = 11;
    let case = SyntheticCase::generate(seed, 2);
    let tmp = tempfile::tempdir().unwrap();
    // Its balancing goes on long with a model this far off: a few iterations of it
    // show that it balances.
    let (state, status) = heavy_cold_start(&case, tmp.path(), 4.0, Some(12));
    assert!(state.is_done(), "seed {seed}");
    let (made, budget) = (scaling_runs(&state), scaling_run_budget(&state));
    let phases: Vec<_> = state.iterations.iter().map(|it| it.phase).collect();
    eprintln!(
        "seed {seed}: {made} scaling runs (budget {budget}), {} runs, phases {phases:?}",
        state.run_count()
    );
    assert!(
        made <= budget + PROBES_PAST_BUDGET,
        "seed {seed}: {made} > {budget}"
    );
    let switch = phases
        .iter()
        .position(|p| *p == Some(ColdStartPhase::Balancing))
        .unwrap_or_else(|| panic!("seed {seed}: never balanced: {phases:?}"));
    // The budget or the design's end, never a firm model, ended the phase, and the tests that
    // ended it say so (the budget alone is tested in the library's cold-start tests).
    let ended: Vec<String> = state.iterations[switch - 1]
        .tests
        .iter()
        .filter_map(|t| match &t.decision.as_ref()?.outcome {
            autolb::campaign::Outcome::Finished { reason } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert!(
        ended.iter().any(|r| r.starts_with("scaling phase over: ")
            && r.contains("the model not firm")
            && (r.contains(&format!("its budget of {budget}"))
                || r.contains("the scaling design has nothing left to run"))),
        "seed {seed}: {ended:?}"
    );
    assert!(status.counts.done > 0 && status.counts.failed == 0);
    let best = status
        .best
        .as_ref()
        .unwrap_or_else(|| panic!("seed {seed}: no best"));
    assert!(best.sypd > 0.0 && best.runs >= 1, "seed {seed}");
    assert_ne!(status.state_label(), "done: no successful run");
}

/// A cold start that ends in its scaling phase (here `max_iterations` ends it there) still
/// ends with a best: the best of the coupled runs it measured, on their own FN scale, which
/// `status`, `best` and the answer all give.
#[test]
fn a_cold_start_ended_in_its_scaling_phase_answers_with_the_best_it_measured() {
    let case = SyntheticCase::generate(4, 3);
    let tmp = tempfile::tempdir().unwrap();
    let (state, status) = heavy_cold_start(&case, tmp.path(), 4.0, Some(2));
    assert!(state.is_done());
    assert!(state
        .iterations
        .iter()
        .all(|it| it.phase == Some(ColdStartPhase::Scaling)));
    assert_eq!(status.state_label(), "done");
    let best = status.best.as_ref().expect("a best");
    // The best measured: the fastest-for-its-cost of the runs, no configuration it never ran.
    let ran: Vec<Vec<u32>> = state
        .iterations
        .iter()
        .flat_map(|it| &it.tests)
        .map(|t| t.nproc.clone())
        .collect();
    let nproc: Vec<u32> = best.nproc.values().copied().collect();
    assert!(ran.contains(&nproc), "{nproc:?} not in {ran:?}");
    let dir = tmp.path().join("heavy");
    let text = autolb().args(["campaign", "best"]).arg(&dir).stdout_ok();
    assert!(text.contains("SYPD"), "{text}");
    let status_text = autolb().args(["campaign", "status"]).arg(&dir).stdout_ok();
    assert!(
        status_text.contains("phase scaling, ended before any balancing")
            && !status_text.contains("nothing measured yet")
            && !status_text.contains("best: none"),
        "{status_text}"
    );
}
