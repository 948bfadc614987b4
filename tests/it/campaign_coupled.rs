//! Coupled scaling campaigns (`[scaling] design = "coupled"`): every run a coupled
//! configuration near balance, each component's coupled-mode speed taken from its computing
//! time. On the stand-in model as the `sim` executor and behind a shell script run by the
//! `command` executor, killed with SIGKILL half-way and resumed; the curves written must follow
//! the true coupled-mode speeds, and a prediction from them must pick a near-best configuration.

use std::path::{Path, PathBuf};

use autolb::campaign::State;
use autolb::curve::Curve;
use autolb::sim::synthetic::{SyntheticCase, SyntheticComponent};
use serde_json::Value;

use crate::campaign_scaling::{
    fn_gap, init, kill_half_way_and_resume, write_truths, COMPRESSION, STEPS,
};
use crate::common::{autolb, autolb_path};

/// How far (relative) a measured coupled-mode point may be from the true coupled-mode speed:
/// the stand-in's step noise and the atmosphere's radiation steps move a short run's speed by
/// a few per cent.
const SPEED_TOLERANCE: f64 = 0.08;
/// How far (in FN) the configuration chosen from the measured curves may be from the best one.
const FN_TOLERANCE: f64 = 0.02;

/// The `[[component]]` tables and a coupled `[scaling]` of a case.
fn components_and_scaling(case: &SyntheticCase) -> String {
    let mut text = String::new();
    for c in &case.components {
        text.push_str(&format!(
            "[[component]]\nname = \"{}\"\nmin_nproc = {}\nmax_nproc = {}\n\n",
            c.name,
            c.standalone.first_nproc(),
            c.standalone.last_nproc()
        ));
    }
    text.push_str("[scaling]\ndesign = \"coupled\"\ncounts = 5\nmax_runs = 45\n\n");
    text
}

fn sim_campaign(case: &SyntheticCase, tmp: &Path) -> PathBuf {
    let mut text = components_and_scaling(case);
    text.push_str(&format!(
        "[executor]\nkind = \"sim\"\njobs = 3\n\n[executor.sim]\nsteps = {STEPS}\ncompression = {COMPRESSION}\nseed = {}\n\n[executor.sim.curves]\n",
        case.seed
    ));
    for c in &case.components {
        text.push_str(&format!("{0} = \"truth_{0}.csv\"\n", c.name));
    }
    init(tmp, &text)
}

/// A coupled scaling campaign whose runs are `autolb simulate` coupled runs behind a shell
/// script, given every component's PEs by the environment.
fn command_campaign(case: &SyntheticCase, tmp: &Path) -> PathBuf {
    let mut args = String::new();
    for c in &case.components {
        args.push_str(&format!(
            " --comp \"{0}=$AUTOLB_NPROC_{0}\" --curve \"{0}=$1/truth_{0}.csv\"",
            c.name
        ));
    }
    let script = tmp.join("run-coupled.sh");
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
    let text = format!(
        "period_s = 2700\n{}[executor]\nkind = \"command\"\njobs = 3\ncommand = [\"sh\", {:?}, {:?}]\n",
        components_and_scaling(case),
        script.display().to_string(),
        tmp.display().to_string()
    );
    init(tmp, &text)
}

/// Every written point is within [`SPEED_TOLERANCE`] of the component's true coupled-mode
/// speed, each component has at least `counts` points, and status, curve files and report say
/// coupled mode.
fn check_curves(case: &SyntheticCase, dir: &Path, counts: usize) {
    let state = State::load(dir).unwrap();
    for (k, c) in case.components.iter().enumerate() {
        let curve = Curve::load(c.name.clone(), &dir.join(&state.components[k].curve)).unwrap();
        assert!(curve.points().len() >= counts, "{}: {curve:?}", c.name);
        for p in curve.points() {
            let truth = c.coupled_sypd(p.nproc);
            let off = (p.sypd - truth) / truth;
            assert!(
                off.abs() < SPEED_TOLERANCE,
                "{} at {}: measured {} vs coupled truth {truth} ({:+.1} %)",
                c.name,
                p.nproc,
                p.sypd,
                100.0 * off
            );
        }
        let csv = std::fs::read_to_string(dir.join(&state.components[k].curve)).unwrap();
        assert!(
            csv.starts_with('#') && csv.contains("coupled mode"),
            "{csv}"
        );
    }
    let status: Value = serde_json::from_str(
        &autolb()
            .args(["campaign", "status", "--json"])
            .arg(dir)
            .stdout_ok(),
    )
    .unwrap();
    assert_eq!(status["design"], "coupled");
    let text = autolb().args(["campaign", "status"]).arg(dir).stdout_ok();
    assert!(text.contains("scaling campaign (coupled mode)"), "{text}");
    for c in &case.components {
        assert!(status["curves"][&c.name].as_array().unwrap().len() >= counts);
    }
    let out = dir.join("report.md");
    autolb()
        .args(["report", "--markdown", "--out"])
        .arg(&out)
        .arg(dir)
        .stdout_ok();
    let md = std::fs::read_to_string(&out).unwrap();
    let section = md.split("## Where the curves came from").nth(1).unwrap();
    assert!(section.contains("coupled mode"), "{section}");
    std::fs::remove_file(out).unwrap();
}

/// Every run is a coupled configuration (every component has PEs), within `max_runs`.
fn check_runs(dir: &Path, max_runs: usize) {
    let state = State::load(dir).unwrap();
    let mut runs = 0;
    for t in state.iterations.iter().flat_map(|it| &it.tests) {
        assert!(
            t.component.is_none() && t.nproc.iter().all(|&p| p > 0),
            "{t:?}"
        );
        assert!(
            t.reason.as_deref().unwrap().starts_with("scaling: "),
            "{t:?}"
        );
        runs += t.runs.len();
    }
    assert!(runs <= max_runs, "{runs} runs");
}

/// A component's true coupled-mode curve (what a coupled scaling campaign measures).
fn coupled_truth(c: &SyntheticComponent) -> Curve {
    c.coupled_truth.clone()
}

/// A coupled scaling campaign of seed `seed`'s truths, made by `make`, killed half-way and
/// resumed: no run lost, its curves follow the coupled truth, and they balance well.
fn survives_a_kill_and_follows_the_coupled_truth(
    seed: u64,
    make: fn(&SyntheticCase, &Path) -> PathBuf,
) {
    let case = SyntheticCase::generate(seed, 2);
    let tmp = tempfile::tempdir().unwrap();
    write_truths(&case, tmp.path());
    let dir = make(&case, tmp.path());
    kill_half_way_and_resume(&dir);
    check_runs(&dir, 45);
    check_curves(&case, &dir, 5);
    let gap = fn_gap(&case, &dir, coupled_truth);
    assert!(gap <= FN_TOLERANCE, "FN gap {gap}");
}

#[test]
fn a_sim_coupled_scaling_campaign_survives_a_kill_and_follows_the_coupled_truth() {
    survives_a_kill_and_follows_the_coupled_truth(7, sim_campaign);
}

#[test]
fn a_command_coupled_scaling_campaign_survives_a_kill_and_follows_the_coupled_truth() {
    survives_a_kill_and_follows_the_coupled_truth(19, command_campaign);
}

/// A coupled campaign whose `max_nproc` leaves out the top ranks runs only what fits.
#[test]
fn the_coupled_first_series_keeps_to_max_nproc() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "max_nproc = 300\n[[component]]\nname = \"A\"\nmin_nproc = 20\nmax_nproc = 400\n\n\
                [[component]]\nname = \"B\"\nmin_nproc = 10\nmax_nproc = 200\n\n\
                [scaling]\ndesign = \"coupled\"\ncounts = 4\n";
    let dir = init(tmp.path(), text);
    let state = State::load(&dir).unwrap();
    let first: Vec<Vec<u32>> = state.iterations[0]
        .tests
        .iter()
        .map(|t| t.nproc.clone())
        .collect();
    assert!(first.len() >= 2, "{first:?}");
    assert!(
        first.iter().all(|n| n.iter().sum::<u32>() <= 300),
        "{first:?}"
    );
    // Paired by rank: the smallest with the smallest.
    assert_eq!(first[0], vec![20, 10]);
}
